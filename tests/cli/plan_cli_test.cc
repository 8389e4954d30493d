// `rigel explain` and `rigel plan` as a user runs them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "tests/cli/rigel_runner.h"

namespace rigel {
namespace {

using testing::RunRigel;

std::string TempDir() {
  char tmpl[] = "/tmp/rigel-plan-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `rigel ARGS > OUT 2> DIR/err`: the exit status and stderr.
std::pair<int, std::string> RigelTo(const std::string& args, const std::string& out,
                                    const std::string& dir) {
  const std::string cmd = std::string("cd ") + RIGEL_SOURCE_DIR + " && " + RIGEL_BIN_DIR +
                          "/rigel " + args + " > " + out + " 2> " + dir + "/err";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir + "/err")};
}

// Issue 46: what a command writes on a full disk is an error, not exit 0.
TEST(PlanCli, APlanOrAnExplanationOnAFullDiskFailsWithTheReason) {
  const std::string dir = TempDir();
  auto [rc, err] = RigelTo("plan examples/mf.rgl --workers 2 -o /dev/full", "/dev/null", dir);
  EXPECT_EQ(rc, 1) << err;
  EXPECT_NE(err.find("/dev/full: write failed: No space left on device"), std::string::npos) << err;
  std::tie(rc, err) = RigelTo("explain examples/mf.rgl --workers 2 --json", "/dev/full", dir);
  EXPECT_EQ(rc, 1) << err;
  EXPECT_NE(err.find("rigel: cannot write the standard output: "), std::string::npos) << err;
  std::tie(rc, err) = RigelTo("run examples/mf.rgl --set EPOCHS=1", "/dev/full", dir);
  EXPECT_EQ(rc, 1) << err;
  EXPECT_NE(err.find("print() cannot write to the standard output: No space left on device"),
            std::string::npos)
      << err;
  std::tie(rc, err) =
      RigelTo("gen ratings --count 1000 --out /dev/full --no-info", "/dev/null", dir);
  EXPECT_EQ(rc, 1) << err;
  EXPECT_NE(err.find("/dev/full: write failed: No space left on device"), std::string::npos) << err;
}

TEST(ExplainCli, GivesTheExpectedAnalysisOfEveryExample) {
  struct Want {
    const char* example;
    std::vector<std::string> lines;
  };
  const Want wants[] = {
      {"mf",
       {"schedule: conflict_free_2d on 4 workers", "W  local       keyed by i",
        "H  rotate      keyed by j", "schedule: data_parallel", "W   replicated",
        "not data_parallel: W:", "not model_parallel_1d: by i: H:"}},
      {"bias", {"schedule: model_parallel_1d", "b  local       keyed by i"}},
      {"sparse_lr",
       {"schedule: data_parallel", "w     ps",
        "relaxed rows of w: a write-back row cache per worker (DSL.md v3)",
        "at --staleness 0: mini-batches: the largest power of two <= 64 / (workers x s), between "
        "16 and 512 elements per worker, where s is the largest share of elements that write one "
        "row of w"}},
      {"word2vec",
       {"schedule: data_parallel", "emb    ps", "ctx    ps", "write one row of emb, ctx"}},
      {"dense_lr",
       {"schedule: data_parallel", "w     allreduce",
        "mini-batches: 32 elements per worker (w read or written whole)"}},
      {"wavefront", {"schedule: wavefront", "distance (1, 0)", "distance (0, 1)"}},
      // Version 2 (DSL.md's expected analyses).
      {"lda",
       {"ndk  reduce", "nwk  reduce", "nk   reduce", "schedule: conflict_free_2d on 4 workers",
        "ndk  local       keyed by d", "nwk  rotate      keyed by w",
        "z    ps          kept with its element", "nk   ps          relaxed",
        "[allowed: the loop relaxes nk]", "space: (t, d, w)"}},
      {"softmax", {"schedule: data_parallel", "W     ps          relaxed", "by a hash of the row"}},
      {"kmeans",
       {"schedule: data_parallel", "S        reduce", "N        reduce", "Cen      replicated",
        "[allowed: S is a sum here"}},
      {"fm", {"schedule: data_parallel", "w     ps          relaxed", "V     ps          relaxed"}},
  };
  for (const Want& w : wants) {
    auto r = RunRigel(std::string("explain examples/") + w.example + ".rgl");
    EXPECT_EQ(r.code, 0) << r.out;
    for (const std::string& line : w.lines) {
      EXPECT_NE(r.out.find(line), std::string::npos)
          << w.example << ": missing '" << line << "' in\n"
          << r.out;
    }
  }
}

TEST(PlanCli, WritesAPlanThatExplainAcceptsBack) {
  std::string dir = TempDir();
  auto r = RunRigel("plan examples/mf.rgl --workers 3 -o " + dir + "/plan.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict_free_2d data_parallel"), std::string::npos) << r.out;
  std::string plan = Slurp(dir + "/plan.json");
  EXPECT_NE(plan.find("\"version\": 1"), std::string::npos);
  EXPECT_NE(plan.find("\"workers\": 3"), std::string::npos);
  r = RunRigel("explain --plan " + dir + "/plan.json examples/mf.rgl");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("conflict_free_2d on 3 workers"), std::string::npos) << r.out;
  // --json prints the same document the plan command writes.
  r = RunRigel("explain --json --workers 3 examples/mf.rgl");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, plan);
}

// Issue 43: explain and plan take `rigel run`'s job flags, with run's
// defaults, so that --memory and --cost predict what the run would start:
// --cache-mb bounds the row caches, --data-parts off loads the corpus whole
// on every worker, --memory-limit refuses as the run would, and a flag no
// asked prediction reads is said.
TEST(ExplainCli, MemoryFollowsTheRunsFlagsAndItsDefaultCluster) {
  const std::string base = "explain examples/word2vec.rgl --memory";
  auto r = RunRigel(base);
  ASSERT_EQ(r.code, 0) << r.out;
  // The cluster `rigel run --workers 4` starts: 4 workers, 2 servers.
  EXPECT_NE(r.out.find("on 4 workers and 2 servers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("row cache of 'emb': 1.72 MB"), std::string::npos) << r.out;
  r = RunRigel(base + " --json");  // every part, the small ones too
  EXPECT_NE(r.out.find("data set 'corpus' (its part)"), std::string::npos) << r.out;
  r = RunRigel("explain examples/word2vec.rgl --memory --workers 1");
  EXPECT_NE(r.out.find("on 1 worker and 1 server"), std::string::npos) << r.out;

  r = RunRigel(base + " --cache-mb 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("row cache of 'emb': 1.72 MB"), std::string::npos) << r.out;
  // A cache smaller than its table holds the table in part: no whole copy.
  EXPECT_NE(r.out.find("row cache of 'emb', which holds its rows: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("parameter 'emb', a copy on every worker"), std::string::npos) << r.out;
  // The report says so beside the strategy.
  EXPECT_NE(r.out.find("held in part: each worker's row cache holds at most "), std::string::npos)
      << r.out;
  r = RunRigel(base + " --json --data-parts off");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("(its part)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("data set 'corpus'"), std::string::npos) << r.out;
  r = RunRigel(base + " --staleness 0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("row cache of"), std::string::npos) << r.out;

  r = RunRigel(base + " --memory-limit 4G");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("every process fits --memory-limit 4.29 GB"), std::string::npos) << r.out;
  r = RunRigel(base + " --memory-limit 10M");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--memory-limit 10.49 MB: a worker would need about "), std::string::npos)
      << r.out;

  r = RunRigel(base + " --push-age 3");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rigel explain: note: --push-age changes no prediction this command "
                       "makes"),
            std::string::npos)
      << r.out;
  r = RunRigel("plan examples/sparse_lr.rgl --cache-mb 8");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rigel plan: note: --cache-mb changes no prediction"), std::string::npos)
      << r.out;
  // Out of range as run's flags are.
  r = RunRigel(base + " --cache-mb -1");
  EXPECT_NE(r.code, 0) << r.out;
}

// A serial run takes --memory-limit too: refused with the estimate's parts
// before the parameters are allocated and before anything is printed.
TEST(RunCli, ASerialRunOverItsMemoryLimitIsRefusedBeforeItTrains) {
  auto r = RunRigel("run examples/word2vec.rgl --memory-limit 5M");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--memory-limit 5.24 MB: a serial run would need about "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("data set 'corpus': "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("epoch 0"), std::string::npos) << r.out;
  r = RunRigel("run examples/bias.rgl --memory-limit 1G");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("epoch 9 test_rmse"), std::string::npos) << r.out;
}

TEST(PlanCli, RefusesAHandEditedPlanThatBreaksADependence) {
  std::string dir = TempDir();
  ASSERT_EQ(RunRigel("plan examples/mf.rgl -o " + dir + "/plan.json").code, 0);
  std::string plan = Slurp(dir + "/plan.json");
  size_t k = plan.find("\"kind\": \"conflict_free_2d\"");
  ASSERT_NE(k, std::string::npos);
  plan.replace(k, std::string("\"kind\": \"conflict_free_2d\"").size(),
               "\"kind\": \"data_parallel\"");
  std::ofstream(dir + "/edited.json") << plan;
  auto r = RunRigel("explain --plan " + dir + "/edited.json examples/mf.rgl");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("data_parallel would break a dependence: W[i]"), std::string::npos) << r.out;
  r = RunRigel("explain --plan " + dir + "/plan.json --workers 2 examples/mf.rgl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("is a plan for 4 workers, but --workers says 2"), std::string::npos)
      << r.out;
  r = RunRigel("explain --plan " + dir + "/missing.json examples/mf.rgl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("missing.json"), std::string::npos) << r.out;
  r = RunRigel("explain --workers 0 examples/mf.rgl");
  EXPECT_EQ(r.code, 2) << r.out;
}

}  // namespace
}  // namespace rigel
