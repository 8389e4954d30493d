// The step planner: which elements this worker runs at each step of one run
// of a loop (PlanSteps: mini-batches for data-parallel loops with ps or
// allreduce parameters, the blocks' steps otherwise), and which rows of each
// parameter it needs when (PlanRows, by analysis::Strategy). The rows a set
// of elements touches come from a RowsFn (in the worker, the loop's prefetch
// slice, kernel/key_slice.h). docs/distributed.md ("One loop run on a
// worker") describes the plans.
//
// Thread-safe: pure functions over their arguments, with no transport or
// threads (a RowsFn is called on the caller's thread).
#ifndef RIGEL_ANALYSIS_STEP_PLAN_H_
#define RIGEL_ANALYSIS_STEP_PLAN_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/order.h"
#include "analysis/plan.h"
#include "analysis/step_lists.h"
#include "common/status.h"

namespace rigel::analysis {

// Rows (sorted, distinct) of every parameter of the program touched by
// `elements`, by parameter index. Errors are the loop body's run-time errors.
using RowsFn =
    std::function<StatusOr<std::vector<std::vector<int64_t>>>(std::span<const int64_t> elements)>;

// One parameter of the loop as the planner sees it.
struct PlanParam {
  int index = -1;  // in the program
  analysis::Strategy strategy = analysis::Strategy::kReplicated;
  bool written = false;
  bool relaxed = false;  // the loop relaxes it: its pulls may lag (staleness)
  bool whole = false;    // read or written whole
  bool sum = false;      // a reduction (plan strategy `reduce`): never read in the loop
  // A relaxed `ps` parameter kept by a write-back row cache (the `cache`
  // sync strategy; not at --staleness 0), and whether that cache is partial:
  // it fetches only the rows the steps touch, so it needs the rows of every
  // step (held in part, or too large to fetch whole: analysis/sync/resolve.h).
  bool cached = false;
  bool partial = false;
  bool scalar = false;  // rows of width 1 (analysis/relaxed.h weighs their share twice)
  // cached, and the merges of its rows most elements write are scaled
  // (--scaled-merges on, an f32 parameter: analysis/relaxed.h ScaledShare).
  bool scaled = false;
  // local: its rows stay on the worker between runs, pushed only when the
  // scheduler asks (analysis/held_rows.h).
  bool held = false;
};

struct PlanInput {
  analysis::ScheduleKind kind = analysis::ScheduleKind::kSerial;
  int rank = 0;  // this worker
  int workers = 1;
  int64_t batch = 0;     // elements per mini-batch and worker; 0: Rigel's choice
  double hot_share = 0;  // for Rigel's choice (analysis/batch.h; HotShare)
  int staleness = 0;     // the job's bound: >= 1 allows pulling a step ahead
  // The rows a set of elements touches depend only on the elements (the
  // row plan is kept across runs): cached parameters then learn which rows
  // only this worker writes.
  bool static_keys = false;
  // This worker holds every element of the loop's data, not only its own
  // (data/held.h): cached parameters may then learn which rows only it
  // writes from the other workers' elements.
  bool holds_all = true;
  // Otherwise the rows the workers' own elements touch, by parameter, when
  // the workers exchanged them (worker/runner_samples.cc): this worker's
  // (all its steps' elements) and the union of the others'. Cached
  // parameters then learn their single-writer rows from these. Null: none.
  const std::vector<std::vector<int64_t>>* my_rows = nullptr;
  const std::vector<std::vector<int64_t>>* their_rows = nullptr;
  // A conflict_free_2d loop over data held in part (each worker holds only
  // its own blocks): by parameter and block column q, the rows the blocks
  // (*, q) touch, from every worker's own (worker/runner_samples.cc).
  // Rotated parameters take their columns from here. Null: from the blocks.
  const std::vector<std::vector<std::vector<int64_t>>>* columns = nullptr;
  int params = 0;                      // parameters of the program
  std::vector<PlanParam> loop_params;  // the loop's parameters (no accumulators)
};

// Where one parameter's rows are during a run; which fields are filled
// depends on its strategy (ps, allreduce and accumulators: none).
struct ParamRows {
  bool used = false;  // the loop touches the parameter
  PlanParam param;
  std::vector<int64_t> held;    // local: rows only this worker touches
  std::vector<int64_t> shared;  // local: rows other workers touch too (wavefront boundaries)
  std::vector<std::vector<int64_t>> columns;  // rotate: [q] the rows blocks (*, q) touch
  std::vector<int64_t> read;                  // replicated: rows this worker's elements read
  // cached, with static keys on several workers that hold their data whole
  // or exchanged their rows: the rows only this worker's elements touch (one
  // writer: they need no exchange until the run's end).
  std::vector<int64_t> single;
};

struct RowPlan {
  std::vector<ParamRows> params;  // by parameter index
  // Some rows go through the servers at every step (a ps parameter, or
  // shared local rows): every worker ticks its clock after each step.
  bool step_sync = false;
  // Some strategy needs the rows each step touches (step_sync, or a cache
  // that holds its parameter in part).
  bool step_keys = false;
  // Elements per part of a step (0: steps are not cut): a schedule other
  // than data-parallel whose relaxed rows are all cached whole exchanges
  // them within its long steps too (SyncStrategy::WithinStep).
  int64_t part = 0;
  // The next step's rows may be pulled while this one computes: a staleness
  // bound of at least 1, and every row synced per step relaxed.
  bool prefetch = false;
};

// The mini-batch PlanSteps cuts a data-parallel loop with ps or allreduce
// parameters into: in.batch, or Rigel's choice (analysis/batch.h); 0 for a
// loop that is not cut into mini-batches.
int64_t StepBatch(const PlanInput& in);

// The hot share of analysis/batch.h: the largest fraction of up to
// analysis::kBatchSample elements, spread evenly over every worker's blocks,
// that touch one row of a ps parameter the loop writes. The same on every
// worker, which all hold the same blocks. 0 when the loop writes no ps
// parameter or has no elements. Errors: the loop body's, from `rows`.
StatusOr<double> HotShare(const PlanInput& in, const analysis::StepBlocks& blocks,
                          const RowsFn& rows);

// The rows of the loop's parameters touched in a sample of its elements:
// up to `limit` elements spread evenly over every worker's blocks (the same
// on every worker). counts[p] lists (row, elements of the sample touching
// it) for the parameters `want` selects; `most` is the largest such count of
// a written, non-sum `ps` parameter, doubled for a cached scalar one (the
// hot share is most / sampled; analysis/relaxed.h), leaving out the rows
// whose merges are scaled (PlanParam::scaled, from a count of
// ScaledShare(in.workers) x sampled on): their deltas are averaged, not
// summed, so they do not bound the mini-batch.
struct RowSample {
  int64_t sampled = 0;
  int64_t most = 0;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> counts;  // by parameter index
};
StatusOr<RowSample> SampleRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                               const RowsFn& rows, int64_t limit, const std::vector<bool>& want);
// Worker `rank`'s part of SampleRows, for workers that each hold only their
// own blocks (exec/hold_plan.h) and exchange their parts: the counts of the
// sampled elements in its blocks, for every parameter SampleRows counts
// (those `want` selects and those `most` covers), `most` left 0. Calls `rows`
// for those elements only.
StatusOr<RowSample> SampleRowsOf(const PlanInput& in, const analysis::StepBlocks& blocks,
                                 const RowsFn& rows, int64_t limit, const std::vector<bool>& want,
                                 int rank);
// SampleRows from every worker's SampleRowsOf (in any order): the counts
// summed, each parameter's listed by row, `most` from the sums, and only the
// parameters `want` selects kept.
RowSample MergeRowSamples(const PlanInput& in, const std::vector<bool>& want,
                          const std::vector<RowSample>& parts);
// The hot share of a sample (HotShare): most / sampled, 0 when empty.
double HotShareOf(const RowSample& sample);
// The elements SampleRows samples, in its order: every stride-th of the
// blocks' elements in (step, worker) order, at most `limit`; with `rank` >= 0
// only those in worker `rank`'s blocks.
std::vector<int64_t> SampledElements(const analysis::StepBlocks& blocks, int64_t limit,
                                     int rank = -1);

// The elements this worker runs at each step (at least one step): strided
// ranges for mini-batches over blocks of consecutive elements (a
// data-parallel loop's), lists otherwise. Requires blocks for in.workers
// workers and 0 <= in.rank < in.workers.
StepLists PlanStepLists(const PlanInput& in, const analysis::StepBlocks& blocks);
// The same steps as lists, for callers that want them whole (tests, cost).
std::vector<std::vector<int64_t>> PlanSteps(const PlanInput& in,
                                            const analysis::StepBlocks& blocks);

// The rows of every parameter of the loop, for a run of `steps` (this
// worker's, from PlanSteps) over `blocks`. Calls `rows` for this worker's
// elements, and for the other workers' blocks where a strategy needs them.
// Errors: those of `rows`; Internal for a strategy the schedule cannot have
// (rotate outside conflict_free_2d, a written replicated parameter), which
// a validated plan never holds.
StatusOr<RowPlan> PlanRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                           const StepLists& steps, const RowsFn& rows);
StatusOr<RowPlan> PlanRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                           const std::vector<std::vector<int64_t>>& steps, const RowsFn& rows);

// The rows of each parameter that go through the servers at a step whose
// elements touch `touched` (by parameter index, as a RowsFn gives): all of a
// ps parameter's, the shared ones of a local parameter, none of the others.
std::vector<std::vector<int64_t>> ServerRowsAt(const RowPlan& plan,
                                               std::vector<std::vector<int64_t>> touched);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_STEP_PLAN_H_
