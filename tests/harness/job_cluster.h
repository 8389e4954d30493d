// A whole job in this process, as rigel-scheduler, rigel-server and
// rigel-worker run it: a scheduler::Coordinator and scheduler::Driver on the
// scheduler's endpoint, parameter servers (cluster::Member in front of a
// ps::PsService, tests/harness/inproc_cluster.h's ServerNode) and workers
// (cluster::Member, worker::RunJob) as threads of the base InProcCluster,
// all over one LoopbackNetwork.
//
// Ownership: RunJobCluster makes the cluster, runs the job to its end and
// takes everything down before it returns; nothing outlives the call.
// Errors: the job's own (JobRun::result: the coordinator's verdict, or
// Driver::Create's error, with no member started) and each member's
// (JobRun::servers, JobRun::workers: joining, the setup, the service, the
// runner or a task).
// Thread-safety: call from any one thread; the members run on threads the
// call spawns and joins.
#ifndef RIGEL_TESTS_HARNESS_JOB_CLUSTER_H_
#define RIGEL_TESTS_HARNESS_JOB_CLUSTER_H_

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "tests/harness/inproc_cluster.h"

namespace rigel::testing {

struct JobClusterOptions {
  std::string program;  // a .rgl file
  int servers = 1;
  int workers = 2;
  // The coordinator's and every member's heartbeat interval.
  std::chrono::milliseconds heartbeat{50};
  // How long a member keeps trying to register, and then waits for its setup.
  std::chrono::milliseconds member_timeout{10000};
  ClusterOptions cluster;  // faults by member
};

struct JobRun {
  Status result;                // the coordinator's (Coordinator::Wait)
  std::string printed;          // the driver's print() lines
  std::vector<Status> servers;  // each server's part, by rank
  std::vector<Status> workers;  // each worker's job (RunJob, then FinishJob), by rank
};

// Runs options.program to its end on options.servers servers and
// options.workers workers.
JobRun RunJobCluster(const JobClusterOptions& options);

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_HARNESS_JOB_CLUSTER_H_
