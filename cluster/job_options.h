// The options of a distributed job that the `rigel` command, the scheduler
// and every member share: one struct, one set of flags, one validation.
//
// Value type; thread-compatible.
#ifndef RIGEL_CLUSTER_JOB_OPTIONS_H_
#define RIGEL_CLUSTER_JOB_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rigel::cluster {

struct JobOptions {
  int staleness = 0;           // clocks a relaxed read may lag (0: synchronous)
  int64_t batch = 0;           // elements per mini-batch of data-parallel loops; 0: Rigel chooses
  int64_t sync_every = 1;      // mini-batches between all-reduces of allreduce parameters' deltas
  std::string device = "cpu";  // where allreduce parameters live: "cpu" (Gloo) or "cuda" (NCCL)
  // The collectives of host-memory allreduce parameters: "gloo", or "mpi"
  // (the job's mpirun; every process must be a rank of it).
  std::string collectives = "gloo";
};

// Adds --staleness, --batch, --sync-every, --device and --collectives to
// `app`, each checked
// against its range; the parse writes into `*o`, which must outlive `app`.
// Returns the options added (a caller can ask which were given).
std::vector<CLI::Option*> AddJobOptionFlags(CLI::App* app, JobOptions* o);

// The same flags with `o`'s values ("--staleness", "0", ...), for the command
// line of a child process.
std::vector<std::string> JobOptionArgs(const JobOptions& o);

// InvalidArgument naming `what` and the option when a value is outside the
// range its flag accepts (for values that did not come through the flags).
Status ValidateJobOptions(const JobOptions& o, const std::string& what);

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_JOB_OPTIONS_H_
