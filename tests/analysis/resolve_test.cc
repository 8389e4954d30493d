// analysis/sync/resolve.h: one answer, for the worker, the cost probe and the
// memory model alike, to how each loop's parameters are kept once the job's
// options are known (which are row cached, how many rows each cache holds,
// which local rows stay on the workers).
#include "analysis/sync/resolve.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "analysis/sync/units.h"
#include "kernel/key_slice.h"
#include "tests/analysis/run_util.h"

namespace rigel::analysis::sync {
namespace {

// W is relaxed and read by rows, H relaxed and read whole, b a sum, c local.
const char* kProgram = R"(data r = triples("r.csv")
param W: f32[r.rows, 8] = zeros()
param V: f32[r.cols, 4] = zeros()
param H: f32[8] = zeros()
param b: f32[r.rows] = zeros()
for ep in 0..2 {
  parallel for (i, j, v) in r relax W, V, H {
    let s = dot(W[i], H) + dot(V[j], V[j])
    W[i] += (v - s) * H
    V[j] += 0.1 * V[j]
    H += 0.01 * W[i]
    b[i] += v
  }
}
)";

std::vector<ParamShape> Shapes() {
  return {{"W", 1000, 8}, {"V", 3000, 4}, {"H", 8, 1}, {"b", 1000, 1}};
}

const PlanParam* Find(const Resolved& r, int loop, int param) {
  for (const PlanParam& p : r.loops[static_cast<size_t>(loop)]) {
    if (p.index == param) return &p;
  }
  return nullptr;
}

TEST(Resolve, RelaxedSparsePsParametersAreRowCachedUnlessTheJobIsSynchronous) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Resolved r = Resolve(prog, *plan, Shapes(), {});
  ASSERT_EQ(r.loops.size(), plan->loops.size());
  const PlanParam* w = Find(r, 0, 0);
  const PlanParam* h = Find(r, 0, 2);
  const PlanParam* b = Find(r, 0, 3);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(h, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(w->cached);
  EXPECT_TRUE(w->relaxed);
  EXPECT_FALSE(w->partial);  // both caches fit the default 1 GiB whole
  EXPECT_TRUE(w->scaled);
  EXPECT_EQ(r.cache_rows[0], 1000);
  EXPECT_EQ(r.cache_rows[1], 3000);
  // Read whole: kept by allreduce, never cached.
  EXPECT_TRUE(h->whole);
  EXPECT_FALSE(h->cached);
  EXPECT_EQ(r.cache_rows[2], 0);
  // A sum's merged deltas are its value: relaxed pulls, no cache.
  EXPECT_TRUE(b->sum);
  EXPECT_TRUE(b->relaxed);
  EXPECT_FALSE(b->cached);
  EXPECT_FALSE(r.cached(3));

  JobSync sync;
  sync.staleness = 0;
  const Resolved s = Resolve(prog, *plan, Shapes(), sync);
  EXPECT_FALSE(Find(s, 0, 0)->cached);
  EXPECT_FALSE(s.cached(0));
  EXPECT_FALSE(s.cached(1));

  JobSync plain;
  plain.scaled_merges = false;
  EXPECT_FALSE(Find(Resolve(prog, *plan, Shapes(), plain), 0, 0)->scaled);
}

TEST(Resolve, CachesShareTheBudgetInProportionToTheirWholeSize) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  // Whole, W takes 1000 x 72 bytes and V 3000 x 56: 240,000 in all.
  JobSync job;
  job.cache_bytes = 120'000;  // half of it
  const Resolved r = Resolve(prog, *plan, Shapes(), job);
  EXPECT_EQ(r.cache_rows[0], 500);
  EXPECT_EQ(r.cache_rows[1], 1500);
  EXPECT_TRUE(Find(r, 0, 0)->partial);
  EXPECT_TRUE(Find(r, 0, 1)->partial);
  // Partial in every loop that touches them: no worker holds them whole.
  EXPECT_TRUE(r.held_in_part(0));
  EXPECT_TRUE(r.held_in_part(1));
  EXPECT_FALSE(r.held_in_part(2));
  EXPECT_FALSE(r.held_in_part(3));
  // At least one row, however small the budget.
  job.cache_bytes = 1;
  EXPECT_EQ(Resolve(prog, *plan, Shapes(), job).cache_rows[0], 1);
  // Exactly the whole size: held whole.
  job.cache_bytes = 240'000;
  const Resolved whole = Resolve(prog, *plan, Shapes(), job);
  EXPECT_EQ(whole.cache_rows[0], 1000);
  EXPECT_FALSE(Find(whole, 0, 0)->partial);
  EXPECT_FALSE(whole.held_in_part(0));
}

TEST(Resolve, ALocalParameterNoOtherLoopTouchesIsHeldBetweenRuns) {
  const ir::Program prog = Compile(R"(data r = triples("r.csv")
param R: f32[r.rows] = zeros()
for ep in 0..2 {
  parallel for (i, j, v) in r {
    R[i] += v
  }
}
)");
  auto plan = MakePlan(prog, {.workers = 2});
  ASSERT_TRUE(plan.ok());
  const Resolved r = Resolve(prog, *plan, {{"R", 100, 1}}, {});
  ASSERT_EQ(r.loops[0].size(), 1u);
  EXPECT_EQ(r.loops[0][0].strategy, Strategy::kLocal);
  EXPECT_TRUE(r.loops[0][0].held);
  EXPECT_TRUE(r.loops[0][0].scalar);
}

TEST(Resolve, ACacheOfALargeTableFetchesOnlyTheRowsTheStepsTouch) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  // W at 4 MiB exactly is fetched whole; one row more and it is partial,
  // although the default budget holds it whole.
  std::vector<ParamShape> shapes = Shapes();
  shapes[0].rows = kFetchWholeBytes / (8 * 4);
  Resolved r = Resolve(prog, *plan, shapes, {});
  EXPECT_EQ(r.cache_rows[0], shapes[0].rows);
  EXPECT_FALSE(Find(r, 0, 0)->partial);
  shapes[0].rows += 1;
  r = Resolve(prog, *plan, shapes, {});
  EXPECT_EQ(r.cache_rows[0], shapes[0].rows);
  EXPECT_TRUE(Find(r, 0, 0)->partial);
  EXPECT_FALSE(Find(r, 0, 1)->partial);  // V stays small
  EXPECT_TRUE(r.held_in_part(0));
  EXPECT_FALSE(r.held_in_part(1));
}

// A table one loop caches in part and another only reads (a test loop) is
// read there through the same cache: held in part, never whole.
TEST(Resolve, ATableCachedInPartIsReadThroughItsCacheByALoopThatOnlyReadsIt) {
  const ir::Program prog = Compile(R"(data r = triples("r.csv")
param W: f32[r.rows, 8] = zeros()
accum s: f32
for ep in 0..2 {
  parallel for (i, j, v) in r relax W {
    W[i] += v * W[i]
  }
  s = 0
  parallel for (i, j, v) in r {
    s += W[i, 0]
  }
}
)");
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  JobSync job;
  job.cache_bytes = 1000;
  const Resolved r = Resolve(prog, *plan, {{"W", 1000, 8}}, job);
  EXPECT_TRUE(Find(r, 0, 0)->partial);
  const PlanParam* read = Find(r, 1, 0);
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->cached);
  EXPECT_TRUE(read->partial);
  EXPECT_FALSE(read->relaxed);
  EXPECT_EQ(UnitOf(*read)->name(), "cache");
  EXPECT_TRUE(r.held_in_part(0));
  // `rigel explain --memory` says so beside the plan's `replicated`.
  const std::string report = Explain(prog, *plan, r);
  EXPECT_NE(report.find("not copied whole: read exactly through it; held in part: each worker's "
                        "row cache holds at most "),
            std::string::npos)
      << report;
  // Held whole (the default budget): the reading loop keeps its copy.
  const Resolved whole = Resolve(prog, *plan, {{"W", 1000, 8}}, {});
  EXPECT_EQ(UnitOf(*Find(whole, 1, 0))->name(), "replicated");
  EXPECT_FALSE(whole.held_in_part(0));
}

// The worker decided "whole" from the loop's key slice, the memory model from
// the plan: Resolve reads the plan's, which must be the slice's for every
// example.
TEST(Resolve, ThePlansWholeAccessesAreTheKeySlicesInEveryExample) {
  int checked = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(RIGEL_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".rgl") continue;
    auto prog = frontend::CompileFile(e.path().string(), {});
    ASSERT_TRUE(prog.ok()) << e.path() << ": " << prog.status().message();
    auto plan = MakePlan(*prog, {.workers = 4});
    ASSERT_TRUE(plan.ok()) << e.path();
    for (const LoopPlan& lp : plan->loops) {
      const std::vector<bool> whole = kernel::KeySlice::SliceWhole(*prog, lp.id);
      for (const ParamPlan& pp : lp.params) {
        if (pp.is_accum) continue;
        EXPECT_EQ(pp.dense, static_cast<bool>(whole[static_cast<size_t>(pp.index)]))
            << e.path() << " loop " << lp.id << " " << pp.name;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace rigel::analysis::sync
