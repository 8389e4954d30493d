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

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/partition.h"
#include "analysis/plan.h"
#include "cluster/setup.h"
#include "exec/executor.h"
#include "exec/vectors_file.h"
#include "ir/ir.h"
#include "transport/transport.h"

namespace rigel::scheduler {

struct DriverOptions {
  std::string program;                                    // path of the .rgl file
  std::vector<std::pair<std::string, std::string>> sets;  // --set overrides
  uint64_t seed = 0;
  std::string plan_path;  // empty: plan the program for `workers`
  int workers = 1;
  int servers = 1;
  cluster::JobOptions job;                // staleness, batch, sync_every, device
  std::ostream* out = nullptr;            // the program's prints; null: std::cout
  std::ostream* progress = nullptr;       // per-epoch progress lines; null: none
  std::ostream* log = nullptr;            // scheduler log lines; null: none
  std::string log_json;                   // per-epoch JSON lines to this file; empty: none
  std::string save_params;                // write the final parameters here; empty: no
  std::vector<std::string> save_vectors;  // PARAM=FILE: word2vec text files (exec/vectors_file.h)
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

  // Takes `taskDone` and worker `step{start}` messages; false for others.
  bool Handle(const transport::InMessage& msg);
  // Runs the whole program on the cluster reachable through `transport`
  // (connected to every member). Returns the first error: a worker's
  // (prefixed with its rank), the driver's, or Abort's reason.
  Status Run(transport::Transport* transport);
  // Makes Run return `why` (a member died, the job was stopped).
  void Abort(const Status& why);
  // Where the per-epoch CPU figure gets the servers' CPU seconds so far
  // (Coordinator::ServersCpuSeconds); unset: the servers are not counted.
  // Call before Run.
  void set_servers_cpu(std::function<double()> f) { servers_cpu_ = std::move(f); }

 private:
  struct Epoch;
  explicit Driver(DriverOptions options);
  Status RunRemote(const exec::RemoteRun& run);
  void OnEpoch(int64_t i, int64_t lo, int64_t hi);
  // --save-params and --save-vectors: the final values from the servers.
  Status SaveParams();
  Status WaitReady();

  DriverOptions opts_;
  std::unique_ptr<ir::Program> prog_;
  std::vector<exec::VectorsRequest> vectors_;  // --save-vectors, checked before the run
  analysis::Plan plan_;
  std::string plan_json_;
  cluster::ClusterSetup setup_;
  std::unique_ptr<exec::SerialExecutor> ex_;  // the driver, with no parameter memory
  std::map<int, analysis::Cuts> cuts_;        // per loop (spaces sized at launch: recut each run)
  transport::Transport* transport_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  int ready_ = 0;
  // taskDone messages of the current run, by worker rank.
  std::map<int, transport::InMessage> done_;
  Status aborted_;

  std::unique_ptr<Epoch> epoch_;
  std::function<double()> servers_cpu_;
};

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_DRIVER_H_
