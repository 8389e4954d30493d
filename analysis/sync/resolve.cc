#include "analysis/sync/resolve.h"

#include <algorithm>

#include "analysis/held_rows.h"

namespace rigel::analysis::sync {
namespace {

int64_t RowsOf(const std::vector<ParamShape>& shapes, int p) {
  return p >= 0 && static_cast<size_t>(p) < shapes.size() ? shapes[static_cast<size_t>(p)].rows : 0;
}

int64_t WidthOf(const std::vector<ParamShape>& shapes, int p) {
  return p >= 0 && static_cast<size_t>(p) < shapes.size() ? shapes[static_cast<size_t>(p)].width
                                                          : 1;
}

// A loop's parameter before the cache is sized: everything the plan and the
// job decide alone.
PlanParam Refine(const ir::Program& prog, const Plan& plan, const LoopPlan& lp, const ParamPlan& pp,
                 const std::vector<ParamShape>& shapes, const JobSync& job) {
  // A sum (reduce) is never read in the loop: its pulls may lag like a
  // relaxed parameter's, and its merged deltas are its exact value.
  const bool sum = pp.strategy == Strategy::kReduce;
  const ir::Loop& loop = prog.loops[static_cast<size_t>(lp.id)];
  const bool relaxed = static_cast<size_t>(pp.index) < loop.relaxed.size() &&
                       static_cast<bool>(loop.relaxed[static_cast<size_t>(pp.index)]);
  PlanParam p;
  p.index = pp.index;
  p.strategy = Mechanism(pp);
  p.written = pp.written;
  p.relaxed = sum || relaxed;
  p.whole = pp.dense;
  p.sum = sum;
  p.cached = relaxed && !sum && p.strategy == Strategy::kPs && !p.whole && job.staleness != 0;
  p.scalar = WidthOf(shapes, pp.index) == 1;
  p.scaled = p.cached && job.scaled_merges && !prog.params[static_cast<size_t>(pp.index)].is_int;
  p.held = HeldBetweenRuns(prog, plan, lp.id, pp);
  return p;
}

}  // namespace

Resolved Resolve(const ir::Program& prog, const Plan& plan, const std::vector<ParamShape>& shapes,
                 const JobSync& job) {
  Resolved out;
  const size_t np = prog.params.size();
  std::vector<bool> cached(np, false);
  for (const LoopPlan& lp : plan.loops) {
    std::vector<PlanParam>& params = out.loops.emplace_back();
    if (lp.id < 0 || static_cast<size_t>(lp.id) >= prog.loops.size()) continue;
    for (const ParamPlan& pp : lp.params) {
      if (pp.is_accum || pp.index < 0 || static_cast<size_t>(pp.index) >= np) continue;
      params.push_back(Refine(prog, plan, lp, pp, shapes, job));
      if (params.back().cached) cached[static_cast<size_t>(pp.index)] = true;
    }
  }
  // If every cached parameter fits the budget whole, each is held whole;
  // otherwise each gets a share in proportion to its whole size.
  double total = 0;
  for (size_t p = 0; p < np; ++p) {
    const int q = static_cast<int>(p);
    if (cached[p])
      total += static_cast<double>(CacheRowBytes(WidthOf(shapes, q)) * RowsOf(shapes, q));
  }
  const double budget = static_cast<double>(job.cache_bytes);
  out.cache_rows.assign(np, 0);
  for (size_t p = 0; p < np; ++p) {
    const int q = static_cast<int>(p);
    const int64_t rows = RowsOf(shapes, q);
    if (!cached[p] || rows <= 0) continue;
    if (total <= budget) {
      out.cache_rows[p] = rows;
    } else {
      const double share = budget * static_cast<double>(rows) / total;
      out.cache_rows[p] = std::clamp<int64_t>(static_cast<int64_t>(share), 1, rows);
    }
  }
  std::vector<bool> partial_somewhere(np, false);
  for (std::vector<PlanParam>& params : out.loops) {
    for (PlanParam& p : params) {
      const int64_t rows = RowsOf(shapes, p.index);
      p.partial = p.cached && (out.cache_rows[static_cast<size_t>(p.index)] < rows ||
                               rows * WidthOf(shapes, p.index) * 4 > kFetchWholeBytes);
      if (p.partial) partial_somewhere[static_cast<size_t>(p.index)] = true;
    }
  }
  // A table cached in part by some loop and read by rows in another (a test
  // loop) is read there through the same cache, its rows fetched as that
  // loop's steps touch them: a whole copy for the reads alone would undo
  // what the cache saves. The reading loop leaves the table unchanged, and
  // its exchanges refresh every row that lacks a merge (staleness 0,
  // worker/runner_relaxed.cc), so its reads are exact.
  for (std::vector<PlanParam>& params : out.loops) {
    for (PlanParam& p : params) {
      if (!partial_somewhere[static_cast<size_t>(p.index)] || p.cached ||
          p.strategy != Strategy::kReplicated || p.whole || p.written) {
        continue;
      }
      p.strategy = Strategy::kPs;
      p.cached = true;
      p.partial = true;
    }
  }
  // Held in part: partial in every loop that touches it.
  std::vector<int> loops_of(np, 0), partial_in(np, 0);
  for (const std::vector<PlanParam>& params : out.loops) {
    for (const PlanParam& p : params) {
      ++loops_of[static_cast<size_t>(p.index)];
      partial_in[static_cast<size_t>(p.index)] += p.partial ? 1 : 0;
    }
  }
  out.in_part.assign(np, 0);
  for (size_t p = 0; p < np; ++p) {
    out.in_part[p] = loops_of[p] > 0 && partial_in[p] == loops_of[p] ? 1 : 0;
  }
  return out;
}

bool ShardedByHash(const Plan& plan, int param) {
  for (const LoopPlan& lp : plan.loops) {
    for (const ParamPlan& pp : lp.params) {
      if (!pp.is_accum && pp.index == param && Mechanism(pp) == Strategy::kPs &&
          pp.shard == "hash") {
        return true;
      }
    }
  }
  return false;
}

Resolved Resolve(const ir::Program& prog, const Plan& plan, const MemoryInputs& in) {
  std::vector<ParamShape> shapes;
  for (const MemoryInputs::Param& p : in.params) shapes.push_back({p.name, p.rows, p.width});
  JobSync job;
  job.staleness = in.staleness;
  job.cache_bytes = in.cache_bytes;
  return Resolve(prog, plan, shapes, job);
}

}  // namespace rigel::analysis::sync
