// Which data sets a worker holds in part, and which elements (exec/hold_plan.h).
#include "exec/hold_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "analysis/batch.h"
#include "analysis/order.h"
#include "analysis/partition.h"
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

// Matrix factorisation: a 2-D loop over the training part and a
// data-parallel test loop. Each worker keeps, as it reads the file, the
// training elements the cuts place on it (every step's block of its row of
// blocks) and its block of the test part, and nothing else.
TEST(HoldPlan, AWorkerOfACutByCoordinatesKeepsTheElementsTheCutsPlaceOnIt) {
  const std::string path = testing::TempDir() + "/hold_mf.csv";
  {
    std::ofstream out(path);
    for (int k = 0; k < 3000; ++k) out << (k * 37) % 101 << "," << (k * 53) % 89 << ",1.5\n";
  }
  Compiled c = Compile(R"(
data r = triples(")" + path +
                           R"(", sep=",")
data train, test = split(r, test=0.2, seed=5)
param W: f32[r.rows, 4] = uniform(-0.1, 0.1)
param H: f32[r.cols, 4] = uniform(-0.1, 0.1)
accum sq: f32
for ep in 0..1 {
  parallel for (i, j, v) in train {
    let e = v - dot(W[i], H[j])
    let wi = W[i]
    W[i] = wi + 0.01 * e * H[j]
    H[j] = H[j] + 0.01 * e * wi
  }
  parallel for (i, j, v) in test {
    let e = v - dot(W[i], H[j])
    sq += e * e
  }
}
)",
                       3);
  ASSERT_EQ(c.plan.loops[0].schedule.kind, analysis::ScheduleKind::kConflictFree2D);
  EXPECT_TRUE(HoldsInPart(c.prog, c.plan, 0, true));
  // Its blocks' rows are exchanged through the store.
  EXPECT_FALSE(HoldsInPart(c.prog, c.plan, 0, false));
  EXPECT_EQ(LoopsCutBeforeLoad(c.prog, c.plan, true), std::vector<int>{0});
  EXPECT_TRUE(LoopsCutBeforeLoad(c.prog, c.plan, false).empty());
  EXPECT_TRUE(ReadThroughPartsOnly(c.prog, 0));
  EXPECT_FALSE(ReadThroughPartsOnly(c.prog, 1));

  auto whole = data::LoadTriples(path, data::TriplesOptions{});
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  auto parts = data::SplitDataset(*whole, 0.2, 5);
  ASSERT_TRUE(parts.ok());
  const data::Dataset& train = parts->first;
  auto cuts = analysis::MakeCuts(c.plan.loops[0], 3, train);
  ASSERT_TRUE(cuts.ok());
  auto blocks = analysis::MakeStepBlocks(c.plan.loops[0], *cuts, train);
  ASSERT_TRUE(blocks.ok());
  data::Dataset shape = *whole;
  shape.shape_only = true;
  EXPECT_FALSE(HeldFilter(c.prog, c.plan, 0, 3, {}, 0, shape, false).ok())
      << "no cuts for the 2-D loop";
  std::vector<int> holders(static_cast<size_t>(whole->count));
  for (int rank = 0; rank < 3; ++rank) {
    auto keep = HeldFilter(c.prog, c.plan, rank, 3, {{0, *cuts}}, 0, shape, false);
    ASSERT_TRUE(keep.ok()) << keep.status().message();
    ASSERT_NE(keep->get(), nullptr);
    std::vector<bool> kept;
    for (int64_t e = 0; e < whole->count; ++e) kept.push_back((*keep)->Keep(*whole, e, e));
    // The training elements of its blocks, by their numbers in the part.
    std::vector<bool> mine(static_cast<size_t>(train.count));
    for (const auto& step : blocks->blocks) {
      for (int64_t n : step[static_cast<size_t>(rank)]) mine[static_cast<size_t>(n)] = true;
    }
    const int64_t tests = parts->second.count;
    int64_t n_train = 0, n_test = 0;
    for (int64_t e = 0; e < whole->count; ++e) {
      if (data::InTestPart(5, e, 0.2)) {
        // Test elements: its third of the test part, by number.
        const analysis::AxisCuts thirds = analysis::EqualAxisCuts(tests, 3);
        const bool block = thirds.Part(n_test) == rank;
        EXPECT_EQ(kept[static_cast<size_t>(e)], block) << "test element " << n_test;
        ++n_test;
      } else {
        EXPECT_EQ(kept[static_cast<size_t>(e)], mine[static_cast<size_t>(n_train)])
            << "training element " << n_train;
        ++n_train;
      }
      holders[static_cast<size_t>(e)] += kept[static_cast<size_t>(e)];
    }
  }
  // Each element is held by exactly one worker.
  for (int64_t e = 0; e < whole->count; ++e) EXPECT_EQ(holders[static_cast<size_t>(e)], 1) << e;
}

}  // namespace
}  // namespace rigel::exec
