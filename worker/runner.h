// The distributed worker: runs its share of each `parallel for` the
// scheduler hands it (a task, worker/task.h), keeping parameters in sync as
// the plan says, and reports its accumulator partial sums.
//
// Every worker compiles the program itself, loads the data sets from their
// files, and keeps a full-size local copy of every parameter (the kernel's
// memory); the servers hold the authoritative values. One run of a loop:
//   1. blocks: analysis::MakeStepBlocks(loop, task cuts, data);
//   2. plan: analysis/step_plan.h says which elements this worker runs at each
//      step and which rows each parameter needs, from the rows the loop's
//      prefetch slice (kernel/key_slice.h) finds for a set of elements;
//   3. sync: one strategy per analysis::Strategy of the loop's parameters
//      (worker/sync/strategy.h) moves the rows around every step;
//   4. accumulators are summed here per run and reduced at the scheduler.
// docs/distributed.md describes the schedules and strategies.
//
// Ownership: the runner owns the program, the executor (data, local copies,
// kernels), the parameter-server client and what it keeps between runs;
// `transport` and RunnerOptions::store are the caller's.
// Thread-safety: Run() on one thread at a time; Handle() on the transport's
// receive thread; Abort() from any thread.
#ifndef RIGEL_WORKER_RUNNER_H_
#define RIGEL_WORKER_RUNNER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/order.h"
#include "analysis/plan.h"
#include "analysis/step_plan.h"
#include "analysis/sync/resolve.h"
#include "cluster/setup.h"
#include "collectives/store.h"
#include "common/status.h"
#include "exec/executor.h"
#include "ir/ir.h"
#include "kernel/key_slice.h"
#include "ps/client.h"
#include "transport/transport.h"
#include "worker/dense_sync.h"
#include "worker/sync/handoff.h"
#include "worker/sync/row_io.h"
#include "worker/sync/strategy.h"
#include "worker/task.h"

namespace rigel::worker {

struct TaskResult {
  std::vector<double> accums;  // partial sums, ir::AccumSlots of them (ir::AccumOffset)
  // Counters of the run: "elements", "steps", "seconds", "compute_s",
  // "comm_s", "wait_s", "keys_s", "bytes.<strategy>" (bytes pulled, pushed
  // and handed off per strategy) and "replica_hash.<param>" (allreduce).
  std::vector<std::pair<std::string, double>> metrics;
};

struct RunnerOptions {
  int rank = 0;
  int workers = 1;
  cluster::JobOptions job;      // staleness, batch, sync_every, device
  std::ostream* log = nullptr;  // one line per run; null: none
  // Rendezvous of the workers' collectives (allreduce parameters); must
  // outlive Create. Null: a program with allreduce parameters is refused.
  collectives::Store* store = nullptr;
  // The host name or address the collectives listen on, reachable by the
  // other workers (Gloo); from the worker's transport address by default.
  std::string collectives_host;
  std::chrono::milliseconds collectives_timeout{60000};
  // A testing hook: the pause after each 2-D hand-off is sent
  // (sync::Handoffs::set_test_pause, with `log`); zero: none.
  std::chrono::milliseconds handoff_pause{0};
  // A testing hook: relaxed rows' exchanges also bring every held row's
  // version, and each run reports the most merges any read lacked
  // ("cache.max_lag.<param>", ps::RowExchange::set_audit).
  bool audit_staleness = false;
};

class Runner {
 public:
  // Compiles `job.program`, validates its plan, loads the data, and makes
  // the parameter-server client on `transport` (which must outlive the
  // runner; servers are PeerId{kServer, s} per `map`). Errors name the
  // program file and line, the plan or the data file. With allreduce
  // parameters it joins the other workers' communicator (blocks until all
  // joined): Unavailable if they do not within the timeout, or when device
  // "cuda" is asked and there is no GPU or no NCCL (saying which).
  static StatusOr<std::unique_ptr<Runner>> Create(const cluster::JobSpec& job,
                                                  transport::Transport* transport,
                                                  cluster::ShardMap map, RunnerOptions options);
  ~Runner();

  // Takes blockHandoff messages (receive thread); false for anything else.
  bool Handle(const transport::InMessage& msg);

  // Runs one task to completion: every push applied by the servers before it
  // returns. Errors: the program's run-time errors (with their location), a
  // task that does not fit the program (InvalidArgument naming the field), a
  // failed pull/push/hand-off/collective, or Abort's reason. A row exchange
  // that timed out (--exchange-timeout-ms) says so and names its likely
  // causes.
  StatusOr<TaskResult> Run(const TaskSpec& task);

  // Makes a Run waiting for a hand-off return `why` (the job failed).
  void Abort(const Status& why);

  // Pushes what runs changed in the rows of parameters held between runs
  // (analysis/held_rows.h) since the last flush, and returns once the
  // servers applied it; nothing when no run left any. The scheduler asks
  // before it reads the servers' rows (a checkpoint, the saved parameters).
  // The result's metrics: "bytes.local" (bytes pushed) and "comm_s".
  // Errors: a failed push. Not while a Run runs.
  StatusOr<TaskResult> Flush();

  const ps::PsClient& client() const { return *client_; }

 private:
  StatusOr<TaskResult> RunTask(const TaskSpec& task);
  Runner(cluster::JobSpec job, transport::Transport* transport, RunnerOptions options);
  // What keys the row plans and hot shares kept per loop (the latest one
  // each): the cuts, and the driver values when the loop's slice reads them.
  std::string PlanKey(const TaskSpec& task) const;
  // Checks the task against the program and sizes a space sized at launch.
  Status Prepare(const TaskSpec& task);
  StatusOr<const analysis::StepBlocks*> Blocks(const TaskSpec& task, const std::string& cuts_key);
  // This worker's elements per step (analysis::PlanStepLists), kept per
  // (loop, cuts) with the blocks: copying them anew each run cost a run of
  // the row sums over 3 million ratings 1 to 4 ms of its 8 to 12.
  const analysis::StepLists& Steps(const TaskSpec& task, const std::string& cuts_key,
                                   const analysis::PlanInput& in,
                                   const analysis::StepBlocks& blocks);
  // Sorted distinct rows of each parameter touched by `elements`.
  StatusOr<std::vector<std::vector<int64_t>>> Keys(int loop, const kernel::RunContext& ctx,
                                                   std::span<const int64_t> elements) const;
  analysis::PlanInput PlanFor(int loop) const;
  // How the run keeps its relaxed rows (sync::RelaxedRun): the job's
  // options, or Rigel's choice from a sample of the loop's rows, measured on
  // the loop's first run and kept.
  Status Relaxed(const TaskSpec& task, const analysis::StepBlocks& blocks,
                 const kernel::RunContext& ctx, const analysis::PlanInput& in,
                 sync::RelaxedRun* out);
  // Data set `data` is held in part here (exec/hold_plan.h): the job holds
  // parts and the program and plan allow it. The same on every worker.
  bool HoldsInPart(int data) const;
  // The workers exchange what their own samples touch (runner_samples.cc):
  // a job of several workers with a store to exchange through.
  bool CanExchangeSamples() const;
  // analysis::SampleRows of the loop's run: computed here from every
  // sampled element when this worker holds them all; otherwise each worker
  // counts the samples in its own blocks and all exchange their counts
  // through the store (the same on every worker; every worker of the run
  // must call it). Errors: the loop body's; the store's (Unavailable when
  // some worker's counts do not come within the collectives' timeout).
  StatusOr<analysis::RowSample> SampleLoopRows(const TaskSpec& task,
                                               const analysis::StepBlocks& blocks,
                                               const kernel::RunContext& ctx,
                                               const analysis::PlanInput& in, int64_t limit,
                                               const std::vector<bool>& want);
  // For workers holding their part of the loop's data: the rows this
  // worker's elements touch (*mine, by parameter) and the union of those the
  // other workers' touch of the cached parameters the loop writes (*theirs),
  // exchanged through the store. Every worker of the run must call it.
  // Errors: the loop body's; the store's.
  Status ExchangeRows(const TaskSpec& task, const kernel::RunContext& ctx,
                      const analysis::PlanInput& in, const analysis::StepLists& steps,
                      std::vector<std::vector<int64_t>>* mine,
                      std::vector<std::vector<int64_t>>* theirs);
  // in.hot_share when Rigel chooses the loop's mini-batch (analysis/batch.h).
  Status MeasureHotShare(const TaskSpec& task, const std::string& cuts_key,
                         const analysis::StepBlocks& blocks, const kernel::RunContext& ctx,
                         analysis::PlanInput* in);
  // The rows each parameter needs in this run: made once per cuts when the
  // rows a block touches depend only on its elements.
  StatusOr<std::shared_ptr<const analysis::RowPlan>> Rows(const TaskSpec& task,
                                                          const std::string& cuts_key,
                                                          const analysis::PlanInput& in,
                                                          const analysis::StepBlocks& blocks,
                                                          const analysis::StepLists& steps,
                                                          const kernel::RunContext& ctx);
  // Runs `steps` with `strategies` around each.
  Status RunSteps(int loop, const kernel::RunContext& ctx, const analysis::StepLists& steps,
                  const analysis::RowPlan& rows,
                  const std::vector<std::unique_ptr<sync::SyncStrategy>>& strategies,
                  sync::SyncMetrics* m);
  // The strategies around the steps: Begin, the steps, the generations of
  // the written parameters, End, and the flush of every push.
  Status RunSynced(const TaskSpec& task, const analysis::StepLists& steps,
                   const analysis::RowPlan& rows, const kernel::RunContext& ctx,
                   std::vector<kernel::ParamBinding>* bindings, const sync::RelaxedRun& relaxed,
                   sync::SyncMetrics* m);
  // FailedPrecondition when a relaxed parameter the run wrote diverged
  // (exec/divergence.h) on this worker's copy of it.
  // Adds each one's largest |value| to *metrics (relaxed.max.magnitude.P).
  // Watch: parameter p's DivergenceWatch over loop `loop`'s runs.
  Status CheckDiverged(int loop, const analysis::RowPlan& rows,
                       const std::vector<kernel::ParamBinding>& bindings,
                       sync::SyncMetrics* metrics);
  exec::DivergenceWatch& Watch(int p, int loop);
  // The run's counters into out->metrics, and its log line.
  void Report(const TaskSpec& task, const analysis::StepLists& steps, double keys_s, double total,
              const sync::SyncMetrics& m, TaskResult* out) const;
  // Joins the workers' communicator when some loop has allreduce parameters
  // or relaxed parameters with hot rows.
  Status StartCollectives();
  // How this job keeps each loop's parameters (resolved_), from the plan and
  // the job's options (analysis/sync/resolve.h).
  // Called by the executor with the parameters' shapes, before it allocates
  // any: which it holds whole (not those held in part).
  std::vector<bool> ResolveSync(const std::vector<int64_t>& rows,
                                const std::vector<int64_t>& widths);
  // A parameter held in part whose rows some loop's key slice cannot know
  // (a data-dependent subscript, a whole access) is held whole after all.
  void HoldWholeWhereRowsAreUnknown();

  // The job's cuts of the loops whose data this worker holds by them
  // (cluster::JobSpec::cuts), by loop.
  Status ReadHeldCuts();
  // For data held in part by loops cut by coordinates: the rows each block
  // column touches of each rotated parameter ([p][q]), from what every
  // worker's own blocks touch, exchanged through the store. Every worker of
  // the run must call it. Errors: the loop body's; the store's.
  Status ExchangeColumns(const TaskSpec& task, const kernel::RunContext& ctx,
                         const analysis::PlanInput& in, const analysis::StepBlocks& blocks,
                         std::vector<std::vector<std::vector<int64_t>>>* columns);

  cluster::JobSpec job_;
  std::map<int, analysis::Cuts> held_cuts_;
  transport::Transport* transport_;
  RunnerOptions opts_;
  ir::Program prog_;
  analysis::Plan plan_;
  std::unique_ptr<exec::SerialExecutor> ex_;  // data, local parameter copies, kernels
  // Per loop: whether the log said its tier (logging only, hence mutable).
  mutable std::vector<bool> tier_said_;
  std::vector<kernel::KeySlice> slices_;
  std::vector<bool> static_keys_;  // per loop: touched rows depend only on the elements
  std::unique_ptr<ps::PsClient> client_;
  std::unique_ptr<ps::RowExchange> exchange_;  // the cache strategy's
  analysis::sync::Resolved resolved_;          // per loop its parameters; their caches' rows
  std::unique_ptr<sync::RowIo> io_;
  std::unique_ptr<sync::Handoffs> handoffs_;
  std::unique_ptr<DenseSync> dense_;     // null: no allreduce parameters
  std::vector<sync::ParamState> state_;  // per parameter, across runs
  // Per (loop, cuts): the blocks, and the row plan when static_keys_.
  std::map<std::pair<int, std::string>, std::unique_ptr<analysis::StepBlocks>> blocks_;
  struct KeptSteps {
    bool planned = false;
    int64_t batch = 0;  // analysis::StepBatch when they were planned
    analysis::StepLists steps;
  };
  std::map<std::pair<int, std::string>, KeptSteps> steps_;
  std::map<std::pair<int, std::string>, std::shared_ptr<const analysis::RowPlan>> rows_;
  std::map<std::pair<int, std::string>, double> hot_share_;  // when static_keys_
  // Per loop: the sample of rows its first run measured, for hot rows.
  std::map<int, analysis::RowSample> samples_;
};

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_RUNNER_H_
