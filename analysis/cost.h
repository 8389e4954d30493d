// The cost model: what one epoch of a plan moves and how long it takes on a
// cluster of P workers and S servers. Bytes are counted, not estimated, for
// every strategy whose traffic the rows decide (local, rotate, replicated,
// ps, allreduce): CountRun walks each worker's steps and rows exactly as the
// runtime plans them (analysis/step_plan.h) over the real data, and follows
// what each worker keeps between runs. The relaxed row caches' traffic
// depends on timing and is modelled from per-row touch counts (pushes every
// push-bound updates, refreshes every N + 1 merges by others). Seconds come
// from the counts and machine constants. docs/planner.md gives the equations
// and how far they are from measured runs.
//
// Thread-safe: pure functions; a CountState belongs to one caller.
#ifndef RIGEL_ANALYSIS_COST_H_
#define RIGEL_ANALYSIS_COST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/order.h"
#include "analysis/plan.h"
#include "analysis/relaxed.h"
#include "analysis/step_plan.h"
#include "common/status.h"

namespace rigel::analysis {

// Machine constants: the seconds each counted thing costs. The defaults
// were fitted on the 2-core development VM (docs/planner.md, "Constants");
// `rigel calibrate` fits them on another machine and writes them to a file
// (ReadConstants).
struct CostConstants {
  double round_trip_s = 220e-6;     // an exchange with the servers (request and answer)
  double byte_s = 1.5e-9;           // a byte of row values through a worker's link
  double server_row_s = 0.1e-6;     // a server's work per row pulled or pushed
  double handoff_s = 60e-6;         // one block hand-off between two workers
  double collective_s = 65e-6;      // one all-reduce call
  double collective_byte_s = 2e-9;  // a byte all-reduced
  double task_s = 0.5e-3;           // one loop run's task out and taskDone back
  double tick_s = 50e-6;            // a clock tick after a step whose rows went through the servers
};

// The constants in a fixed order (kConstantNames), for fitting.
inline constexpr int kConstants = 8;
extern const char* const kConstantNames[kConstants];
std::vector<double> ConstantVector(const CostConstants& k);
CostConstants ConstantsFrom(const std::vector<double>& v);

// The constants as JSON ({"round_trip_s": ..., ...}), and back. A file may
// name only some (the others keep their defaults); an unknown name, a
// negative or non-number value is InvalidArgument naming `path` and the key.
std::string ConstantsToJson(const CostConstants& k);
StatusOr<CostConstants> ParseConstants(const std::string& text, const std::string& path);

// A parameter as counted: its name and size.
struct ParamShape {
  std::string name;
  int64_t rows = 0;
  int64_t width = 1;
};

// Row touch counts of a set of elements by parameter index: (row, elements
// touching it), sorted by row. Only parameters the caller marks as wanted
// need to be filled.
using RowCounts = std::vector<std::vector<std::pair<int64_t, int64_t>>>;
using RowCountsFn = std::function<StatusOr<RowCounts>(std::span<const int64_t> elements)>;

// What one run did to the rows of each parameter (by parameter index), as
// the probe finds by running it serially. A parameter without a table (an
// empty vector, or no RunEffects at all) counts every written row as
// changed and every element touching a row as one update of it.
struct RunEffects {
  // 1 for a row whose value differs after the run. The runtime pushes only
  // rows with a nonzero delta (worker/sync/row_io.cc), so a written row the
  // run left as it was is pulled but not pushed.
  std::vector<std::vector<uint8_t>> changed;
  // Element writes per row (kernel::RowTracker's count, the push bound's
  // unit): word2vec's emb[w] is written once per context of the element.
  std::vector<std::vector<uint32_t>> writes;
  // 1 for a parameter whose rows a worker cannot know from its elements
  // (a subscript under a condition on a parameter, as kmeans' Cen[k] under
  // `if N[k] > 0`): every worker lists every row and pushes those its own
  // elements changed. A changed row written w times in the run counts as
  // pushed by a worker holding a share f of the elements with probability
  // 1 - (1 - f)^w (the writes spread evenly over the elements).
  std::vector<uint8_t> inexact;
};

// The relaxed settings of a run with cached parameters (analysis/relaxed.h).
struct CacheSettings {
  int staleness = 1;
  int64_t push_bound = kPushBound;
};

// What one worker does in one run of a loop.
struct WorkerCounts {
  std::vector<int64_t> step_elements;  // elements per step
  // Bytes of row values per step that go through the servers (pulls,
  // pushes, cache exchanges), and that are handed to the next worker.
  std::vector<double> step_server_bytes, step_server_rows, step_handoff_bytes;
  std::vector<int> step_exchanges;        // round trips with the servers per step
  double begin_bytes = 0, end_bytes = 0;  // pulls before the first step, pushes after the last
  double begin_rows = 0, end_rows = 0;
  int begin_exchanges = 0, end_exchanges = 0;
  int collectives = 0;
  double collective_bytes = 0;
  bool overlapped = false;  // the next step's rows move while this one computes
  bool ticks = false;  // every step ends with a clock tick (rows through the servers each step)
  // As the run's metrics name them (worker/sync/*: "local", "local.kept",
  // "rotate", "replicated", "ps", "cache", "allreduce", "allreduce.collective").
  std::map<std::string, double> bytes;
  std::map<std::string, double> param_bytes;  // cached parameters', by name
  // Cached parameters' rows, as the run's log names them ("pushed.W",
  // "refreshed.W", "fetched.W").
  std::map<std::string, double> cache_rows;
};

struct RunCounts {
  int loop = -1;
  std::vector<WorkerCounts> workers;
  double element_s = 0;  // seconds per element of the loop body (measured by the caller)
};

// What each worker keeps between runs (pulled rows, replicas, caches), so
// that a run after the first counts only what the runtime moves again.
// Its fields are CountRun's bookkeeping, mirroring worker/sync/strategy.h's
// ParamState.
struct CountState {
  CountState(int workers, int params);

  struct Held {
    int loop = -1;
    std::vector<int64_t> rows;
    uint64_t generation = 0;
    bool valid = false;
  };
  struct Param {
    uint64_t generation = 0;  // runs that wrote it
    Held local, replicated, dense;
    std::vector<char> cached;                  // rows a cache holds (empty: none)
    std::unordered_map<int64_t, int64_t> lag;  // merges by others a held row lacks
    uint64_t cache_generation = 0;
  };
  std::vector<std::vector<Param>> state_;  // [worker][param]
};

// Counts one run of loop `lp` on every worker: `in` as a worker would plan
// it (rank ignored; batch and hot share already chosen), `blocks` the run's
// blocks, `rows` the distinct rows a set of elements touches (as the
// worker's prefetch slice gives them), `counts` the per-row touch counts
// for cached parameters (may be null when the loop caches none), `effects`
// what the run did to the rows (null: unknown; the row caches use its writes,
// the other strategies its changes). Updates `state`. Errors: those of
// `rows` and `counts`.
StatusOr<RunCounts> CountRun(const LoopPlan& lp, const PlanInput& in, const StepBlocks& blocks,
                             const std::vector<ParamShape>& shapes, const RowsFn& rows,
                             const RowCountsFn& counts, const CacheSettings& cache,
                             CountState* state, const RunEffects* effects = nullptr);

// Predicted figures of a set of runs (one epoch).
struct Prediction {
  double seconds = 0;
  double compute_s = 0;                       // the busiest worker's, summed over runs
  double comm_s = 0;                          // time not hidden behind compute, summed over runs
  std::map<std::string, double> bytes;        // by strategy, summed over workers
  std::map<std::string, double> param_bytes;  // cached parameters', by name
  std::map<std::string, double> cache_rows;   // as WorkerCounts::cache_rows, summed
  double moved_bytes = 0;                     // all bytes but "local.kept"
  // seconds = compute on the critical path + Σ terms[j] × constant j: what
  // the slowest worker of each step counted, by constant (kConstantNames).
  double critical_compute_s = 0;
  std::vector<double> terms = std::vector<double>(kConstants, 0.0);
};

// Seconds and bytes of `runs` on `servers` servers: per run, the task's
// cost, then per step the slowest worker's compute plus what its traffic
// adds (hidden behind compute where the strategy overlaps them), plus the
// pulls before and pushes after.
Prediction Predict(const std::vector<RunCounts>& runs, int servers, const CostConstants& k);

// One measured epoch for fitting: what was counted for it and how long a
// run of it took.
struct Observation {
  std::vector<RunCounts> runs;
  int servers = 1;
  double measured_s = 0;
};

// The constants that bring Predict closest to the observations (least
// squares on the relative error, every constant >= 0), starting from
// `start`. InvalidArgument with fewer observations than 2 or a measured
// time <= 0. Constants no observation exercises keep their value in `start`.
StatusOr<CostConstants> FitConstants(const std::vector<Observation>& obs,
                                     const CostConstants& start);

// The mean of `p` (every figure averaged; empty: all zero).
Prediction MeanPrediction(const std::vector<Prediction>& p);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_COST_H_
