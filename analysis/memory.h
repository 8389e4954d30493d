// The expected peak memory of each process of a job (issue 32: memory known
// before it runs out), from the plan, the data's sizes and the parameters'
// shapes: what the worker, server and scheduler processes will hold, part by
// part, so that `rigel explain` can print it and `--memory-limit` can refuse
// a job that would not fit before its workers and servers start.
//
// The model (docs/planner.md, "Memory") follows what the processes allocate
// today (worker/, ps/, scheduler/):
//   every process   the program and its libraries (k*BaseBytes);
//   worker          every data set (its columns; splits hold the parent and
//                   both parts) whole, or its share of one it holds in part
//                   (exec/hold_plan.h), the largest text parsed at once (a
//                   whole file, or one chunk of one held in part), a full copy of every parameter,
//                   for each allreduce parameter two more (the servers' copy and the deltas), for
//                   each cached relaxed parameter its row cache (its share of --cache-mb, 24 bytes
//                   of bookkeeping per cached row, 11 per row), and the element lists of each
//                   loop's steps (8 bytes per own element, and 8 per element
//                   of every worker where blocks are not cut by element
//                   count), and over libsvm data the row keys of the
//                   elements while a run's rows are planned (24 bytes per
//                   feature entry: the keys, sorted; every worker's when a
//                   relaxed parameter is cached, else its own);
//   server          its shard of every parameter (rows / servers) and two
//                   bits per row;
//   scheduler       every data set whole and the largest file's text (none
//                   of a data set whose facts it took from an index), and
//                   with --save-params every parameter twice at the end.
// Freed memory stays in the worker and server processes (common/memory.h), so
// the parts are added, not overlapped.
//
// Thread-safe: pure functions.
#ifndef RIGEL_ANALYSIS_MEMORY_H_
#define RIGEL_ANALYSIS_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "common/status.h"
#include "data/dataset.h"
#include "ir/ir.h"

namespace rigel::analysis {

// What a process holds before it has loaded or allocated anything of the
// job (code, libraries, thread stacks, transport buffers), by role: the
// --log-json peak_bytes of a job over a 3-line file on the 2-core VM
// (worker 14.6 MB, server 9.7 MB, scheduler 12.1 MB), rounded up.
inline constexpr int64_t kWorkerBaseBytes = 15'000'000;
inline constexpr int64_t kServerBaseBytes = 10'000'000;
inline constexpr int64_t kSchedulerBaseBytes = 12'500'000;
// A serial `rigel run` (no transport, no threads of a cluster): the peak of a
// program with one 10-row parameter and no data, 8.0 MB, rounded up.
inline constexpr int64_t kSerialBaseBytes = 8'500'000;

struct MemoryInputs {
  int workers = 1;
  int servers = 1;
  int64_t cache_bytes = int64_t{1024} << 20;  // --cache-mb
  int staleness = -1;                         // --staleness (-1: auto)
  bool save_params = false;                   // --save-params or --save-vectors
  // Per data set of the program: name, bytes held, bytes of its file (0: not
  // read from a file).
  struct Data {
    std::string name;
    int64_t bytes = 0;
    int64_t file_bytes = 0;
    int64_t elements = 0;
    int64_t features = 0;     // libsvm: feature entries (row keys of its elements)
    bool facts_only = false;  // the scheduler took its facts from an index
    bool split_part = false;  // a part of split(): made after its parent is parsed
    // Held in part by the workers (exec/hold_plan.h): the largest share of
    // its elements a worker holds, and the bytes of the chunks it is read in.
    double worker_share = 1.0;
    int64_t chunk_bytes = 0;  // 0: read whole
    // The scheduler found its facts by a scan in chunks of these bytes (0:
    // from an index, or loaded whole).
    int64_t scan_chunk_bytes = 0;
    // The distinct feature ids its feature entries name, over all elements
    // and their first half (data/feature_sketch.h; -1 unknown).
    data::DistinctCounts distinct_features;
    // tokens: the distinct words before rare ones are removed, in all and in
    // the first half (-1 unknown).
    data::DistinctCounts distinct_words;
  };
  std::vector<Data> data;
  // Per parameter: name, rows and width.
  struct Param {
    std::string name;
    int64_t rows = 0;
    int64_t width = 1;
  };
  std::vector<Param> params;
};

// One thing a process holds, and its bytes.
struct MemoryPart {
  std::string what;
  int64_t bytes = 0;
};
struct ProcessMemory {
  std::string role;  // "worker", "server", "scheduler"
  int64_t total = 0;
  std::vector<MemoryPart> parts;  // largest first
};
struct MemoryEstimate {
  std::vector<ProcessMemory> processes;  // worker, server, scheduler; or serial
};

// The inputs of a program whose data sets are loaded (`data`, one per data
// declaration) and whose parameters have `rows` and `widths`; the sizes of
// the data files are read from the file system (0 where one cannot be).
MemoryInputs MemoryInputsOf(const ir::Program& prog, const std::vector<const data::Dataset*>& data,
                            const std::vector<int64_t>& rows, const std::vector<int64_t>& widths);

MemoryEstimate EstimateMemory(const ir::Program& prog, const Plan& plan, const MemoryInputs& in);

// A serial run's one process (role "serial"): the program, every data set
// whole, the largest text while it is parsed (split parts are made after
// the text is freed), and every parameter whole.
// For `rigel run --memory-limit` without --workers; `in`'s cluster fields are
// not read.
MemoryEstimate EstimateSerialMemory(const MemoryInputs& in);

// "worker: 41.2 MB (parameter 'emb', a copy on every worker: 12.0 MB; ...)",
// one line per role, each with its `parts` largest parts.
std::string MemoryText(const MemoryEstimate& m, int parts = 4);

// OK when every process fits `limit` bytes (0: no limit); else
// FailedPrecondition naming the process that does not fit, by how much, and
// its largest parts.
Status CheckMemoryLimit(const MemoryEstimate& m, int64_t limit);

// {"worker": {"bytes": N, "parts": [{"what": ..., "bytes": N}, ...]}, ...}:
// one JSON object (no newline), every part.
std::string MemoryJson(const MemoryEstimate& m);

// "41.2 MB" (10^6 bytes), "812 KB", "96 B".
std::string ShowBytes(int64_t bytes);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_MEMORY_H_
