// A worker refuses a job whose data differ from the scheduler's copy: the
// scheduler cuts blocks from its own load and names elements by number, so a
// worker that read another file would silently run other elements.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/plan.h"
#include "cluster/setup.h"
#include "data/dataset.h"
#include "frontend/compile.h"
#include "transport/loopback_transport.h"
#include "worker/runner.h"

namespace rigel::worker {
namespace {

class RunnerDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rigel-runner-data-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/r.csv") << "0,0,1\n1,2,2\n2,1,3\n";
    std::ofstream(dir_ + "/prog.rgl") << "data r = triples(\"r.csv\")\n"
                                         "param b: f32[r.rows] = zeros()\n"
                                         "parallel for (i, j, v) in r { b[i] += v }\n";
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The job as the scheduler would send it, with `digest` for data set r.
  cluster::ClusterSetup Setup(const std::string& digest) {
    auto prog = frontend::CompileFile(dir_ + "/prog.rgl", {});
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    auto plan = analysis::MakePlan(*prog, {2});
    EXPECT_TRUE(plan.ok());
    cluster::ClusterSetup s;
    s.servers = 1;
    s.workers = 2;
    cluster::ParamSpec p;
    p.decl = prog->params[0];
    p.rows = 3;
    s.params.push_back(p);
    cluster::JobSpec job;
    job.program = dir_ + "/prog.rgl";
    job.plan = analysis::PlanToJson(*prog, *plan);
    job.data = {{"r", digest}};
    s.job = job;
    return s;
  }

  StatusOr<std::unique_ptr<Runner>> Create(const cluster::ClusterSetup& s) {
    auto map = s.MakeShardMap();
    EXPECT_TRUE(map.ok()) << map.status().message();
    transport_ = std::move(net_->Join({transport::Role::kWorker, 0})).value();
    return Runner::Create(*s.job, transport_.get(), std::move(map).value(), {});
  }

  std::string dir_;
  std::shared_ptr<transport::LoopbackNetwork> net_ = transport::LoopbackNetwork::Create();
  std::unique_ptr<transport::Transport> transport_;
};

TEST_F(RunnerDataTest, SameDataIsAccepted) {
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  auto r = Create(Setup(data::DatasetDigest(*loaded)));
  EXPECT_TRUE(r.ok()) << r.status().message();
}

TEST_F(RunnerDataTest, DifferentDataIsRefusedNamingTheDataSet) {
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  const std::string scheduler_digest = data::DatasetDigest(*loaded);
  // The file changes after the scheduler loaded it: one value differs.
  std::ofstream(dir_ + "/r.csv") << "0,0,1\n1,2,2\n2,1,4\n";
  auto r = Create(Setup(scheduler_digest));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("data set 'r' (" + dir_ +
                                      "/r.csv) differs from the "
                                      "scheduler's copy: here xxh64:"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("at the scheduler " + scheduler_digest), std::string::npos)
      << r.status().message();
}

TEST(DatasetDigest, NamesContentsNotOrigin) {
  auto a = data::ParseTriples("0,0,1\n1,1,2\n", "a.csv", {});
  auto b = data::ParseTriples("0,0,1\n\n1,1,2\n", "b.csv", {});  // same elements
  auto c = data::ParseTriples("1,1,2\n0,0,1\n", "a.csv", {});    // another order
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(data::DatasetDigest(*a), data::DatasetDigest(*b));
  EXPECT_NE(data::DatasetDigest(*a), data::DatasetDigest(*c));
  EXPECT_NE(data::DatasetDigest(*a).find(", 2 elements"), std::string::npos);
}

}  // namespace
}  // namespace rigel::worker
