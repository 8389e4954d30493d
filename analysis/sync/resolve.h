// The one step that turns a plan and a job's options into how each process
// keeps each parameter in sync (issue 43: the rule "is this parameter row
// cached" was written five times, in the worker, the cost probe and the
// memory model, with small differences between them).
//
// A plan (analysis/plan.h) fixes each loop's parameters' strategies from the
// program alone. Two of them are then refined by what the job asks and the
// parameters' shapes:
//   cache  a relaxed, sparse `ps` parameter (not a sum) is kept by a
//          write-back row cache on each worker (worker/sync/cached_rows.cc),
//          unless the job runs synchronously (--staleness 0). Every cached
//          parameter shares the --cache-mb budget in proportion to what it
//          would take whole. A cache smaller than its parameter, or of a
//          parameter above kFetchWholeBytes, is partial: it fetches only the
//          rows the steps touch, when first touched, never the whole table
//          (a hashed CTR table's rows are mostly never touched).
//   held   a written `local` parameter no other loop touches keeps its rows
//          on the workers between runs (analysis/held_rows.h).
// A parameter that every loop touching it keeps in a partial cache is held
// in part: a worker never allocates it whole, and the kernel reaches the
// cache's rows through its slot map (kernel::ParamBinding::slots), so a
// table larger than any worker can be trained (issue 43).
// The worker (worker/runner.cc), the cost probe (exec/cost_probe.cc) and the
// memory model (analysis/memory.cc) read the answer from here, so what is
// predicted is what runs. The units and their names are listed in
// analysis/sync/units.h.
//
// Thread-safe: pure functions of their arguments.
#ifndef RIGEL_ANALYSIS_SYNC_RESOLVE_H_
#define RIGEL_ANALYSIS_SYNC_RESOLVE_H_

#include <cstdint>
#include <vector>

#include "analysis/cost.h"
#include "analysis/memory.h"
#include "analysis/plan.h"
#include "analysis/step_plan.h"
#include "ir/ir.h"

namespace rigel::analysis::sync {

// The job options that change how a plan's parameters are kept.
struct JobSync {
  // --staleness as given: -1 Rigel's choice, 0 synchronous (no row caches),
  // >= 1 the bound. Only "0 or not" matters here.
  int staleness = -1;
  bool scaled_merges = true;                  // --scaled-merges
  int64_t cache_bytes = int64_t{1024} << 20;  // --cache-mb, in bytes
};

// The largest parameter (rows x width x 4 bytes) a cache that can hold it
// whole fetches whole, at its first exchange, instead of row by row as the
// steps touch them: small tables (LDA's topic totals, a9a's weights) are then
// exchanged without the rows of every step being listed.
inline constexpr int64_t kFetchWholeBytes = int64_t{4} << 20;

// The bytes a row cache spends on one row of width `width`: its base and
// ps::RowCache's bookkeeping per cell (40 bytes), and the row's values too
// when the parameter is held in part (the cache's own cells).
inline int64_t CacheRowBytes(int64_t width, bool in_part = false) {
  return width * 4 * (in_part ? 2 : 1) + 40;
}
// The bytes a row cache spends per row of its parameter, held or not: the
// slot map.
inline constexpr int64_t kCacheBytesPerParamRow = 4;

// How the processes of one job keep a plan's parameters.
struct Resolved {
  // By index into plan.loops: the loop's parameters (accumulators left out),
  // in the plan's order, as the step planner takes them (PlanInput).
  std::vector<std::vector<PlanParam>> loops;
  // By parameter index: the rows its row cache holds on each worker (0: no
  // loop caches it; its rows when the cache holds it whole).
  std::vector<int64_t> cache_rows;
  // By parameter index: held in part (see above); a worker has no whole copy.
  std::vector<uint8_t> in_part;

  bool cached(int param) const {
    return param >= 0 && static_cast<size_t>(param) < cache_rows.size() &&
           cache_rows[static_cast<size_t>(param)] > 0;
  }
  // Some loop caches it partially (fetching only the rows its steps touch).
  bool partial(int param) const {
    for (const std::vector<PlanParam>& loop : loops) {
      for (const PlanParam& p : loop) {
        if (p.index == param && p.partial) return true;
      }
    }
    return false;
  }
  bool held_in_part(int param) const {
    return param >= 0 && static_cast<size_t>(param) < in_part.size() &&
           in_part[static_cast<size_t>(param)] != 0;
  }
};

// Whether the servers keep parameter `param` in a hash store, its rows
// created on first touch (some loop reaches it through the servers by an
// indirect subscript: ParamPlan::shard "hash"), rather than a range of rows
// each, all of them made at the start (ps/row_store.h).
bool ShardedByHash(const Plan& plan, int param);

// Resolves every loop of `plan` (made for or validated against `prog`) for a
// job with options `job` over parameters of shapes `shapes` (by parameter
// index; a missing shape counts as 0 rows).
Resolved Resolve(const ir::Program& prog, const Plan& plan, const std::vector<ParamShape>& shapes,
                 const JobSync& job);
// The same for a job whose memory inputs are `in` (its parameters' shapes,
// --cache-mb and --staleness): what the memory model counts and
// `rigel explain --memory` words.
Resolved Resolve(const ir::Program& prog, const Plan& plan, const MemoryInputs& in);

}  // namespace rigel::analysis::sync

#endif  // RIGEL_ANALYSIS_SYNC_RESOLVE_H_
