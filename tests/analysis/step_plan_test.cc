// The step planner (analysis/step_plan.h) on small hand-written blocks and row
// functions: data-parallel mini-batches (sparse and dense), 1-D model
// parallel, the 2-D rotation's columns, a wavefront's shared rows, when rows
// go through the servers per step, and the edge cases (empty blocks, a last
// partial batch, one worker, strategies a schedule cannot have).
#include "analysis/step_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "analysis/batch.h"

namespace rigel::analysis {
namespace {

using analysis::ScheduleKind;
using analysis::Strategy;
using Rows = std::vector<std::vector<int64_t>>;

analysis::StepBlocks Blocks(int workers, std::vector<Rows> blocks) {
  analysis::StepBlocks b;
  b.workers = workers;
  for (Rows& step : blocks) b.blocks.emplace_back(step.begin(), step.end());
  return b;
}

PlanInput Input(ScheduleKind kind, int rank, int workers, std::vector<PlanParam> params,
                int64_t batch = 0) {
  PlanInput in;
  in.kind = kind;
  in.rank = rank;
  in.workers = workers;
  in.batch = batch;
  in.params = 2;
  in.loop_params = std::move(params);
  return in;
}

PlanParam Param(int index, Strategy s, bool written = true, bool relaxed = false,
                bool whole = false) {
  return PlanParam{index, s, written, relaxed, whole};
}

// A row function from a table: element e touches rows touched[p][e] of
// parameter p (sorted, distinct per call, as the worker's prefetch slice
// gives them). Counts its calls.
struct TableRows {
  std::vector<std::map<int64_t, std::vector<int64_t>>> touched;
  int calls = 0;

  RowsFn Fn() {
    return [this](std::span<const int64_t> elements) -> StatusOr<Rows> {
      ++calls;
      Rows out(touched.size());
      for (size_t p = 0; p < touched.size(); ++p) {
        std::set<int64_t> rows;
        for (int64_t e : elements) {
          auto it = touched[p].find(e);
          if (it != touched[p].end()) rows.insert(it->second.begin(), it->second.end());
        }
        out[p].assign(rows.begin(), rows.end());
      }
      return out;
    };
  }
};

TEST(PlanSteps, ALoopWritingOnlySumsThroughTheServersRunsItsBlockInOneStep) {
  auto b = Blocks(2, {{{0, 1, 2, 3, 4}, {5, 6, 7}}});
  PlanParam sum = Param(0, Strategy::kPs, true, true);
  sum.sum = true;
  auto read = Param(1, Strategy::kReplicated, false);
  EXPECT_EQ(StepBatch(Input(ScheduleKind::kDataParallel, 0, 2, {sum, read})), 0);
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 0, 2, {sum, read}), b),
            (Rows{{0, 1, 2, 3, 4}}));
  // --batch still cuts it; a written parameter that is not a sum cuts it too.
  EXPECT_EQ(StepBatch(Input(ScheduleKind::kDataParallel, 0, 2, {sum, read}, 2)), 2);
  auto ps = Param(1, Strategy::kPs, true, true);
  EXPECT_GT(StepBatch(Input(ScheduleKind::kDataParallel, 0, 2, {sum, ps})), 0);
  // A sum read or written whole goes through the collectives every batch.
  PlanParam dense = Param(0, Strategy::kAllreduce, true, true, true);
  dense.sum = true;
  EXPECT_GT(StepBatch(Input(ScheduleKind::kDataParallel, 0, 2, {dense})), 0);
}

TEST(PlanSteps, SparseMiniBatchesEndPartialAndEveryWorkerTakesTheBusiestsSteps) {
  auto b = Blocks(2, {{{0, 1, 2, 3, 4}, {5, 6, 7}}});
  auto ps = Param(0, Strategy::kPs, true, true);
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 0, 2, {ps}, 2), b),
            (Rows{{0, 1}, {2, 3}, {4}}));
  // Worker 1 has less work but takes as many steps, the last one empty.
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 1, 2, {ps}, 2), b),
            (Rows{{5, 6}, {7}, {}}));
}

TEST(PlanSteps, DefaultBatchFollowsTheHotShareUnlessAParameterIsWhole) {
  std::vector<int64_t> all(1100);
  std::iota(all.begin(), all.end(), 0);
  auto b = Blocks(1, {{all}});
  // No shared row: the largest batch.
  Rows sparse = PlanSteps(Input(ScheduleKind::kDataParallel, 0, 1, {Param(0, Strategy::kPs)}), b);
  ASSERT_EQ(sparse.size(), 3u);  // 512 + 512 + 76
  EXPECT_EQ(sparse[0].size(), static_cast<size_t>(analysis::kMaxBatch));
  EXPECT_EQ(sparse[2].size(), 1100u - 2 * analysis::kMaxBatch);
  // Half the elements write one row: 64 / (1 x 0.5) = 128.
  PlanInput hot = Input(ScheduleKind::kDataParallel, 0, 1, {Param(0, Strategy::kPs)});
  hot.hot_share = 0.5;
  EXPECT_EQ(StepBatch(hot), 128);
  EXPECT_EQ(PlanSteps(hot, b)[0].size(), 128u);
  hot.batch = 100;  // --batch wins
  EXPECT_EQ(StepBatch(hot), 100);
  Rows dense =
      PlanSteps(Input(ScheduleKind::kDataParallel, 0, 1,
                      {Param(0, Strategy::kPs), Param(1, Strategy::kAllreduce, true, true, true)}),
                b);
  ASSERT_EQ(dense.size(),
            static_cast<size_t>((1100 + analysis::kDenseBatch - 1) / analysis::kDenseBatch));
  EXPECT_EQ(dense[0].size(), static_cast<size_t>(analysis::kDenseBatch));
  // Loops that are not cut into mini-batches.
  EXPECT_EQ(StepBatch(Input(ScheduleKind::kModelParallel1D, 0, 1, {Param(0, Strategy::kLocal)})),
            0);
  EXPECT_EQ(StepBatch(Input(ScheduleKind::kDataParallel, 0, 1, {Param(0, Strategy::kReplicated)})),
            0);
}

// analysis/batch.h: hand-computed batches. 64 / (2 x 0.95) = 33.7 -> 32;
// 64 / (3 x 0.95) = 22.5 -> 16; 64 / (2 x 0.05) = 640 -> 512.
TEST(SparseBatch, IsTheLargestPowerOfTwoWithinTheBound) {
  EXPECT_EQ(analysis::SparseBatch(2, 0.95), 32);
  EXPECT_EQ(analysis::SparseBatch(3, 0.95), 16);
  EXPECT_EQ(analysis::SparseBatch(2, 0.05), 512);
  EXPECT_EQ(analysis::SparseBatch(2, 0.0), 512);
  EXPECT_EQ(analysis::SparseBatch(1, 0.25), 256);
  EXPECT_EQ(analysis::SparseBatch(64, 1.0), analysis::kMinBatch);  // never below the minimum
}

TEST(HotShare, IsTheLargestShareOfSampledElementsThatTouchOneWrittenRow) {
  // 8 elements on 2 workers; row 7 of parameter 0 is touched by elements
  // 0, 2, 4 and 6 (a share of 1/2); parameter 1 is only read, and its row 3,
  // touched by every element, does not count.
  auto b = Blocks(2, {{{0, 1, 2, 3}, {4, 5, 6, 7}}});
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 8; ++e) {
    t.touched[0][e] = e % 2 == 0 ? std::vector<int64_t>{7, 10 + e} : std::vector<int64_t>{10 + e};
    t.touched[1][e] = {3};
  }
  PlanInput in = Input(ScheduleKind::kDataParallel, 0, 2,
                       {Param(0, Strategy::kPs, true, true), Param(1, Strategy::kPs, false)});
  auto share = HotShare(in, b, t.Fn());
  ASSERT_TRUE(share.ok()) << share.status().message();
  EXPECT_DOUBLE_EQ(*share, 0.5);
  EXPECT_EQ(t.calls, 8);  // one element per call
  // The same on the other worker, which holds the same blocks.
  in.rank = 1;
  EXPECT_DOUBLE_EQ(HotShare(in, b, t.Fn()).value(), 0.5);
  // Nothing written through the servers: 0, and no row is asked for.
  TableRows none;
  none.touched = t.touched;
  PlanInput read = Input(ScheduleKind::kDataParallel, 0, 2, {Param(1, Strategy::kPs, false)});
  EXPECT_DOUBLE_EQ(HotShare(read, b, none.Fn()).value(), 0.0);
  EXPECT_EQ(none.calls, 0);
}

// Workers that hold only their own blocks count their own sampled elements
// and merge: the same sample as one worker counting every element.
TEST(SampleRows, EachWorkersPartMergedIsTheWholeSample) {
  // 12 elements on 3 workers, 6 sampled (every other one).
  auto b = Blocks(3, {{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}});
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 12; ++e) {
    t.touched[0][e] = {e % 3, 100 + e};
    t.touched[1][e] = {e % 2};
  }
  PlanInput in = Input(ScheduleKind::kDataParallel, 0, 3,
                       {Param(0, Strategy::kPs, true, true), Param(1, Strategy::kPs, false)});
  const std::vector<bool> want = {false, true};
  auto whole = SampleRows(in, b, t.Fn(), 6, want);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->sampled, 6);
  // Rows 0, 1, 2 of parameter 0 are touched by 2 of the sampled 0, 2, 4, 6, 8, 10.
  EXPECT_EQ(whole->most, 2);
  EXPECT_TRUE(whole->counts[0].empty());  // not wanted
  std::vector<RowSample> parts;
  int calls = 0;
  for (int w = 2; w >= 0; --w) {  // in any order
    TableRows mine;
    mine.touched = t.touched;
    auto part = SampleRowsOf(in, b, mine.Fn(), 6, want, w);
    ASSERT_TRUE(part.ok()) << part.status().message();
    EXPECT_EQ(part->sampled, 2) << w;
    EXPECT_EQ(part->most, 0);
    calls += mine.calls;
    parts.push_back(*part);
  }
  EXPECT_EQ(calls, 6);  // each sampled element's rows found once, by its worker
  const RowSample merged = MergeRowSamples(in, want, parts);
  EXPECT_EQ(merged.sampled, whole->sampled);
  EXPECT_EQ(merged.most, whole->most);
  EXPECT_EQ(merged.counts, whole->counts);
  EXPECT_EQ(merged.counts[1], (std::vector<std::pair<int64_t, int64_t>>{{0, 6}}));
  EXPECT_DOUBLE_EQ(HotShareOf(merged), 2.0 / 6.0);
  EXPECT_EQ(SampledElements(b, 6, 1), (std::vector<int64_t>{4, 6}));
}

// Mini-batches over blocks of consecutive elements are found by arithmetic
// (no list of the worker's elements); over listed blocks they are lists.
// Both give the same elements.
TEST(PlanStepLists, StridedStepsAreTheListsTheyStandFor) {
  auto w = Param(0, Strategy::kAllreduce, true, true, true);  // dense: stretches
  auto p = Param(0, Strategy::kPs, true, true);               // sparse: own block
  auto ranged = Blocks(3, {{{10, 11, 12}, {13, 14, 15, 16}, {17, 18}}});
  auto listed = Blocks(3, {{{10, 12, 11}, {13, 14, 15, 16}, {17, 18}}});
  for (int rank = 0; rank < 3; ++rank) {
    for (const auto& param : {w, p}) {
      const PlanInput in = Input(ScheduleKind::kDataParallel, rank, 3, {param}, 2);
      const StepLists r = PlanStepLists(in, ranged);
      const StepLists l = PlanStepLists(in, listed);
      ASSERT_EQ(r.size(), l.size());
      std::vector<int64_t> scratch;
      int64_t n = 0;
      for (size_t k = 0; k < r.size(); ++k) {
        const auto got = r.Step(k, &scratch);
        std::vector<int64_t> want = l.ToVectors()[k];
        // The listed block's first two elements swap places.
        for (int64_t& e : want) e = e == 12 ? 11 : e == 11 ? 12 : e;
        EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), want) << rank << " " << k;
        EXPECT_EQ(r.StepSize(k), want.size());
        n += static_cast<int64_t>(want.size());
      }
      EXPECT_EQ(r.Elements(), n);
      EXPECT_EQ(static_cast<int64_t>(r.Concatenated().size()), n);
    }
  }
  // Dense stretches of 2 x 3 elements: worker 1 takes 12, 13 and then 18.
  const PlanInput in = Input(ScheduleKind::kDataParallel, 1, 3, {w}, 2);
  EXPECT_EQ(PlanStepLists(in, ranged).ToVectors(), (Rows{{12, 13}, {18}}));
  EXPECT_EQ(StepLists::Strided(5, 9, 1, 2, 3, 3).ToVectors(), (Rows{{6, 7}, {}, {}}));
}

TEST(PlanSteps, DenseBatchesTakeStretchesOfTheSerialOrder) {
  // Serial order 0..6; step k is elements [4k, 4k + 4), worker w its half.
  auto b = Blocks(2, {{{0, 1, 2}, {3, 4, 5, 6}}});
  auto w = Param(0, Strategy::kAllreduce, true, true, true);
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 0, 2, {w}, 2), b), (Rows{{0, 1}, {4, 5}}));
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 1, 2, {w}, 2), b), (Rows{{2, 3}, {6}}));
}

TEST(PlanSteps, UnbatchedLoopsRunTheirBlocksStepByStep) {
  // Only read-only parameters: a data-parallel loop is one step.
  auto dp = Blocks(2, {{{0, 1, 2}, {3}}});
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kDataParallel, 1, 2,
                            {Param(0, Strategy::kReplicated, false)}, 1),
                      dp),
            (Rows{{3}}));
  auto twod = Blocks(2, {{{0}, {1}}, {{2}, {}}});
  EXPECT_EQ(PlanSteps(Input(ScheduleKind::kConflictFree2D, 1, 2, {}), twod), (Rows{{1}, {}}));
}

TEST(PlanRows, ModelParallel1DHoldsItsRowsAndSyncsNothingPerStep) {
  // Element e touches row e / 2 of parameter 0 (local) and row 7 of 1 (read).
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 6; ++e) {
    t.touched[0][e] = {e / 2};
    t.touched[1][e] = {7};
  }
  auto b = Blocks(2, {{{0, 1, 2, 3}, {4, 5}}});
  PlanInput in = Input(ScheduleKind::kModelParallel1D, 1, 2,
                       {Param(0, Strategy::kLocal), Param(1, Strategy::kReplicated, false)});
  Rows steps = PlanSteps(in, b);
  EXPECT_EQ(steps, (Rows{{4, 5}}));
  auto plan = PlanRows(in, b, steps, t.Fn());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->params[0].held, (std::vector<int64_t>{2}));
  EXPECT_TRUE(plan->params[0].shared.empty());
  EXPECT_EQ(plan->params[1].read, (std::vector<int64_t>{7}));
  EXPECT_FALSE(plan->step_sync);
  EXPECT_FALSE(plan->prefetch);
  EXPECT_EQ(t.calls, 1);  // only this worker's elements are sliced
  EXPECT_EQ(ServerRowsAt(*plan, {{2}, {7}}), (Rows{{}, {}}));
}

TEST(PlanRows, RotationColumnsAreTheRowsOfEachBlockColumn) {
  // 2 x 2 blocks: worker a runs block (a, (a + t) mod 2) at step t. Element
  // (i, j): 0 = (0, 0), 1 = (1, 1), 2 = (0, 1), 3 = (1, 0); W keyed by i
  // stays local, H keyed by j (rows 10 + j) rotates.
  TableRows t;
  t.touched.resize(2);
  const int64_t i[] = {0, 1, 0, 1}, j[] = {0, 1, 1, 0};
  for (int64_t e = 0; e < 4; ++e) {
    t.touched[0][e] = {i[e]};
    t.touched[1][e] = {10 + j[e]};
  }
  auto b = Blocks(2, {{{0}, {1}}, {{2}, {3}}});
  PlanInput in = Input(ScheduleKind::kConflictFree2D, 0, 2,
                       {Param(0, Strategy::kLocal), Param(1, Strategy::kRotate)});
  Rows steps = PlanSteps(in, b);
  EXPECT_EQ(steps, (Rows{{0}, {2}}));
  auto plan = PlanRows(in, b, steps, t.Fn());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->params[0].held, (std::vector<int64_t>{0}));
  EXPECT_EQ(plan->params[1].columns, (Rows{{10}, {11}}));
  EXPECT_FALSE(plan->step_sync);
  // This worker's elements once, then each of the 4 blocks once, for all
  // rotating parameters together.
  EXPECT_EQ(t.calls, 1 + 4);
}

TEST(PlanRows, WavefrontBoundaryRowsGoThroughTheServersEveryStep) {
  // Anti-diagonals: step 0 worker 0 runs {0}; step 1 workers run {1} and
  // {2}; step 2 worker 1 runs {3}. Element e touches rows e and e + 1.
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 4; ++e) t.touched[0][e] = {e, e + 1};
  auto b = Blocks(2, {{{0}, {}}, {{1}, {2}}, {{}, {3}}});
  PlanInput in = Input(ScheduleKind::kWavefront, 0, 2, {Param(0, Strategy::kLocal)});
  in.staleness = 1;  // never prefetched: boundary rows are synchronous
  Rows steps = PlanSteps(in, b);
  EXPECT_EQ(steps, (Rows{{0}, {1}, {}}));
  auto plan = PlanRows(in, b, steps, t.Fn());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->params[0].shared, (std::vector<int64_t>{2}));
  EXPECT_EQ(plan->params[0].held, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(plan->step_sync);
  EXPECT_FALSE(plan->prefetch);
  EXPECT_EQ(ServerRowsAt(*plan, {{1, 2}, {}}), (Rows{{2}, {}}));
  EXPECT_EQ(ServerRowsAt(*plan, {{0, 1}, {}}), (Rows{{}, {}}));
}

TEST(PlanRows, PsRowsAreFoundStepByStepAndRelaxedOnesMayBePulledAhead) {
  TableRows t;
  t.touched.resize(2);
  auto b = Blocks(1, {{{0, 1}}});
  for (bool relaxed : {false, true}) {
    for (int staleness : {0, 1}) {
      PlanInput in = Input(ScheduleKind::kDataParallel, 0, 1,
                           {Param(0, Strategy::kPs, true, relaxed), Param(1, Strategy::kLocal)});
      in.staleness = staleness;
      auto plan = PlanRows(in, b, PlanSteps(in, b), t.Fn());
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      EXPECT_TRUE(plan->step_sync);
      EXPECT_EQ(plan->prefetch, relaxed && staleness >= 1) << relaxed << " " << staleness;
      // Every row a ps parameter touches; a local one's only when shared.
      EXPECT_EQ(ServerRowsAt(*plan, {{3, 5}, {4}}), (Rows{{3, 5}, {}}));
    }
  }
}

TEST(PlanRows, AWorkerWithNoElementsHoldsNothing) {
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 3; ++e) t.touched[0][e] = {e};
  auto b = Blocks(2, {{{0, 1, 2}, {}}});
  PlanInput in = Input(ScheduleKind::kModelParallel1D, 1, 2,
                       {Param(0, Strategy::kLocal), Param(1, Strategy::kReplicated, false)});
  Rows steps = PlanSteps(in, b);
  EXPECT_EQ(steps, (Rows{{}}));
  auto plan = PlanRows(in, b, steps, t.Fn());
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->params[0].held.empty());
  EXPECT_TRUE(plan->params[1].read.empty());
  // A data-parallel worker without elements still takes every step.
  PlanInput dp = Input(ScheduleKind::kDataParallel, 1, 2, {Param(0, Strategy::kPs)}, 2);
  EXPECT_EQ(PlanSteps(dp, b), (Rows{{}, {}}));
}

TEST(PlanRows, OneWorkerHoldsEveryRowAndRotatesNothingAway) {
  TableRows t;
  t.touched.resize(2);
  for (int64_t e = 0; e < 3; ++e) {
    t.touched[0][e] = {e};
    t.touched[1][e] = {2 - e};
  }
  auto wave = Blocks(1, {{{0}}, {{1, 2}}});
  PlanInput in = Input(ScheduleKind::kWavefront, 0, 1, {Param(0, Strategy::kLocal)});
  auto plan = PlanRows(in, wave, PlanSteps(in, wave), t.Fn());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->params[0].held, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(plan->step_sync);
  auto twod = Blocks(1, {{{0, 1, 2}}});
  PlanInput rot = Input(ScheduleKind::kConflictFree2D, 0, 1, {Param(1, Strategy::kRotate)});
  plan = PlanRows(rot, twod, PlanSteps(rot, twod), t.Fn());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->params[1].columns, (Rows{{0, 1, 2}}));
}

TEST(PlanRows, StrategiesTheScheduleCannotHaveAreInternalErrors) {
  TableRows t;
  t.touched.resize(2);
  auto b = Blocks(1, {{{0}}});
  PlanInput rot = Input(ScheduleKind::kModelParallel1D, 0, 1, {Param(0, Strategy::kRotate)});
  auto plan = PlanRows(rot, b, PlanSteps(rot, b), t.Fn());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInternal);
  EXPECT_NE(plan.status().message().find("rotate outside a conflict_free_2d"), std::string::npos);
  PlanInput rep = Input(ScheduleKind::kDataParallel, 0, 1, {Param(0, Strategy::kReplicated)});
  plan = PlanRows(rep, b, PlanSteps(rep, b), t.Fn());
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("replicated for a parameter the loop writes"),
            std::string::npos);
}

TEST(PlanRows, RowFunctionErrorsStopThePlan) {
  RowsFn failing = [](std::span<const int64_t>) -> StatusOr<Rows> {
    return OutOfRange("prog.rgl:3:5: error: index 9 out of range");
  };
  auto b = Blocks(1, {{{0}}});
  PlanInput in = Input(ScheduleKind::kModelParallel1D, 0, 1, {Param(0, Strategy::kLocal)});
  auto plan = PlanRows(in, b, PlanSteps(in, b), failing);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace rigel::analysis
