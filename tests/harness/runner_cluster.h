// Parameter servers and worker::Runner workers in this process, driven by a
// serial executor whose loops run remotely on the workers, as
// scheduler/driver.cc runs them: each loop run is a task with the balanced
// cuts (analysis::MakeCuts) handed to every worker's Runner::Run on its own
// thread, and the workers' accumulator partial sums are added before the
// driver goes on. Allreduce parameters meet in a collectives::MemoryStore
// (Gloo over 127.0.0.1). Servers, endpoints and threads are the base's
// (tests/harness/inproc_cluster.h); no processes, no sockets for rows.
//
// Serial() is the reference: the serial executor visiting each loop that is
// not data-parallel in its schedule's order for the same cuts
// (analysis::ScheduleOrder), as tests/e2e/distributed_test.cc compares.
//
// Ownership: the cluster owns its base, runners, driver and the client that
// pulls the parameters at the end; the destructor closes the endpoints
// before any of them goes.
// Errors: Start fails on compiling, planning, loading or any member's start;
// Run and RunTask with the first failing worker's error.
// Thread-safety: one test thread drives the cluster; the runners run on
// threads the cluster spawns and joins within Start, Run and RunTask.
#ifndef RIGEL_TESTS_HARNESS_RUNNER_CLUSTER_H_
#define RIGEL_TESTS_HARNESS_RUNNER_CLUSTER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "cluster/setup.h"
#include "collectives/store.h"
#include "common/status.h"
#include "exec/executor.h"
#include "ir/ir.h"
#include "ps/client.h"
#include "tests/harness/inproc_cluster.h"
#include "worker/runner.h"

namespace rigel::testing {

struct RunnerClusterOptions {
  int workers = 2;
  int servers = 2;
  int staleness = 0;
  int64_t batch = 0;       // JobSpec::batch
  int64_t sync_every = 1;  // JobSpec::sync_every
  uint64_t seed = 0;
  bool data_parts = true;  // JobOptions::data_parts
  ClusterOptions cluster;  // faults by member
};

// The parameters and accumulators a run ended with.
struct RunValues {
  std::vector<std::vector<float>> params;  // by parameter index
  std::vector<double> accums;              // every accumulator's sums, flat (ir::AccumOffset)
  std::string printed;
};

class RunnerCluster {
 public:
  // Compiles `program`, plans it for opts.workers workers, starts the servers
  // and the workers (whose Runner::Create joins their collectives, so they
  // are made on threads of their own).
  static StatusOr<std::unique_ptr<RunnerCluster>> Start(const std::string& program,
                                                        const RunnerClusterOptions& opts);
  ~RunnerCluster();

  // Runs the program's driver to the end; then the servers' parameters.
  StatusOr<RunValues> Run();

  // The serial executor's run of the same program (see the file comment).
  StatusOr<RunValues> Serial() const;

  // Runs one task on every worker; the first failure stops the others
  // (Runner::Abort) and is returned.
  StatusOr<std::vector<worker::TaskResult>> RunTask(const worker::TaskSpec& task);

  const ir::Program& program() const { return prog_; }
  const analysis::Plan& plan() const { return plan_; }
  // Every metric of every task, summed over workers and runs.
  const std::map<std::string, double>& totals() const { return totals_; }
  // Each run's "replica_hash.<param>" values, one per worker.
  const std::vector<std::vector<double>>& replica_hashes() const { return hashes_; }
  InProcCluster& base() { return base_; }
  // The workers' store (their collectives' rendezvous, and the samples they
  // exchange: worker/runner_samples.cc).
  collectives::MemoryStore& store() { return store_; }

 private:
  RunnerCluster(std::string program, const RunnerClusterOptions& opts);
  StatusOr<cluster::ClusterSetup> MakeSetup() const;
  Status StartClient(const cluster::ClusterSetup& setup);
  Status StartWorkers(const cluster::ClusterSetup& setup);
  Status RunRemote(const exec::RemoteRun& run);
  StatusOr<std::vector<float>> PullParam(int p);

  InProcCluster base_;  // first: closed by the destructor, destroyed last
  std::string path_;
  RunnerClusterOptions opts_;
  ir::Program prog_;
  analysis::Plan plan_;
  collectives::MemoryStore store_;
  std::vector<transport::Transport*> workers_;
  // What each worker's receive thread sees of runners_.
  std::vector<std::unique_ptr<std::atomic<worker::Runner*>>> handlers_;
  std::vector<std::unique_ptr<worker::Runner>> runners_;
  std::unique_ptr<ps::PsClient> client_;          // pulls the parameters at the end
  std::unique_ptr<exec::SerialExecutor> driver_;  // no parameter memory; loops run remotely
  std::ostringstream printed_;
  std::map<std::string, double> totals_;
  std::vector<std::vector<double>> hashes_;
};

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_HARNESS_RUNNER_CLUSTER_H_
