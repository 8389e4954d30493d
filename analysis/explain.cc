// `rigel explain`: the plan in plain words.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "analysis/batch.h"
#include "analysis/plan.h"
#include "analysis/relaxed.h"
#include "analysis/sync/resolve.h"
#include "analysis/sync/units.h"

namespace rigel::analysis {

using ir::Program;

namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// `s` padded to a column of `n` characters; a longer `s` (an access such as
// `wout[negative(...)]`) still gets one space, so the next column's word does
// not run into it.
std::string Pad(std::string s, size_t n) {
  s.append(s.size() < n ? n - s.size() : 1, ' ');
  return s;
}

std::string Header(const Program& prog, const LoopPlan& lp) {
  if (!prog.source) return "";
  std::string line = Trim(prog.source->Line(lp.loc.line));
  size_t brace = line.find('{');
  if (brace != std::string::npos) line = Trim(std::string_view(line).substr(0, brace));
  return line;
}

// The loop header with `clause` ("relax W, H") in place of its relax clause.
std::string WithRelax(const std::string& header, const std::string& clause) {
  size_t r = header.find(" relax ");
  std::string base = r == std::string::npos ? header : header.substr(0, r);
  return base + " " + clause + " {";
}

std::string HowItRuns(const LoopPlan& lp, int workers) {
  const std::vector<std::string>& dims = lp.accesses.space.dims;
  const Schedule& s = lp.schedule;
  std::string p = std::to_string(workers);
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      return "the iterations are cut into " + p + " parts of equal count, one per worker";
    case ScheduleKind::kModelParallel1D:
      return "the space is cut into " + p + " ranges of " + dims[s.dim] + ", one per worker";
    case ScheduleKind::kConflictFree2D:
      return p + " x " + p + " blocks of (" + dims[s.local_dim] + ", " + dims[s.rotate_dim] +
             "); at step t = 0.." + std::to_string(workers - 1) +
             " worker p runs block (p, (p + t) mod " + p + ")";
    case ScheduleKind::kWavefront: {
      std::string out;
      int d = static_cast<int>(dims.size());
      std::vector<std::string> primed;
      bool identity = true;
      for (int r = 0; r < d; ++r) {
        std::string e = dims[r];
        for (int c = 0; c < r; ++c) {
          if (s.skew[r][c] == 0) continue;
          identity = false;
          e += " + " + (s.skew[r][c] == 1 ? "" : std::to_string(s.skew[r][c]) + "*") + dims[c];
        }
        primed.push_back(dims[r] + "' = " + e);
      }
      if (!identity) {
        out = "skew ";
        for (int r = 0; r < d; ++r) out += (r ? ", " : "") + primed[r];
        out += "; ";
      }
      std::string blocks, coords, sum;
      int64_t steps = 1;
      for (int r = 0; r < d; ++r) {
        blocks += (r ? " x " : "") + std::to_string(s.blocks[r]);
        coords += (r ? ", " : "") + dims[r] + (identity ? "" : "'");
        steps += s.blocks[r] - 1;
      }
      out += blocks + " blocks of (" + coords + "); block (p, q" + (d > 2 ? ", ..." : "") +
             ") runs at step p + q" + (d > 2 ? " + ..." : "") + " on worker p, " +
             std::to_string(steps) + " steps; blocks on one anti-diagonal run at the same time";
      return out;
    }
    case ScheduleKind::kSerial:
      return "one worker runs every iteration, in order";
  }
  return "";
}

}  // namespace

std::vector<std::string> RelaxWarnings(const Program& prog, const LoopPlan& lp) {
  std::vector<std::string> out;
  std::vector<int> seen;
  for (const Dependence& d : lp.dependences) {
    if (!d.relaxed || d.carries == Dependence::kNone) continue;
    if (std::find(seen.begin(), seen.end(), d.param) != seen.end()) continue;
    seen.push_back(d.param);
    const std::string& name = prog.params[d.param].name;
    out.push_back("loop " + std::to_string(lp.id) + " (line " + std::to_string(lp.loc.line) +
                  ") relaxes " + name + ", but " + d.carries_why +
                  "; a run on several workers gives a different result from the serial run. "
                  "Remove " +
                  name + " from the relax clause to keep the loop's meaning");
  }
  return out;
}

namespace {

void ExplainSpace(std::ostream& o, const LoopPlan& lp) {
  const std::vector<std::string>& dims = lp.accesses.space.dims;
  o << "  space: (";
  for (size_t d = 0; d < dims.size(); ++d) o << (d ? ", " : "") << dims[d];
  o << ") over " << lp.data;
  bool known = !lp.accesses.space.extent.empty() &&
               std::all_of(lp.accesses.space.extent.begin(), lp.accesses.space.extent.end(),
                           [](int64_t e) { return e >= 0; });
  o << (known ? "" : "; its size is known when the data are loaded")
    << (lp.ordered ? "; ordered (lexicographic order must be kept)" : "") << "\n";
}

void ExplainAccesses(std::ostream& o, const Program& prog, const LoopPlan& lp) {
  o << "  accesses:\n";
  if (lp.accesses.accesses.empty()) o << "    none\n";
  for (const ParamAccess& a : lp.accesses.accesses) {
    std::string at = std::to_string(a.loc.line) + ":" + std::to_string(a.loc.col);
    o << "    " << Pad(at, 7) << Pad(AccessKindName(a.kind), 18) << Pad(FormatAccess(prog, a), 16)
      << Pad(AccessModeName(a.mode), 8);
    std::string subs;
    for (const Subscript& s : a.subs) {
      subs += (subs.empty() ? "" : ", ") + s.text + ": " + SubscriptClass(s);
      if (s.kind != Subscript::kAffine) subs += " (" + s.why + ")";
    }
    o << subs;
    if (a.conditional) o << "; under if";
    if (a.count > 1) o << "; x" << a.count;
    o << "\n";
  }
  if (!lp.accesses.accums.empty()) {
    o << "  reductions (never a dependence):";
    for (const AccumUpdate& u : lp.accesses.accums) {
      o << " " << prog.accums[u.accum].name << " += (" << u.loc.line << ":" << u.loc.col << ")";
    }
    o << "\n";
  }
}

void ExplainDependences(std::ostream& o, const Program& prog, const LoopPlan& lp) {
  o << "  dependences:\n";
  if (lp.dependences.empty())
    o << "    none: no two iterations touch the same element with a write\n";
  // Grouped by parameter; a relaxed parameter's pairs are allowed, so one
  // example stands for all of them.
  std::vector<const Dependence*> deps;
  for (const Dependence& d : lp.dependences) deps.push_back(&d);
  std::stable_sort(deps.begin(), deps.end(),
                   [](const Dependence* x, const Dependence* y) { return x->param < y->param; });
  for (size_t k = 0; k < deps.size(); ++k) {
    const Dependence& d = *deps[k];
    size_t more = 0;
    if (d.relaxed || d.reduction) {
      while (k + 1 + more < deps.size() && deps[k + 1 + more]->param == d.param) ++more;
    }
    o << "    " << prog.params[d.param].name << ": " << DescribePair(prog, lp.accesses, d);
    o << " conflict " << d.relation;
    if (lp.ordered && !d.distances.empty() && d.relation.find("distance") == std::string::npos) {
      o << "; distances";
      for (const Distance& x : d.distances) o << " " << x.ToString();
    }
    if (more > 0) o << " (and " << more << " more pair" << (more == 1 ? "" : "s") << ")";
    if (d.reduction) {
      o << " [allowed: " << prog.params[d.param].name
        << " is a sum here (only += and -=, never read), and sums commute]";
    } else if (d.relaxed) {
      o << " [allowed: the loop relaxes " << prog.params[d.param].name << "]";
    }
    if (!d.exact) o << " [assumed: the exact test gave up]";
    o << "\n";
    k += more;
  }
}

// How a data-parallel loop whose parameters are synced per step is cut into
// mini-batches (analysis/batch.h).
void ExplainBatch(std::ostream& o, const LoopPlan& lp, const std::vector<PlanParam>& resolved,
                  int workers) {
  if (lp.schedule.kind != ScheduleKind::kDataParallel) return;
  std::string sparse, dense, cached;
  bool synced = false, sums = false;
  auto add = [](std::string* list, const std::string& name) {
    *list += (list->empty() ? "" : ", ") + name;
  };
  for (const ParamPlan& pp : lp.params) {
    const Strategy m = Mechanism(pp);
    if (pp.is_accum || (m != Strategy::kPs && m != Strategy::kAllreduce)) continue;
    synced = true;
    if (pp.dense) {
      add(&dense, pp.name);
    } else if (pp.strategy == Strategy::kReduce) {
      // Left out of the rule: nothing reads a sum, so how many elements
      // write one of its rows does not matter.
      sums = true;
    } else if (pp.written && pp.strategy == Strategy::kPs) {
      add(&sparse, pp.name);
      if (std::any_of(resolved.begin(), resolved.end(),
                      [&](const PlanParam& r) { return r.index == pp.index && r.cached; })) {
        add(&cached, pp.name);
      }
    }
  }
  if (!synced) return;
  if (dense.empty() && !cached.empty()) {
    // DSL.md version 3: the row caches and Rigel's choice of their settings.
    o << "    relaxed rows of " << cached << ": " << RelaxedRule() << "\n";
    if (workers >= 2) {
      o << "    on " << workers << " workers: a cached row is pushed after "
        << PushBoundFor(workers) << " updates";
      const double share = ScaledShare(workers);
      if (share <= 1) {
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", 100 * share);
        o << "; rows at least " << pct << " of the elements write (a scalar row's share counted "
          << "twice) are merged scaled";
      } else {
        o << "; no row is merged scaled";
      }
      o << "\n";
    }
    o << "    at --staleness 0: " << BatchRule(sparse) << "\n";
    return;
  }
  if (!dense.empty()) {
    o << "    mini-batches: " << kDenseBatch << " elements per worker (" << dense
      << " read or written whole); --batch N sets it\n";
  } else if (!sparse.empty()) {
    o << "    " << BatchRule(sparse) << "\n";
  } else if (sums) {
    o << "    mini-batches: none (the loop writes only sums through the servers, which nothing in "
         "it reads: each worker pushes its sums once, after its block); --batch N cuts it\n";
  } else {
    o << "    mini-batches: " << kMaxBatch
      << " elements per worker (the loop writes nothing through the servers); --batch N sets it\n";
  }
}

void ExplainSchedule(std::ostream& o, const LoopPlan& lp, const std::vector<PlanParam>& resolved,
                     int workers) {
  o << "  schedule: " << ScheduleKindName(lp.schedule.kind) << " on "
    << (lp.schedule.kind == ScheduleKind::kSerial ? 1 : workers) << " worker"
    << (lp.schedule.kind != ScheduleKind::kSerial && workers > 1 ? "s" : "") << "\n";
  o << "    why: " << lp.schedule_why << "\n";
  o << "    how: " << HowItRuns(lp, workers) << "\n";
  ExplainBatch(o, lp, resolved, workers);
  for (const Rejection& r : lp.rejected) {
    o << "    not " << ScheduleKindName(r.kind) << ": " << r.reason << "\n";
  }
}

void ExplainSuggestion(std::ostream& o, const Program& prog, const LoopPlan& lp) {
  if (!lp.suggestion.empty()) {
    o << "  suggestion: to run it as " << ScheduleKindName(lp.suggestion_kind)
      << ", accept stale values with `" << lp.suggestion << "`:\n    "
      << WithRelax(Header(prog, lp), lp.suggestion) << "\n";
    if (!lp.no_relax.empty()) o << "    not relaxed: " << lp.no_relax << "\n";
  } else if (lp.schedule.kind == ScheduleKind::kSerial && !lp.no_relax.empty()) {
    o << "  suggestion: none; relaxing would change what the loop computes, not only how "
         "fresh its reads are: "
      << lp.no_relax << "\n";
  } else if (lp.schedule.kind == ScheduleKind::kSerial) {
    o << "  suggestion: none; no relax clause makes this loop parallel\n";
  }
}

void ExplainParams(std::ostream& o, const LoopPlan& lp, const std::vector<PlanParam>& resolved,
                   const sync::Resolved& job) {
  const std::vector<std::string>& dims = lp.accesses.space.dims;
  o << "  parameters:\n";
  size_t width = 0;
  for (const ParamPlan& p : lp.params) width = std::max(width, p.name.size());
  for (const ParamPlan& p : lp.params) {
    o << "    " << Pad(p.name, width + 2) << Pad(StrategyName(p.strategy), 12);
    if (p.keyed_by >= 0 && p.keyed_by < static_cast<int>(dims.size())) {
      o << "keyed by " << dims[p.keyed_by] << "; ";
    }
    o << p.why;
    // A unit the strategy alone does not name (held, cache): how it runs.
    for (const PlanParam& r : resolved) {
      const sync::Unit* u = !p.is_accum && r.index == p.index ? sync::UnitOf(r) : nullptr;
      if (u != nullptr && p.strategy != Strategy::kReduce &&
          u->name() != StrategyName(p.strategy)) {
        o << "; runs as " << u->name() << ": " << u->description();
      }
    }
    if (!p.is_accum && job.held_in_part(p.index)) {
      // A loop that only reads the table reads it through the same cache,
      // not as the copy its plan strategy names.
      if (p.strategy == Strategy::kReplicated) o << "; not copied whole: read exactly through it";
      o << "; held in part: each worker's row cache holds at most "
        << job.cache_rows[static_cast<size_t>(p.index)] << " rows, never the whole table";
    }
    o << "\n";
  }
}

}  // namespace

std::string Explain(const Program& prog, const Plan& plan) {
  // Without shapes: whether a parameter is cached, not how many rows.
  sync::JobSync job;
  job.staleness = plan.settings.staleness;
  return Explain(prog, plan, sync::Resolve(prog, plan, {}, job));
}

std::string Explain(const Program& prog, const Plan& plan, const sync::Resolved& resolved) {
  std::ostringstream o;
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    const LoopPlan& lp = plan.loops[l];
    o << "loop " << lp.id << " at " << prog.path << ":" << lp.loc.line << "\n";
    o << "  " << Header(prog, lp) << "\n";
    ExplainSpace(o, lp);
    ExplainAccesses(o, prog, lp);
    ExplainDependences(o, prog, lp);
    ExplainSchedule(o, lp, resolved.loops[l], plan.workers);
    ExplainSuggestion(o, prog, lp);
    for (const std::string& w : RelaxWarnings(prog, lp)) o << "  warning: " << w << "\n";
    ExplainParams(o, lp, resolved.loops[l], resolved);
    o << "\n";
  }
  return o.str();
}

}  // namespace rigel::analysis
