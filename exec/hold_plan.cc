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

// Blocks cut by the elements' coordinates (analysis/order.h Place): a
// worker runs every element whose coordinate falls in its part, wherever
// the element lies in the file.
bool CutByCoordinates(const analysis::LoopPlan& lp) {
  return lp.schedule.kind == analysis::ScheduleKind::kModelParallel1D ||
         lp.schedule.kind == analysis::ScheduleKind::kConflictFree2D;
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
    if (CutByCoordinates(lp)) {
      // Its elements are chosen by value as the file is read (HeldFilter),
      // from the scheduler's cuts; the workers then exchange which rows
      // their blocks touch (worker/runner_samples.cc), so it needs the store.
      if (!exchange || d.kind != data::DataKind::kTriples || loop.ordered) return false;
      if (WindowRadius(prog, loop, loop.data) != 0) return false;
    } else if (lp.schedule.kind != analysis::ScheduleKind::kDataParallel) {
      return false;
    }
    if (DenseLoop(prog, lp)) return false;
    if (!exchange && !kernel::KeySlice::SliceDraws(prog, lp.id) && MayHaveOneWriterRows(prog, lp)) {
      return false;
    }
  }
  return true;
}

namespace {

// The family of data set `data`: the facts of each member (`data` and its
// split parts, at any depth; counts), and the elements of each that this
// worker's blocks of data-parallel loops read (normalized ranges).
struct Family {
  std::vector<std::optional<data::Dataset>> shapes;
  std::vector<std::vector<data::ElementRange>> wanted;
};

StatusOr<Family> FamilyRanges(const ir::Program& prog, const analysis::Plan& plan, int rank,
                              int workers, int data, const data::Dataset& shape, bool samples) {
  // The facts of the family's split parts (counts), in declaration order:
  // a part comes after the data set it is split from. Only the facts: a
  // loaded data set's columns would be copied into every part (the
  // scheduler's estimate of MF's 8M ratings held 96 MB more for them).
  const size_t n = prog.data.size();
  std::vector<std::optional<data::Dataset>> shapes(n);
  data::Dataset facts = data::EmptyLike(shape);
  facts.shape_only = true;
  facts.count = shape.count;
  facts.column_bytes = data::ColumnBytes(shape);
  facts.feature_entries = data::FeatureEntries(shape);
  shapes[static_cast<size_t>(data)] = std::move(facts);
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
    if (!shapes[k] || CutByCoordinates(lp)) continue;  // HeldFilter's
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
  for (size_t k = 0; k < n; ++k) {
    if (shapes[k]) wanted[k] = data::NormalizeRanges(std::move(wanted[k]), shapes[k]->count);
  }
  return Family{std::move(shapes), std::move(wanted)};
}

}  // namespace

StatusOr<std::vector<data::ElementRange>> HeldRanges(const ir::Program& prog,
                                                     const analysis::Plan& plan, int rank,
                                                     int workers, int data,
                                                     const data::Dataset& shape, bool samples) {
  RIGEL_ASSIGN_OR_RETURN(Family family,
                         FamilyRanges(prog, plan, rank, workers, data, shape, samples));
  const size_t n = prog.data.size();
  auto& shapes = family.shapes;
  auto& wanted = family.wanted;
  // Each part's ranges become its parent's, deepest parts first.
  for (size_t k = n; k-- > static_cast<size_t>(data) + 1;) {
    if (!shapes[k] || wanted[k].empty()) continue;
    const ir::DataDecl& d = prog.data[k];
    const size_t parent = static_cast<size_t>(d.split_parent);
    const std::vector<data::ElementRange>& mine = wanted[k];
    std::vector<data::ElementRange> up =
        data::ParentRanges(shapes[parent]->kind, shapes[parent]->count, d.split_test, d.split_seed,
                           d.split_part, mine);
    wanted[parent].insert(wanted[parent].end(), up.begin(), up.end());
  }
  return data::NormalizeRanges(std::move(wanted[static_cast<size_t>(data)]), shape.count);
}

namespace {

// Keeps the elements that loops cut by coordinates place on one worker. The
// family's split parts are followed element by element: an element's number
// in a part is the count of that part's elements before it, as
// data/dataset.h SplitDataset numbers them.
class CoordinateFilter : public data::ElementFilter {
 public:
  struct Member {
    int parent = -1;  // index in members_; -1 for the file's data set
    int part = 0;
    double test = 0;
    uint64_t seed = 0;
    int64_t next = 0;  // the number the part's next element gets
    // The elements its data-parallel loops' blocks read, and the first of
    // them not yet passed.
    std::vector<data::ElementRange> ranges;
    size_t range = 0;
  };
  struct CutLoop {
    size_t member = 0;
    const analysis::LoopPlan* plan = nullptr;
    analysis::Cuts cuts;
  };

  CoordinateFilter(int rank, int workers, std::vector<Member> members, std::vector<CutLoop> loops)
      : rank_(rank), workers_(workers), members_(std::move(members)), loops_(std::move(loops)) {
    number_.resize(members_.size());
    in_.resize(members_.size());
  }

  // Each worker keeps about its share, and a little more where the cuts
  // are uneven (a value's elements are never split).
  int64_t Expected(int64_t count) const override {
    const int64_t share = count / std::max(1, workers_);
    return share + share / 16;
  }

  bool Keep(const data::Dataset& chunk, int64_t local, int64_t e) override {
    number_[0] = e;
    in_[0] = true;
    for (size_t m = 1; m < members_.size(); ++m) {
      Member& mb = members_[m];
      const size_t parent = static_cast<size_t>(mb.parent);
      in_[m] = in_[parent] && data::InTestPart(mb.seed, number_[parent], mb.test) == (mb.part == 1);
      if (in_[m]) number_[m] = mb.next++;
    }
    bool keep = false;
    for (size_t m = 0; m < members_.size(); ++m) {
      Member& mb = members_[m];
      if (!in_[m]) continue;
      while (mb.range < mb.ranges.size() && mb.ranges[mb.range].end <= number_[m]) ++mb.range;
      keep |= mb.range < mb.ranges.size() && mb.ranges[mb.range].first <= number_[m];
    }
    if (keep) return true;
    for (const CutLoop& l : loops_) {
      if (!in_[l.member]) continue;
      x_ = {chunk.ti[static_cast<size_t>(local)], chunk.tj[static_cast<size_t>(local)]};
      if (analysis::PlaceWorker(*l.plan, l.cuts, x_, number_[l.member]) == rank_) return true;
    }
    return false;
  }

 private:
  int rank_;
  int workers_;
  std::vector<Member> members_;
  std::vector<CutLoop> loops_;
  std::vector<int64_t> number_;
  std::vector<bool> in_;
  std::vector<int64_t> x_;
};

}  // namespace

StatusOr<std::unique_ptr<data::ElementFilter>> HeldFilter(
    const ir::Program& prog, const analysis::Plan& plan, int rank, int workers,
    const std::map<int, analysis::Cuts>& cuts, int data, const data::Dataset& shape, bool samples) {
  // The family in declaration order: a split part comes after its parent.
  std::vector<CoordinateFilter::Member> members(1);
  std::vector<int> member_of(prog.data.size(), -1);
  member_of[static_cast<size_t>(data)] = 0;
  for (size_t k = static_cast<size_t>(data) + 1; k < prog.data.size(); ++k) {
    const ir::DataDecl& d = prog.data[k];
    if (d.split_parent < 0 || member_of[static_cast<size_t>(d.split_parent)] < 0) continue;
    member_of[k] = static_cast<int>(members.size());
    members.push_back({member_of[static_cast<size_t>(d.split_parent)], d.split_part, d.split_test,
                       d.split_seed, 0, {}, 0});
  }
  std::vector<CoordinateFilter::CutLoop> loops;
  for (const analysis::LoopPlan& lp : plan.loops) {
    const ir::Loop& loop = prog.loops[static_cast<size_t>(lp.id)];
    if (!CutByCoordinates(lp) || !InFamily(prog, loop.data, data)) continue;
    const auto it = cuts.find(lp.id);
    if (it == cuts.end()) {
      return InvalidArgument("loop " + std::to_string(lp.id) +
                             " is cut by coordinates over a data set held in part, but the job "
                             "has no cuts for it");
    }
    if (it->second.kind != lp.schedule.kind) {
      return InvalidArgument("the job's cuts of loop " + std::to_string(lp.id) +
                             " are for another schedule");
    }
    loops.push_back(
        {static_cast<size_t>(member_of[static_cast<size_t>(loop.data)]), &lp, it->second});
  }
  if (loops.empty()) return std::unique_ptr<data::ElementFilter>();
  // It keeps the elements data-parallel loops over the family read too,
  // each by its number in its own part: mapped to the file's numbers, a
  // part's ranges would take every element between its own.
  RIGEL_ASSIGN_OR_RETURN(Family family,
                         FamilyRanges(prog, plan, rank, workers, data, shape, samples));
  for (size_t k = 0; k < member_of.size(); ++k) {
    if (member_of[k] >= 0) members[static_cast<size_t>(member_of[k])].ranges = family.wanted[k];
  }
  return std::unique_ptr<data::ElementFilter>(
      std::make_unique<CoordinateFilter>(rank, workers, std::move(members), std::move(loops)));
}

bool ReadThroughPartsOnly(const ir::Program& prog, int data) {
  bool split = false;
  for (const ir::DataDecl& d : prog.data) split |= d.split_parent == data;
  if (!split) return false;
  for (const ir::Loop& loop : prog.loops) {
    if (loop.data == data) return false;
    bool reads = false;
    ForEachInst(loop.body, [&](const ir::Inst& i) {
      reads |= (i.op == ir::Op::kForWindow || i.op == ir::Op::kRowLabel || i.op == ir::Op::kRowX ||
                i.op == ir::Op::kForFeatures || i.op == ir::Op::kNegative) &&
               i.index == data;
    });
    if (reads) return false;
  }
  return true;
}

std::vector<int> LoopsCutBeforeLoad(const ir::Program& prog, const analysis::Plan& plan,
                                    bool exchange) {
  std::vector<int> out;
  for (const analysis::LoopPlan& lp : plan.loops) {
    const int data = prog.loops[static_cast<size_t>(lp.id)].data;
    if (!CutByCoordinates(lp) || data < 0) continue;
    if (HoldsInPart(prog, plan, RootDataSet(prog, data), exchange)) out.push_back(lp.id);
  }
  return out;
}

}  // namespace rigel::exec
