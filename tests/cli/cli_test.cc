// End-to-end checks of the `rigel` binary: exit codes and messages.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/rigel_runner.h"

namespace {

using rigel::testing::RigelResult;

using rigel::testing::RunRigel;

TEST(Cli, CheckAcceptsEveryExample) {
  for (const char* ex : {"mf", "bias", "sparse_lr", "word2vec", "dense_lr", "wavefront"}) {
    RigelResult r = RunRigel(std::string("check ") + RIGEL_SOURCE_DIR + "/examples/" + ex + ".rgl");
    EXPECT_EQ(r.code, 0) << ex << ": " << r.out;
    EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  }
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunRigel("").code, 2);
  EXPECT_EQ(RunRigel("frobnicate").code, 2);
  EXPECT_EQ(RunRigel("run").code, 2);  // no program given
  EXPECT_EQ(RunRigel("--help").code, 0);
  EXPECT_EQ(RunRigel(std::string("check ") + RIGEL_SOURCE_DIR + "/examples/mf.rgl --set K").code,
            2);
}

// `--batch 0` is described as analysis/step_plan.cc's StepBatch chooses: by
// the hot-share rules from 16 to 512 elements, 32 for whole-parameter loops.
TEST(Cli, RunHelpDescribesTheBatchChoice) {
  RigelResult r = RunRigel("run --help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("power of two from 16 to 512"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("32 where the loop reads or writes whole"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("else 512"), std::string::npos) << r.out;
}

}  // namespace
