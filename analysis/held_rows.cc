#include "analysis/held_rows.h"

namespace rigel::analysis {

bool HeldBetweenRuns(const ir::Program& prog, const Plan& plan, int loop, const ParamPlan& pp) {
  if (pp.is_accum || !pp.written || Mechanism(pp) != Strategy::kLocal) return false;
  const ir::Loop& l = prog.loops[static_cast<size_t>(loop)];
  if (prog.data[static_cast<size_t>(l.data)].sized_at_launch) return false;
  // Another loop touching the parameter would read the servers' rows, or
  // hold other rows of it, while these are still on the workers.
  for (const LoopPlan& other : plan.loops) {
    if (other.id == loop) continue;
    for (const ParamPlan& q : other.params) {
      if (!q.is_accum && q.index == pp.index) return false;
    }
  }
  return true;
}

bool LoopHoldsRows(const ir::Program& prog, const Plan& plan, int loop) {
  for (const ParamPlan& pp : plan.loops[static_cast<size_t>(loop)].params) {
    if (HeldBetweenRuns(prog, plan, loop, pp)) return true;
  }
  return false;
}

}  // namespace rigel::analysis
