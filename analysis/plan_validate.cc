// Checking a plan (possibly edited by hand) against the program it runs.
#include <map>
#include <string>

#include "analysis/plan.h"

namespace rigel::analysis {

using ir::Program;

namespace {

class LoopChecker {
 public:
  LoopChecker(const Program& prog, const LoopPlan& fresh, const LoopPlan& given, int workers,
              std::string where)
      : prog_(prog), fresh_(fresh), given_(given), workers_(workers), where_(std::move(where)) {
    for (const Dependence& d : fresh.dependences) {
      if (!d.relaxed && !d.reduction) active_.push_back(&d);
    }
  }

  Status Check() {
    RIGEL_RETURN_IF_ERROR(CheckNames());
    RIGEL_RETURN_IF_ERROR(CheckSchedule());
    return CheckParams();
  }

 private:
  Status Breaks(const std::string& what, const Dependence& d) const {
    return InvalidArgument(where_ + ": " + what + " would break a dependence: " +
                           DescribePair(prog_, fresh_.accesses, d) + " conflict " + d.relation);
  }
  Status Bad(const std::string& what) const { return InvalidArgument(where_ + ": " + what); }

  int Dims() const { return static_cast<int>(fresh_.accesses.space.dims.size()); }
  const std::string& DimName(int d) const { return fresh_.accesses.space.dims[d]; }

  Status CheckSchedule() {
    const Schedule& s = given_.schedule;
    const std::string kind = ScheduleKindName(s.kind);
    switch (s.kind) {
      case ScheduleKind::kDataParallel:
        if (!active_.empty()) return Breaks(kind, *active_[0]);
        return Status::Ok();
      case ScheduleKind::kModelParallel1D:
        for (const Dependence* d : active_) {
          if (!d->needs_equal[s.dim]) return Breaks(kind + " by " + DimName(s.dim), *d);
        }
        return Status::Ok();
      case ScheduleKind::kConflictFree2D: {
        if (fresh_.ordered) {
          return Bad(
              "conflict_free_2d cannot run an ordered loop: the rotation runs the blocks "
              "of a row in a different order on each worker");
        }
        if (s.local_dim == s.rotate_dim)
          return Bad("conflict_free_2d needs two different dimensions");
        if (s.blocks.size() != 2 || s.blocks[0] != s.blocks[1] || s.blocks[0] != workers_) {
          return Bad("conflict_free_2d needs blocks [P, P] with P = workers = " +
                     std::to_string(workers_) + " (one block row and one block column per worker)");
        }
        // Each conflicting parameter must be keyed by the dimension its
        // strategy says: local by local_dim, rotate by rotate_dim.
        for (const Dependence* d : active_) {
          const ParamPlan* p = Given(prog_.params[d->param].name);
          // Other strategies are checked (and refused) by CheckParams.
          if (!p || (p->strategy != Strategy::kLocal && p->strategy != Strategy::kRotate)) continue;
          int need = p->strategy == Strategy::kRotate ? s.rotate_dim : s.local_dim;
          if (!d->needs_equal[need]) {
            if (!d->needs_either[s.local_dim][s.rotate_dim]) return Breaks(kind, *d);
            return Breaks(kind + " with " + prog_.params[d->param].name + " " +
                              StrategyName(p->strategy) + " (keyed by " + DimName(need) + ")",
                          *d);
          }
        }
        return Status::Ok();
      }
      case ScheduleKind::kWavefront:
        return CheckWavefront();
      case ScheduleKind::kSerial:
        return Status::Ok();
    }
    return Status::Ok();
  }

  Status CheckWavefront() {
    const Schedule& s = given_.schedule;
    int d = Dims();
    if (d < 2) return Bad("wavefront needs a space with at least two dimensions");
    if (static_cast<int>(s.skew.size()) != d) {
      return Bad("wavefront skew must be a " + std::to_string(d) + " x " + std::to_string(d) +
                 " matrix");
    }
    for (int r = 0; r < d; ++r) {
      if (static_cast<int>(s.skew[r].size()) != d) {
        return Bad("wavefront skew must be a " + std::to_string(d) + " x " + std::to_string(d) +
                   " matrix");
      }
      for (int c = r; c < d; ++c) {
        if (s.skew[r][c] != (r == c ? 1 : 0)) {
          return Bad(
              "wavefront skew must be unit lower-triangular (ones on the diagonal, zeros "
              "above it), so that it is unimodular and keeps lexicographic order");
        }
      }
    }
    if (static_cast<int>(s.blocks.size()) != d) {
      return Bad("wavefront blocks must have one count per dimension");
    }
    for (int64_t b : s.blocks) {
      if (b < 1) return Bad("wavefront block counts must be at least 1");
    }
    if (s.blocks[0] != workers_) {
      return Bad("wavefront blocks[0] must equal workers = " + std::to_string(workers_) +
                 " (one block row per worker)");
    }
    for (const Dependence* dep : active_) {
      for (const Distance& dist : dep->distances) {
        if (!dist.Constant()) {
          return Breaks("wavefront (distance " + dist.ToString() + " is not constant)", *dep);
        }
        for (int r = 0; r < d; ++r) {
          int64_t v = 0;
          for (int c = 0; c < d; ++c) v += s.skew[r][c] * dist.dist[c];
          if (v < 0) {
            return Breaks("wavefront with this skew (distance " + dist.ToString() +
                              " gets a negative coordinate)",
                          *dep);
          }
        }
      }
      if (dep->always) return Breaks("wavefront", *dep);
    }
    return Status::Ok();
  }

  const ParamPlan* Given(const std::string& name) const {
    for (const ParamPlan& p : given_.params) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }

  // Every parameter the loop uses has a strategy, and no other one does.
  Status CheckNames() const {
    std::map<std::string, const ParamPlan*> want;
    for (const ParamPlan& p : fresh_.params) want[p.name] = &p;
    for (const ParamPlan& p : given_.params) {
      if (!want.count(p.name)) {
        return Bad("params." + p.name + ": the loop does not use '" + p.name + "'");
      }
    }
    for (const ParamPlan& f : fresh_.params) {
      if (!Given(f.name)) return Bad("no strategy for '" + f.name + "', which the loop uses");
    }
    return Status::Ok();
  }

  Status CheckParams() {
    const ScheduleKind kind = given_.schedule.kind;
    for (const ParamPlan& f : fresh_.params) {
      const ParamPlan* g = Given(f.name);
      std::string s = StrategyName(g->strategy);
      std::string pre = "params." + f.name + ": strategy " + s;
      if (f.is_accum != (g->strategy == Strategy::kAccumulator)) {
        return Bad(pre + (f.is_accum ? " for an accumulator (it must be accumulator)"
                                     : ": only accumulators use it"));
      }
      if (f.is_accum) continue;
      if (g->strategy == Strategy::kReduce && !fresh_.accesses.reductions[f.index]) {
        return Bad(pre +
                   ": only a parameter the loop updates with += or -= alone, and never "
                   "reads, is a sum; the loop reads or assigns " +
                   f.name);
      }
      if (g->strategy == Strategy::kReplicated && f.written) {
        return Bad(pre + ": the loop writes " + f.name + ", and replicas would diverge");
      }
      if (g->strategy == Strategy::kRotate && kind != ScheduleKind::kConflictFree2D) {
        return Bad(pre + ": only the conflict_free_2d schedule rotates parameters");
      }
      const Dependence* dep = nullptr;
      for (const Dependence* d : active_) {
        if (d->param == f.index) {
          dep = d;
          break;
        }
      }
      if (dep && kind != ScheduleKind::kSerial && g->strategy != Strategy::kLocal &&
          g->strategy != Strategy::kRotate) {
        return Breaks(pre, *dep);
      }
      if (!dep && f.written && g->strategy == Strategy::kLocal && kind != ScheduleKind::kSerial &&
          !SumKeptByCut(f.index)) {
        return Bad(pre + ": no dimension keys " + f.name +
                   " (its iterations do not conflict), so there is no partition to keep it in; "
                   "use ps or allreduce");
      }
      if (!dep && f.written && g->strategy == Strategy::kRotate) {
        return Bad(pre + ": no dimension keys " + f.name + ", so it has no blocks to rotate");
      }
    }
    return Status::Ok();
  }

  // A sum (every dependence of `param` a reduction) whose conflicts all need
  // the 1-D schedule's dimension equal: its rows stay with the worker that
  // owns them, as a sum of the iterations that worker runs.
  bool SumKeptByCut(int param) const {
    if (given_.schedule.kind != ScheduleKind::kModelParallel1D) return false;
    const int dim = given_.schedule.dim;
    bool any = false;
    for (const Dependence& d : fresh_.dependences) {
      if (d.param != param) continue;
      if (!d.reduction || dim < 0 || dim >= static_cast<int>(d.needs_equal.size()) ||
          !d.needs_equal[dim]) {
        return false;
      }
      any = true;
    }
    return any;
  }

  const Program& prog_;
  const LoopPlan& fresh_;
  const LoopPlan& given_;
  int workers_;
  std::string where_;
  std::vector<const Dependence*> active_;
};

}  // namespace

StatusOr<Plan> ValidatePlan(const Program& prog, Plan plan, const std::string& path) {
  if (plan.loops.size() != prog.loops.size()) {
    return InvalidArgument(path + ": the plan has " + std::to_string(plan.loops.size()) +
                           " loops but " + prog.path + " has " + std::to_string(prog.loops.size()) +
                           "; it was made for another program (make a new one with `rigel plan`)");
  }
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    LoopPlan& given = plan.loops[l];
    LoopPlan fresh = PlanLoop(prog, static_cast<int>(l), plan.workers, prog.loops[l].relaxed);
    std::string where = path + ": loop " + std::to_string(l) + " (" + prog.path + ":" +
                        std::to_string(fresh.loc.line) + ")";
    if (given.id != static_cast<int>(l) || given.loc.line != fresh.loc.line ||
        given.accesses.space.dims != fresh.accesses.space.dims) {
      return InvalidArgument(where + ": the plan describes loop " + std::to_string(given.id) +
                             " at line " + std::to_string(given.loc.line) +
                             ", which does not match the program; it was made for another "
                             "version of it (make a new one with `rigel plan`)");
    }
    RIGEL_RETURN_IF_ERROR(LoopChecker(prog, fresh, given, plan.workers, where).Check());
    // Keep the plan's choices; take everything derived from the program
    // (analysis, explanations) from the fresh analysis.
    Schedule chosen = given.schedule;
    std::vector<ParamPlan> strategies = given.params;
    bool same = chosen.kind == fresh.schedule.kind;
    given = std::move(fresh);
    if (!same) {
      given.schedule_why = std::string("chosen by ") + path + " (the analysis chooses " +
                           ScheduleKindName(given.schedule.kind) + ")";
      given.rejected.clear();
      given.suggestion.clear();
    }
    given.schedule = chosen;
    for (ParamPlan& p : given.params) {
      for (const ParamPlan& s : strategies) {
        if (s.name != p.name) continue;
        if (s.strategy != p.strategy || s.keyed_by != p.keyed_by) {
          p.why = std::string("set by ") + path + " (the analysis chooses " +
                  StrategyName(p.strategy) + ")";
        }
        p.strategy = s.strategy;
        p.keyed_by = s.keyed_by;
        if (!s.shard.empty()) p.shard = s.shard;
      }
    }
  }
  return plan;
}

}  // namespace rigel::analysis
