// A whole scheduler process: the coordinator of a cluster and, for a program
// run, its driver, on a ZeroMQ transport. rigel-scheduler's main only parses
// flags into SchedulerOptions and calls RunScheduler.
//
// Thread-safety: RunScheduler blocks until the job ends; StopScheduler may be
// called from any thread (a signal-waiting thread) while it runs.
#ifndef RIGEL_SCHEDULER_SCHEDULER_H_
#define RIGEL_SCHEDULER_SCHEDULER_H_

#include <ostream>
#include <string>
#include <vector>

#include "cluster/membership.h"
#include "scheduler/driver.h"

namespace rigel::scheduler {

struct SchedulerOptions {
  int servers = 1;
  int workers = 1;
  int heartbeat_ms = 500;
  // A member silent this long is dead (cluster/membership.h).
  double heartbeat_timeout_s = cluster::kDefaultHeartbeatTimeoutS;
  double register_timeout_s = 30;  // every member registered by then, or the job fails
  std::string setup_file;          // a self-test cluster's setup (cluster/setup.h); or:
  DriverOptions driver;            // driver.program set: run this program
  std::vector<std::string> sets;   // --set NAME=VALUE, parsed into driver.sets
  std::string progress_to;         // append a progress line per epoch here
  // The backend ("zmq", "ucx"); empty: the one `listen` is an address of, or zmq.
  std::string transport;
  // Where to listen; empty: the backend's loopback address, any port.
  std::string listen;
  std::string key_file;
  bool insecure_plain = false;  // plain mode beyond loopback (transport/create.h)
  std::string address_file;     // write the bound address here
};

// Runs the scheduler until the job ends. Returns the process exit status: 0
// when every worker finished or StopScheduler was called, 1 with the reason
// on `err` when the program failed or a member died, 3 when a member was lost
// (died, or could not be reached) in a job that writes checkpoints (`err`
// then names the newest one to go on from), 2 for bad input (a program that
// does not compile or plan, an unreadable setup). Checkpoints that cannot be
// read or written are 1. The program's
// prints go to options.driver.out (stdout when null).
int RunScheduler(SchedulerOptions options, std::ostream& err);

// Ends the running scheduler's job with `reason` (every member is told to
// shut down). Returns false when no job runs (still starting, or ended).
bool StopScheduler(const std::string& reason);

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_SCHEDULER_H_
