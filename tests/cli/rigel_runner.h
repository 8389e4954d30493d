// Runs build/bin/rigel as a subprocess from the repository root and captures
// its exit status and combined stdout/stderr (tests only).
#ifndef RIGEL_TESTS_CLI_RIGEL_RUNNER_H_
#define RIGEL_TESTS_CLI_RIGEL_RUNNER_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace rigel::testing {

struct RigelResult {
  int code;
  std::string out;
};

inline RigelResult RunRigel(const std::string& args) {
  std::string cmd = std::string("cd ") + RIGEL_SOURCE_DIR + " && " + RIGEL_BIN_DIR + "/rigel " +
                    args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_CLI_RIGEL_RUNNER_H_
