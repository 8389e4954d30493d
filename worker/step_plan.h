// The step planner: which elements this worker runs at each step of one run
// of a loop, and which rows of each parameter it needs when. Pure functions:
// no transport, no parameter-server client, no threads; the rows a set of
// elements touches come from a RowsFn (in the worker, the loop's prefetch
// slice, kernel/key_slice.h). docs/distributed.md ("One loop run on a
// worker") describes the schedules; worker/sync/strategy.h the strategies
// that act on the plan.
//
// Steps (PlanSteps), from analysis::MakeStepBlocks's blocks[step][worker]:
//   - a data-parallel loop with a `ps` or `allreduce` parameter runs in
//     mini-batches of `batch` elements per worker (0: kDenseBatch when such a
//     parameter is read or written whole, else kSparseBatch). Sparse: worker
//     w's block cut in order, as many steps as the busiest worker needs (so
//     clocks stay equal; a worker's last steps may be partial or empty).
//     Dense: step k is the k-th stretch of batch * workers elements of the
//     serial order, each worker taking its batch of it.
//   - any other loop: one step per step of the blocks, this worker's block.
// Rows (PlanRows), by the parameter's analysis::Strategy:
//   local       held: rows only this worker touches; shared: rows other
//               workers touch too (only a wavefront's block boundaries).
//   rotate      columns[q]: the rows the blocks (*, q) touch.
//   replicated  read: the rows this worker's elements touch.
//   ps, allreduce, accumulator: nothing planned ahead (ps rows are found
//               step by step: ServerRowsAt).
//
// Thread-safe: pure functions over their arguments (a RowsFn is called on
// the caller's thread).
#ifndef RIGEL_WORKER_STEP_PLAN_H_
#define RIGEL_WORKER_STEP_PLAN_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/order.h"
#include "analysis/plan.h"
#include "common/status.h"

namespace rigel::worker {

// Mini-batch sizes (elements per worker) when the job leaves it to Rigel
// (JobSpec::batch 0): loops that update a parameter whole, and the others.
inline constexpr int64_t kDenseBatch = 32;
inline constexpr int64_t kSparseBatch = 512;

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
};

struct PlanInput {
  analysis::ScheduleKind kind = analysis::ScheduleKind::kSerial;
  int rank = 0;  // this worker
  int workers = 1;
  int64_t batch = 0;                   // elements per mini-batch and worker; 0: Rigel's choice
  int staleness = 0;                   // the job's bound: >= 1 allows pulling a step ahead
  int params = 0;                      // parameters of the program
  std::vector<PlanParam> loop_params;  // the loop's parameters (no accumulators)
};

// Where one parameter's rows are during a run (see the file comment).
struct ParamRows {
  bool used = false;  // the loop touches the parameter
  PlanParam param;
  std::vector<int64_t> held;
  std::vector<int64_t> shared;
  std::vector<std::vector<int64_t>> columns;
  std::vector<int64_t> read;
};

struct RowPlan {
  std::vector<ParamRows> params;  // by parameter index
  // Some rows go through the servers at every step (a ps parameter, or
  // shared local rows): every worker ticks its clock after each step.
  bool step_sync = false;
  // The next step's rows may be pulled while this one computes: a staleness
  // bound of at least 1, and every row synced per step relaxed.
  bool prefetch = false;
};

// The elements this worker runs at each step (at least one step).
// Requires blocks for in.workers workers and 0 <= in.rank < in.workers.
std::vector<std::vector<int64_t>> PlanSteps(const PlanInput& in,
                                            const analysis::StepBlocks& blocks);

// The rows of every parameter of the loop, for a run of `steps` (this
// worker's, from PlanSteps) over `blocks`. Calls `rows` for this worker's
// elements, and for the other workers' blocks where a strategy needs them.
// Errors: those of `rows`; Internal for a strategy the schedule cannot have
// (rotate outside conflict_free_2d, a written replicated parameter), which
// a validated plan never holds.
StatusOr<RowPlan> PlanRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                           const std::vector<std::vector<int64_t>>& steps, const RowsFn& rows);

// The rows of each parameter that go through the servers at a step whose
// elements touch `touched` (by parameter index, as a RowsFn gives): all of a
// ps parameter's, the shared ones of a local parameter, none of the others.
std::vector<std::vector<int64_t>> ServerRowsAt(const RowPlan& plan,
                                               std::vector<std::vector<int64_t>> touched);

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_STEP_PLAN_H_
