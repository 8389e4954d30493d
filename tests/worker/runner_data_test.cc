// A worker refuses a job whose data differ from the scheduler's copy: the
// scheduler cuts blocks from its own load and names elements by number, so a
// worker that read another file would silently run other elements.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analysis/plan.h"
#include "cluster/setup.h"
#include "data/data_index.h"
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
  cluster::ClusterSetup SetupWithDigest(const std::string& digest) {
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

  // As worker `id` (each call joins the network anew).
  StatusOr<std::unique_ptr<Runner>> Create(const cluster::ClusterSetup& s, int id = 0) {
    auto map = s.MakeShardMap();
    EXPECT_TRUE(map.ok()) << map.status().message();
    transport_ = std::move(net_->Join({transport::Role::kWorker, id})).value();
    return Runner::Create(*s.job, transport_.get(), std::move(map).value(), {});
  }

  std::string dir_;
  std::shared_ptr<transport::LoopbackNetwork> net_ = transport::LoopbackNetwork::Create();
  std::unique_ptr<transport::Transport> transport_;
};

TEST_F(RunnerDataTest, SameDataIsAccepted) {
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  auto r = Create(SetupWithDigest(data::DatasetDigest(*loaded)));
  EXPECT_TRUE(r.ok()) << r.status().message();
}

TEST_F(RunnerDataTest, DifferentDataIsRefusedNamingTheDataSet) {
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  const std::string scheduler_digest = data::DatasetDigest(*loaded);
  // The file changes after the scheduler loaded it: one value differs.
  std::ofstream(dir_ + "/r.csv") << "0,0,1\n1,2,2\n2,1,4\n";
  auto r = Create(SetupWithDigest(scheduler_digest));
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

TEST_F(RunnerDataTest, AFileThatDiffersFromTheSchedulersIsRefusedBeforeItLoads) {
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  cluster::ClusterSetup s = SetupWithDigest(data::DatasetDigest(*loaded));
  auto f = data::FingerprintFile(dir_ + "/r.csv");
  ASSERT_TRUE(f.ok());
  s.job->files = {{"r", data::FingerprintText(*f)}};
  EXPECT_TRUE(Create(s).ok());
  // Another host's copy: one byte differs.
  const std::string theirs = data::FingerprintText(*f);
  std::ofstream(dir_ + "/r.csv") << "0,0,1\n1,2,2\n2,1,4\n";
  auto r = Create(s, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("data set 'r': " + dir_ +
                                      "/r.csv differs from the scheduler's file: here 18 bytes, "
                                      "head xxh64:"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("at the scheduler " + theirs), std::string::npos)
      << r.status().message();
}

// A corpus only data-parallel loops read is held in part: 2 workers' halves
// with the planner's samples, and the facts the scheduler checks are the file's.
TEST_F(RunnerDataTest, AWorkerOfDataParallelLoopsHoldsItsPartAndChecksTheCount) {
  std::string words;
  for (int k = 0; k < 200000; ++k)
    words += "w" + std::to_string(k % 97) + (k % 10 == 9 ? "\n" : " ");
  std::ofstream(dir_ + "/c.txt") << words;
  std::ofstream(dir_ + "/c.rgl")
      << "data c = tokens(\"c.txt\")\n"
         "param e: f32[c.vocab] = zeros()\n"
         "accum n: f32\n"
         "parallel for (t, w) in c { for x in window(c, t, 2) { n += e[x] } }\n";
  auto prog = frontend::CompileFile(dir_ + "/c.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto plan = analysis::MakePlan(*prog, {2});
  ASSERT_TRUE(plan.ok());
  auto whole = data::LoadTokens(dir_ + "/c.txt", {});
  ASSERT_TRUE(whole.ok());
  cluster::ClusterSetup s;
  s.servers = 1;
  s.workers = 2;
  cluster::ParamSpec p;
  p.decl = prog->params[0];
  p.rows = whole->vocab;
  s.params.push_back(p);
  cluster::JobSpec job;
  job.program = dir_ + "/c.rgl";
  job.plan = analysis::PlanToJson(*prog, *plan);
  job.data = {{"c", data::DatasetDigest(*whole)}};
  s.job = job;
  auto map = s.MakeShardMap();
  ASSERT_TRUE(map.ok());
  transport_ = std::move(net_->Join({transport::Role::kWorker, 0})).value();
  std::ostringstream log;
  RunnerOptions o;
  o.rank = 1;
  o.workers = 2;
  o.log = &log;
  auto r = Runner::Create(*s.job, transport_.get(), *map, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Worker 1's half and the samples' windows (4096 + 1024 elements, each
  // with 2 neighbours on each side) in worker 0's half.
  const size_t at = log.str().find("): ");
  ASSERT_NE(at, std::string::npos) << log.str();
  EXPECT_NE(log.str().find(" of 200000 elements", at), std::string::npos) << log.str();
  const int64_t held = std::stoll(log.str().substr(at + 3));
  EXPECT_GE(held, 100000) << log.str();
  EXPECT_LE(held, 100000 + 5120 * 5 / 2 + 10) << log.str();
  // Another count at the scheduler: refused, naming both.
  s.job->data = {{"c", "xxh64:0123456789abcdef, 2999 elements"}};
  auto t = std::move(net_->Join({transport::Role::kWorker, 1})).value();
  auto bad = Runner::Create(*s.job, t.get(), *map, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(bad.status().message().find("data set 'c' (" + dir_ +
                                        "/c.txt) has 200000 elements here; the scheduler's copy: "
                                        "xxh64:0123456789abcdef, 2999 elements"),
            std::string::npos)
      << bad.status().message();
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
