// End-to-end checks of the `rigel` binary: exit codes and messages.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int code;
  std::string out;
};

Result RunRigel(const std::string& args) {
  std::string cmd = std::string(RIGEL_BIN_DIR) + "/rigel " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

TEST(Cli, CheckAcceptsEveryExample) {
  for (const char* ex : {"mf", "bias", "sparse_lr", "word2vec", "dense_lr", "wavefront"}) {
    Result r = RunRigel(std::string("check ") + RIGEL_SOURCE_DIR + "/examples/" + ex + ".rgl");
    EXPECT_EQ(r.code, 0) << ex << ": " << r.out;
    EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  }
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunRigel("").code, 2);
  EXPECT_EQ(RunRigel("frobnicate").code, 2);
  EXPECT_EQ(RunRigel("run").code, 2);  // no program given
  EXPECT_EQ(RunRigel("--help").code, 0);
  EXPECT_EQ(RunRigel(std::string("check ") + RIGEL_SOURCE_DIR + "/examples/mf.rgl --set K").code, 2);
}

}  // namespace
