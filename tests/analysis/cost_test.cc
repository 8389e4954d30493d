// The cost model's counting and fitting on hand-written blocks and rows
// (analysis/cost.h). tests/e2e/planner_test.cc holds its bytes to real runs.
#include "analysis/cost.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <span>
#include <vector>

namespace rigel::analysis {
namespace {

using Rows = std::vector<std::vector<int64_t>>;

// Element e touches row rows[p][e] of parameter p.
RowsFn TableFn(std::vector<std::map<int64_t, int64_t>> rows) {
  return [rows](std::span<const int64_t> elements) -> StatusOr<Rows> {
    Rows out(rows.size());
    for (size_t p = 0; p < rows.size(); ++p) {
      std::set<int64_t> s;
      for (int64_t e : elements) {
        auto it = rows[p].find(e);
        if (it != rows[p].end()) s.insert(it->second);
      }
      out[p].assign(s.begin(), s.end());
    }
    return out;
  };
}

RowCountsFn CountsFn(std::vector<std::map<int64_t, int64_t>> rows) {
  return [rows](std::span<const int64_t> elements) -> StatusOr<RowCounts> {
    RowCounts out(rows.size());
    for (size_t p = 0; p < rows.size(); ++p) {
      std::map<int64_t, int64_t> n;
      for (int64_t e : elements) {
        auto it = rows[p].find(e);
        if (it != rows[p].end()) ++n[it->second];
      }
      out[p].assign(n.begin(), n.end());
    }
    return out;
  };
}

PlanInput TwoWorkers(ScheduleKind kind, std::vector<PlanParam> params) {
  PlanInput in;
  in.kind = kind;
  in.workers = 2;
  in.params = 2;
  in.loop_params = std::move(params);
  return in;
}

LoopPlan Loop() {
  LoopPlan lp;
  lp.id = 0;
  return lp;
}

// mf's training loop on a 2 x 2 grid of blocks: W local by i, H rotating by
// j. Element e = (i, j) with i = e / 4, j = e % 4; rows 0-1 belong to block
// row/column 0, rows 2-3 to 1.
struct MfGrid {
  MfGrid() {
    std::map<int64_t, int64_t> w, h;
    for (int64_t e = 0; e < 16; ++e) {
      w[e] = e / 4;
      h[e] = e % 4;
    }
    rows = TableFn({w, h});
    auto block = [](int64_t bi, int64_t bj) {
      std::vector<int64_t> out;
      for (int64_t e = 0; e < 16; ++e) {
        if ((e / 4) / 2 == bi && (e % 4) / 2 == bj) out.push_back(e);
      }
      return out;
    };
    blocks.workers = 2;
    blocks.blocks = {{block(0, 0), block(1, 1)}, {block(0, 1), block(1, 0)}};
  }
  RowsFn rows;
  StepBlocks blocks;
  PlanInput in = TwoWorkers(ScheduleKind::kConflictFree2D, {PlanParam{0, Strategy::kLocal, true},
                                                            PlanParam{1, Strategy::kRotate, true}});
  std::vector<ParamShape> shapes = {{"W", 4, 8}, {"H", 4, 8}};
};

TEST(CountRun, TheRotationMovesEachColumnOnceAndLocalRowsAreKeptAfterTheFirstRun) {
  const MfGrid g;
  CountState state(2, 2);
  auto first = CountRun(Loop(), g.in, g.blocks, g.shapes, g.rows, nullptr, {}, &state);
  ASSERT_TRUE(first.ok()) << first.status().message();
  // Per worker: W's 2 rows pushed (not pulled: no run wrote W yet, so the
  // worker computes its initial rows); H's last column pulled, the first
  // one too (it differs), one hand-off, the last column pushed.
  const double row = 8 * 4;
  for (const WorkerCounts& wc : first->workers) {
    EXPECT_EQ(wc.bytes.at("local"), 2 * row);
    EXPECT_EQ(wc.bytes.at("rotate"), (2 + 2 + 2 + 2) * row);
    EXPECT_EQ(wc.step_handoff_bytes, (std::vector<double>{2 * row, 0}));
  }
  auto second = CountRun(Loop(), g.in, g.blocks, g.shapes, g.rows, nullptr, {}, &state);
  ASSERT_TRUE(second.ok());
  for (const WorkerCounts& wc : second->workers) {
    EXPECT_EQ(wc.bytes.at("local.kept"), 2 * row);
    EXPECT_EQ(wc.bytes.at("local"), 2 * row);  // only the push
  }
}

// W held between runs (analysis/held_rows.h): computed from its
// initialiser in the first run, never pushed at a run's end, kept in the
// second.
TEST(CountRun, RowsHeldBetweenRunsAreNeverPulledOrPushedByARun) {
  MfGrid g;
  g.in.loop_params[0].held = true;
  CountState state(2, 2);
  auto first = CountRun(Loop(), g.in, g.blocks, g.shapes, g.rows, nullptr, {}, &state);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const double row = 8 * 4;
  for (const WorkerCounts& wc : first->workers) {
    EXPECT_EQ(wc.bytes.count("local"), 0u);
    EXPECT_EQ(wc.begin_rows, 4);  // H's two columns, not W's rows
    EXPECT_EQ(wc.end_rows, 2);    // H's last column, not W's rows
  }
  auto second = CountRun(Loop(), g.in, g.blocks, g.shapes, g.rows, nullptr, {}, &state);
  ASSERT_TRUE(second.ok());
  for (const WorkerCounts& wc : second->workers) {
    EXPECT_EQ(wc.bytes.at("local.kept"), 2 * row);
    EXPECT_EQ(wc.bytes.count("local"), 0u);
  }
}

// Every element of both workers touches row 0 of a cached parameter w of 10
// rows; 12 elements per worker in 4 steps of 3.
struct SharedRow {
  SharedRow() {
    std::map<int64_t, int64_t> touched;
    std::vector<int64_t> a, c;
    for (int64_t e = 0; e < 24; ++e) {
      touched[e] = 0;
      (e < 12 ? a : c).push_back(e);
    }
    rows = TableFn({touched});
    counts = CountsFn({touched});
    blocks.workers = 2;
    blocks.blocks = {{a, c}};
    PlanParam w{0, Strategy::kPs, true, true};
    w.cached = true;
    in = TwoWorkers(ScheduleKind::kDataParallel, {w});
    in.batch = 3;
    in.params = 1;
  }
  RowsFn rows;
  RowCountsFn counts;
  StepBlocks blocks;
  PlanInput in;
};

TEST(CountRun, CachedRowsArePushedAtTheBoundAndRefreshedAfterMoreThanNMergesByOthers) {
  const SharedRow g;
  CountState state(2, 1);
  CacheSettings cache;
  cache.staleness = 1;
  cache.push_bound = 6;  // a push every second step
  auto r = CountRun(Loop(), g.in, g.blocks, {{"w", 10, 1}}, g.rows, g.counts, cache, &state);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const WorkerCounts& wc : r->workers) {
    EXPECT_EQ(wc.cache_rows.at("fetched.w"), 1);
    EXPECT_EQ(wc.cache_rows.at("pushed.w"), 2);  // after steps 1 and 3; nothing pending at the end
    // The other's pushes after steps 1 and 3 make a lag of 2 > N = 1 once.
    EXPECT_EQ(wc.cache_rows.at("refreshed.w"), 1);
    EXPECT_EQ(wc.bytes.at("cache"), (4 + 24) * 1 + 2 * (4 + 8) + (4 + 16));
  }
}

// A written row the run left as it was has no delta and is not pushed
// (worker/sync/row_io.cc): with the run's effects, W's end pushes count only
// the changed rows, and H's last column likewise.
TEST(CountRun, RowsTheRunLeftUnchangedAreNotPushed) {
  const MfGrid g;
  RunEffects effects;
  effects.changed = {{1, 0, 0, 0}, {0, 0, 0, 1}};  // W row 0 (worker 0's), H row 3
  CountState state(2, 2);
  auto r = CountRun(Loop(), g.in, g.blocks, g.shapes, g.rows, nullptr, {}, &state, &effects);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double row = 8 * 4;
  // Worker 0 holds W rows 0-1 (one changed) and ends with H column 1 (rows
  // 2-3, one changed); worker 1 holds W rows 2-3 (none) and ends with H
  // column 0 (none). W's rows are the initialiser's in this first run:
  // computed, not pulled.
  EXPECT_EQ(r->workers[0].bytes.at("local"), 1 * row);
  EXPECT_EQ(r->workers[1].bytes.count("local"), 0u);
  EXPECT_EQ(r->workers[0].bytes.at("rotate"), (2 + 2 + 2 + 1) * row);
  EXPECT_EQ(r->workers[1].bytes.at("rotate"), (2 + 2 + 2) * row);
  EXPECT_EQ(r->workers[1].end_rows, 0);
}

// Rows a worker cannot know from its elements (RunEffects::inexact) are all
// listed by every worker, which pushes those its own elements changed: a row
// written once counts as pushed by a worker with half the elements with
// probability 1/2, a row written 40 times as surely pushed.
TEST(CountRun, RowsNoSliceCanKnowArePushedByTheWorkersLikelyToHaveWrittenThem) {
  std::map<int64_t, int64_t> all;  // every element lists every row: rows 0..3
  StepBlocks b;
  b.workers = 2;
  b.blocks = {{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  auto rows = [](std::span<const int64_t> elements) -> StatusOr<Rows> {
    if (elements.empty()) return Rows{{}};
    return Rows{{0, 1, 2, 3}};
  };
  PlanInput in = TwoWorkers(ScheduleKind::kDataParallel, {PlanParam{0, Strategy::kPs, true}});
  in.params = 1;
  in.batch = 4;
  RunEffects effects;
  effects.changed = {{1, 1, 1, 0}};
  effects.writes = {{1, 1, 40, 0}};
  effects.inexact = {1};
  CountState state(2, 1);
  auto r = CountRun(Loop(), in, b, {{"c", 4, 1}}, rows, nullptr, {}, &state, &effects);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const WorkerCounts& wc : r->workers) {
    // 4 rows pulled; pushed 0.5 + 0.5 + (1 - 0.5^40).
    EXPECT_NEAR(wc.bytes.at("ps"), (4 + 2) * 4.0, 1e-6);
  }
  effects.inexact = {0};  // rows known: every listed changed row is pushed
  CountState known(2, 1);
  auto k = CountRun(Loop(), in, b, {{"c", 4, 1}}, rows, nullptr, {}, &known, &effects);
  ASSERT_TRUE(k.ok());
  for (const WorkerCounts& wc : k->workers) EXPECT_EQ(wc.bytes.at("ps"), (4 + 3) * 4.0);
}

// The push bound counts element writes (kernel::RowTracker), not elements:
// when each element writes its row 3 times, a bound of 6 is reached every
// second element.
TEST(CountRun, CachedRowsCountTheRunsWritesPerTouchTowardsThePushBound) {
  const SharedRow g;
  CacheSettings cache;
  cache.staleness = 1;
  cache.push_bound = 6;
  RunEffects effects;
  effects.writes = {std::vector<uint32_t>(10, 0)};
  effects.writes[0][0] = 3 * 24;
  CountState state(2, 1);
  auto r =
      CountRun(Loop(), g.in, g.blocks, {{"w", 10, 1}}, g.rows, g.counts, cache, &state, &effects);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const WorkerCounts& wc : r->workers) {
    // 9 writes a step: pushed after every step (9, then 3 + 9, ...).
    EXPECT_EQ(wc.cache_rows.at("pushed.w"), 4);
  }
  // Rows touched but never written are never pushed.
  effects.writes[0][0] = 0;
  CountState fresh(2, 1);
  auto none =
      CountRun(Loop(), g.in, g.blocks, {{"w", 10, 1}}, g.rows, g.counts, cache, &fresh, &effects);
  ASSERT_TRUE(none.ok());
  for (const WorkerCounts& wc : none->workers) EXPECT_EQ(wc.cache_rows.at("pushed.w"), 0);
}

TEST(Predict, AStepCostsItsSlowestWorkerAndHiddenTrafficCostsNothing) {
  RunCounts run;
  run.element_s = 1e-3;
  WorkerCounts fast, slow;
  for (WorkerCounts* wc : {&fast, &slow}) {
    wc->step_elements = {10};
    wc->step_server_bytes = {0};
    wc->step_server_rows = {0};
    wc->step_handoff_bytes = {0};
    wc->step_exchanges = {1};
  }
  slow.step_elements = {20};
  run.workers = {fast, slow};
  CostConstants k;
  Prediction p = Predict({run}, 2, k);
  EXPECT_NEAR(p.seconds, k.task_s + 20e-3 + k.round_trip_s, 1e-12);
  // From the second step on, a round trip hides behind 20 ms of compute.
  for (WorkerCounts& wc : run.workers) {
    wc.overlapped = true;
    wc.step_elements.push_back(wc.step_elements[0]);
    wc.step_server_bytes.push_back(0);
    wc.step_server_rows.push_back(0);
    wc.step_handoff_bytes.push_back(0);
    wc.step_exchanges.push_back(1);
  }
  p = Predict({run}, 2, k);
  EXPECT_NEAR(p.seconds, k.task_s + 20e-3 + k.round_trip_s + 20e-3, 1e-12);
}

TEST(FitConstants, RecoversTheConstantsThatMadeTheObservations) {
  CostConstants truth;
  truth.round_trip_s = 300e-6;
  truth.task_s = 1e-3;
  std::vector<Observation> obs;
  for (int steps : {1, 4, 16, 64}) {
    RunCounts run;
    run.element_s = 1e-6;
    WorkerCounts wc;
    wc.step_elements.assign(steps, 100);
    wc.step_server_bytes.assign(steps, 0);
    wc.step_server_rows.assign(steps, 0);
    wc.step_handoff_bytes.assign(steps, 0);
    wc.step_exchanges.assign(steps, 1);
    run.workers = {wc};
    obs.push_back({{run}, 1, Predict({run}, 1, truth).seconds});
  }
  auto fit = FitConstants(obs, CostConstants{});
  ASSERT_TRUE(fit.ok());
  // Only the round trip and the task are exercised; the pull towards the
  // defaults (kPrior) leaves them within a few percent.
  EXPECT_NEAR(fit->round_trip_s / truth.round_trip_s, 1.0, 0.05);
  EXPECT_NEAR(fit->task_s / truth.task_s, 1.0, 0.15);
  EXPECT_EQ(fit->handoff_s, CostConstants{}.handoff_s);
  EXPECT_FALSE(FitConstants({obs[0]}, CostConstants{}).ok());
}

TEST(ParseConstants, ReadsWhatItWroteAndNamesABadKey) {
  CostConstants k;
  k.byte_s = 3e-9;
  auto back = ParseConstants(ConstantsToJson(k), "k.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->byte_s, 3e-9);
  auto partial = ParseConstants("{\"task_s\": 0.002}", "k.json");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->task_s, 0.002);
  EXPECT_EQ(partial->round_trip_s, CostConstants{}.round_trip_s);
  auto bad = ParseConstants("{\"latency\": 1}", "k.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("k.json: unknown constant 'latency'"), std::string::npos);
  auto negative = ParseConstants("{\"task_s\": -1}", "k.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("task_s: expected a number >= 0"), std::string::npos);
  EXPECT_FALSE(ParseConstants("not json", "k.json").ok());
}

}  // namespace
}  // namespace rigel::analysis
