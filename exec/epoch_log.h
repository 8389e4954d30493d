// Per-epoch figures of a run (an epoch is one iteration of the program's
// outermost driver `for`), as the JSON line `rigel run --log-json` writes and
// the progress line `rigel run --workers` shows. The serial run (cli/) and
// the distributed driver (scheduler/driver.h) fill the same struct, so their
// logs compare line by line. docs/distributed.md lists the fields.
//
// Thread-safety: EpochLog is used from one thread; the functions are pure.
#ifndef RIGEL_EXEC_EPOCH_LOG_H_
#define RIGEL_EXEC_EPOCH_LOG_H_

#include <cstdint>
#include <map>
#include <string>

#include "common/line_file.h"
#include "common/status.h"

namespace rigel::exec {

struct EpochFigures {
  int64_t epoch = 0;   // the driver loop's counter
  int64_t done = 0;    // epochs finished, this one included
  int64_t epochs = 0;  // iterations of the driver loop in all
  double elapsed_s = 0;
  double epoch_s = 0;
  double updates = 0;  // loop elements run in the epoch, every worker's
  // Seconds per worker (averaged over workers; serially compute_s is the
  // time in loops and the others are 0).
  double compute_s = 0, comm_s = 0, wait_s = 0;
  // CPU seconds (user + system) of every process of the job in the epoch:
  // the scheduler, the workers and the servers; serially, the one process.
  double cpu_s = 0;
  int workers = 1;
  int servers = 0;
  // The most resident memory (VmHWM) a process has held so far, in bytes,
  // by role: the most of any worker, of any server, and the scheduler's
  // (distributed), or this process's ("process", serially); -1 where not
  // known (no /proc, or no report yet). Workers say it with every loop run,
  // servers with their heartbeats (up to an interval old).
  std::map<std::string, int64_t> peak_bytes;
  int64_t replicas_checked = 0;         // allreduce replicas found equal
  std::map<std::string, double> bytes;  // moved, by strategy
  std::map<int, int64_t> batch;         // mini-batch (elements per worker) by loop
  // Relaxed parameters kept by row caches (DSL.md version 3): bytes moved
  // by parameter, and per loop the settings its runs used (staleness,
  // push_bound, push_age, merge_every, hot_rows.<param>, scaled_rows.<param>:
  // the rows whose merges are scaled) and their counters summed
  // over workers (pushed.<param>, refreshed.<param>, fetched.<param>,
  // evicted.<param>, audited.<param>) or, for max_lag.<param> and
  // magnitude.<param> (the largest |value| of a worker's copy after the
  // run), the most; drift.<param> is sqrt(sum |server - copy|^2 / sum
  // |server|^2) over the rows refreshed, the copies' distance from the
  // servers' values when they were merged back into them.
  std::map<std::string, double> param_bytes;
  std::map<int, std::map<std::string, double>> relaxed;
  // What the program printed in the epoch, by name: each number a print
  // gives right after a string, under that string (trimmed of blanks and a
  // trailing ':' or '='), the last print winning. `print("epoch", ep,
  // "test_rmse", r)` gives {"epoch": 3, "test_rmse": 0.91}.
  std::map<std::string, double> printed;
  // Each loop's tier so far (kernel::TierReport): "jit", "compiling" or
  // "interpreter", the compile's milliseconds and the interpreted
  // milliseconds before it. Distributed, of the loops run so far: "jit" once
  // every worker runs it compiled, the most milliseconds of any worker, and
  // how many workers run it compiled (-1 serially: not written).
  struct Tier {
    std::string tier;
    double compile_ms = 0, interpreted_ms = 0;
    int compiled_workers = -1;
  };
  std::map<int, Tier> tiers;
};

// `f` as one JSON object (no newline).
std::string EpochJson(const EpochFigures& f);

// "[epoch 3/10] 1.2 s elapsed, ETA 2.8 s, 4.1e+06 updates/s, 12.0 MB moved,
// compute 80%, loop 0 mini-batch 32" (one mini-batch per batched loop), with
// a newline.
std::string EpochProgressLine(const EpochFigures& f);

// The --log-json file: EpochJson lines, each written before Write returns
// (common/line_file.h), so that a run that fails keeps the epochs it
// finished and a reader finds whole lines only, a full disk included.
class EpochLog {
 public:
  // Empties or creates `path`. IoError "--log-json PATH: cannot write here
  // (REASON); nothing was run ..." when it cannot be written.
  Status Open(const std::string& path);
  // Opens `path` for a run that goes on from a checkpoint after a restart:
  // the epochs it holds stay. The first Write drops the last line for the
  // same epoch of the same loop (same "epoch" and "epochs") and every line
  // after it, which the attempt that failed logged after its checkpoint and
  // this run logs again; with no such line it appends. Errors as Open.
  Status OpenToGoOn(const std::string& path);
  bool is_open() const { return out_.is_open(); }
  // IoError "--log-json PATH: write failed: REASON; it ends with the N
  // whole lines written before" (and the same from then on).
  Status Write(const EpochFigures& f);

 private:
  // The first Write after OpenToGoOn: cuts what `f`'s epoch replaces.
  Status DropRepeated(const EpochFigures& f);

  std::string path_;
  LineFile out_;
  bool going_on_ = false;
};

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_EPOCH_LOG_H_
