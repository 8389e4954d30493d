// The distributed worker: runs its share of each `parallel for` the
// scheduler hands it (scheduler/driver.h), with parameters kept in sync as the
// plan says, and reports its accumulator partial sums.
//
// Every worker compiles the program itself, loads the data sets from their
// files, and keeps a full-size local copy of every parameter (the kernel's
// memory); the servers hold the authoritative values. One run of a loop with
// partition cuts C (sent with the task) goes:
//
//   - blocks: analysis::MakeStepBlocks(loop, C, data) says which elements this
//     worker runs on each step; a data-parallel loop's block is cut into
//     mini-batches of `batch` elements (by default kDenseBatch when the loop
//     updates a parameter whole, else kSparseBatch; every worker takes as
//     many steps as the busiest, so clocks stay equal).
//   - keys: the prefetch slice (kernel/key_slice.h) lists the rows a set of
//     elements touches without running the body.
//   - per parameter, by strategy:
//       ps             before each step: pull the step's rows (bounded
//                      staleness; with a bound >= 1 they are pulled while
//                      the previous step computes); after: push the deltas
//                      (new - pulled);
//                      then every worker ticks its clock.
//       allreduce      a replica on every worker (worker/dense_sync.h): after
//                      every `sync_every` steps and at the end of the run the
//                      workers' deltas are summed with a collective (Gloo, or
//                      NCCL with device "cuda"), so all replicas stay bit for
//                      bit equal; the servers are not used during the run.
//                      Pulled from the servers only when something else wrote
//                      the parameter; worker 0 pushes the run's delta to the
//                      servers at the end (their copy stays authoritative for
//                      other loops, prints and --save-params). Each run
//                      reports the replicas' hashes ("replica_hash.<name>"),
//                      which the scheduler compares across workers.
//       local          rows only this worker touches are pulled at the start
//                      (or kept from the previous run of the same loop when
//                      nothing else wrote the parameter since) and their
//                      deltas pushed at the end; rows other workers touch too
//                      (a wavefront's block boundaries) go through the
//                      servers step by step like ps rows, always synchronous.
//       rotate         (conflict_free_2d) block column q is the rows touched by
//                      the blocks (*, q). Worker w starts with column w; after
//                      step t it sends its column to worker w - 1 (a
//                      blockHandoff) and takes column w + t + 1 from worker
//                      w + 1: no barrier, only the pairwise hand-off. The last
//                      holder of a column pushes its delta against the
//                      servers' value, which nobody changed during the run.
//       replicated     rows read by this worker's elements, pulled once per
//                      run unless nothing wrote the parameter since.
//       accumulator    summed here per run, reduced at the scheduler.
//
// Thread-safety: Run() on one thread at a time; Handle() on the transport's
// receive thread; Abort() from any thread.
#ifndef RIGEL_WORKER_RUNNER_H_
#define RIGEL_WORKER_RUNNER_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/order.h"
#include "analysis/plan.h"
#include "cluster/setup.h"
#include "collectives/store.h"
#include "common/status.h"
#include "exec/executor.h"
#include "ir/ir.h"
#include "kernel/key_slice.h"
#include "ps/client.h"
#include "transport/transport.h"
#include "worker/dense_sync.h"

namespace rigel::worker {

// One `task` message: run loop `loop` (its `launch`-th run) with `json`
// ({"outer": [[id, is_int, i, f], ...], "cuts": <analysis::CutsToJson>,
// optionally "space": [n, m] for a space sized at launch}).
struct TaskSpec {
  int loop = 0;
  uint64_t launch = 0;
  std::string json;
};

struct TaskResult {
  std::vector<double> accums;  // partial sums, by accumulator index
  // Counters of the run: "elements", "compute_s", "comm_s", "wait_s" and
  // "bytes.<strategy>" (bytes pulled, pushed and handed off per strategy).
  std::vector<std::pair<std::string, double>> metrics;
};

// Mini-batch sizes (elements per worker) when the job leaves it to Rigel
// (JobSpec::batch 0): loops that update a parameter whole, and the others.
inline constexpr int64_t kDenseBatch = 32;
inline constexpr int64_t kSparseBatch = 512;

struct RunnerOptions {
  int rank = 0;
  int workers = 1;
  cluster::JobOptions job;       // staleness, batch, sync_every, device
  std::ostream* log = nullptr;  // one line per run; null: none
  // Rendezvous of the workers' collectives (allreduce parameters); must
  // outlive Create. Null: a program with allreduce parameters is refused.
  collectives::Store* store = nullptr;
  // The host name or address the collectives listen on, reachable by the
  // other workers (Gloo); from the worker's transport address by default.
  std::string collectives_host;
  std::chrono::milliseconds collectives_timeout{60000};
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
  // malformed task, a failed pull/push/hand-off, or Abort's reason.
  StatusOr<TaskResult> Run(const TaskSpec& task);

  // Makes a Run waiting for a hand-off return `why` (the job failed).
  void Abort(const Status& why);

  const ps::PsClient& client() const { return *client_; }

 private:
  struct Layout;
  struct Held;
  // An allreduce parameter's replica: `base` is its value after the last sync
  // (the same bits on every worker), `server` what the servers hold (worker 0
  // pushes the difference at the end of each run), `generation` the
  // parameter's generation when the replica was last current.
  struct DenseReplica {
    bool valid = false;
    uint64_t generation = 0;
    std::vector<int64_t> rows;  // every row: the parameter is read and written whole
    std::vector<float> base;
    std::vector<float> server;
  };
  // Counters of one run (TaskResult::metrics).
  struct Metrics {
    double compute_s = 0, comm_s = 0, wait_s = 0;
    std::map<std::string, double> bytes;  // per strategy
  };
  Runner(cluster::JobSpec job, transport::Transport* transport, RunnerOptions options);
  StatusOr<const analysis::StepBlocks*> Blocks(int loop, const std::string& cuts_json);
  // How each parameter is kept in sync in a run of `loop` over `blocks`, this
  // worker running `all_mine`: the rows it holds, shares or rotates.
  StatusOr<std::shared_ptr<Layout>> MakeLayout(int loop, const kernel::RunContext& ctx,
                                               const analysis::StepBlocks& blocks,
                                               const std::vector<int64_t>& all_mine) const;
  // Sorted distinct rows of each parameter touched by `elements`.
  StatusOr<std::vector<std::vector<int64_t>>> Keys(int loop, const kernel::RunContext& ctx,
                                                   std::span<const int64_t> elements) const;
  // Pulls `keys` of param `p` into the local copy (synchronous: every clock
  // before this worker's seen; else within the staleness bound). The pulled
  // rows also go to *pulled when not null.
  Status PullRows(int p, const std::vector<int64_t>& keys, bool synchronous,
                  std::vector<float>* pulled, Metrics* m, const char* strategy);
  // Pushes local - base for `keys` of param `p` (base: keys.size() rows);
  // rows whose delta is all zero are left out. Base becomes what the
  // servers now hold.
  // Waits for `pull` (of `keys` of param `p`) and stores it as PullRows does;
  // rows listed in `keep_local` (sorted) keep their local values instead.
  Status TakeRows(int p, const std::vector<int64_t>& keys,
                  std::future<StatusOr<std::vector<float>>> pull, std::vector<float>* pulled,
                  Metrics* m, const char* strategy,
                  const std::vector<int64_t>* keep_local = nullptr);
  Status PushDeltas(int p, const std::vector<int64_t>& keys, std::vector<float>* base, Metrics* m,
                    const char* strategy);
  void Gather(int p, const std::vector<int64_t>& keys, std::vector<float>* out) const;
  void Scatter(int p, const std::vector<int64_t>& keys, const float* rows);
  // Joins the workers' communicator when some loop has allreduce parameters.
  Status StartCollectives();
  // Sums the deltas of the allreduce parameters `params` over every worker.
  Status SyncDense(const std::vector<int>& params, Metrics* m);
  Status SendColumn(int loop, uint64_t launch, int64_t step, int p, int64_t column,
                    const std::vector<int64_t>& keys, Metrics* m);
  Status TakeColumn(int loop, uint64_t launch, int64_t step, int p, int64_t column,
                    const std::vector<int64_t>& keys, Metrics* m);

  cluster::JobSpec job_;
  transport::Transport* transport_;
  RunnerOptions opts_;
  ir::Program prog_;
  analysis::Plan plan_;
  std::unique_ptr<exec::SerialExecutor> ex_;  // data, local parameter copies, kernels
  std::vector<kernel::KeySlice> slices_;
  std::vector<bool> static_keys_;  // per loop: touched rows depend only on the elements
  std::map<std::pair<int, std::string>, std::shared_ptr<Layout>> layouts_;
  std::unique_ptr<ps::PsClient> client_;
  std::map<std::pair<int, std::string>, std::unique_ptr<analysis::StepBlocks>> blocks_;
  std::vector<uint64_t> generation_;         // per param: runs that wrote it
  std::vector<std::unique_ptr<Held>> held_;  // per param: local rows kept between runs
  std::vector<std::unique_ptr<Held>> replicated_;
  std::unique_ptr<DenseSync> dense_;                           // null: no allreduce parameters
  std::vector<std::unique_ptr<DenseReplica>> dense_replicas_;  // per param

  // Hand-offs received and not yet taken: (loop, launch, step, param).
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<int, uint64_t, int64_t, int>, transport::InMessage> mailbox_;
  Status aborted_;
};

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_RUNNER_H_
