// Partition cuts: equal cuts are exactly the old equal ranges, balanced cuts
// give skewed (Zipf) data equal work per worker and step, every cut keeps the
// schedules' dependences (2-D steps share no row or column, wavefront blocks
// run after the blocks they depend on), and cuts survive a JSON round trip.
#include "analysis/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "analysis/order.h"
#include "common/hash.h"
#include "tests/analysis/run_util.h"

namespace rigel::analysis {
namespace {

ir::Program CompileExample(const std::string& name) {
  auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/" + name, {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  return std::move(prog).value();
}

LoopPlan PlanOf(const ir::Program& prog, int loop, int workers) {
  auto plan = MakePlan(prog, {workers});
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan->loops[loop];
}

// Ratings whose rows and columns are both drawn from Zipf(s) over
// [0, n) (value 0 the most frequent), `count` of them (pairs may repeat: each
// is one unit of work).
data::Dataset ZipfRatings(int64_t n, int64_t count, double s, uint64_t seed) {
  std::vector<double> cdf(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t r = 0; r < n; ++r) cdf[r] = sum += std::pow(static_cast<double>(r + 1), -s);
  SplitMix64 rng(seed);
  auto draw = [&]() {
    double u = rng.Uniform() * sum;
    return static_cast<int32_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  };
  data::Dataset d;
  d.kind = data::DataKind::kTriples;
  for (int64_t e = 0; e < count; ++e) {
    d.ti.push_back(std::min<int32_t>(draw(), static_cast<int32_t>(n - 1)));
    d.tj.push_back(std::min<int32_t>(draw(), static_cast<int32_t>(n - 1)));
    d.tv.push_back(1.0f);
  }
  d.count = count;
  d.rows = d.cols = n;
  return d;
}

data::Dataset Triples(const std::vector<std::pair<int32_t, int32_t>>& ij, int64_t rows,
                      int64_t cols) {
  data::Dataset d;
  d.kind = data::DataKind::kTriples;
  for (auto [i, j] : ij) {
    d.ti.push_back(i);
    d.tj.push_back(j);
    d.tv.push_back(1.0f);
  }
  d.count = static_cast<int64_t>(ij.size());
  d.rows = rows;
  d.cols = cols;
  return d;
}

// The equal-range part Rigel computed before cuts existed.
int64_t OldPart(int64_t x, int64_t extent, int64_t parts) {
  if (extent <= 0) return 0;
  __int128 p = static_cast<__int128>(x) * parts / extent;
  return std::clamp<int64_t>(static_cast<int64_t>(p), 0, parts - 1);
}

// Checks of conflict_free_2d placements: a worker runs one block per step,
// its block row is its own, no two workers share a block row or column on a
// step, and (what that is for) no row i or column j is touched by two workers
// on one step. Returns the number of violations.
int RotationViolations(const LoopPlan& lp, const Cuts& cuts, const data::Dataset& d) {
  int bad = 0;
  std::map<int64_t, std::map<int, std::pair<int64_t, int64_t>>> blocks;  // step -> worker -> block
  std::map<int64_t, std::map<int64_t, int>> row_owner, col_owner;        // step -> i/j -> worker
  for (int64_t e = 0; e < d.count; ++e) {
    std::vector<int64_t> x = ElementCoords(d, e);
    Placement p = Place(lp, cuts, x, e);
    auto [it, fresh] = blocks[p.step].emplace(p.worker, std::make_pair(p.block[0], p.block[1]));
    bad += it->second != std::make_pair(p.block[0], p.block[1]);
    bad += p.block[0] != p.worker;
    auto [ri, rf] = row_owner[p.step].emplace(x[lp.schedule.local_dim], p.worker);
    bad += ri->second != p.worker;
    auto [ci, cf] = col_owner[p.step].emplace(x[lp.schedule.rotate_dim], p.worker);
    bad += ci->second != p.worker;
  }
  for (const auto& [step, by_worker] : blocks) {
    std::set<int64_t> rows, cols;
    for (const auto& [w, b] : by_worker) {
      bad += !rows.insert(b.first).second;
      bad += !cols.insert(b.second).second;
    }
  }
  return bad;
}

// Every dependence distance of a 2-D grid loop: the later iteration runs on a
// later step, or in the same block (where iterations run in lexicographic
// order). Returns the number of violations.
int WavefrontViolations(const LoopPlan& lp, const Cuts& cuts, int64_t n, int64_t m) {
  int bad = 0;
  for (const Dependence& d : lp.dependences) {
    for (const Distance& dist : d.distances) {
      EXPECT_TRUE(dist.Constant());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          int64_t i2 = i + dist.dist[0], j2 = j + dist.dist[1];
          if (i2 < 0 || i2 >= n || j2 < 0 || j2 >= m) continue;
          Placement a = Place(lp, cuts, {i, j}, i * m + j);
          Placement b = Place(lp, cuts, {i2, j2}, i2 * m + j2);
          bool ok =
              a.step < b.step || (a.step == b.step && a.worker == b.worker && a.block == b.block);
          bad += !ok;
        }
      }
    }
  }
  return bad;
}

bool IsPermutation(std::vector<int64_t> order, int64_t count) {
  std::sort(order.begin(), order.end());
  for (int64_t e = 0; e < count; ++e) {
    if (order[e] != e) return false;
  }
  return static_cast<int64_t>(order.size()) == count;
}

const char* kSkewed = R"(const N = 37
const M = 29
param A: f32[N + 1, M + 1] = uniform(0, 1, seed=3)
parallel ordered for (i, j) in grid(N, M) { A[i + 1, j] = 0.5 * A[i, j + 1] + 0.25 * A[i + 1, j] + 0.1 }
)";

// --- one axis ---------------------------------------------------------------

TEST(EqualAxisCuts, AreTheOldEqualRanges) {
  for (int64_t extent = 0; extent <= 40; ++extent) {
    for (int64_t parts = 1; parts <= 9; ++parts) {
      AxisCuts a = EqualAxisCuts(extent, parts);
      ASSERT_EQ(a.parts(), parts);
      ASSERT_EQ(a.extent(), extent);
      for (int64_t x = -2; x <= extent + 2; ++x) {
        ASSERT_EQ(a.Part(x), OldPart(x, extent, parts))
            << "x " << x << " extent " << extent << " parts " << parts;
      }
    }
  }
  AxisCuts big = EqualAxisCuts(int64_t{1} << 62, 7);
  for (int64_t x : {int64_t{0}, int64_t{1} << 40, (int64_t{1} << 62) - 1}) {
    EXPECT_EQ(big.Part(x), OldPart(x, int64_t{1} << 62, 7));
  }
}

TEST(BalancedCuts, NoPartHoldsMoreThanItsShareAndTheHeaviestValue) {
  SplitMix64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    int64_t extent = 1 + static_cast<int64_t>(rng.Below(60));
    int64_t parts = 1 + static_cast<int64_t>(rng.Below(12));
    std::vector<int64_t> hist(static_cast<size_t>(extent), 0);
    std::vector<int64_t> coords;
    int shape = trial % 4;  // uniform, sparse, one heavy value, geometric
    for (int64_t v = 0; v < extent; ++v) {
      int64_t c = shape == 0   ? static_cast<int64_t>(rng.Below(5))
                  : shape == 1 ? (rng.Below(4) == 0 ? static_cast<int64_t>(rng.Below(30)) : 0)
                  : shape == 2 ? (v == extent / 3 ? 500 : static_cast<int64_t>(rng.Below(3)))
                               : static_cast<int64_t>(1000.0 / static_cast<double>(1 << (v % 12)));
      hist[v] = c;
      for (int64_t k = 0; k < c; ++k) coords.push_back(v);
    }
    int64_t total = static_cast<int64_t>(coords.size());
    int64_t heaviest = *std::max_element(hist.begin(), hist.end());
    std::vector<int64_t> shuffled = coords;
    std::reverse(shuffled.begin(), shuffled.end());
    AxisCuts a = BalancedCutsFromHistogram(hist, parts);
    ASSERT_EQ(a, BalancedCuts(shuffled, extent, parts)) << "trial " << trial;
    ASSERT_EQ(a.parts(), parts);
    ASSERT_EQ(a.bounds.front(), 0);
    ASSERT_EQ(a.extent(), extent);
    for (int64_t p = 0; p < parts; ++p) {
      if (extent >= parts) {
        ASSERT_LT(a.bounds[p], a.bounds[p + 1]) << "trial " << trial << ": an empty range";
      }
      int64_t in_part = 0;
      for (int64_t v = a.bounds[p]; v < a.bounds[p + 1]; ++v) in_part += hist[v];
      // n / parts + h, in integers: in_part * parts <= n + h * parts.
      ASSERT_LE(in_part * parts, total + heaviest * parts)
          << "trial " << trial << " part " << p << " holds " << in_part << " of " << total;
    }
    for (int64_t v = 0; v < extent; ++v) {
      int64_t p = a.Part(v);
      ASSERT_TRUE(a.bounds[p] <= v && v < a.bounds[p + 1]) << "trial " << trial << " v " << v;
    }
  }
}

TEST(BalancedCuts, FollowTheDataNotTheRange) {
  // 90 elements on values 0..2 and 10 spread over 3..99: the equal ranges
  // would give part 0 about 92 of 100.
  std::vector<int64_t> coords;
  for (int k = 0; k < 30; ++k) coords.insert(coords.end(), {0, 1, 2});
  for (int64_t v = 3; v < 100; v += 10) coords.push_back(v);
  AxisCuts a = BalancedCuts(coords, 100, 2);
  EXPECT_EQ(a.bounds, (std::vector<int64_t>{0, 2, 100}));  // 60 and 40: value 1 or 2 can't split
  EXPECT_EQ(a.Part(1), 0);
  EXPECT_EQ(a.Part(2), 1);
  EXPECT_EQ(a.Part(99), 1);
}

TEST(BalancedCuts, ExtentSmallerThanParts) {
  AxisCuts a = BalancedCuts({0, 1, 1, 1}, 2, 4);
  EXPECT_EQ(a.bounds, (std::vector<int64_t>{0, 1, 2, 2, 2}));  // each value alone, then empty
  EXPECT_EQ(a.Part(0), 0);
  EXPECT_EQ(a.Part(1), 1);
  AxisCuts none = BalancedCuts({}, 0, 3);
  EXPECT_EQ(none.bounds, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(none.Part(0), 0);
}

TEST(BalancedCuts, AllElementsOnOneValue) {
  std::vector<int64_t> coords(1000, 7);
  AxisCuts a = BalancedCuts(coords, 100, 4);
  // A value cannot be split: one part holds all 1000 (= n / parts + h bound
  // 1250), the other ranges are non-empty but hold nothing.
  for (int64_t p = 0; p < 4; ++p) EXPECT_LT(a.bounds[p], a.bounds[p + 1]);
  int64_t holder = a.Part(7);
  EXPECT_LE(a.bounds[holder], 7);
  EXPECT_GT(a.bounds[holder + 1], 7);
}

TEST(BalancedCuts, NoDataGivesEqualRanges) {
  EXPECT_EQ(BalancedCuts({}, 10, 3), EqualAxisCuts(10, 3));
  EXPECT_EQ(BalancedCutsFromHistogram(std::vector<int64_t>(10, 0), 3), EqualAxisCuts(10, 3));
}

// --- schedules ----------------------------------------------------------------

TEST(Cuts, EqualCutsGiveTheOrderRigelAlwaysGave) {
  auto mf = CompileExample("mf.rgl");
  data::Dataset d = ZipfRatings(300, 5000, 1.1, 5);
  for (int workers : {1, 2, 3, 4}) {
    LoopPlan lp = PlanOf(mf, 0, workers);
    Cuts eq = EqualCuts(lp, workers, SpaceExtent(d), d.count);
    auto a = ScheduleOrder(lp, workers, d);
    auto b = ScheduleOrder(lp, eq, d);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
    for (int64_t e = 0; e < d.count; e += 7) {
      Placement p = Place(lp, eq, ElementCoords(d, e), e);
      EXPECT_EQ(p.block[0], OldPart(d.ti[e], 300, workers));
      EXPECT_EQ(p.block[1], OldPart(d.tj[e], 300, workers));
    }
  }
}

// The problem and its fix: Zipf(1.1) ratings, 2000 x 2000, 200k of them, on
// the 2-D rotation of mf.rgl.
TEST(Cuts, ZipfRatingsGetEqualWorkPerStepWithBalancedCuts) {
  auto mf = CompileExample("mf.rgl");
  data::Dataset d = ZipfRatings(2000, 200000, 1.1, 42);
  for (int workers : {2, 3, 4}) {
    LoopPlan lp = PlanOf(mf, 0, workers);
    ASSERT_EQ(lp.schedule.kind, ScheduleKind::kConflictFree2D);
    Cuts equal = EqualCuts(lp, workers, SpaceExtent(d), d.count);
    auto balanced = MakeCuts(lp, workers, d);
    ASSERT_TRUE(balanced.ok()) << balanced.status().message();
    ASSERT_EQ(balanced->axes.size(), 2u);
    auto eq = MeasureImbalance(lp, equal, d);
    auto bal = MeasureImbalance(lp, *balanced, d);
    ASSERT_TRUE(eq.ok() && bal.ok());
    std::printf(
        "P=%d equal: cell max/mean %.3f, block-row max/mean %.3f, makespan %.3f | "
        "balanced: cell %.3f, block-row %.3f, makespan %.3f\n",
        workers, eq->cell_max_over_mean, eq->worker_max_over_mean, eq->makespan_ratio,
        bal->cell_max_over_mean, bal->worker_max_over_mean, bal->makespan_ratio);
    // The problem is real: with equal ranges the busiest block of a step does
    // several times its share, and the run takes at least 1.8 times as long.
    EXPECT_GE(eq->cell_max_over_mean, 2.0) << "P " << workers;
    EXPECT_GE(eq->makespan_ratio, 1.8) << "P " << workers;
    // Balanced: within 10% of equal work per block row, per step and block.
    EXPECT_LE(bal->worker_max_over_mean, 1.1) << "P " << workers;
    EXPECT_LE(bal->cell_max_over_mean, 1.1) << "P " << workers;
    EXPECT_LE(bal->makespan_ratio, 1.1) << "P " << workers;
    // Still the rotation: P steps, no row or column on two workers at once,
    // and every element once.
    EXPECT_EQ(bal->steps, workers);
    EXPECT_EQ(RotationViolations(lp, *balanced, d), 0) << "P " << workers;
    auto order = ScheduleOrder(lp, *balanced, d);
    ASSERT_TRUE(order.ok()) << order.status().message();
    EXPECT_TRUE(IsPermutation(*order, d.count));
  }
}

TEST(Cuts, ModelParallelBalancesTheRowsOfSkewedData) {
  auto bias = CompileExample("bias.rgl");
  data::Dataset d = ZipfRatings(2000, 100000, 1.1, 3);
  for (int workers : {2, 3, 4}) {
    LoopPlan lp = PlanOf(bias, 1, workers);
    ASSERT_EQ(lp.schedule.kind, ScheduleKind::kModelParallel1D);
    auto cuts = MakeCuts(lp, workers, d);
    ASSERT_TRUE(cuts.ok()) << cuts.status().message();
    auto eq = MeasureImbalance(lp, EqualCuts(lp, workers, SpaceExtent(d), d.count), d);
    auto bal = MeasureImbalance(lp, *cuts, d);
    ASSERT_TRUE(eq.ok() && bal.ok());
    EXPECT_GE(eq->worker_max_over_mean, 1.7);
    EXPECT_LE(bal->worker_max_over_mean, 1.1);
    // Iterations with the same i (the conflicts) stay on one worker.
    std::map<int32_t, int> owner;
    for (int64_t e = 0; e < d.count; ++e) {
      int w = Place(lp, *cuts, ElementCoords(d, e), e).worker;
      EXPECT_EQ(owner.emplace(d.ti[e], w).first->second, w);
    }
  }
  // data_parallel: equal counts whatever the data.
  LoopPlan dp = PlanOf(bias, 0, 3);
  ASSERT_EQ(dp.schedule.kind, ScheduleKind::kDataParallel);
  auto cuts = MakeCuts(dp, 3, d);
  ASSERT_TRUE(cuts.ok());
  EXPECT_EQ(cuts->axes[0].bounds, (std::vector<int64_t>{0, 33334, 66667, 100000}));
}

TEST(Cuts, WavefrontWithBalancedCutsKeepsEveryDependenceAndTheSerialResult) {
  auto prog = Compile(kSkewed);
  std::vector<float> serial = RunWith(prog, nullptr);
  data::Dataset grid = data::MakeGrid(37, 29);
  for (int workers : {1, 2, 3, 5}) {
    LoopPlan lp = PlanOf(prog, 0, workers);
    ASSERT_EQ(lp.schedule.kind, ScheduleKind::kWavefront);
    auto cuts = MakeCuts(lp, workers, grid);
    ASSERT_TRUE(cuts.ok()) << cuts.status().message();
    // The skewed coordinate j' = j + i has more points in the middle, so its
    // balanced cuts differ from the equal ranges.
    if (workers > 1) {
      EXPECT_NE(*cuts, EqualCuts(lp, workers, {37, 29}, grid.count));
    }
    EXPECT_EQ(WavefrontViolations(lp, *cuts, 37, 29), 0) << "workers " << workers;
    auto eq = MeasureImbalance(lp, EqualCuts(lp, workers, {37, 29}, grid.count), grid);
    auto bal = MeasureImbalance(lp, *cuts, grid);
    ASSERT_TRUE(eq.ok() && bal.ok());
    EXPECT_EQ(bal->steps, workers + 2 * workers - 1);
    EXPECT_EQ(bal->workers, workers);
    std::printf(
        "wavefront P=%d per worker max/mean: equal %.3f, balanced %.3f; makespan %.3f, %.3f\n",
        workers, eq->worker_max_over_mean, bal->worker_max_over_mean, eq->makespan_ratio,
        bal->makespan_ratio);
    EXPECT_LE(bal->worker_max_over_mean, eq->worker_max_over_mean);
    std::vector<float> blocked =
        RunWith(prog, [&](const data::Dataset& d) -> StatusOr<std::vector<int64_t>> {
          RIGEL_ASSIGN_OR_RETURN(Cuts c, MakeCuts(lp, workers, d));
          return ScheduleOrder(lp, c, d);
        });
    EXPECT_EQ(serial, blocked) << "workers " << workers;
  }
}

TEST(Cuts, WavefrontKeepsDependencesUnderAnyCuts) {
  // Cuts from a heavily skewed histogram of each skewed coordinate (not the
  // grid's): monotone parts are all the wavefront needs.
  auto prog = Compile(kSkewed);
  for (int workers : {2, 3, 4}) {
    LoopPlan lp = PlanOf(prog, 0, workers);
    Cuts cuts = EqualCuts(lp, workers, {37, 29}, 37 * 29);
    for (size_t r = 0; r < cuts.axes.size(); ++r) {
      int64_t extent = cuts.axes[r].extent();
      data::Dataset z = ZipfRatings(extent, 3000, 1.3, 17 + r);
      std::vector<int64_t> coords(z.ti.begin(), z.ti.end());
      AxisCuts a = BalancedCuts(coords, extent, cuts.axes[r].parts());
      a.dim = static_cast<int>(r);
      cuts.axes[r] = a;
    }
    ASSERT_TRUE(CheckCuts(lp, cuts, {37, 29}, 37 * 29).ok());
    EXPECT_EQ(WavefrontViolations(lp, cuts, 37, 29), 0) << "workers " << workers;
  }
  // The example program too.
  auto wf = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/wavefront.rgl",
                                  {{{"N", "96"}, {"M", "80"}}});
  ASSERT_TRUE(wf.ok());
  LoopPlan lp = PlanOf(*wf, 0, 4);
  auto cuts = MakeCuts(lp, 4, data::MakeGrid(96, 80));
  ASSERT_TRUE(cuts.ok());
  EXPECT_EQ(WavefrontViolations(lp, *cuts, 96, 80), 0);
}

TEST(Cuts, EdgeCases) {
  auto mf = CompileExample("mf.rgl");
  LoopPlan lp = PlanOf(mf, 0, 4);
  // An empty data set: nothing to balance, equal ranges, no work.
  data::Dataset empty = Triples({}, 0, 0);
  auto cuts = MakeCuts(lp, 4, empty);
  ASSERT_TRUE(cuts.ok()) << cuts.status().message();
  EXPECT_EQ(*cuts, EqualCuts(lp, 4, {0, 0}, 0));
  auto order = ScheduleOrder(lp, *cuts, empty);
  ASSERT_TRUE(order.ok());
  EXPECT_TRUE(order->empty());
  auto m = MeasureImbalance(lp, *cuts, empty);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->makespan_ratio, 1.0);
  EXPECT_EQ(m->cell_max_over_mean, 1.0);
  // Fewer rows than workers: each row alone, the last block rows empty; the
  // rotation is still conflict-free.
  data::Dataset small = Triples({{0, 0}, {1, 2}, {1, 3}, {0, 5}, {1, 1}}, 2, 6);
  cuts = MakeCuts(lp, 4, small);
  ASSERT_TRUE(cuts.ok());
  EXPECT_EQ(cuts->axes[0].bounds, (std::vector<int64_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(RotationViolations(lp, *cuts, small), 0);
  order = ScheduleOrder(lp, *cuts, small);
  ASSERT_TRUE(order.ok());
  EXPECT_TRUE(IsPermutation(*order, small.count));
  // Every rating on one row: that row's block row does all the work (a value
  // cannot be split), the columns are still balanced.
  std::vector<std::pair<int32_t, int32_t>> one_row;
  for (int32_t j = 0; j < 400; ++j) one_row.push_back({5, j});
  data::Dataset hot = Triples(one_row, 100, 400);
  cuts = MakeCuts(lp, 4, hot);
  ASSERT_TRUE(cuts.ok());
  for (const AxisCuts& a : cuts->axes) {
    for (int64_t p = 0; p < 4; ++p) EXPECT_LT(a.bounds[p], a.bounds[p + 1]);
  }
  EXPECT_EQ(cuts->axes[1].bounds, (std::vector<int64_t>{0, 100, 200, 300, 400}));
  m = MeasureImbalance(lp, *cuts, hot);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->worker_max_over_mean, 4.0);
  EXPECT_EQ(RotationViolations(lp, *cuts, hot), 0);
  // Serial loops have nothing to cut.
  LoopPlan serial = lp;
  serial.schedule = Schedule{};
  cuts = MakeCuts(serial, 4, hot);
  ASSERT_TRUE(cuts.ok());
  EXPECT_TRUE(cuts->axes.empty());
  order = ScheduleOrder(serial, *cuts, hot);
  ASSERT_TRUE(order.ok());
  EXPECT_TRUE(IsPermutation(*order, hot.count));
}

TEST(Cuts, CutsThatDoNotFitAreRefused) {
  auto mf = CompileExample("mf.rgl");
  LoopPlan lp = PlanOf(mf, 0, 3);
  data::Dataset d = ZipfRatings(200, 2000, 1.1, 9);
  auto cuts = MakeCuts(lp, 3, d);
  ASSERT_TRUE(cuts.ok());
  // Made for another data set.
  data::Dataset wider = d;
  wider.cols = 250;
  auto order = ScheduleOrder(lp, *cuts, wider);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("axes[1]: extent 200, but the space's j has 250"),
            std::string::npos)
      << order.status().message();
  // Made for another schedule or P.
  Cuts other = *cuts;
  other.kind = ScheduleKind::kModelParallel1D;
  EXPECT_FALSE(ScheduleOrder(lp, other, d).ok());
  other = *cuts;
  other.workers = 4;
  auto st = CheckCuts(lp, other, SpaceExtent(d), d.count);
  EXPECT_NE(st.message().find("3 parts, but the schedule has 4"), std::string::npos)
      << st.message();
  other = *cuts;
  std::swap(other.axes[0], other.axes[1]);
  st = CheckCuts(lp, other, SpaceExtent(d), d.count);
  EXPECT_NE(st.message().find("axes[0]: cuts dimension 1"), std::string::npos) << st.message();
  // A 2-D schedule over 1-D data, and no workers.
  EXPECT_FALSE(MakeCuts(lp, 3, data::MakeRange(10)).ok());
  EXPECT_FALSE(MakeCuts(lp, 0, d).ok());
  EXPECT_FALSE(ScheduleOrder(lp, 0, d).ok());
}

// --- JSON ---------------------------------------------------------------------

TEST(CutsJson, RoundTrip) {
  auto mf = CompileExample("mf.rgl");
  auto bias = CompileExample("bias.rgl");
  auto skewed = Compile(kSkewed);
  data::Dataset d = ZipfRatings(500, 3000, 1.1, 1);
  std::vector<Cuts> all;
  for (const auto& [prog, loop] :
       std::vector<std::pair<const ir::Program*, int>>{{&mf, 0}, {&mf, 1}, {&bias, 1}}) {
    LoopPlan lp = PlanOf(*prog, loop, 3);
    auto c = MakeCuts(lp, 3, d);
    ASSERT_TRUE(c.ok());
    all.push_back(*c);
  }
  LoopPlan wf = PlanOf(skewed, 0, 3);
  auto c = MakeCuts(wf, 3, data::MakeGrid(37, 29));
  ASSERT_TRUE(c.ok());
  all.push_back(*c);
  all.push_back(Cuts{});  // serial
  for (const Cuts& cuts : all) {
    std::string text = CutsToJson(cuts);
    auto back = CutsFromJson(text, "cuts");
    ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
    EXPECT_EQ(*back, cuts) << text;
    EXPECT_EQ(CutsToJson(*back), text);
  }
  EXPECT_EQ(CutsToJson(all[0]).substr(0, 48),
            R"({"schedule":"conflict_free_2d","workers":3,"axes)");
}

TEST(CutsJson, BadInputNamesTheKey) {
  const std::string good =
      R"({"schedule": "conflict_free_2d", "workers": 2, "axes": [)"
      R"({"dim": 0, "extent": 10, "bounds": [0, 3, 10]}, {"dim": 1, "extent": 8, "bounds": [0, 4, 8]}]})";
  ASSERT_TRUE(CutsFromJson(good, "w.json").ok());
  auto err = [](const std::string& text) {
    auto c = CutsFromJson(text, "w.json");
    EXPECT_FALSE(c.ok()) << text;
    return c.ok() ? std::string() : c.status().message();
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(err("{\"schedule\": ").find("w.json: not valid JSON"), std::string::npos);
  EXPECT_NE(err("[1, 2]").find("w.json: (top level): expected an object"), std::string::npos);
  EXPECT_NE(err(with("conflict_free_2d", "fast")).find("w.json: schedule: unknown schedule 'fast'"),
            std::string::npos);
  EXPECT_NE(err(with("\"workers\": 2", "\"workers\": 0")).find("w.json: workers: 0 is outside"),
            std::string::npos);
  EXPECT_NE(err(with("\"workers\": 2", "\"workers\": \"2\""))
                .find("w.json: workers: expected an integer"),
            std::string::npos);
  EXPECT_NE(err(with("\"workers\": 2, ", "")).find("w.json: workers: missing"), std::string::npos);
  EXPECT_NE(err(R"({"schedule": "conflict_free_2d", "workers": 2, "axes": []})")
                .find("w.json: axes: conflict_free_2d has 2 axes, found 0"),
            std::string::npos);
  EXPECT_NE(err(with("[0, 4, 8]", "[1, 4, 8]")).find("w.json: axes[1].bounds: must start at 0"),
            std::string::npos);
  EXPECT_NE(err(with("[0, 4, 8]", "[0, 9, 8]")).find("w.json: axes[1].bounds: must not decrease"),
            std::string::npos);
  EXPECT_NE(
      err(with("[0, 4, 8]", "[0, 4, 7]")).find("w.json: axes[1].bounds: must end at the extent 8"),
      std::string::npos);
  EXPECT_NE(err(with("[0, 4, 8]", "[0, 2, 4, 8]")).find("w.json: axes[1].bounds: 3 parts"),
            std::string::npos);
  EXPECT_NE(err(with("[0, 4, 8]", "[0, \"4\", 8]"))
                .find("w.json: axes[1].bounds[1]: expected an integer"),
            std::string::npos);
  EXPECT_NE(err(with("[0, 4, 8]", "[0, -4, 8]")).find("w.json: axes[1].bounds[1]: -4 is outside"),
            std::string::npos);
  EXPECT_NE(err(with("\"dim\": 1", "\"dim\": 0"))
                .find("w.json: axes[1].dim: conflict_free_2d cuts two different"),
            std::string::npos);
  EXPECT_NE(err(with("\"dim\": 1, ", "")).find("w.json: axes[1].dim: missing"), std::string::npos);
  EXPECT_NE(err(with("{\"dim\": 1, \"extent\": 8, \"bounds\": [0, 4, 8]}", "7"))
                .find("w.json: axes[1]: expected an object"),
            std::string::npos);
  EXPECT_NE(err(with("\"extent\": 8", "\"extent\": 18446744073709551615"))
                .find("w.json: axes[1].extent: expected an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace rigel::analysis
