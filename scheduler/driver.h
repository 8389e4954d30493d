// The distributed driver: runs a program's driver statements in the
// scheduler and hands each `parallel for` run to the workers as a `task`
// (how a run goes: docs/distributed.md).
//
// Create() compiles the program, makes or checks its plan, and loads the data
// (for the driver's attributes and balanced cuts; workers read the same
// files); errors name the program position, the plan file or the data file.
// setup() is the cluster setup to hand every member. Run() waits until every
// worker loaded its data, runs the driver, adds the workers' accumulator sums,
// writes the parameters when asked, and reports progress per epoch.
//
// Thread-safety: Handle() runs on the transport's receive thread; Run() on
// one other thread; Abort() from any thread.
#ifndef RIGEL_SCHEDULER_DRIVER_H_
#define RIGEL_SCHEDULER_DRIVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/memory.h"
#include "analysis/partition.h"
#include "analysis/plan.h"
#include "cluster/setup.h"
#include "cluster/wire/control.capnp.h"
#include "common/line_file.h"
#include "common/mutex.h"
#include "exec/executor.h"
#include "exec/vectors_file.h"
#include "ir/ir.h"
#include "scheduler/checkpoint.h"
#include "scheduler/checkpoint_lock.h"
#include "scheduler/server_figures.h"
#include "transport/transport.h"

namespace rigel::scheduler {

struct DriverOptions {
  std::string program;                                    // path of the .rgl file
  std::vector<std::pair<std::string, std::string>> sets;  // --set overrides
  uint64_t seed = 0;
  std::string plan_path;  // empty: plan the program for `workers`
  int workers = 1;
  int servers = 1;
  cluster::JobOptions job;           // staleness, batch, sync_every, device
  std::ostream* out = nullptr;       // the program's prints; null: std::cout
  std::ostream* progress = nullptr;  // per-epoch progress lines; null: none
  std::ostream* log = nullptr;       // scheduler log lines; null: none
  std::string log_json;              // per-epoch JSON lines to this file; empty: none
  std::string save_params;           // write the final parameters here; empty: no
  std::string init_params;           // start the parameters it names from this file
  // --jit: the tier of every loop body, here and in the workers (kernel/
  // kernel.h); empty: kernel::DefaultJitMode().
  std::string jit;
  std::vector<std::string> save_vectors;  // PARAM=FILE: word2vec text files (exec/vectors_file.h)
  // Checkpoints (scheduler/checkpoint.h, docs/operations.md): into this
  // directory (empty: none, unless resuming), every N top-level loop
  // iterations ("N") or, at the first iteration end N seconds after the last
  // one, ("Ns"); empty: "1", or the resumed checkpoint's.
  std::string checkpoint_dir;
  std::string checkpoint_every;
  // Go on from this checkpoint (a manifest, or the newest in a directory);
  // empty: start afresh.
  std::string resume;
  // Printed lines are appended here; the lines it already holds (printed by
  // an earlier attempt of this job) are not printed again. Empty: none.
  std::string print_log;
  // Print nothing for the program's first this many printed lines (counted
  // from its start): the launcher's relay (scheduler/print_relay.h) printed
  // them for an earlier attempt. Not with print_log.
  int64_t quiet_prints = 0;
  // Stop after this many iterations of the top-level driver `for` (epochs),
  // as if the program ended there: trial runs (`rigel tune`). 0: run it all.
  int64_t stop_after_epochs = 0;
};

class Driver {
 public:
  // Errors: the program's diagnostics (FILE:LINE:COL), an unreadable or
  // unsafe plan (naming the plan file and loop), data that cannot be loaded,
  // a --set path that cannot be made absolute.
  static StatusOr<std::unique_ptr<Driver>> Create(DriverOptions options);
  ~Driver();

  const cluster::ClusterSetup& setup() const { return setup_; }
  const analysis::Plan& plan() const { return plan_; }
  // What each process is expected to hold at its peak (analysis/memory.h).
  const analysis::MemoryEstimate& memory() const { return memory_; }

  // Takes `TaskDone` and worker `step{start}` messages; false for others.
  bool Handle(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  // Runs the whole program on the cluster reachable through `transport`
  // (connected to every member). Returns the first error: a worker's
  // (prefixed with its rank), the driver's, or Abort's reason.
  Status Run(transport::Transport* transport);
  // Makes Run return `why` (a member died, the job was stopped).
  void Abort(const Status& why) RIGEL_EXCLUDES(mu_);
  // The newest complete checkpoint of this job's directory ("" if none).
  std::string NewestCheckpoint() const;
  // Whether Run ran the whole program (its last checkpoint written).
  bool finished() const { return finished_.load(); }
  // Where this job writes checkpoints ("" if it does not).
  const std::string& checkpoint_dir() const { return opts_.checkpoint_dir; }
  // Where the per-epoch figures get the servers' CPU seconds so far and their
  // peak memory (Coordinator::Servers); unset: the servers are not counted.
  // Call before Run.
  void set_servers(std::function<ServerFigures()> f) { servers_ = std::move(f); }

 private:
  struct Epoch;
  explicit Driver(DriverOptions options);
  // Create's steps, in order (driver.cc says what each does).
  Status LoadPlan();
  Status CheckOutputs();
  StatusOr<exec::ExecutorOptions> JobExecutorOptions();
  Status MakeSetup();
  Status RunRemote(const exec::RemoteRun& run) RIGEL_EXCLUDES(mu_);
  // Sends every worker a task filled by `fill`; their taskDone answers, or
  // the first worker's error, or the job's end (Abort) if that comes first.
  StatusOr<std::map<int, transport::InMessage>> ToWorkers(
      const std::function<void(cluster::wire::Task::Builder)>& fill) RIGEL_EXCLUDES(mu_);
  // Has the workers push the rows they hold between runs
  // (analysis/held_rows.h) when a run left any since the last flush: before
  // the servers' rows are read (a checkpoint's copy, SaveParams).
  Status FlushHeldRows() RIGEL_EXCLUDES(mu_);
  // The epoch's log line and progress line; the log's error stops the job.
  Status OnEpoch(int64_t i, int64_t lo, int64_t hi);
  // --save-params and --save-vectors: the final values from the servers.
  Status SaveParams();
  Status WaitReady() RIGEL_EXCLUDES(mu_);
  // Checkpoints (scheduler/driver_checkpoint.cc).
  Status SetUpCheckpoints();
  // When a checkpoint is due at the coming checkpoint point, asks the
  // servers for their copies now (exec::ExecutorOptions::params_settled).
  Status ParamsSettled();
  Status AtCheckpointPoint();
  // Waits for the servers' copies, then writes everything on writing_.
  Status TakeCheckpoint();
  Status WriteCheckpoint(CheckpointManifest m, const exec::DriverState& state,
                         std::chrono::steady_clock::time_point start, double copy_s);
  // Waits for the checkpoint being written; its error, if it failed.
  Status FinishCheckpoint() RIGEL_EXCLUDES(mu_);
  Status CheckpointFailed(uint64_t seq, const Status& why);
  // A request to every server, its body filled by `fill`; their answers.
  std::vector<std::future<StatusOr<transport::InMessage>>> ToServers(
      const std::function<void(transport::OutMessage&)>& fill);
  std::vector<std::future<StatusOr<transport::InMessage>>> AskServers(uint64_t seq, bool confirm);
  // A server's answer, or the job's end (Abort) if that comes first.
  StatusOr<transport::InMessage> Await(std::future<StatusOr<transport::InMessage>>& reply)
      RIGEL_EXCLUDES(mu_);
  Status RestoreServers();

  DriverOptions opts_;
  std::unique_ptr<ir::Program> prog_;
  std::vector<exec::VectorsRequest> vectors_;     // --save-vectors, checked before the run
  kernel::JitMode jit_ = kernel::JitMode::kAuto;  // --jit, resolved
  analysis::Plan plan_;
  std::string plan_json_;
  cluster::ClusterSetup setup_;
  std::unique_ptr<exec::SerialExecutor> ex_;  // the driver, with no parameter memory
  std::map<int, analysis::Cuts> cuts_;        // per loop (spaces sized at launch: recut each run)
  std::vector<bool> held_;  // per loop: its runs leave rows on the workers (held_rows.h)
  bool unflushed_ = false;  // a run left some since the last FlushHeldRows
  transport::Transport* transport_ = nullptr;

  Mutex mu_;
  CondVar cv_;  // ready_, done_ or aborted_ changed
  int ready_ RIGEL_GUARDED_BY(mu_) = 0;
  // taskDone messages of the current run, by worker rank.
  std::map<int, transport::InMessage> done_ RIGEL_GUARDED_BY(mu_);
  Status aborted_ RIGEL_GUARDED_BY(mu_);

  std::unique_ptr<Epoch> epoch_;

  std::string job_key_;                        // cluster::JobKey of the program and --set
  std::string program_ir_;                     // ResumableForm of the program
  CheckpointLock lock_;                        // of checkpoint_dir, for the job's life
  std::vector<CheckpointParam> shapes_;        // the parameters' names and shapes
  std::optional<CheckpointManifest> resumed_;  // the checkpoint Run goes on from
  std::string resumed_path_;
  uint64_t next_seq_ = 1;
  int64_t every_iterations_ = 0;  // checkpoint every this many iterations; 0: by time
  double every_seconds_ = 0;
  int64_t iterations_ = 0;  // top-level loop iterations done, those before a resume included
  std::chrono::steady_clock::time_point last_checkpoint_;
  // The checkpoint due at the coming checkpoint point, once ParamsSettled
  // asked the servers for their copies: its number, when it was asked for,
  // how long the job waited then, and the servers' answers.
  bool copy_due_ = false;
  uint64_t copy_seq_ = 0;
  std::chrono::steady_clock::time_point copy_start_;
  double copy_waited_ = 0;
  std::vector<std::future<StatusOr<transport::InMessage>>> copies_;
  LineFile print_log_;
  std::atomic<bool> finished_{false};
  const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  int64_t epochs_done_ = 0;               // top-level iterations ended (stop_after_epochs)
  bool stopped_early_ = false;            // the driver stopped at stop_after_epochs
  std::thread writing_;                   // the checkpoint being written
  Status written_ RIGEL_GUARDED_BY(mu_);  // its outcome
  std::function<ServerFigures()> servers_;
  analysis::MemoryEstimate memory_;
};

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_DRIVER_H_
