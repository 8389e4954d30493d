// Runners against in-process parameter servers (tests/harness/runner_cluster.h),
// one program per sync strategy (worker/sync/strategy.h), each compared with
// the serial executor in the schedule's order: local and replicated (1-D
// model parallel), rotate (2-D, 3 workers), local with shared boundary rows
// (wavefront), ps (exact, relaxed, and pulled a step ahead), allreduce, and
// accumulators everywhere. Then tasks that do not fit the program.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/batch.h"
#include "analysis/relaxed.h"
#include "tests/harness/runner_cluster.h"

namespace rigel::worker {
namespace {

using analysis::ScheduleKind;
using analysis::Strategy;
using testing::RunnerCluster;
using testing::RunnerClusterOptions;
using testing::RunValues;

class RunnerStrategiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rigel-runner-strategies-XXXXXX";
    dir_ = mkdtemp(tmpl);
    // 90 ratings over 17 x 13 with repeated rows and columns (a fixed LCG).
    std::ofstream r(dir_ + "/r.csv");
    uint64_t x = 12345;
    auto next = [&x](uint64_t n) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return (x >> 33) % n;
    };
    for (int k = 0; k < 90; ++k) {
      r << next(17) << "," << next(13) << "," << 1 + static_cast<double>(next(400)) / 100 << "\n";
    }
    std::ofstream d(dir_ + "/d.csv");  // label, then 3 features
    for (int k = 0; k < 40; ++k) {
      d << next(2) << "," << static_cast<double>(next(100)) / 50 << ","
        << static_cast<double>(next(100)) / 25 - 2 << "," << static_cast<double>(next(7)) << "\n";
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }

  // Starts a cluster for `program`, runs it, and compares every parameter
  // and accumulator with the serial run within `rel` relative error.
  std::unique_ptr<RunnerCluster> RunAndCompare(const std::string& program,
                                               const RunnerClusterOptions& opts,
                                               double rel = 1e-5) {
    auto c = RunnerCluster::Start(program, opts);
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok()) return nullptr;
    auto got = (*c)->Run();
    EXPECT_TRUE(got.ok()) << got.status().message();
    auto want = (*c)->Serial();
    EXPECT_TRUE(want.ok()) << want.status().message();
    if (!got.ok() || !want.ok()) return nullptr;
    for (size_t p = 0; p < want->params.size(); ++p) {
      SCOPED_TRACE("parameter " + (*c)->program().params[p].name);
      ExpectNear(got->params[p], want->params[p], rel);
    }
    for (size_t a = 0; a < want->accums.size(); ++a) {
      SCOPED_TRACE("accumulator slot " + std::to_string(a));
      EXPECT_LE(std::abs(got->accums[a] - want->accums[a]),
                rel * std::max(1.0, std::abs(want->accums[a])));
    }
    return std::move(c).value();
  }

  static void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                         double rel) {
    ASSERT_EQ(got.size(), want.size());
    int bad = 0;
    for (size_t k = 0; k < want.size() && bad < 5; ++k) {
      double tol = rel * std::max(1.0, std::abs(static_cast<double>(want[k])));
      if (std::abs(static_cast<double>(got[k]) - want[k]) > tol) {
        ADD_FAILURE() << "element " << k << ": got " << got[k] << ", serial " << want[k];
        ++bad;
      }
    }
  }

  static const analysis::ParamPlan& ParamOf(const RunnerCluster& c, int loop,
                                            const std::string& name) {
    for (const analysis::ParamPlan& pp : c.plan().loops[loop].params) {
      if (pp.name == name) return pp;
    }
    ADD_FAILURE() << "loop " << loop << " does not use " << name;
    static analysis::ParamPlan none;
    return none;
  }

  std::string dir_;
};

TEST_F(RunnerStrategiesTest, LocalRowsAreKeptAcrossEpochsAndReplicatedOnesRead) {
  const std::string prog = Write("bias.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
accum sq: f32
for ep in 0..3 {
  parallel for (i, j, v) in r { b[i] += 0.1 * (v - b[i]) }
  sq = 0
  parallel for (i, j, v) in r {
    let e = v - b[i]
    sq += e * e
  }
  print("epoch", ep, "sq", sq)
}
)");
  auto c = RunAndCompare(prog, RunnerClusterOptions{});
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->plan().loops[0].schedule.kind, ScheduleKind::kModelParallel1D);
  EXPECT_EQ(ParamOf(*c, 0, "b").strategy, Strategy::kLocal);
  EXPECT_EQ(ParamOf(*c, 1, "b").strategy, Strategy::kReplicated);
  // Pulled once; the next epochs keep the rows (nothing else wrote b).
  EXPECT_GT(c->totals().at("bytes.local"), 0);
  EXPECT_GT(c->totals().at("bytes.local.kept"), 0);
  EXPECT_GT(c->totals().at("bytes.replicated"), 0);
}

TEST_F(RunnerStrategiesTest, RotatingColumnsOnThreeWorkers) {
  const std::string prog = Write("mf.rgl", R"(data r = triples("r.csv")
param W: f32[r.rows, 4] = normal(0, 0.1, seed=1)
param H: f32[r.cols, 4] = normal(0, 0.1, seed=2)
for ep in 0..3 {
  parallel for (i, j, v) in r {
    let e = v - dot(W[i], H[j])
    let wi = W[i]
    W[i] = wi + 0.05 * (e * H[j] - 0.01 * wi)
    H[j] = H[j] + 0.05 * (e * wi - 0.01 * H[j])
  }
}
)");
  RunnerClusterOptions o;
  o.workers = 3;
  auto c = RunAndCompare(prog, o);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->plan().loops[0].schedule.kind, ScheduleKind::kConflictFree2D);
  EXPECT_EQ(ParamOf(*c, 0, "W").strategy, Strategy::kLocal);
  EXPECT_EQ(ParamOf(*c, 0, "H").strategy, Strategy::kRotate);
  EXPECT_GT(c->totals().at("bytes.rotate"), 0);
  EXPECT_EQ(c->totals().at("steps"), 3 * 3 * 3);  // 3 epochs x 3 workers x 3 steps
}

TEST_F(RunnerStrategiesTest, WavefrontBoundaryRowsThroughTheServers) {
  const std::string prog = Write("wave.rgl", R"(const N = 12
const M = 10
param A: f32[N + 1, M + 1] = fill(1.0)
accum total: f32
parallel ordered for (i, j) in grid(N, M) {
  A[i + 1, j + 1] = 0.5 * (A[i, j + 1] + A[i + 1, j]) + 0.001
}
parallel for (i, j) in grid(N, M) { total += A[i + 1, j + 1] }
print("mean", total / (N * M))
)");
  auto c = RunAndCompare(prog, RunnerClusterOptions{});
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->plan().loops[0].schedule.kind, ScheduleKind::kWavefront);
  EXPECT_EQ(ParamOf(*c, 0, "A").strategy, Strategy::kLocal);
  EXPECT_GT(c->totals().at("steps"), 2);
}

// Vector accumulators: each worker's partial sums travel as one flat array
// (every slot of every accumulator) and add up to the serial run's, on 2 and
// 3 workers; the driver's element reads and resets see the sums.
TEST_F(RunnerStrategiesTest, VectorAccumulatorsAddUpAcrossWorkers) {
  const std::string prog = Write("vacc.rgl", R"(const K = 3
data r = triples("r.csv")
param W: f32[r.rows, K] = uniform(0, 0.1, seed=1)
accum byclass: f32[4]
accum counts: f32[4]
accum n: f32
accum grad: f32[K]
for ep in 0..3 {
  byclass = 0
  grad = 0
  parallel for (i, j, v) in r {
    let e = v - sum(W[i])
    W[i] += 0.05 * e
    byclass[j % 4] += e * e
    counts += onehot(j % 4, 4)
    grad += W[i] * e
    n += 1
  }
  print("epoch", ep, byclass[0], byclass[1], byclass[2], byclass[3], grad[0], grad[2])
}
print("counts", counts[0], counts[1], counts[2], counts[3], n)
)");
  for (int workers : {2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    RunnerClusterOptions o;
    o.workers = workers;
    auto c = RunnerCluster::Start(prog, o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    auto got = (*c)->Run();
    ASSERT_TRUE(got.ok()) << got.status().message();
    auto want = (*c)->Serial();
    ASSERT_TRUE(want.ok()) << want.status().message();
    ExpectNear(got->params[0], want->params[0], 1e-5);
    // 4 + 4 + 1 + 3 slots, in declaration order.
    ASSERT_EQ(got->accums.size(), 12u);
    ASSERT_EQ(want->accums.size(), 12u);
    for (size_t k = 0; k < 12; ++k) {
      EXPECT_NEAR(got->accums[k], want->accums[k], 1e-5 * std::max(1.0, std::abs(want->accums[k])))
          << "slot " << k;
    }
    // The counts are exact: 3 epochs of the 90 ratings.
    EXPECT_EQ(got->accums[4] + got->accums[5] + got->accums[6] + got->accums[7], 270);
    EXPECT_EQ(got->accums[8], 270);
    EXPECT_NE(got->accums[0], 0);
    EXPECT_NE(got->accums[9], 0);
    const std::string last = "\ncounts ";
    ASSERT_NE(want->printed.find(last), std::string::npos) << want->printed;
    EXPECT_EQ(got->printed.substr(got->printed.find(last)),
              want->printed.substr(want->printed.find(last)));
    EXPECT_EQ(ParamOf(**c, 0, "byclass").strategy, Strategy::kAccumulator);
    EXPECT_EQ(ParamOf(**c, 0, "grad").strategy, Strategy::kAccumulator);
  }
}

TEST_F(RunnerStrategiesTest, PsRowsWrittenByOneElementEach) {
  const std::string prog = Write("rows.rgl", R"(param p: f32[40] = uniform(0, 1, seed=3)
accum s: f32
for ep in 0..2 {
  parallel for (n) in range(40) { p[n] = p[n] * 0.5 + n }
  s = 0
  parallel for (n) in range(40) { s += p[n] }
  print("s", s)
}
)");
  RunnerClusterOptions o;
  o.batch = 3;  // several steps, the last one partial
  auto c = RunAndCompare(prog, o);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->plan().loops[0].schedule.kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(ParamOf(*c, 0, "p").strategy, Strategy::kPs);
  EXPECT_GT(c->totals().at("bytes.ps"), 0);
}

TEST_F(RunnerStrategiesTest, RelaxedPsDeltasAddUpWithRowsPulledAhead) {
  // Sums commute: whatever the interleaving, the deltas must add up to the
  // serial sums exactly once (rows pulled a step ahead keep this worker's
  // own last updates, and no delta is counted twice). The row is no loop
  // coordinate (c[j] would be cut 1-D by j and stay local).
  const std::string prog = Write("count.rgl", R"(data r = triples("r.csv")
param c: f32[r.cols] = zeros()
for ep in 0..3 {
  parallel for (i, j, v) in r relax c { c[(i + j) % r.cols] += v }
}
)");
  for (int staleness : {0, 1}) {
    SCOPED_TRACE("staleness " + std::to_string(staleness));
    RunnerClusterOptions o;
    o.staleness = staleness;
    o.batch = 4;
    auto c = RunAndCompare(prog, o);
    ASSERT_NE(c, nullptr);
    // Only added to: a sum (reduce), whose rows go through the servers.
    EXPECT_EQ(ParamOf(*c, 0, "c").strategy, Strategy::kReduce);
    EXPECT_EQ(analysis::Mechanism(ParamOf(*c, 0, "c")), Strategy::kPs);
  }
}

TEST_F(RunnerStrategiesTest, OneWorkerPullingAheadSeesItsOwnLastStep) {
  // With one worker a relaxed run is the serial run, step for step, even for
  // an update that is not a sum: the rows pulled ahead wait for its clock.
  const std::string prog = Write("decay.rgl", R"(data r = triples("r.csv")
param c: f32[r.cols] = fill(1.0)
for ep in 0..2 {
  parallel for (i, j, v) in r relax c { c[j] = 0.5 * c[j] + v }
}
)");
  RunnerClusterOptions o;
  o.workers = 1;
  o.servers = 2;
  o.staleness = 1;
  o.batch = 5;
  ASSERT_NE(RunAndCompare(prog, o), nullptr);
}

TEST_F(RunnerStrategiesTest, AllreduceReplicasStayEqual) {
  // `w = w + ...` reads w, so it is relaxed and summed by AllReduce (with
  // `+=` alone it would be a sum, `reduce`), and the update commutes, so
  // every interleaving ends at the serial values.
  const std::string prog = Write("dense.rgl", R"(data d = dense_csv("d.csv", label=0)
param w: f32[d.dim] = zeros()
accum s: f32
for ep in 0..2 {
  parallel for (n, row) in d relax w { w = w + 0.01 * row.x }
  s = 0
  parallel for (n, row) in d { s += dot(w, row.x) }
  print("ep", ep, "s", s)
}
)");
  RunnerClusterOptions o;
  o.batch = 4;
  o.sync_every = 2;
  auto c = RunAndCompare(prog, o);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ParamOf(*c, 0, "w").strategy, Strategy::kAllreduce);
  EXPECT_EQ(ParamOf(*c, 1, "w").strategy, Strategy::kReplicated);
  EXPECT_GT(c->totals().at("bytes.allreduce.collective"), 0);
  ASSERT_EQ(c->replica_hashes().size(), 2u);  // one per run of loop 0
  for (const auto& h : c->replica_hashes()) {
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0], h[1]);
  }
}

// Workers holding only their part of a corpus (exec/hold_plan.h) plan from
// the rows their own sampled elements touch, exchanged through the store:
// the mini-batch and the hot rows are those of workers that hold it all.
TEST_F(RunnerStrategiesTest, WorkersHoldingTheirPartPlanFromTheSameSample) {
  {
    std::ofstream text(dir_ + "/corpus.txt");
    uint64_t x = 99;
    for (int k = 0; k < 6000; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t r = (x >> 33) % 1000;
      // Three frequent words and a few others.
      text << "w" << (r < 900 ? r % 3 : r % 7) << (k % 17 == 16 ? "\n" : " ");
    }
  }
  const std::string prog = Write("w2v.rgl", R"(data corpus = tokens("corpus.txt")
param emb: f32[corpus.vocab, 1] = uniform(-0.1, 0.1, seed=1)
param ctx: f32[corpus.vocab, 1] = zeros()
accum loss: f32
for ep in 0..2 {
  parallel for (t, w) in corpus relax emb, ctx {
    for c in window(corpus, t, 2) {
      let s = dot(emb[w], ctx[c])
      ctx[c] += 0.05 * (1 - sigmoid(s)) * emb[w]
      let o = negative(corpus)
      let sn = dot(emb[w], ctx[o])
      ctx[o] -= 0.05 * sigmoid(sn) * emb[w]
      loss += log1pexp(0 - s) + log1pexp(sn)
    }
  }
}
)");
  // Rigel's mini-batch from the hot share, then hot rows in mini-batches
  // long enough to have some.
  for (int64_t batch : {0, 256}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::map<std::string, double> totals[2];
    for (bool parts : {true, false}) {
      SCOPED_TRACE(parts ? "parts" : "whole");
      RunnerClusterOptions o;
      o.workers = 3;
      o.staleness = 1;
      o.batch = batch;
      o.data_parts = parts;
      auto c = RunnerCluster::Start(prog, o);
      ASSERT_TRUE(c.ok()) << c.status().message();
      auto got = (*c)->Run();
      ASSERT_TRUE(got.ok()) << got.status().message();
      totals[parts] = (*c)->totals();
      // Each worker shared its sample's counts only when it holds its part.
      const std::string key =
          "rigel/samples/loop0/run0/n" +
          std::to_string(batch > 0 ? analysis::kHotSample : analysis::kBatchSample) + "/w2/n";
      auto shared = (*c)->store().Get(key, std::chrono::milliseconds(0));
      EXPECT_EQ(shared.ok(), parts) << shared.status().message();
    }
    for (const char* m : {"batch", "relaxed.hot_candidates.ctx"}) {
      ASSERT_TRUE(totals[1].count(m)) << m;
      EXPECT_EQ(totals[1].at(m), totals[0].at(m)) << m;
    }
    if (batch > 0) {
      EXPECT_GT(totals[1].at("relaxed.hot_candidates.ctx"), 0);
    }
  }
}

TEST_F(RunnerStrategiesTest, TasksThatDoNotFitAreRefusedNamingTheField) {
  const std::string prog = Write("mu.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
accum total: f32
parallel for (i, j, v) in r { total += v }
let mu = total / r.count
parallel for (i, j, v) in r { b[i] += 0.1 * (v - mu - b[i]) }
)");
  auto c = RunnerCluster::Start(prog, RunnerClusterOptions{});
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto loaded = data::LoadTriples(dir_ + "/r.csv", {});
  ASSERT_TRUE(loaded.ok());
  auto cuts = analysis::MakeCuts((*c)->plan().loops[1], 2, *loaded);
  ASSERT_TRUE(cuts.ok());
  auto expect = [&](const TaskSpec& t, const std::string& prefix) {
    auto r = (*c)->RunTask(t);
    ASSERT_FALSE(r.ok()) << prefix;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(prefix, 0), 0u) << r.status().message();
  };
  TaskSpec t;
  t.loop = 1;
  t.cuts = *cuts;
  expect(t, "task.run.outer: lacks driver value");
  t.loop = 7;
  expect(t, "task.loop: loop 7; the program has 2");
  t.loop = 1;
  t.cuts.workers = 3;
  expect(t, "task.run.cuts.workers: cuts for 3 workers; the cluster has 2");
  t.cuts = *cuts;
  t.cuts.axes[0].bounds.back() += 5;
  expect(t, "task: cuts: axes[0]: extent");
}

}  // namespace
}  // namespace rigel::worker
