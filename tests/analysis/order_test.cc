// Schedules as iteration orders: the wavefront is implemented (blocks by
// anti-diagonal of the skewed space keep every dependence, and running them
// gives exactly the lexicographic result), and the 2-D rotation's blocks on
// one step share no row and no column.
#include "analysis/order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analysis/partition.h"
#include "analysis/plan.h"
#include "data/held.h"
#include "tests/analysis/run_util.h"

namespace rigel::analysis {
namespace {

// Every dependence distance: the later iteration runs on a later step, or in
// the same block after the earlier one. Returns the number of violations.
int Violations(const LoopPlan& lp, int workers, int64_t n, int64_t m) {
  std::vector<int64_t> extent = {n, m};
  int bad = 0;
  for (const Dependence& d : lp.dependences) {
    for (const Distance& dist : d.distances) {
      EXPECT_TRUE(dist.Constant());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          int64_t i2 = i + dist.dist[0], j2 = j + dist.dist[1];
          if (i2 < 0 || i2 >= n || j2 < 0 || j2 >= m) continue;
          Placement a = Place(lp, workers, extent, {i, j}, i * m + j, n * m);
          Placement b = Place(lp, workers, extent, {i2, j2}, i2 * m + j2, n * m);
          bool ok =
              a.step < b.step || (a.step == b.step && a.worker == b.worker && a.block == b.block);
          bad += !ok;
        }
      }
    }
  }
  return bad;
}

const char* kSkewed = R"(const N = 37
const M = 29
param A: f32[N + 1, M + 1] = uniform(0, 1, seed=3)
parallel ordered for (i, j) in grid(N, M) { A[i + 1, j] = 0.5 * A[i, j + 1] + 0.25 * A[i + 1, j] + 0.1 }
)";

TEST(Wavefront, BlocksKeepEveryDependenceAndGiveTheSerialResult) {
  for (const char* text : {kSkewed}) {
    auto prog = Compile(text);
    for (int workers : {1, 2, 3, 5}) {
      auto plan = MakePlan(prog, {workers});
      ASSERT_TRUE(plan.ok());
      const LoopPlan& lp = plan->loops[0];
      ASSERT_EQ(lp.schedule.kind, ScheduleKind::kWavefront);
      EXPECT_EQ(Violations(lp, workers, 37, 29), 0) << "workers " << workers;
      std::vector<float> serial = RunWith(prog, nullptr);
      std::vector<float> blocked =
          RunWith(prog, [&](const data::Dataset& d) { return ScheduleOrder(lp, workers, d); });
      EXPECT_EQ(serial, blocked) << "workers " << workers;
    }
  }
}

TEST(Wavefront, TheDslProgramRunsByAntiDiagonals) {
  auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/wavefront.rgl",
                                    {{{"N", "96"}, {"M", "80"}}});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto plan = MakePlan(*prog, {4});
  ASSERT_TRUE(plan.ok());
  const LoopPlan& lp = plan->loops[0];
  EXPECT_EQ(Violations(lp, 4, 96, 80), 0);
  // Blocks on one anti-diagonal run at the same time: steps = 4 + 8 - 1.
  std::set<int64_t> steps;
  for (int64_t i = 0; i < 96; ++i) {
    for (int64_t j = 0; j < 80; ++j) steps.insert(Place(lp, 4, {96, 80}, {i, j}, 0, 0).step);
  }
  EXPECT_EQ(steps.size(), 11u);
  std::vector<float> serial = RunWith(*prog, nullptr);
  std::vector<float> blocked =
      RunWith(*prog, [&](const data::Dataset& d) { return ScheduleOrder(lp, 4, d); });
  EXPECT_EQ(serial, blocked);
}

TEST(Wavefront, WithoutTheSkewTheCheckFails) {
  // The same blocks without the skew put dependent blocks on one step: the
  // checks above must be able to see that.
  auto prog = Compile(kSkewed);
  auto plan = MakePlan(prog, {3});
  ASSERT_TRUE(plan.ok());
  LoopPlan lp = plan->loops[0];
  lp.schedule.skew = {{1, 0}, {0, 1}};
  EXPECT_GT(Violations(lp, 3, 37, 29), 0);
  // And running in reverse order breaks the result.
  std::vector<float> serial = RunWith(prog, nullptr);
  std::vector<float> reversed = RunWith(prog, [&](const data::Dataset& d) {
    std::vector<int64_t> o(d.count);
    for (int64_t e = 0; e < d.count; ++e) o[e] = d.count - 1 - e;
    return StatusOr<std::vector<int64_t>>(o);
  });
  EXPECT_NE(serial, reversed);
}

TEST(Rotation, BlocksOnOneStepShareNoRowAndNoColumn) {
  data::Dataset d;
  d.kind = data::DataKind::kTriples;
  for (int32_t i = 0; i < 50; ++i) {
    for (int32_t j = 0; j < 40; ++j) {
      if ((i * 7 + j * 3) % 5 == 0) continue;  // sparse, like ratings
      d.ti.push_back(i);
      d.tj.push_back(j);
      d.tv.push_back(1.0f);
    }
  }
  d.count = static_cast<int64_t>(d.ti.size());
  d.rows = 50;
  d.cols = 40;
  auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl", {});
  ASSERT_TRUE(prog.ok());
  for (int workers : {2, 3, 4}) {
    auto plan = MakePlan(*prog, {workers});
    ASSERT_TRUE(plan.ok());
    const LoopPlan& lp = plan->loops[0];
    ASSERT_EQ(lp.schedule.kind, ScheduleKind::kConflictFree2D);
    // step -> worker -> (i block, j block); every step uses every block row
    // and block column at most once.
    std::map<int64_t, std::map<int, std::pair<int64_t, int64_t>>> seen;
    for (int64_t e = 0; e < d.count; ++e) {
      Placement p = Place(lp, workers, SpaceExtent(d), ElementCoords(d, e), e, d.count);
      auto [it, fresh] = seen[p.step].emplace(p.worker, std::make_pair(p.block[0], p.block[1]));
      EXPECT_EQ(it->second, std::make_pair(p.block[0], p.block[1]))
          << "a worker runs two blocks in one step";
      EXPECT_EQ(p.block[0], p.worker);
    }
    EXPECT_EQ(static_cast<int>(seen.size()), workers);
    for (const auto& [step, blocks] : seen) {
      std::set<int64_t> rows, cols;
      for (const auto& [w, b] : blocks) {
        EXPECT_TRUE(rows.insert(b.first).second) << "step " << step;
        EXPECT_TRUE(cols.insert(b.second).second) << "step " << step;
      }
    }
    auto order = ScheduleOrder(lp, workers, d);
    ASSERT_TRUE(order.ok());
    std::vector<int64_t> sorted = *order;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t e = 0; e < d.count; ++e) ASSERT_EQ(sorted[e], e);
  }
}

TEST(Order, ExecutorRefusesAnOrderThatIsNotAPermutation) {
  auto prog = Compile("param b: f32[4] = zeros()\nparallel for i in range(4) { b[i] += 1 }\n");
  exec::ExecutorOptions opts;
  opts.order = [](int, const data::Dataset&) -> StatusOr<std::vector<int64_t>> {
    return std::vector<int64_t>{0, 1, 1, 3};
  };
  auto ex = exec::SerialExecutor::Create(prog, opts);
  ASSERT_TRUE(ex.ok());
  Status st = (*ex)->Run();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a permutation"), std::string::npos) << st.message();
}

// A block is a range while its elements follow each other, and becomes a
// list at the first that does not; either reads back the same numbers.
TEST(ElementList, ConsecutiveElementsAreARangeAndAGapMakesAList) {
  ElementList l;
  for (int64_t e = 5; e < 9; ++e) l.push_back(e);
  EXPECT_TRUE(l.is_range());
  EXPECT_EQ(l.ToVector(), (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_EQ(l[2], 7);
  EXPECT_EQ(l.end() - l.begin(), 4);
  std::vector<int64_t> scratch;
  std::span<const int64_t> s = l.Span(&scratch);
  EXPECT_EQ(std::vector<int64_t>(s.begin(), s.end()), l.ToVector());
  l.push_back(11);
  EXPECT_FALSE(l.is_range());
  EXPECT_EQ(l.ToVector(), (std::vector<int64_t>{5, 6, 7, 8, 11}));
  EXPECT_EQ(l, ElementList({5, 6, 7, 8, 11}));
  EXPECT_TRUE(ElementList({3, 4, 5}).is_range());
  EXPECT_EQ(ElementList({3, 4, 5}), ElementList::Range(3, 3));
  EXPECT_TRUE(ElementList().empty());
}

// Copies share a list (a worker's steps copy its blocks); a change to one
// copies it first, leaving the other as it was.
TEST(ElementList, CopiesShareTheirListUntilOneChanges) {
  ElementList a({1, 4, 9});
  ElementList b = a;
  std::vector<int64_t> sa, sb;
  EXPECT_EQ(a.Span(&sa).data(), b.Span(&sb).data());
  b.push_back(10);
  EXPECT_EQ(a.ToVector(), (std::vector<int64_t>{1, 4, 9}));
  EXPECT_EQ(b.ToVector(), (std::vector<int64_t>{1, 4, 9, 10}));
  EXPECT_NE(a.Span(&sa).data(), b.Span(&sb).data());
}

// Held in part by a mask (the elements the cuts place on one worker), the
// blocks are that worker's blocks of the whole data set, and the other
// workers' are empty.
TEST(ElementList, AWorkerHoldingItsElementsMakesItsOwnBlocks) {
  auto prog = Compile(R"(data r = triples("none.csv")
param W: f32[r.rows, 2] = zeros()
param H: f32[r.cols, 2] = zeros()
parallel for (i, j, v) in r {
  W[i] += v * H[j]
  H[j] += v * W[i]
}
)");
  auto plan = MakePlan(prog, {3});
  ASSERT_TRUE(plan.ok());
  const LoopPlan& lp = plan->loops[0];
  ASSERT_EQ(lp.schedule.kind, ScheduleKind::kConflictFree2D);
  data::Dataset whole;
  whole.kind = data::DataKind::kTriples;
  for (int k = 0; k < 500; ++k) {
    whole.ti.push_back((k * 7) % 23);
    whole.tj.push_back((k * 11) % 19);
    whole.tv.push_back(static_cast<float>(k));
  }
  whole.count = 500;
  whole.rows = 23;
  whole.cols = 19;
  auto cuts = MakeCuts(lp, 3, whole);
  ASSERT_TRUE(cuts.ok());
  auto all = MakeStepBlocks(lp, *cuts, whole);
  ASSERT_TRUE(all.ok());
  for (int rank = 0; rank < 3; ++rank) {
    data::Dataset held = whole;
    held.ti.clear();
    held.tj.clear();
    held.tv.clear();
    held.in_part = true;
    data::UseMask(&held);
    for (int64_t e = 0; e < whole.count; ++e) {
      if (PlaceWorker(lp, *cuts, ElementCoords(whole, e), e) != rank) continue;
      data::AppendColumnsAt(whole, e, &held);
      data::MarkHeld(e, &held);
    }
    data::SetFastRange(&held);
    auto mine = MakeStepBlocks(lp, *cuts, held);
    ASSERT_TRUE(mine.ok()) << mine.status().message();
    ASSERT_EQ(mine->steps(), all->steps());
    for (size_t t = 0; t < all->blocks.size(); ++t) {
      for (int w = 0; w < 3; ++w) {
        if (w == rank) {
          EXPECT_EQ(mine->blocks[t][w], all->blocks[t][w]) << "step " << t;
        } else {
          EXPECT_TRUE(mine->blocks[t][w].empty());
        }
      }
    }
  }
}

// A data-parallel loop's blocks are ranges (a worker keeps every worker's
// blocks: lists would take 8 bytes per element of the data set), and a 2-D
// loop's, cut by coordinates, lists; both in ScheduleOrder's order.
TEST(ElementList, DataParallelBlocksAreRanges) {
  auto prog = Compile(R"(param A: f32[8, 6] = zeros()
accum s: f32
parallel for (i, j) in grid(8, 6) { s += A[i, j] }
parallel for (i, j) in grid(8, 6) { A[i, j] += 1 }
)");
  auto plan = MakePlan(prog, {3});
  ASSERT_TRUE(plan.ok());
  data::Dataset grid = data::MakeGrid(8, 6);
  for (const LoopPlan& lp : plan->loops) {
    auto cuts = MakeCuts(lp, 3, grid);
    ASSERT_TRUE(cuts.ok()) << cuts.status().message();
    auto blocks = MakeStepBlocks(lp, *cuts, grid);
    ASSERT_TRUE(blocks.ok());
    std::vector<int64_t> order;
    bool ranges = true;
    for (const auto& step : blocks->blocks) {
      for (const ElementList& b : step) {
        ranges = ranges && b.is_range();
        order.insert(order.end(), b.begin(), b.end());
      }
    }
    EXPECT_EQ(order, *ScheduleOrder(lp, *cuts, grid)) << ScheduleKindName(lp.schedule.kind);
    if (lp.schedule.kind == ScheduleKind::kDataParallel) {
      EXPECT_TRUE(ranges);
    }
  }
}

}  // namespace
}  // namespace rigel::analysis
