// Schedule choice and per-parameter strategies (plan.h).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "analysis/plan.h"

namespace rigel::analysis {

using ir::Program;

const char* ScheduleKindName(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::kDataParallel:
      return "data_parallel";
    case ScheduleKind::kModelParallel1D:
      return "model_parallel_1d";
    case ScheduleKind::kConflictFree2D:
      return "conflict_free_2d";
    case ScheduleKind::kWavefront:
      return "wavefront";
    case ScheduleKind::kSerial:
      return "serial";
  }
  return "?";
}

const char* StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kLocal:
      return "local";
    case Strategy::kRotate:
      return "rotate";
    case Strategy::kPs:
      return "ps";
    case Strategy::kAllreduce:
      return "allreduce";
    case Strategy::kReplicated:
      return "replicated";
    case Strategy::kAccumulator:
      return "accumulator";
    case Strategy::kReduce:
      return "reduce";
  }
  return "?";
}

Strategy Mechanism(const ParamPlan& pp) {
  if (pp.strategy != Strategy::kReduce) return pp.strategy;
  return pp.dense ? Strategy::kAllreduce : Strategy::kPs;
}

bool ParseScheduleKind(const std::string& name, ScheduleKind* out) {
  for (ScheduleKind k :
       {ScheduleKind::kDataParallel, ScheduleKind::kModelParallel1D, ScheduleKind::kConflictFree2D,
        ScheduleKind::kWavefront, ScheduleKind::kSerial}) {
    if (name == ScheduleKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool ParseStrategy(const std::string& name, Strategy* out) {
  for (Strategy s : {Strategy::kLocal, Strategy::kRotate, Strategy::kPs, Strategy::kAllreduce,
                     Strategy::kReplicated, Strategy::kAccumulator, Strategy::kReduce}) {
    if (name == StrategyName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::string ProgramHash(const Program& prog) {
  const std::string& text = prog.source ? prog.source->text() : std::string();
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh64:%016llx",
                static_cast<unsigned long long>(XXH64(text.data(), text.size(), 0)));
  return buf;
}

namespace {

// One reason line per parameter: the first of its dependences that `bad`
// accepts.
template <typename Pred>
std::string Reasons(const Program& prog, const LoopAccesses& acc,
                    const std::vector<const Dependence*>& deps, Pred bad) {
  std::string out;
  std::set<int> seen;
  for (const Dependence* d : deps) {
    if (!bad(*d) || !seen.insert(d->param).second) continue;
    if (!out.empty()) out += "; ";
    out += prog.params[d->param].name + ": " + DescribePair(prog, acc, *d) + " conflict " +
           d->relation;
  }
  return out;
}

// The unit lower-triangular skew that makes every (lexicographically
// positive, constant) distance non-negative in every coordinate: row k adds
// multiples of the already-skewed earlier coordinates, the smallest that
// lift each distance's coordinate k to zero or more.
bool WavefrontSkew(const std::vector<std::vector<int64_t>>& dists, int d,
                   std::vector<std::vector<int64_t>>* skew) {
  skew->assign(d, std::vector<int64_t>(d, 0));
  for (int k = 0; k < d; ++k) (*skew)[k][k] = 1;
  std::vector<std::vector<int64_t>> cur = dists;  // skewed so far
  for (int k = 1; k < d; ++k) {
    for (int m = 0; m < k; ++m) {
      int64_t need = 0;
      for (const auto& v : cur) {
        // Distances whose first non-zero skewed coordinate is m.
        bool lead = v[m] > 0;
        for (int q = 0; q < m; ++q) lead = lead && v[q] == 0;
        if (!lead || v[k] >= 0) continue;
        need = std::max(need, (-v[k] + v[m] - 1) / v[m]);
      }
      (*skew)[k][m] = need;
      for (auto& v : cur) v[k] += need * v[m];
    }
  }
  for (const auto& v : cur) {
    for (int k = 0; k < d; ++k) {
      if (v[k] < 0) return false;
    }
  }
  return true;
}

struct Choice {
  Schedule schedule;
  std::string why;
  std::vector<Rejection> rejected;
  std::map<int, int> keyed;  // param -> dimension its conflicts need equal
};

bool AnyDependence(const Dependence&) { return true; }

// Each Try* below either sets c's schedule (and why, and the keyed
// parameters) and returns true, or records in c why it cannot be used.

bool TryModelParallel1D(const Program& prog, const LoopAccesses& acc,
                        const std::vector<const Dependence*>& active, Choice* c) {
  const std::vector<std::string>& dims = acc.space.dims;
  int d = static_cast<int>(dims.size());
  std::string why1;
  for (int k = 0; k < d; ++k) {
    bool ok = std::all_of(active.begin(), active.end(),
                          [&](const Dependence* p) { return p->needs_equal[k]; });
    if (ok) {
      c->schedule.kind = ScheduleKind::kModelParallel1D;
      c->schedule.dim = k;
      for (const Dependence* p : active) c->keyed[p->param] = k;
      c->why = "every conflict is between iterations with the same " + dims[k] +
               ", so partitioning by " + dims[k] + " keeps conflicting iterations on one worker";
      return true;
    }
    if (!why1.empty()) why1 += "; ";
    why1 += "by " + dims[k] + ": " +
            Reasons(prog, acc, active, [&](const Dependence& p) { return !p.needs_equal[k]; });
  }
  c->rejected.push_back({ScheduleKind::kModelParallel1D, why1});
  return false;
}

// Keys every active parameter by dimension a or b (one its conflicts all need
// equal) into *keyed; returns why not for the first that has neither, or "".
std::string KeyByEither(const Program& prog, const LoopAccesses& acc,
                        const std::vector<const Dependence*>& active, int a, int b,
                        std::map<int, int>* keyed) {
  const std::vector<std::string>& dims = acc.space.dims;
  std::string bad;
  for (const Dependence* p : active) {
    bool by_a = true, by_b = true;
    for (const Dependence* q : active) {
      if (q->param != p->param) continue;
      by_a = by_a && q->needs_equal[a];
      by_b = by_b && q->needs_equal[b];
    }
    if (by_a || by_b) {
      (*keyed)[p->param] = by_a ? a : b;
    } else if (bad.empty()) {
      bad = Reasons(prog, acc, {p}, AnyDependence) + ", which needs neither " + dims[a] + " nor " +
            dims[b] + " equal";
    }
  }
  return bad;
}

bool TryConflictFree2D(const Program& prog, const LoopAccesses& acc,
                       const std::vector<const Dependence*>& active, bool ordered, int workers,
                       Choice* c) {
  const std::vector<std::string>& dims = acc.space.dims;
  int d = static_cast<int>(dims.size());
  if (d < 2) {
    c->rejected.push_back(
        {ScheduleKind::kConflictFree2D, "the space has one dimension (" + dims[0] + ")"});
    return false;
  }
  if (ordered) {
    c->rejected.push_back({ScheduleKind::kConflictFree2D,
                           "the loop is ordered, and the rotation runs the blocks of a row in a "
                           "different order on each worker"});
    return false;
  }
  std::string why2;
  for (int a = 0; a < d; ++a) {
    for (int b = 0; b < d; ++b) {
      if (a == b) continue;
      std::map<int, int> keyed;
      std::string bad = KeyByEither(prog, acc, active, a, b, &keyed);
      if (bad.empty()) {
        c->schedule.kind = ScheduleKind::kConflictFree2D;
        c->schedule.local_dim = a;
        c->schedule.rotate_dim = b;
        c->schedule.blocks = {workers, workers};
        c->keyed = keyed;
        c->why = "every conflict is between iterations with the same " + dims[a] + " or the same " +
                 dims[b] + ": the " + std::to_string(workers) + " x " + std::to_string(workers) +
                 " blocks on one step share no " + dims[a] + " and no " + dims[b];
        return true;
      }
      if (why2.empty()) why2 = bad;
    }
  }
  c->rejected.push_back({ScheduleKind::kConflictFree2D, why2});
  return false;
}

// Collects the active dependences' constant distances into *dists; returns
// why no wavefront can keep them (a distance that is not constant, a
// conflict at every distance, one dimension), or "".
std::string WavefrontBlocker(const Program& prog, const LoopAccesses& acc,
                             const std::vector<const Dependence*>& active,
                             std::vector<std::vector<int64_t>>* dists) {
  std::string why4;
  for (const Dependence* p : active) {
    for (const Distance& dist : p->distances) {
      if (!dist.Constant()) {
        if (why4.empty()) {
          why4 = prog.params[p->param].name + ": " + DescribePair(prog, acc, *p) +
                 " have distance " + dist.ToString() + ", which is not constant";
        }
      } else {
        dists->push_back(dist.dist);
      }
    }
    if (p->always && why4.empty()) {
      why4 = prog.params[p->param].name + ": " + DescribePair(prog, acc, *p) + " conflict " +
             p->relation;
    }
  }
  if (acc.space.dims.size() < 2 && why4.empty()) {
    why4 = "the space has one dimension, so every block waits for the one before it";
  }
  return why4;
}

// Why a wavefront with `skew` keeps the distinct `dists`.
std::string WavefrontWhy(const std::vector<std::vector<int64_t>>& dists,
                         const std::vector<std::vector<int64_t>>& skew, int d) {
  std::string ds;
  for (size_t k = 0; k < dists.size(); ++k) {
    std::string v = "(";
    for (int q = 0; q < d; ++q) v += (q ? ", " : "") + std::to_string(dists[k][q]);
    v += ")";
    if (ds.find(v) == std::string::npos) ds += (ds.empty() ? "" : ", ") + v;
  }
  bool identity = true;
  for (int r = 0; r < d; ++r) {
    for (int q = 0; q < r; ++q) identity = identity && skew[r][q] == 0;
  }
  return "every dependence has a constant distance (" + ds + ")" +
         (identity ? "; all are already non-negative, so blocks on an anti-diagonal are independent"
                   : "; after the skew every distance is non-negative, so blocks on an "
                     "anti-diagonal of the skewed space are independent");
}

bool TryWavefront(const Program& prog, const LoopAccesses& acc,
                  const std::vector<const Dependence*>& active, int workers, Choice* c) {
  int d = static_cast<int>(acc.space.dims.size());
  std::vector<std::vector<int64_t>> dists;
  std::string why4 = WavefrontBlocker(prog, acc, active, &dists);
  std::vector<std::vector<int64_t>> skew;
  if (why4.empty() && !WavefrontSkew(dists, d, &skew)) {
    why4 = "no skew makes every distance non-negative";
  }
  if (!why4.empty()) {
    c->rejected.push_back({ScheduleKind::kWavefront, why4});
    return false;
  }
  c->schedule.kind = ScheduleKind::kWavefront;
  c->schedule.skew = skew;
  c->schedule.blocks.assign(d, 2 * static_cast<int64_t>(workers));
  c->schedule.blocks[0] = workers;
  c->why = WavefrontWhy(dists, skew, d);
  for (const Dependence* p : active) c->keyed[p->param] = 0;
  return true;
}

// The first schedule, in the order data-parallel, 1-D model-parallel,
// conflict-free 2-D, wavefront, serial, that keeps every dependence the loop
// does not relax, except those of sums (Dependence::reduction). A loop whose
// only conflicts are sums all keyed by one dimension is cut 1-D by it.
Choice Choose(const Program& prog, const LoopAccesses& acc, const std::vector<Dependence>& deps,
              const std::vector<bool>& relaxed, bool ordered, int workers) {
  Choice c;
  std::vector<const Dependence*> active;
  bool sums = false, relaxes = false;
  for (const Dependence& dep : deps) {
    sums |= dep.reduction;
    relaxes |= !dep.reduction && relaxed[dep.param];
    if (!relaxed[dep.param] && !dep.reduction) active.push_back(&dep);
  }
  if (active.empty() && sums && !relaxes) {
    // Sums whose every conflict needs one dimension equal (R[i] += A[i, j]):
    // a 1-D cut by it keeps each sum's rows on the worker that owns them,
    // where data-parallel would send every worker's deltas to the servers.
    std::vector<const Dependence*> summed;
    for (const Dependence& dep : deps) {
      if (dep.reduction) summed.push_back(&dep);
    }
    Choice one;
    if (TryModelParallel1D(prog, acc, summed, &one)) {
      one.why =
          "no two iterations conflict except in sums, and every sum's conflicts are "
          "between iterations with the same " +
          acc.space.dims[one.schedule.dim] + ": partitioning by " +
          acc.space.dims[one.schedule.dim] +
          " keeps each sum's rows on one worker, so no worker sends its deltas";
      return one;
    }
  }
  if (active.empty()) {
    c.schedule.kind = ScheduleKind::kDataParallel;
    c.why = "no two iterations conflict";
    if (relaxes) c.why += " on a parameter the loop does not relax";
    if (sums)
      c.why += std::string(relaxes ? "," : "") + " except in sums (reductions), which commute";
    return c;
  }
  c.rejected.push_back({ScheduleKind::kDataParallel, Reasons(prog, acc, active, AnyDependence)});
  if (TryModelParallel1D(prog, acc, active, &c) ||
      TryConflictFree2D(prog, acc, active, ordered, workers, &c) ||
      TryWavefront(prog, acc, active, workers, &c)) {
    return c;
  }
  c.schedule.kind = ScheduleKind::kSerial;
  c.why = "none of the parallel schedules keeps every dependence";
  return c;
}

bool AllAffineRows(const LoopAccesses& acc, int param) {
  for (const ParamAccess& a : acc.accesses) {
    if (a.param != param) continue;
    if (a.subs.empty() || a.subs[0].kind != Subscript::kAffine) return false;
  }
  return true;
}

// Every access of `param` is the row of the element key alone (z[t] where t
// names an element, access.h Space::key_dim): each row belongs to one
// element, which no other iteration touches.
bool RowPerElement(const LoopAccesses& acc, int param) {
  const int key = acc.space.key_dim;
  if (key < 0) return false;
  for (const ParamAccess& a : acc.accesses) {
    if (a.param != param) continue;
    if (a.subs.empty() || a.subs[0].kind != Subscript::kAffine || a.subs[0].c != 0 ||
        !a.subs[0].sym.empty()) {
      return false;
    }
    for (int d = 0; d < kMaxDims; ++d) {
      if (a.subs[0].coef[d] != (d == key ? 1 : 0)) return false;
    }
  }
  return true;
}

// Every row subscript of `param` is the same in every iteration (w0[0]).
bool FixedRows(const LoopAccesses& acc, int param) {
  for (const ParamAccess& a : acc.accesses) {
    if (a.param == param && (a.subs.empty() || !a.subs[0].IsInvariant())) return false;
  }
  return true;
}

// "w0[0], w0[1]": the distinct accesses of `param`, for FixedRows messages.
std::string FixedRowsText(const Program& prog, const LoopAccesses& acc, size_t param) {
  std::vector<std::string> seen;
  for (const ParamAccess& a : acc.accesses) {
    if (a.param != static_cast<int>(param)) continue;
    std::string t = FormatAccess(prog, a);
    if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
  }
  std::string out;
  for (const std::string& t : seen) out += (out.empty() ? "" : ", ") + t;
  return out;
}

void Strategies(const Program& prog, const LoopAccesses& acc, const Choice& c,
                const std::vector<bool>& relaxed, LoopPlan* out) {
  const std::vector<std::string>& dims = acc.space.dims;
  for (size_t p = 0; p < prog.params.size(); ++p) {
    bool touched = false, written = false, whole = false;
    for (const ParamAccess& a : acc.accesses) {
      if (a.param != static_cast<int>(p)) continue;
      touched = true;
      written |= a.kind != AccessKind::kRead;
      whole |= a.mode == ir::Access::kWhole;
    }
    if (!touched) continue;
    ParamPlan pp;
    pp.name = prog.params[p].name;
    pp.index = static_cast<int>(p);
    pp.written = written;
    pp.dense = whole;
    auto keyed = c.keyed.find(static_cast<int>(p));
    if (!written) {
      pp.strategy = Strategy::kReplicated;
      pp.why = "read-only in this loop: a copy on every worker, fetched once per run of the loop";
    } else if (c.schedule.kind == ScheduleKind::kSerial) {
      pp.strategy = Strategy::kLocal;
      pp.why = "the loop runs on one worker, which holds it";
    } else if (keyed != c.keyed.end()) {
      pp.keyed_by = keyed->second;
      const std::string& k = dims[keyed->second];
      if (c.schedule.kind == ScheduleKind::kConflictFree2D &&
          keyed->second == c.schedule.rotate_dim) {
        pp.strategy = Strategy::kRotate;
        pp.why =
            "its conflicts need the same " + k + ": its rows are cut like the " + k +
            " blocks, and after every step each worker hands its block to worker p - 1 (mod P)";
      } else if (c.schedule.kind == ScheduleKind::kWavefront) {
        pp.strategy = Strategy::kLocal;
        pp.why = "its rows are cut like the block rows (by " + k +
                 ") and stay on the worker that runs them; rows next to a block boundary are "
                 "handed to the next worker when its block is done";
      } else {
        pp.strategy = Strategy::kLocal;
        pp.why = "its conflicts need the same " + k + ": its rows are cut like the " + k +
                 " partition and stay on the worker that owns it";
      }
    } else if (acc.reductions[p]) {
      pp.strategy = Strategy::kReduce;
      pp.shard = whole ? "" : AllAffineRows(acc, static_cast<int>(p)) ? "range" : "hash";
      pp.why =
          std::string("only added to (+=, -=) and never read here: a sum, ") +
          (prog.params[p].is_int ? "exact (integers); " : "exact up to float summation order; ") +
          (whole ? "replicated on every worker, deltas summed by AllReduce"
                 : "sharded on the parameter servers, which add the workers' deltas");
    } else if (whole) {
      pp.strategy = Strategy::kAllreduce;
      pp.why = std::string(relaxed[p] ? "relaxed and " : "") +
               "read and written whole (dense): replicated on every worker, deltas summed by "
               "AllReduce";
    } else {
      pp.strategy = Strategy::kPs;
      bool range = AllAffineRows(acc, static_cast<int>(p));
      pp.shard = range ? "range" : "hash";
      std::string rows;
      if (!range) {
        rows = "a hash of the row (rows are indirect)";
      } else if (FixedRows(acc, static_cast<int>(p))) {
        rows = "row ranges (the loop names fixed rows: " + FixedRowsText(prog, acc, p) + ")";
      } else {
        rows = "row ranges (rows follow a loop variable)";
      }
      const bool one_row = acc.param_rows[p] == 1;
      if (RowPerElement(acc, static_cast<int>(p))) {
        const std::string& t = dims[acc.space.key_dim];
        pp.why = "kept with its element: row " + t + " belongs to element " + t +
                 " alone, so it never conflicts; sharded on the parameter servers by row "
                 "ranges, and each step pulls and pushes the rows of its own elements";
        out->params.push_back(std::move(pp));
        continue;
      }
      pp.why = std::string(relaxed[p] ? "relaxed; " : "no conflicts; ") +
               (one_row ? "a one-row parameter, on one parameter server"
                        : "rows touched one at a time (sparse): sharded on the parameter "
                          "servers by " +
                              rows) +
               (relaxed[p] && written
                    ? "; workers' updates are merged there as deltas, each worker keeping a "
                      "write-back cache of the rows (bounded staleness per row, above)"
                    : "");
    }
    out->params.push_back(std::move(pp));
  }
  std::set<int> accums;
  for (const AccumUpdate& u : acc.accums) {
    if (!accums.insert(u.accum).second) continue;
    ParamPlan pp;
    pp.name = prog.accums[u.accum].name;
    pp.index = u.accum;
    pp.is_accum = true;
    pp.strategy = Strategy::kAccumulator;
    pp.written = true;
    pp.why = "a sum: each worker adds its part, the scheduler adds the parts";
    out->params.push_back(std::move(pp));
  }
}

}  // namespace

LoopPlan PlanLoop(const Program& prog, int loop, int workers, const std::vector<bool>& relaxed) {
  const ir::Loop& l = prog.loops[loop];
  LoopPlan lp;
  lp.id = loop;
  lp.loc = l.loc;
  lp.ordered = l.ordered;
  lp.accesses = AnalyzeAccesses(prog, loop);
  lp.data = lp.accesses.space.what;
  for (size_t p = 0; p < relaxed.size(); ++p) {
    if (relaxed[p]) lp.relaxed.push_back(prog.params[p].name);
  }
  lp.dependences = ComputeDependences(prog, lp.accesses, &lp.independent);
  Choice c = Choose(prog, lp.accesses, lp.dependences, relaxed, l.ordered, workers);
  lp.schedule = c.schedule;
  lp.schedule_why = c.why;
  lp.rejected = c.rejected;
  Strategies(prog, lp.accesses, c, relaxed, &lp);
  if (c.schedule.kind != ScheduleKind::kSerial) return lp;
  // The smallest set of extra relaxed parameters that gives a parallel
  // schedule (fewest names first; among equals, the earliest schedule kind).
  // Only parameters whose dependences relaxing keeps the loop's meaning
  // (Dependence::carries) are candidates: a recurrence or an assignment
  // merged as a delta would compute something else, not the same thing with
  // stale reads.
  std::vector<int> cand;
  std::set<int> refused;
  for (const Dependence& d : lp.dependences) {
    if (relaxed[d.param] || d.reduction) continue;
    if (d.carries != Dependence::kNone) {
      if (refused.insert(d.param).second) {
        lp.no_relax +=
            (lp.no_relax.empty() ? "" : "; ") + prog.params[d.param].name + ": " + d.carries_why;
      }
      continue;
    }
    if (std::find(cand.begin(), cand.end(), d.param) == cand.end()) cand.push_back(d.param);
  }
  cand.erase(std::remove_if(cand.begin(), cand.end(), [&](int p) { return refused.count(p); }),
             cand.end());
  std::sort(cand.begin(), cand.end());
  int n = static_cast<int>(cand.size());
  if (n > 12) n = 12;  // 4096 subsets at most; more names than this need no search
  for (int size = 1; size <= n && lp.suggestion.empty(); ++size) {
    ScheduleKind best = ScheduleKind::kSerial;
    uint32_t best_mask = 0;
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      if (__builtin_popcount(mask) != size) continue;
      std::vector<bool> r = relaxed;
      for (int k = 0; k < n; ++k) {
        if (mask & (1u << k)) r[cand[k]] = true;
      }
      Choice alt = Choose(prog, lp.accesses, lp.dependences, r, l.ordered, workers);
      if (alt.schedule.kind != ScheduleKind::kSerial &&
          (best == ScheduleKind::kSerial || alt.schedule.kind < best)) {
        best = alt.schedule.kind;
        best_mask = mask;
      }
    }
    if (best == ScheduleKind::kSerial) continue;
    std::vector<std::string> names = lp.relaxed;
    for (int k = 0; k < n; ++k) {
      if (best_mask & (1u << k)) names.push_back(prog.params[cand[k]].name);
    }
    lp.suggestion = "relax ";
    for (size_t k = 0; k < names.size(); ++k) lp.suggestion += (k ? ", " : "") + names[k];
    lp.suggestion_kind = best;
  }
  return lp;
}

namespace {

// A 1-D cut by dimension k with no conflict left but sums: each parameter
// whose every dependence (sums included) needs k equal is keyed by k (kept
// local), the other sums stay sums.
bool TryCutBy(const std::vector<Dependence>& deps, const std::vector<const Dependence*>& active,
              int k, const std::string& dim, Choice* c) {
  for (const Dependence* p : active) {
    if (!p->needs_equal[k]) return false;
  }
  std::map<int, bool> all;
  for (const Dependence& d : deps) {
    if (d.relaxed && !d.reduction) continue;
    auto it = all.find(d.param);
    all[d.param] = (it == all.end() || it->second) && d.needs_equal[k];
  }
  c->schedule.kind = ScheduleKind::kModelParallel1D;
  c->schedule.dim = k;
  for (const auto& [param, keyed] : all) {
    if (keyed) c->keyed[param] = k;
  }
  c->why = "every conflict (sums aside) is between iterations with the same " + dim +
           ": partitioning by " + dim + " keeps them on one worker";
  return true;
}

}  // namespace

std::vector<LoopPlan> LoopCandidates(const Program& prog, int loop, int workers) {
  // A copy: `out` grows below.
  const LoopPlan first = PlanLoop(prog, loop, workers, prog.loops[loop].relaxed);
  std::vector<LoopPlan> out = {first};
  const LoopAccesses& acc = first.accesses;
  const std::vector<bool>& relaxed = prog.loops[loop].relaxed;
  std::vector<const Dependence*> active;
  bool relaxes = false;
  for (const Dependence& dep : first.dependences) {
    if (!relaxed[dep.param] && !dep.reduction) active.push_back(&dep);
    relaxes |= relaxed[dep.param] && !dep.reduction;
  }
  // A relaxed loop's schedule decides how stale its reads are (a 1-D cut
  // runs long steps where data-parallel merges every mini-batch): another
  // schedule would trade quality for speed, so it has no candidates.
  if (relaxes) return out;
  std::vector<Choice> choices;
  if (active.empty()) {
    Choice c;
    c.schedule.kind = ScheduleKind::kDataParallel;
    c.why = "no two iterations conflict (sums aside)";
    choices.push_back(c);
  }
  const int d = static_cast<int>(acc.space.dims.size());
  for (int k = 0; k < d; ++k) {
    Choice c;
    if (TryCutBy(first.dependences, active, k, acc.space.dims[k], &c)) choices.push_back(c);
  }
  if (!active.empty()) {
    Choice c;
    if (TryConflictFree2D(prog, acc, active, prog.loops[loop].ordered, workers, &c)) {
      choices.push_back(c);
    }
    Choice w;
    if (TryWavefront(prog, acc, active, workers, &w)) choices.push_back(w);
  }
  Choice one;
  one.schedule.kind = ScheduleKind::kSerial;
  one.why = "one worker runs every iteration in file order";
  choices.push_back(one);
  for (const Choice& c : choices) {
    const bool same =
        c.schedule.kind == first.schedule.kind && c.schedule.dim == first.schedule.dim;
    if (same) continue;
    LoopPlan lp = first;
    lp.schedule = c.schedule;
    lp.schedule_why = c.why;
    lp.rejected.clear();
    lp.params.clear();
    lp.suggestion.clear();
    Strategies(prog, acc, c, relaxed, &lp);
    out.push_back(std::move(lp));
  }
  return out;
}

StatusOr<Plan> MakePlan(const Program& prog, const PlanOptions& opts) {
  if (opts.workers < 1) {
    return InvalidArgument("--workers must be at least 1, got " + std::to_string(opts.workers));
  }
  Plan plan;
  plan.program = prog.path;
  plan.program_hash = ProgramHash(prog);
  plan.workers = opts.workers;
  for (size_t l = 0; l < prog.loops.size(); ++l) {
    plan.loops.push_back(PlanLoop(prog, static_cast<int>(l), opts.workers, prog.loops[l].relaxed));
  }
  return plan;
}

}  // namespace rigel::analysis
