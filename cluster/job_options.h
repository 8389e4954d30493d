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

// --staleness auto: Rigel chooses the bound per loop (analysis/relaxed.h).
inline constexpr int kStalenessAuto = -1;

struct JobOptions {
  // Relaxed parameters (DSL.md version 3): merges by other workers a read of
  // a row may lack (kStalenessAuto: Rigel's choice; 0: synchronous per
  // mini-batch through the servers, with no row cache).
  int staleness = kStalenessAuto;
  int64_t push_bound = 0;   // a cached row's updates before it is pushed; 0: Rigel chooses
  int64_t merge_every = 0;  // mini-batches between hot-row merges; 0: Rigel chooses
  int64_t push_age = 0;  // mini-batches a cached row's update may wait unpushed; 0: Rigel chooses
  int64_t cache_mb = 1024;  // each worker's row caches, MiB of bases in all
  bool hot_rows = true;     // replicate rows most mini-batches touch, merged by collectives
  // Staleness-scaled merges of relaxed rows (docs/parameter_servers.md):
  // a delta taken while the worker's copy lacked L merges by other workers
  // is added scaled by 1 / (1 + L). false: every delta is added whole.
  bool scaled_merges = true;
  int64_t batch = 0;           // elements per mini-batch of data-parallel loops; 0: Rigel chooses
  int64_t sync_every = 1;      // mini-batches between all-reduces of allreduce parameters' deltas
  std::string device = "cpu";  // where allreduce parameters live: "cpu" (Gloo) or "cuda" (NCCL)
  // The collectives of host-memory allreduce parameters: "gloo", or "mpi"
  // (the job's mpirun; every process must be a rank of it).
  std::string collectives = "gloo";
  // Bytes each process of the job may hold: the scheduler refuses a job whose
  // expected peak (analysis/memory.h) is larger, before the workers and
  // servers start. 0: no limit.
  int64_t memory_limit = 0;
  // Workers hold only their part of the data sets only data-parallel loops
  // read (exec/hold_plan.h); false: every worker loads every data set whole.
  bool data_parts = true;
  // How long a worker waits for a server's answer to one row exchange (a
  // pull, a merge, a row cache's sync) before the run fails with the likely
  // causes named (worker/runner.cc). Longer than the heartbeats' default
  // timeout (10 s), so that a server that died is reported as a lost process
  // (exit 3, which a restart recovers) before its exchanges time out.
  int64_t exchange_timeout_ms = 30000;
};

// "512M", "4G", "1.5G", "4096": bytes, with K, M, G or T meaning 2^10, 2^20,
// 2^30 or 2^40 (a trailing "B" or "iB" allowed). InvalidArgument otherwise.
StatusOr<int64_t> ParseByteSize(const std::string& text);

// The clocks a pull of the `ps` strategy may lag (ps/service.h; relaxed rows
// at --staleness 0, sums): the staleness bound, 0 when Rigel chooses it.
inline int ClockStaleness(const JobOptions& o) { return o.staleness > 0 ? o.staleness : 0; }

// Adds --staleness, --push-bound, --push-age, --merge-every, --cache-mb, --hot-rows,
// --scaled-merges,
// --batch, --sync-every, --device, --collectives, --memory-limit and
// --data-parts and --exchange-timeout-ms to `app`, each checked against its range; the parse writes
// into `*o`, which must outlive `app`. Returns the options added (a caller can ask which were
// given).
std::vector<CLI::Option*> AddJobOptionFlags(CLI::App* app, JobOptions* o);

// The same flags with `o`'s values ("--staleness", "auto", ...), for the
// command line of a child process.
std::vector<std::string> JobOptionArgs(const JobOptions& o);

// InvalidArgument naming `what` and the option when a value is outside the
// range its flag accepts (for values that did not come through the flags).
Status ValidateJobOptions(const JobOptions& o, const std::string& what);

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_JOB_OPTIONS_H_
