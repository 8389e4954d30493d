#include "exec/hold_plan.h"

#include <algorithm>
#include <functional>

#include "analysis/batch.h"
#include "analysis/order.h"
#include "analysis/partition.h"
#include "analysis/relaxed.h"
#include "analysis/step_plan.h"
#include "kernel/key_slice.h"

namespace rigel::exec {

namespace {

// Data set `k` is `data` or one of its split parts (at any depth).
bool InFamily(const ir::Program& prog, int k, int data) {
  while (k >= 0 && k != data) k = prog.data[static_cast<size_t>(k)].split_parent;
  return k == data;
}

bool FromFile(data::DataKind kind) {
  return kind != data::DataKind::kGrid && kind != data::DataKind::kRange;
}

// Every instruction of `body`, nested ones included.
void ForEachInst(const std::vector<ir::Inst>& body, const std::function<void(const ir::Inst&)>& f) {
  for (const ir::Inst& i : body) {
    f(i);
    ForEachInst(i.body, f);
    ForEachInst(i.else_body, f);
  }
}

// The value register `reg` of `loop` always holds when it is set once, to a
// constant; -1 otherwise.
int64_t ConstantRegister(const ir::Program& prog, const ir::Loop& loop, int reg) {
  int sets = 0;
  int64_t value = -1;
  ForEachInst(loop.body, [&](const ir::Inst& i) {
    if (i.dst != reg && i.dst2 != reg) return;
    ++sets;
    if (i.op == ir::Op::kConstI && i.dst == reg) {
      value = i.ival;
    } else if (i.op == ir::Op::kOuter && i.dst == reg &&
               prog.exprs[static_cast<size_t>(i.index)].kind == ir::DExpr::kInt) {
      value = prog.exprs[static_cast<size_t>(i.index)].ival;
    } else {
      value = -1;
    }
  });
  return sets == 1 ? value : -1;
}

// The largest window radius `loop` reads data set `k` with (0: none); -1
// when a window over `k` is not centred on the loop's position or its
// radius is not a constant, or the loop reads `k`'s elements while
// iterating another data set.
int64_t WindowRadius(const ir::Program& prog, const ir::Loop& loop, int k) {
  int64_t radius = 0;
  ForEachInst(loop.body, [&](const ir::Inst& i) {
    const bool reads = i.op == ir::Op::kForWindow || i.op == ir::Op::kRowLabel ||
                       i.op == ir::Op::kRowX || i.op == ir::Op::kForFeatures;
    if (!reads || i.index != k || radius < 0) return;
    if (loop.data != k) {
      radius = -1;
      return;
    }
    if (i.op != ir::Op::kForWindow) return;
    const int64_t r = ConstantRegister(prog, loop, i.b);
    if (loop.vars.empty() || i.a != loop.vars[0] || r < 0) {
      radius = -1;
      return;
    }
    radius = std::max(radius, r);
  });
  return radius;
}

// The loop writes a relaxed parameter kept by the servers: with rows that
// depend only on the elements, its row cache learns which rows only one
// worker writes from every worker's elements (analysis/step_plan.h
// ParamRows::single), which a worker holding its part cannot see.
bool MayHaveOneWriterRows(const ir::Program& prog, const analysis::LoopPlan& lp) {
  const ir::Loop& loop = prog.loops[static_cast<size_t>(lp.id)];
  for (const analysis::ParamPlan& pp : lp.params) {
    if (pp.is_accum || pp.strategy != analysis::Strategy::kPs || !pp.written) continue;
    if (loop.relaxed[static_cast<size_t>(pp.index)]) return true;
  }
  return false;
}

// The loop reads or writes whole a parameter synced every step: its
// mini-batches are stretches of the serial order across every worker's
// block (analysis/step_plan.h PlanSteps), not each worker's own block.
bool DenseLoop(const ir::Program& prog, const analysis::LoopPlan& lp) {
  const std::vector<bool> whole = kernel::KeySlice::SliceWhole(prog, lp.id);
  for (const analysis::ParamPlan& pp : lp.params) {
    if (pp.is_accum || static_cast<size_t>(pp.index) >= whole.size() || !whole[pp.index]) continue;
    const analysis::Strategy s = analysis::Mechanism(pp);
    if (s == analysis::Strategy::kPs || s == analysis::Strategy::kAllreduce) return true;
  }
  return false;
}

}  // namespace

int RootDataSet(const ir::Program& prog, int data) {
  while (data >= 0 && prog.data[static_cast<size_t>(data)].split_parent >= 0) {
    data = prog.data[static_cast<size_t>(data)].split_parent;
  }
  return data;
}

bool HoldsInPart(const ir::Program& prog, const analysis::Plan& plan, int data, bool exchange) {
  const ir::DataDecl& d = prog.data[static_cast<size_t>(data)];
  if (!FromFile(d.kind) || d.split_parent >= 0) return false;
  for (const analysis::LoopPlan& lp : plan.loops) {
    const ir::Loop& loop = prog.loops[static_cast<size_t>(lp.id)];
    for (size_t k = 0; k < prog.data.size(); ++k) {
      if (!InFamily(prog, static_cast<int>(k), data)) continue;
      if (WindowRadius(prog, loop, static_cast<int>(k)) < 0) return false;
    }
    if (!InFamily(prog, loop.data, data)) continue;
    if (lp.schedule.kind != analysis::ScheduleKind::kDataParallel) return false;
    if (DenseLoop(prog, lp)) return false;
    if (!exchange && !kernel::KeySlice::SliceDraws(prog, lp.id) && MayHaveOneWriterRows(prog, lp)) {
      return false;
    }
  }
  return true;
}

StatusOr<std::vector<data::ElementRange>> HeldRanges(const ir::Program& prog,
                                                     const analysis::Plan& plan, int rank,
                                                     int workers, int data,
                                                     const data::Dataset& shape, bool samples) {
  // The facts of the family's split parts (counts), in declaration order:
  // a part comes after the data set it is split from.
  const size_t n = prog.data.size();
  std::vector<std::optional<data::Dataset>> shapes(n);
  shapes[static_cast<size_t>(data)] = shape;
  for (size_t k = static_cast<size_t>(data) + 1; k < n; ++k) {
    const ir::DataDecl& d = prog.data[k];
    if (d.split_parent < 0 || !shapes[static_cast<size_t>(d.split_parent)]) continue;
    RIGEL_ASSIGN_OR_RETURN(
        auto parts, data::SplitDataset(*shapes[static_cast<size_t>(d.split_parent)], d.split_test,
                                       d.split_seed));
    shapes[k] = d.split_part == 0 ? std::move(parts.first) : std::move(parts.second);
  }
  std::vector<std::vector<data::ElementRange>> wanted(n);
  for (const analysis::LoopPlan& lp : plan.loops) {
    const ir::Loop& loop = prog.loops[static_cast<size_t>(lp.id)];
    const size_t k = static_cast<size_t>(loop.data);
    if (!shapes[k]) continue;
    const int64_t r = WindowRadius(prog, loop, loop.data);
    RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::MakeCuts(lp, workers, *shapes[k]));
    RIGEL_ASSIGN_OR_RETURN(analysis::StepBlocks blocks,
                           analysis::MakeStepBlocks(lp, cuts, *shapes[k]));
    auto add = [&](int64_t first, int64_t end) { wanted[k].push_back({first - r, end + r}); };
    for (const auto& step : blocks.blocks) {
      const analysis::ElementList& mine = step[static_cast<size_t>(rank)];
      if (mine.empty()) continue;
      if (mine.is_range()) {
        add(mine[0], mine[0] + static_cast<int64_t>(mine.size()));
      } else {
        for (int64_t e : mine) add(e, e + 1);
      }
    }
    for (int64_t limit : {analysis::kBatchSample, analysis::kHotSample}) {
      if (!samples) break;
      for (int64_t e : analysis::SampledElements(blocks, limit)) add(e, e + 1);
    }
  }
  // Each part's ranges become its parent's, deepest parts first.
  for (size_t k = n; k-- > static_cast<size_t>(data) + 1;) {
    if (!shapes[k] || wanted[k].empty()) continue;
    const ir::DataDecl& d = prog.data[k];
    const size_t parent = static_cast<size_t>(d.split_parent);
    std::vector<data::ElementRange> mine = data::NormalizeRanges(wanted[k], shapes[k]->count);
    std::vector<data::ElementRange> up =
        data::ParentRanges(shapes[parent]->kind, shapes[parent]->count, d.split_test, d.split_seed,
                           d.split_part, mine);
    wanted[parent].insert(wanted[parent].end(), up.begin(), up.end());
  }
  return data::NormalizeRanges(std::move(wanted[static_cast<size_t>(data)]), shape.count);
}

}  // namespace rigel::exec
