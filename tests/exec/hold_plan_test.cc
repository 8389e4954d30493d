// Which data sets a worker holds in part, and which elements (exec/hold_plan.h).
#include "exec/hold_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/batch.h"
#include "analysis/plan.h"
#include "analysis/relaxed.h"
#include "frontend/compile.h"

namespace rigel::exec {
namespace {

struct Compiled {
  ir::Program prog;
  analysis::Plan plan;
};

Compiled Compile(const std::string& text, int workers) {
  auto prog = frontend::CompileText(text, testing::TempDir() + "/hold.rgl", {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  analysis::PlanOptions po;
  po.workers = workers;
  auto plan = analysis::MakePlan(*prog, po);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return {std::move(prog).value(), std::move(plan).value()};
}

data::Dataset Shape(data::DataKind kind, int64_t count) {
  data::Dataset d;
  d.kind = kind;
  d.count = count;
  d.shape_only = true;
  d.dim = 4;
  d.vocab = 10;
  return d;
}

// A sparse update through the servers: each worker runs its block, so holds
// it; the planner's samples are held too only when the workers do not
// exchange what their samples touch.
TEST(HoldPlan, AWorkerHoldsItsBlockAndTheSamplesOnlyWhenAsked) {
  Compiled c = Compile(R"(
data s = libsvm("none.svm")
param w: f32[s.dim] = zeros()
for ep in 0..1 {
  parallel for (n, row) in s { for (f, x) in row.features { w[f] -= 0.1 * x * row.label } }
}
)",
                       4);
  ASSERT_TRUE(HoldsInPart(c.prog, c.plan, 0, true));
  const data::Dataset shape = Shape(data::DataKind::kLibsvm, 100000);
  auto bare = HeldRanges(c.prog, c.plan, 1, 4, 0, shape, /*samples=*/false);
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  ASSERT_EQ(bare->size(), 1u);
  EXPECT_EQ((*bare)[0].first, 25000);
  EXPECT_EQ((*bare)[0].end, 50000);
  auto sampled = HeldRanges(c.prog, c.plan, 1, 4, 0, shape, /*samples=*/true);
  ASSERT_TRUE(sampled.ok()) << sampled.status().message();
  // Its block and the samples of the three other blocks.
  EXPECT_GT(data::RangesCount(*sampled), 25000 + 3 * analysis::kBatchSample / 4);
  EXPECT_LT(data::RangesCount(*sampled), 25000 + analysis::kBatchSample + analysis::kHotSample);
}

// A parameter updated whole every step: the mini-batches are stretches of
// the serial order over every worker's block, so the data are held whole.
TEST(HoldPlan, ALoopThatUpdatesAParameterWholeHoldsItsDataWhole) {
  Compiled c = Compile(R"(
data d = dense_csv("none.csv", label=0)
param w: f32[d.dim] = zeros()
for ep in 0..1 {
  parallel for (n, row) in d relax w {
    let z = dot(w, row.x)
    w -= 0.1 * (sigmoid(z) - row.label) * row.x
  }
}
)",
                       3);
  EXPECT_FALSE(HoldsInPart(c.prog, c.plan, 0, true));
}

// A relaxed ps parameter written at rows that depend only on the elements:
// its rows with one writer are found from every worker's elements, which
// workers holding their part exchange; without an exchange it is held whole.
TEST(HoldPlan, RowsWithOneWriterNeedTheExchangeToHoldInPart) {
  Compiled c = Compile(R"(
data r = triples("none.csv")
param W: f32[r.rows, 4] = uniform(-0.1, 0.1)
param H: f32[r.cols, 4] = uniform(-0.1, 0.1)
for ep in 0..1 {
  parallel for (i, j, v) in r relax W, H {
    let e = v - dot(W[i], H[j])
    W[i] += 0.01 * e * H[j]
    H[j] += 0.01 * e * W[i]
  }
}
)",
                       2);
  ASSERT_EQ(c.plan.loops[0].schedule.kind, analysis::ScheduleKind::kDataParallel);
  EXPECT_TRUE(HoldsInPart(c.prog, c.plan, 0, true));
  EXPECT_FALSE(HoldsInPart(c.prog, c.plan, 0, false));
}

// A window centred on the loop's position: the radius around the block.
TEST(HoldPlan, AWindowAddsItsRadiusAroundTheBlock) {
  Compiled c = Compile(R"(
data c = tokens("none.txt")
accum z: f32
for ep in 0..1 {
  parallel for (t, v) in c {
    for u in window(c, t, 3) { z += u * v }
  }
}
)",
                       2);
  ASSERT_TRUE(HoldsInPart(c.prog, c.plan, 0, true));
  auto held = HeldRanges(c.prog, c.plan, 1, 2, 0, Shape(data::DataKind::kTokens, 1000),
                         /*samples=*/false);
  ASSERT_TRUE(held.ok()) << held.status().message();
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ((*held)[0].first, 500 - 3);
  EXPECT_EQ((*held)[0].end, 1000);
}

}  // namespace
}  // namespace rigel::exec
