// Small helpers shared by the tests that run cluster processes: a fresh
// temporary directory and a whole-file read.
#ifndef RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_
#define RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rigel::testing {

// A new directory /tmp/<prefix>-XXXXXX (or /tmp if it cannot be made).
inline std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  const char* d = mkdtemp(tmpl.data());
  return d ? std::string(d) : "/tmp";
}

// The whole file, or "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_
