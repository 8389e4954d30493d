// Backward slicing of a loop body on the structured IR, then compilation of
// the reduced body by the kernel compiler in key-slice mode (the lowering,
// kernel/lower/access.cc, turns its accesses into kKey).
//
// Why the slice computes what the kernel computes: an instruction is kept if
// it defines a register some kept instruction reads (every definition of it,
// so a `var` gets all its assignments), if it is a kept access, or if it
// encloses a kept instruction (then its bounds or condition are kept too).
// Every input of a kept instruction is thus computed exactly as in the full
// body, except where it came from a parameter value; those are excluded by
// the taint analysis below, so the slice needs no parameter values at all.
// Draws are kept all or none: if any kept instruction needs a draw, every draw
// is kept in its control context so the per-iteration draw counter advances
// as in the kernel. (A randint whose bound reads a parameter, or a sample
// whose weights do, is kept as randint(1): only its place in the count
// matters, its value is tainted.)
#include "kernel/key_slice.h"

#include <unordered_map>
#include <utility>

namespace rigel::kernel {

using ir::Inst;
using ir::Op;

namespace {

bool IsAccess(const Inst& in) {
  return (in.op == Op::kRead || in.op == Op::kWrite) && in.mode != ir::Access::kWhole;
}
bool IsDraw(const Inst& in) {
  return in.op == Op::kRand || in.op == Op::kRandInt || in.op == Op::kNegative ||
         in.op == Op::kSample;
}

// One instruction of the body, in pre-order.
struct Node {
  const Inst* in;
  int parent;  // the enclosing control instruction, -1 at the top level
};

class Slicer {
 public:
  Slicer(const ir::Program& prog, const ir::Loop& loop) : prog_(prog), loop_(loop) {
    Collect(loop.body, -1);
    const size_t nregs = loop.regs.size();
    const size_t nparams = prog.params.size();
    defs_.resize(nregs);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      for (int r : {nodes_[n].in->dst, nodes_[n].in->dst2}) {
        if (r >= 0) defs_[r].push_back(static_cast<int>(n));
      }
    }
    exact_.assign(nparams, false);
    whole_.assign(nparams, false);
    touches_.assign(nparams, false);
  }

  // Fills the per-parameter answers and returns the reduced body.
  ir::Loop Run() {
    Taint();
    // A param is exact when it has row/element accesses and none is tainted.
    std::vector<bool> has_tainted(prog_.params.size(), false);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const Inst& in = *nodes_[n].in;
      if (in.op != Op::kRead && in.op != Op::kWrite) continue;
      touches_[in.index] = true;
      if (in.mode == ir::Access::kWhole) {
        whole_[in.index] = true;
        continue;
      }
      exact_[in.index] = true;
      if (ctl_taint_[n] || reg_taint_[in.a]) has_tainted[in.index] = true;
    }
    for (size_t p = 0; p < exact_.size(); ++p) {
      if (has_tainted[p]) exact_[p] = false;
    }
    included_.assign(nodes_.size(), false);
    needed_.assign(loop_.regs.size(), false);
    PickRoots(loop_.body, {});
    Close();
    bool any_draw = false;
    for (size_t n = 0; n < nodes_.size(); ++n) {
      any_draw = any_draw || (included_[n] && IsDraw(*nodes_[n].in));
    }
    if (any_draw) {
      // Reached only with untainted draws: a tainted draw's value is tainted,
      // so no exact subscript needs it.
      for (size_t n = 0; n < nodes_.size(); ++n) {
        if (IsDraw(*nodes_[n].in)) Include(static_cast<int>(n));
      }
      Close();
    }
    ir::Loop out;
    out.id = loop_.id;
    out.loc = loop_.loc;
    out.ordered = loop_.ordered;
    out.data = loop_.data;
    out.vars = loop_.vars;
    out.relaxed = loop_.relaxed;
    out.regs = loop_.regs;
    out.body = Filter(loop_.body);
    if (one_ >= 0) {
      // The constant bound of randints kept for counting (see TaintedBound).
      ir::Reg r;
      r.type = ir::Type::kInt;
      r.name = "key_slice_one";
      out.regs.push_back(r);
      Inst c;
      c.op = Op::kConstI;
      c.dst = one_;
      c.ival = 1;
      out.body.insert(out.body.begin(), c);
    }
    return out;
  }

  bool empty() const { return roots_ == 0; }
  std::vector<bool> exact() const { return exact_; }
  std::vector<bool> whole() const { return whole_; }
  std::vector<bool> touches() const { return touches_; }

 private:
  void Collect(const std::vector<Inst>& body, int parent) {
    for (const Inst& in : body) {
      int id = static_cast<int>(nodes_.size());
      nodes_.push_back({&in, parent});
      id_[&in] = id;
      Collect(in.body, id);
      Collect(in.else_body, id);
    }
  }

  // Register operands (a, b, c are registers wherever an op has them).
  static bool AnyOperand(const Inst& in, const std::vector<bool>& set) {
    for (int r : {in.a, in.b, in.c}) {
      if (r >= 0 && set[r]) return true;
    }
    return false;
  }

  // Marks every register whose value may depend on a parameter value, and
  // every instruction that runs (or runs a number of times) depending on
  // one. Control dependence counts: a `var` assigned under a condition that
  // reads a parameter is tainted. Once a draw runs under such control, the
  // draw counter is data-dependent and every draw's value is tainted. Taint
  // only grows, so the fixpoint (needed for values carried around inner
  // loops through `var`s) terminates.
  void Taint() {
    reg_taint_.assign(loop_.regs.size(), false);
    ctl_taint_.assign(nodes_.size(), false);
    bool draws_tainted = false;
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t n = 0; n < nodes_.size(); ++n) {
        const Inst& in = *nodes_[n].in;
        int parent = nodes_[n].parent;
        bool ctl =
            parent >= 0 && (ctl_taint_[parent] || AnyOperand(*nodes_[parent].in, reg_taint_));
        if (ctl && !ctl_taint_[n]) ctl_taint_[n] = changed = true;
        if (IsDraw(in) && ctl && !draws_tainted) draws_tainted = changed = true;
        bool value = ctl || in.op == Op::kRead || AnyOperand(in, reg_taint_) ||
                     (IsDraw(in) && draws_tainted);
        if (!value) continue;
        for (int r : {in.dst, in.dst2}) {
          if (r >= 0 && !reg_taint_[r]) reg_taint_[r] = changed = true;
        }
      }
    }
  }

  // An access records its row; a 2-D element access also has its column
  // checked when the column does not depend on a parameter value.
  bool KeepsColumn(const Inst& in) const {
    return in.mode == ir::Access::kElement && prog_.params[in.index].width > 0 && in.b >= 0 &&
           !reg_taint_[in.b];
  }

  // Accesses of exact params are the roots, except one whose (param, row,
  // column) registers equal those of an access that dominates it (earlier in
  // the same block or an enclosing one) and cannot change in between
  // (immutable registers): it touches the same row, so recording it again
  // would only add a duplicate. mf's W[i] and H[j] each appear four times.
  struct Seen {
    int param, a, b;
  };
  void PickRoots(const std::vector<Inst>& body, std::vector<Seen> seen) {
    for (const Inst& in : body) {
      if (IsAccess(in) && exact_[in.index]) {
        int b = KeepsColumn(in) ? in.b : -1;
        bool dup = false;
        for (const Seen& s : seen) dup = dup || (s.param == in.index && s.a == in.a && s.b == b);
        if (!dup) {
          Include(id_.at(&in));
          ++roots_;
          if (Immutable(in.a) && Immutable(b)) seen.push_back({in.index, in.a, b});
        }
      }
      // What a nested block records may not have run: it dominates nothing after it.
      if (!in.body.empty()) PickRoots(in.body, seen);
      if (!in.else_body.empty()) PickRoots(in.else_body, seen);
    }
  }
  bool Immutable(int reg) const { return reg < 0 || !loop_.regs[reg].mut; }
  // A randint whose bound, or a sample whose weights, depend on a parameter
  // value: its value is tainted, but it still counts as a draw.
  bool TaintedBound(const Inst& in) const {
    return (in.op == Op::kRandInt || in.op == Op::kSample) && in.a >= 0 && reg_taint_[in.a];
  }

  // Queues instruction n (and, through Close, what it depends on).
  void Include(int n) {
    if (!included_[n]) {
      included_[n] = true;
      work_.push_back(n);
    }
  }
  void Need(int reg) {
    if (reg < 0 || needed_[reg]) return;
    needed_[reg] = true;
    for (int d : defs_[reg]) Include(d);
  }
  void Close() {
    while (!work_.empty()) {
      int n = work_.back();
      work_.pop_back();
      const Inst& in = *nodes_[n].in;
      if (IsAccess(in)) {
        Need(in.a);
        if (KeepsColumn(in)) Need(in.b);
      } else if (TaintedBound(in)) {
        // Kept for the draw counter only; Filter gives it a constant bound.
      } else {
        for (int r : {in.a, in.b, in.c}) Need(r);
      }
      if (nodes_[n].parent >= 0) Include(nodes_[n].parent);
    }
  }

  std::vector<Inst> Filter(const std::vector<Inst>& body) {
    std::vector<Inst> out;
    for (const Inst& in : body) {
      if (!included_[id_.at(&in)]) continue;
      Inst c;
      c.op = in.op;
      c.mode = in.mode;
      c.fn = in.fn;
      c.dst = in.dst, c.dst2 = in.dst2, c.a = in.a, c.b = in.b, c.c = in.c;
      c.index = in.index;
      c.ival = in.ival;
      c.fval = in.fval;
      c.loc = in.loc;
      if (IsAccess(in)) {
        // Only the row (and maybe column) registers are computed by the slice.
        c.dst = -1, c.c = -1;
        if (!KeepsColumn(in)) c.b = -1;
      }
      if (TaintedBound(in)) {
        // randint(1): one draw, like the original, whose value nothing reads.
        if (one_ < 0) one_ = static_cast<int>(loop_.regs.size());
        c.op = Op::kRandInt;
        c.a = one_;
      }
      c.body = Filter(in.body);
      c.else_body = Filter(in.else_body);
      out.push_back(std::move(c));
    }
    return out;
  }

  const ir::Program& prog_;
  const ir::Loop& loop_;
  std::vector<Node> nodes_;
  std::unordered_map<const Inst*, int> id_;
  std::vector<std::vector<int>> defs_;  // per register, the nodes defining it
  std::vector<bool> reg_taint_, ctl_taint_;
  std::vector<bool> included_, needed_;
  std::vector<int> work_;
  int roots_ = 0;
  int one_ = -1;  // register of the constant 1 that Filter adds, if any
  std::vector<bool> exact_, whole_, touches_;
};

}  // namespace

KeySlice::KeySlice(Kernel kernel, std::vector<bool> exact, std::vector<bool> whole,
                   std::vector<bool> touches, bool empty, bool draws, bool reads_outer)
    : kernel_(std::move(kernel)),
      exact_(std::move(exact)),
      whole_(std::move(whole)),
      touches_(std::move(touches)),
      empty_(empty),
      draws_(draws),
      reads_outer_(reads_outer) {}

namespace {

// Whether the reduced body has an instruction `pick` selects.
template <typename Pick>
bool Has(const std::vector<Inst>& body, const Pick& pick) {
  for (const Inst& in : body) {
    if (pick(in) || Has(in.body, pick) || Has(in.else_body, pick)) return true;
  }
  return false;
}

}  // namespace

bool KeySlice::SliceDraws(const ir::Program& prog, int loop) {
  Slicer s(prog, prog.loops[loop]);
  return Has(s.Run().body, IsDraw);
}

std::vector<bool> KeySlice::SliceWhole(const ir::Program& prog, int loop) {
  Slicer s(prog, prog.loops[loop]);
  s.Run();
  return s.whole();
}

StatusOr<KeySlice> KeySlice::Compile(const ir::Program& prog, int loop, const WidthFn& widths) {
  Slicer s(prog, prog.loops[loop]);
  ir::Loop body = s.Run();
  const bool draws = Has(body.body, IsDraw);
  const bool outer = Has(body.body, [](const Inst& in) { return in.op == Op::kOuter; });
  RIGEL_ASSIGN_OR_RETURN(
      Kernel k, Kernel::CompileBody(prog, loop, std::move(body), /*key_slice=*/true, widths, {}));
  return KeySlice(std::move(k), s.exact(), s.whole(), s.touches(), s.empty(), draws, outer);
}

Status KeySlice::Run(const RunContext& ctx, std::span<const int64_t> elements,
                     std::vector<std::vector<int64_t>>* keys) const {
  if (keys->size() < exact_.size()) keys->resize(exact_.size());
  RIGEL_RETURN_IF_ERROR(kernel_.CheckElements(ctx, elements));
  if (empty_) return Status::Ok();
  return kernel_.RunSome(ctx, elements.data(), 0, static_cast<int64_t>(elements.size()), keys);
}

}  // namespace rigel::kernel
