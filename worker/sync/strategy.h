// How a worker keeps parameters in sync during one run of a loop: one
// SyncStrategy per analysis::Strategy the loop's parameters use (ps, local,
// rotate, allreduce, replicated; an accumulator needs none), each in its own
// file of worker/sync/, made by CreateStrategies. docs/distributed.md ("One
// loop run on a worker") says what each does per step.
//
// Call order (worker/runner.cc): Begin on each, then per planned step
// BeforeStep on each, the kernel (in parts with WithinStep on each between
// them, when the step is cut), AfterStep on each; then End on each.
// Errors: those of the pulls, pushes, hand-offs and collectives; the first
// one ends the run. Thread-safety: one run at a time, on one thread.
#ifndef RIGEL_WORKER_SYNC_STRATEGY_H_
#define RIGEL_WORKER_SYNC_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/plan.h"
#include "analysis/step_plan.h"
#include "analysis/sync/units.h"
#include "common/status.h"
#include "exec/divergence.h"
#include "ir/ir.h"
#include "ps/cache.h"
#include "worker/dense_sync.h"
#include "worker/sync/handoff.h"
#include "worker/sync/hot_rows.h"
#include "worker/sync/row_io.h"

namespace rigel::worker::sync {

// Rows of one parameter a worker holds across runs: which rows, what the
// servers hold for them (the base the next delta is taken against), the loop
// that pulled them, and the parameter's generation when they were last in
// sync.
struct HeldRows {
  int loop = -1;
  std::vector<int64_t> rows;
  std::vector<float> base;
  uint64_t generation = 0;
  // The rows changed since the servers got them: the local strategy of a
  // parameter held between runs (analysis/held_rows.h) leaves them here at
  // the end of a run until Runner::Flush pushes them.
  bool unpushed = false;
};

// An allreduce parameter's replica: `base` is its value after the last sync
// (the same bits on every worker), `server` what the servers hold (worker 0
// pushes the difference at the end of each run).
struct DenseReplica {
  bool valid = false;
  uint64_t generation = 0;
  std::vector<int64_t> rows;  // every row: the parameter is read and written whole
  std::vector<float> base;
  std::vector<float> server;
};

// What the worker keeps of one parameter between runs.
struct ParamState {
  uint64_t generation = 0;  // runs (of any loop) that wrote the parameter
  HeldRows local;           // the local strategy's rows
  HeldRows replicated;      // the replicated strategy's rows
  DenseReplica dense;       // the allreduce strategy's replica
  // The cache strategy's row cache and its write counter (null until a
  // relaxed loop first runs), the generation it was last in step with the
  // servers, and the hot rows.
  std::unique_ptr<ps::RowCache> cache;
  kernel::RowTracker tracker;
  uint64_t cache_generation = 0;
  // The cache's rows were the servers' values when its last run ended (a
  // run that only read them, with the servers quiet): a reading run needs
  // no refetch while the generation stays.
  bool cache_exact = false;
  HotRows hot;
  // By loop: this worker's copy's magnitudes over the loop's runs, for the
  // divergence check (exec/divergence.h, Runner::CheckDiverged).
  std::vector<exec::DivergenceWatch> watch;
};

// How one run keeps its relaxed parameters' rows (the cache strategy),
// resolved by the runner from the job options and what the workers measured
// (analysis/relaxed.h, worker/runner_relaxed.cc).
struct RelaxedRun {
  uint32_t staleness = 1;   // N: merges by other workers a read may lack
  uint32_t push_bound = 1;  // a cached row's updates before it is pushed
  int64_t push_age = 0;     // exchanges a cached row's update may wait (0: no bound)
  int64_t merge_every = 1;  // steps between hot-row merges
  bool audit = false;       // testing: check the bound against the servers' versions
  // By parameter index: the cache's capacity in rows, and the rows that are
  // hot when the parameter is first cached (empty: none).
  std::vector<int64_t> capacity;
  std::vector<std::vector<int64_t>> hot;
  // By parameter index: the cache fetches only the rows the steps touch
  // (analysis::PlanParam::partial), even when it could hold every row.
  std::vector<uint8_t> touched_only;
  // By parameter index: the rows whose merges are scaled (--scaled-merges,
  // analysis/relaxed.h ChooseScaledRows), sorted; none for sums and i32
  // counts, whose deltas never read what they add to or are exact.
  std::vector<std::vector<int64_t>> scaled;
};

// What the strategies of one run work with; owned by the runner, outliving
// the run's strategies.
struct SyncEnv {
  const ir::Program* prog = nullptr;
  int loop = 0;
  uint64_t launch = 0;
  int64_t epoch = -1;  // the driver's top-level loop iteration (-1: none), for messages
  int rank = 0;
  int workers = 1;
  int64_t sync_every = 1;  // allreduce: steps between collective sums
  // The servers started from a checkpoint (cluster::JobSpec::restored), not
  // from the initialisers.
  bool restored = false;
  const analysis::RowPlan* rows = nullptr;
  RowIo* io = nullptr;
  Handoffs* handoffs = nullptr;
  DenseSync* dense = nullptr;                // null: the job has no allreduce parameters
  std::vector<ParamState>* state = nullptr;  // by parameter index
  SyncMetrics* metrics = nullptr;
  // The cache strategy: the row exchange with the servers, the shard map,
  // the run's bindings (the kernel's; the strategy sets their trackers) and
  // the run's settings.
  ps::RowExchange* exchange = nullptr;
  const cluster::ShardMap* map = nullptr;
  std::vector<kernel::ParamBinding>* bindings = nullptr;
  const RelaxedRun* relaxed = nullptr;
};

// One planned step, as the strategies see it.
struct Step {
  int64_t index = 0;
  int64_t count = 1;  // steps in the run
  // Rows of each parameter that go through the servers at this step
  // (analysis::ServerRowsAt; one entry per parameter, most empty), and at the next
  // step when they are pulled ahead (analysis::RowPlan::prefetch), else null.
  const std::vector<std::vector<int64_t>>* server_rows = nullptr;
  const std::vector<std::vector<int64_t>>* next_rows = nullptr;
  bool last() const { return index + 1 == count; }
};

class SyncStrategy {
 public:
  virtual ~SyncStrategy() = default;
  // Start of the run: bring this worker's copies of the parameters up to date.
  virtual Status Begin() { return Status::Ok(); }
  // Before the kernel runs `step`: the rows it needs.
  virtual Status BeforeStep(const Step& step) { return Status::Ok(); }
  // Between two parts of a long step (analysis::RowPlan::part; the runner cuts a step
  // of a schedule other than data-parallel into parts when relaxed rows are
  // cached): an exchange of the relaxed rows, so they stay fresh within it.
  virtual Status WithinStep(const Step& step) { return Status::Ok(); }
  // After the kernel ran `step`: deltas out, hand-offs, collective sums.
  virtual Status AfterStep(const Step& step) { return Status::Ok(); }
  // End of the run, after the written parameters' generations advanced:
  // write back what this worker holds (the runner then flushes).
  virtual Status End() { return Status::Ok(); }
};

// A FailedPrecondition from a strategy (a non-finite merge refused by a
// server or found after a collective sum) or from the divergence check, with
// the loop's place and its run: "FILE:LINE:COL: error: a relaxed parameter
// diverged in epoch E (run R of this loop): ...; the job stops here (...)".
// Other statuses pass unchanged.
Status Diverged(const SyncEnv& env, const Status& st);

// The strategies of one run: one runtime per unit (analysis/sync/units.h)
// that keeps some parameter env.rows uses (accumulators none), in the order
// allreduce, cache, ps, local and held, rotate, replicated. Internal for
// allreduce without env.dense (Runner::Create joins the collectives whenever
// a loop has one).
StatusOr<std::vector<std::unique_ptr<SyncStrategy>>> CreateStrategies(const SyncEnv& env);

// Whether CreateStrategies has a runtime for `unit` (every unit of
// analysis::sync::Units() must).
bool HasRuntime(const analysis::sync::Unit& unit);

// One strategy over `params` (parameter indices); used by CreateStrategies.
std::unique_ptr<SyncStrategy> CreatePsPullPush(const SyncEnv& env, std::vector<int> params);
std::unique_ptr<SyncStrategy> CreateCachedRows(const SyncEnv& env, std::vector<int> params);
std::unique_ptr<SyncStrategy> CreateLocalRows(const SyncEnv& env, std::vector<int> params);
std::unique_ptr<SyncStrategy> CreateRotation(const SyncEnv& env, std::vector<int> params);
std::unique_ptr<SyncStrategy> CreateAllreduce(const SyncEnv& env, std::vector<int> params);
std::unique_ptr<SyncStrategy> CreateReplicated(const SyncEnv& env, std::vector<int> params);

}  // namespace rigel::worker::sync

#endif  // RIGEL_WORKER_SYNC_STRATEGY_H_
