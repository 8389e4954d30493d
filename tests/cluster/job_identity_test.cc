// The identity members send when they register: version and job key checks.
#include "cluster/job_identity.h"

#include <gtest/gtest.h>

namespace rigel::cluster {
namespace {

TEST(JobKey, FollowsTheProgramTextAndEverySet) {
  const std::string k = JobKey("const K = 4\n", {"lr=0.1"});
  EXPECT_EQ(k.rfind("xxh64:", 0), 0u);
  EXPECT_EQ(k.size(), 6u + 16u);
  EXPECT_EQ(k, JobKey("const K = 4\n", {"lr=0.1"}));
  EXPECT_NE(k, JobKey("const K = 5\n", {"lr=0.1"}));
  EXPECT_NE(k, JobKey("const K = 4\n", {"lr=0.2"}));
  EXPECT_NE(k, JobKey("const K = 4\n", {}));
  // Where one set ends matters.
  EXPECT_NE(JobKey("", {"a=1", "b=2"}), JobKey("", {"a=1b=2"}));
}

TEST(CheckJoin, SameBuildAndJobJoin) {
  const JobIdentity sched{"0.1.0 (commit a)", "xxh64:1", "mf.rgl"};
  EXPECT_TRUE(CheckJoin(sched, sched, "worker:0").ok());
  // A member started without a program (rigel-launch, tests) is not checked
  // for its job, only its build.
  EXPECT_TRUE(CheckJoin(sched, {"0.1.0 (commit a)", "", ""}, "worker:0").ok());
}

TEST(CheckJoin, AnotherBuildOrJobIsRefusedNamingBoth) {
  const JobIdentity sched{"0.1.0 (commit a)", "xxh64:1", "mf.rgl"};
  Status build = CheckJoin(sched, {"0.1.0 (commit b)", "xxh64:1", "mf.rgl"}, "server:1 at X");
  EXPECT_EQ(build.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(build.message(),
            "server:1 at X runs rigel 0.1.0 (commit b), the scheduler rigel 0.1.0 (commit a): "
            "install the same build on every host");
  Status job = CheckJoin(sched, {"0.1.0 (commit a)", "xxh64:2", "lr.rgl"}, "worker:0 at Y");
  EXPECT_EQ(job.message(),
            "worker:0 at Y was started on another job: lr.rgl (xxh64:2), the scheduler runs "
            "mf.rgl (xxh64:1); start every process with the same program and --set flags");
  EXPECT_NE(CheckJoin(sched, {"", "", ""}, "w").message().find("(no version given)"),
            std::string::npos);
}

TEST(BinaryVersion, NamesTheVersionAndCommit) {
  EXPECT_NE(BinaryVersion().find(" (commit "), std::string::npos) << BinaryVersion();
}

}  // namespace
}  // namespace rigel::cluster
