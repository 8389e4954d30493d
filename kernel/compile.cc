// IR -> bytecode. See kernel.h for the three transformations (slots, views,
// linear fusion); this file explains why each rule is safe where it applies.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "common/check.h"
#include "kernel/cse.h"
#include "kernel/fuse.h"
#include "kernel/kernel_impl.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel {

using ir::Inst;
using ir::Op;
using ir::Type;

namespace {

// A deferred vector value: sum of coefficient times vector terms. While a
// form is being built a term's coef2 is -1 when it has a single factor.
using LinForm = std::vector<Term>;

class Compiler {
 public:
  Compiler(const ir::Program& p, int loop, Kernel::Impl* k, const ir::Loop& l)
      : p_(p), l_(l), k_(k) {}

  Status Run(const WidthFn& widths) {
    size_t nregs = l_.regs.size();
    k_->num_slots = static_cast<int>(nregs);
    k_->num_vecs = static_cast<int>(nregs);
    k_->slot_init.assign(nregs, Slot{0});
    const_val_.assign(nregs, std::nullopt);
    k_->vec_width.assign(nregs, 0);
    k_->vec_offset.assign(nregs, -1);
    k_->is_view.assign(nregs, false);
    for (size_t r = 0; r < nregs; ++r) {
      if (l_.regs[r].type != Type::kVec) continue;
      auto w = widths(l_.regs[r].width_expr);
      if (!w.ok()) return w.status();
      // Bytecode holds widths in 32 bits; far below that a vector no longer
      // fits a worker's memory anyway.
      constexpr int64_t kMaxWidth = int64_t{1} << 30;
      if (*w < 1 || *w > kMaxWidth) {
        return InvalidArgument("vector register %" + std::to_string(r) + " has width " +
                               std::to_string(*w) + "; widths must be between 1 and 2^30");
      }
      k_->vec_width[r] = *w;
    }
    Number(l_.body, 0);
    std::vector<std::pair<int, int>> loops;
    Uses(l_.body, &loops);
    for (int v : l_.vars) k_->var_slots.push_back(v);
    Emit(l_.body);
    Op0(kEnd);
    FusePairedRowWrites(k_);
    FuseRowViews(k_);
    FuseDotIntoScalarOp(k_);
    // Every vector that is not a view owns a buffer in the frame's arena.
    for (int v = 0; v < k_->num_vecs; ++v) {
      if (k_->is_view[v] || k_->vec_width[v] == 0) continue;
      k_->vec_offset[v] = k_->arena_size;
      k_->arena_size += (k_->vec_width[v] + 15) / 16 * 16;  // 64-byte aligned starts
    }
    return Status::Ok();
  }

 private:
  // --- Analysis: positions, use counts, last uses, writes per parameter.
  int Number(const std::vector<Inst>& body, int pos) {
    for (const Inst& in : body) {
      pos_[&in] = pos++;
      pos = Number(in.body, pos);
      pos = Number(in.else_body, pos);
      end_[&in] = pos - 1;
    }
    return pos;
  }

  void Use(int reg, int pos, const std::vector<std::pair<int, int>>& loops) {
    if (reg < 0) return;
    ++uses_[reg];
    int last = pos;
    // A value defined outside an inner loop and used inside it is live until
    // the loop ends: later iterations read it again.
    // A write anywhere in that loop then precedes a later read, hence end + 1.
    for (const auto& [start, end] : loops) {
      auto d = def_.find(reg);
      bool defined_inside = d != def_.end() && d->second >= start && d->second <= end;
      if (!defined_inside) last = std::max(last, end + 1);
    }
    last_use_[reg] = std::max(last_use_[reg], last);
  }

  void Uses(const std::vector<Inst>& body, std::vector<std::pair<int, int>>* loops) {
    for (const Inst& in : body) {
      int pos = pos_[&in];
      if (in.dst >= 0 && !def_.count(in.dst)) def_[in.dst] = pos;
      if (in.dst2 >= 0 && !def_.count(in.dst2)) def_[in.dst2] = pos;
      for (int r : {in.a, in.b, in.c}) Use(r, pos, *loops);
      if (in.op == Op::kMove) Use(in.dst, pos, *loops);
      if (in.op == Op::kWrite) writes_[in.index].push_back(pos);
      bool is_loop = in.op == Op::kFor || in.op == Op::kForFeatures || in.op == Op::kForWindow;
      if (is_loop) loops->push_back({pos, end_[&in]});
      Uses(in.body, loops);
      Uses(in.else_body, loops);
      if (is_loop) loops->pop_back();
    }
  }

  // A read of a row or whole parameter can alias parameter memory unless the
  // parameter is written while the value is still needed. A write at the
  // last use itself is fine: row and whole writes are elementwise.
  bool CanView(const Inst& read) {
    int from = pos_[&read], to = last_use_[read.dst];
    for (int w : writes_[read.index]) {
      if (w > from && w < to) return false;
    }
    return true;
  }

  // --- Emission helpers.
  int Loc(const Inst& in) {
    k_->locs.push_back(in.loc);
    return static_cast<int>(k_->locs.size()) - 1;
  }
  VOp& Op0(uint16_t code) {
    k_->code.push_back(VOp{});
    k_->code.back().code = code;
    return k_->code.back();
  }
  int NewSlot() {
    k_->slot_init.push_back(Slot{0});
    const_val_.push_back(std::nullopt);
    return k_->num_slots++;
  }
  int NewVec(int64_t width) {
    k_->vec_width.push_back(width);
    k_->vec_offset.push_back(-1);
    k_->is_view.push_back(false);
    return k_->num_vecs++;
  }
  int ConstSlot(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    auto it = const_pool_.find(bits);
    if (it != const_pool_.end()) return it->second;
    int s = NewSlot();
    k_->slot_init[s].f = v;
    const_val_[s] = v;
    const_pool_[bits] = s;
    return s;
  }
  int64_t Width(int vec) const { return k_->vec_width[vec]; }
  bool Immutable(int slot) const {
    return slot >= static_cast<int>(l_.regs.size()) || !l_.regs[slot].mut;
  }

  // c1 * c2 as a slot, folded when both are known.
  int MulCoef(int c1, int c2) {
    // Equal constants in different registers share one slot, so memoised
    // products of them are found again.
    if (const_val_[c1]) c1 = ConstSlot(*const_val_[c1]);
    if (const_val_[c2]) c2 = ConstSlot(*const_val_[c2]);
    if (const_val_[c1] && *const_val_[c1] == 1.0f) return c2;
    if (const_val_[c2] && *const_val_[c2] == 1.0f) return c1;
    if (const_val_[c1] && const_val_[c2]) return ConstSlot(*const_val_[c1] * *const_val_[c2]);
    // The same product of immutable slots in the same block is computed once.
    auto key = std::make_pair(std::min(c1, c2), std::max(c1, c2));
    bool memo = Immutable(c1) && Immutable(c2);
    if (memo) {
      auto it = products_.find(key);
      if (it != products_.end()) return it->second;
    }
    int s = NewSlot();
    VOp& o = Op0(kFMul);
    o.d = s, o.a = c1, o.b = c2;
    if (memo) products_[key] = s;
    return s;
  }
  int AddCoef(int c1, int c2) {
    if (const_val_[c1] && const_val_[c2]) return ConstSlot(*const_val_[c1] + *const_val_[c2]);
    int s = NewSlot();
    VOp& o = Op0(kFAdd);
    o.d = s, o.a = c1, o.b = c2;
    return s;
  }
  int RecipCoef(int c) {
    if (const_val_[c]) return ConstSlot(1.0f / *const_val_[c]);
    int s = NewSlot();
    VOp& o = Op0(kFDiv);
    o.d = s, o.a = ConstSlot(1.0f), o.b = c;
    return s;
  }

  // The linear form of a vector register: its deferred form (consumed), or
  // the single term 1 * reg.
  LinForm LinOf(int reg) {
    auto it = deferred_.find(reg);
    if (it != deferred_.end()) {
      LinForm f = std::move(it->second);
      deferred_.erase(it);
      return f;
    }
    return {Term{ConstSlot(1.0f), -1, reg}};
  }
  // A term's coefficient as one slot (emits the product if it has two).
  int CoefSlot(const Term& t) { return t.coef2 < 0 ? t.coef : MulCoef(t.coef, t.coef2); }

  // Multiplies a term's coefficient by slot `s`: constants fold together and
  // up to two variable factors stay unmultiplied for the row kernel.
  void ScaleTerm(Term* t, int s) {
    float cst = 1.0f;
    std::vector<int> vars;
    for (int f : {t->coef, t->coef2, s}) {
      if (f < 0) continue;
      if (const_val_[f]) {
        cst *= *const_val_[f];
      } else {
        vars.push_back(f);
      }
    }
    if (cst != 1.0f || vars.empty()) vars.push_back(ConstSlot(cst));
    while (vars.size() > 2) {
      int m = MulCoef(vars[0], vars[1]);
      vars.erase(vars.begin(), vars.begin() + 2);
      vars.insert(vars.begin(), m);
    }
    t->coef = vars[0];
    t->coef2 = vars.size() > 1 ? vars[1] : -1;
  }
  void NegTerm(Term* t) { ScaleTerm(t, ConstSlot(-1.0f)); }

  void AddTerms(LinForm* f, const LinForm& g) {
    for (const Term& t : g) {
      bool merged = false;
      for (Term& u : *f) {
        if (u.src == t.src) {
          u.coef = AddCoef(CoefSlot(u), CoefSlot(t));
          u.coef2 = -1;
          merged = true;
          break;
        }
      }
      if (!merged) f->push_back(t);
    }
  }
  LinForm Scale(LinForm f, int coef) {
    for (Term& t : f) ScaleTerm(&t, coef);
    return f;
  }

  // Emits a linear combination into vector `dst` (or a parameter row).
  void EmitLin(uint16_t code, int dst, LinForm f, int64_t width, VOp base) {
    // Longer sums are folded in chunks through temporaries.
    while (f.size() > static_cast<size_t>(kMaxLinTerms)) {
      int tmp = NewVec(width);
      LinForm head(f.begin(), f.begin() + kMaxLinTerms);
      EmitLin(kVLin, tmp, head, width, VOp{});
      f.erase(f.begin(), f.begin() + kMaxLinTerms);
      f.insert(f.begin(), Term{ConstSlot(1.0f), -1, tmp});
    }
    for (Term& t : f) {
      if (t.coef2 < 0) t.coef2 = ConstSlot(1.0f);
    }
    base.k.lin = SelectLin(static_cast<int>(f.size()), width);
    base.code = code;
    base.d = dst;
    base.t = static_cast<int32_t>(k_->terms.size());
    base.c = static_cast<int32_t>(f.size());
    base.n = static_cast<int32_t>(width);
    k_->terms.insert(k_->terms.end(), f.begin(), f.end());
    k_->code.push_back(base);
  }

  // Makes sure vector register `reg` holds its value in memory.
  int Materialise(int reg) {
    auto it = deferred_.find(reg);
    if (it == deferred_.end()) return reg;
    LinForm f = LinOf(reg);
    EmitLin(kVLin, reg, f, Width(reg), VOp{});
    return reg;
  }

  bool Deferrable(int reg) const {
    const ir::Reg& r = l_.regs[reg];
    return !r.named && !r.mut && uses_.count(reg) && uses_.at(reg) == 1;
  }

  // --- Instruction selection.
  void Emit(const std::vector<Inst>& body) {
    for (const Inst& in : body) EmitOne(in);
  }
  // Emits a nested block; products it computes are forgotten afterwards.
  void EmitNested(const std::vector<Inst>& body) {
    auto saved = products_;
    Emit(body);
    products_ = std::move(saved);
  }

  void EmitOne(const Inst& in) {
    switch (in.op) {
      case Op::kConstI:
        k_->slot_init[in.dst].i = in.ival;
        const_int_[in.dst] = in.ival;
        return;
      case Op::kConstF:
        k_->slot_init[in.dst].f = static_cast<float>(in.fval);
        const_val_[in.dst] = static_cast<float>(in.fval);
        return;
      case Op::kOuter:
        k_->outer.push_back({in.dst, in.index});
        return;
      case Op::kMove:
        return Move(in);
      case Op::kUnary:
        return Unary(in);
      case Op::kBinary:
        return Binary(in);
      case Op::kClip: {
        bool vec = l_.regs[in.dst].type == Type::kVec;
        int a = vec ? Materialise(in.a) : in.a;  // before Op0: it may emit code
        VOp& o = Op0(vec ? kVClip : kFClip);
        o.d = in.dst, o.a = a, o.b = in.b, o.c = in.c;
        o.n = vec ? static_cast<int32_t>(Width(in.dst)) : 0;
        return;
      }
      case Op::kDot:
      case Op::kSum:
      case Op::kNorm: {
        int a = Materialise(in.a);
        int b = in.b >= 0 ? Materialise(in.b) : -1;
        VOp& o = Op0(in.op == Op::kDot ? kDot : in.op == Op::kSum ? kSum : kNorm);
        o.d = in.dst, o.a = a, o.b = b, o.n = static_cast<int32_t>(Width(a));
        // Marks a dot product whose value feeds exactly one instruction, so
        // the peephole may fuse it into that instruction.
        o.fn = Deferrable(in.dst) ? 1 : 0;
        o.k.dot = SelectDot(Width(a));
        return;
      }
      case Op::kZeros: {
        VOp& o = Op0(kVZero);
        o.d = in.dst, o.n = static_cast<int32_t>(Width(in.dst));
        return;
      }
      case Op::kRand: {
        VOp& o = Op0(kRand);
        o.d = in.dst;
        return;
      }
      case Op::kRandInt: {
        VOp& o = Op0(kRandInt);
        o.d = in.dst, o.a = in.a, o.loc = Loc(in);
        return;
      }
      case Op::kNegative: {
        VOp& o = Op0(kNegative);
        o.d = in.dst, o.aux = in.index;
        return;
      }
      case Op::kRowLabel: {
        VOp& o = Op0(kLabel);
        o.d = in.dst, o.a = in.a, o.aux = in.index;
        return;
      }
      case Op::kRowX: {
        k_->is_view[in.dst] = true;
        VOp& o = Op0(kRowX);
        o.d = in.dst, o.a = in.a, o.aux = in.index, o.n = static_cast<int32_t>(Width(in.dst));
        return;
      }
      case Op::kRead:
        return Read(in);
      case Op::kWrite:
        return Write(in);
      case Op::kAccumAdd: {
        VOp& o = Op0(kAccum);
        o.a = in.a, o.aux = in.index;
        return;
      }
      case Op::kFor:
        return For(in);
      case Op::kForFeatures:
        return Features(in);
      case Op::kForWindow:
        return Window(in);
      case Op::kIf:
        return If(in);
    }
  }

  void Move(const Inst& in) {
    if (l_.regs[in.dst].type != Type::kVec) {
      VOp& o = Op0(kSMove);
      o.d = in.dst, o.a = in.a;
      return;
    }
    if (deferred_.count(in.a)) {
      EmitLin(kVLin, in.dst, LinOf(in.a), Width(in.dst), VOp{});
      return;
    }
    VOp& o = Op0(kVMove);
    o.d = in.dst, o.a = in.a, o.n = static_cast<int32_t>(Width(in.dst));
    o.k.copy = SelectCopy(Width(in.dst));
  }

  void Unary(const Inst& in) {
    Type t = l_.regs[in.dst].type;
    if (t == Type::kVec) {
      if (in.fn == ir::kNeg) {
        LinForm f = LinOf(in.a);
        f = Scale(std::move(f), ConstSlot(-1.0f));
        return Define(in.dst, std::move(f));
      }
      int a = Materialise(in.a);
      VOp& o = Op0(kVUn);
      o.fn = in.fn, o.d = in.dst, o.a = a, o.n = static_cast<int32_t>(Width(in.dst));
      return;
    }
    Type at = l_.regs[in.a].type;
    auto ci = const_int_.find(in.a);
    if (in.fn == ir::kIntToF32 && ci != const_int_.end() && !l_.regs[in.dst].mut) {
      float v = static_cast<float>(ci->second);
      k_->slot_init[in.dst].f = v;
      const_val_[in.dst] = v;
      return;
    }
    VOp& o = Op0(in.fn == ir::kIntToF32                    ? kIToF
                 : in.fn == ir::kNot                       ? kBNot
                 : (in.fn == ir::kNeg && at == Type::kInt) ? kINeg
                                                           : kFUn);
    o.fn = in.fn, o.d = in.dst, o.a = in.a;
    o.loc = Loc(in);
  }

  // Stores a linear form for `dst`: deferred when only one consumer will
  // read it (that consumer folds it in), otherwise evaluated now.
  void Define(int dst, LinForm f) {
    if (Deferrable(dst)) {
      deferred_[dst] = std::move(f);
    } else {
      EmitLin(kVLin, dst, f, Width(dst), VOp{});
    }
  }

  void Binary(const Inst& in) {
    Type t = l_.regs[in.dst].type;
    if (t != Type::kVec) return ScalarBinary(in);
    bool av = l_.regs[in.a].type == Type::kVec, bv = l_.regs[in.b].type == Type::kVec;
    if (av && bv && (in.fn == ir::kAdd || in.fn == ir::kSub)) {
      LinForm f = LinOf(in.a);
      LinForm g = LinOf(in.b);
      if (in.fn == ir::kSub) {
        for (Term& x : g) NegTerm(&x);
      }
      AddTerms(&f, g);
      return Define(in.dst, std::move(f));
    }
    if (av != bv && in.fn == ir::kMul) {
      return Define(in.dst, Scale(LinOf(av ? in.a : in.b), av ? in.b : in.a));
    }
    if (av && !bv && in.fn == ir::kDiv) {
      return Define(in.dst, Scale(LinOf(in.a), RecipCoef(in.b)));
    }
    int a = av ? Materialise(in.a) : in.a;
    int b = bv ? Materialise(in.b) : in.b;
    VOp& o = Op0(av && bv ? kVBin : av ? kVBinVS : kVBinSV);
    o.fn = in.fn, o.d = in.dst, o.a = a, o.b = b, o.n = static_cast<int32_t>(Width(in.dst));
  }

  void ScalarBinary(const Inst& in) {
    bool is_int = l_.regs[in.a].type != Type::kF32;
    static const uint16_t kInt[] = {kIAdd, kISub, kIMul, kIDiv, kIMin, kIMax, kILt,
                                    kILe,  kIGt,  kIGe,  kIEq,  kINe,  kBAnd, kBOr};
    static const uint16_t kF32[] = {kFAdd, kFSub, kFMul, kFDiv, kFMin, kFMax, kFLt,
                                    kFLe,  kFGt,  kFGe,  kFEq,  kFNe,  kBAnd, kBOr};
    VOp& o = Op0(is_int ? kInt[in.fn] : kF32[in.fn]);
    o.d = in.dst, o.a = in.a, o.b = in.b;
    if (is_int && in.fn <= ir::kDiv) o.loc = Loc(in);  // for overflow and division errors
    // Scalar results of constant operands fold, so coefficient arithmetic
    // such as lr * reg costs nothing per iteration.
    if (!is_int && in.fn <= ir::kDiv && const_val_[in.a] && const_val_[in.b]) {
      float x = *const_val_[in.a], y = *const_val_[in.b];
      float v = in.fn == ir::kAdd   ? x + y
                : in.fn == ir::kSub ? x - y
                : in.fn == ir::kMul ? x * y
                                    : x / y;
      k_->code.pop_back();
      // Binary results are expression temporaries, never `var`s (compound
      // assignments go through a temporary and a move), so this is a constant.
      k_->slot_init[in.dst].f = v;
      const_val_[in.dst] = v;
    }
  }

  // A key slice's access: its row (and column, for a 2-D element, when the
  // slice computes it) is checked and recorded; no value moves.
  void Key(const Inst& in) {
    const ir::ParamDecl& p = p_.params[in.index];
    VOp& o = Op0(kKey);
    o.aux = in.index, o.a = in.a, o.loc = Loc(in);
    if (in.mode == ir::Access::kElement && p.width > 0) o.b = in.b;
  }

  void Read(const Inst& in) {
    if (k_->key_slice) return Key(in);
    const ir::ParamDecl& p = p_.params[in.index];
    VOp o;
    o.aux = in.index, o.d = in.dst, o.a = in.a, o.b = in.b, o.loc = Loc(in);
    switch (in.mode) {
      case ir::Access::kElement:
        o.code = p.width > 0 ? kRdElem2 : kRdElem1;
        break;
      case ir::Access::kRow:
      case ir::Access::kWhole: {
        bool view = CanView(in);
        bool row = in.mode == ir::Access::kRow;
        o.code = row ? (view ? kRdRowView : kRdRowCopy) : (view ? kRdWholeView : kRdWholeCopy);
        o.n = static_cast<int32_t>(Width(in.dst));
        o.k.copy = SelectCopy(Width(in.dst));
        if (view) k_->is_view[in.dst] = true;
        break;
      }
    }
    k_->code.push_back(o);
  }

  void Write(const Inst& in) {
    if (k_->key_slice) return Key(in);
    const ir::ParamDecl& p = p_.params[in.index];
    VOp base;
    base.aux = in.index, base.a = in.a, base.b = in.b, base.loc = Loc(in), base.fn = in.fn;
    if (in.mode == ir::Access::kElement) {
      base.code = p.width > 0 ? kWrElem2 : kWrElem1;
      base.c = in.c;
      k_->code.push_back(base);
      return;
    }
    bool row = in.mode == ir::Access::kRow;
    int64_t width = row ? p.width : Width(in.c >= 0 && l_.regs[in.c].type == Type::kVec ? in.c : 0);
    if (l_.regs[in.c].type != Type::kVec) {
      base.code = row ? kWrRowScalar : kWrWholeScalar;
      base.c = in.c;
      base.n = row ? static_cast<int32_t>(p.width) : 0;
      k_->code.push_back(base);
      return;
    }
    width = Width(in.c);
    if (in.fn == ir::kPlainAssign || in.fn == ir::kAdd || in.fn == ir::kSub) {
      // p = f, p += f and p -= f are all one pass over the row.
      LinForm f = LinOf(in.c);
      if (in.fn == ir::kSub) {
        for (Term& t : f) NegTerm(&t);
      }
      if (in.fn != ir::kPlainAssign) AddTerms(&f, {Term{ConstSlot(1.0f), -1, -1}});
      EmitLin(row ? kWrRowLin : kWrWholeLin, -1, f, width, base);
      return;
    }
    base.code = row ? kWrRowVec : kWrWholeVec;
    base.c = Materialise(in.c);
    base.n = static_cast<int32_t>(width);
    k_->code.push_back(base);
  }

  int Here() const { return static_cast<int>(k_->code.size()); }

  void For(const Inst& in) {
    int hidden = NewSlot();
    int init = Here();
    VOp& o = Op0(kForInit);
    o.d = in.dst, o.a = in.a, o.b = in.b, o.c = hidden;
    EmitNested(in.body);
    VOp& next = Op0(kForNext);
    next.d = in.dst, next.c = hidden, next.n = init + 1;
    k_->code[init].n = Here();
  }

  void Features(const Inst& in) {
    int hidden = NewSlot();
    NewSlot();
    int init = Here();
    VOp& o = Op0(kFeatInit);
    o.d = in.dst, o.b = in.dst2, o.a = in.a, o.c = hidden, o.aux = in.index;
    EmitNested(in.body);
    VOp& next = Op0(kFeatNext);
    next.d = in.dst, next.b = in.dst2, next.c = hidden, next.aux = in.index, next.n = init + 1;
    k_->code[init].n = Here();
  }

  void Window(const Inst& in) {
    int hidden = NewSlot();
    NewSlot();
    NewSlot();
    int init = Here();
    VOp& o = Op0(kWinInit);
    o.d = in.dst, o.a = in.a, o.b = in.b, o.c = hidden, o.aux = in.index, o.loc = Loc(in);
    EmitNested(in.body);
    VOp& next = Op0(kWinNext);
    next.d = in.dst, next.c = hidden, next.aux = in.index, next.n = init + 1;
    k_->code[init].n = Here();
  }

  void If(const Inst& in) {
    int jf = Here();
    VOp& o = Op0(kJumpIfFalse);
    o.a = in.a;
    EmitNested(in.body);
    if (in.else_body.empty()) {
      k_->code[jf].n = Here();
      return;
    }
    int j = Here();
    Op0(kJump);
    k_->code[jf].n = Here();
    EmitNested(in.else_body);
    k_->code[j].n = Here();
  }

  const ir::Program& p_;
  const ir::Loop& l_;
  Kernel::Impl* k_;
  std::map<const Inst*, int> pos_, end_;
  std::map<int, int> def_, uses_, last_use_;
  std::map<int, std::vector<int>> writes_;
  std::map<int, LinForm> deferred_;
  std::map<uint32_t, int> const_pool_;
  std::map<int, int64_t> const_int_;  // int registers holding constants
  // Products computed in the current block; a nested block may not reuse
  // what it computed after it ends (it may not have run), so it gets a copy.
  std::map<std::pair<int, int>, int> products_;
  std::vector<std::optional<float>> const_val_;
};

}  // namespace

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;

StatusOr<Kernel> Kernel::Compile(const ir::Program& prog, int loop, const WidthFn& widths) {
  // The compiler works on a copy of the loop with repeated reads merged.
  ir::Loop rewritten = prog.loops[loop];
  MergeRepeatedReads(&rewritten, prog.params.size());
  return CompileBody(prog, loop, std::move(rewritten), /*key_slice=*/false, widths);
}

StatusOr<Kernel> Kernel::CompileBody(const ir::Program& prog, int loop, ir::Loop body,
                                     bool key_slice, const WidthFn& widths) {
  auto impl = std::make_unique<Impl>();
  impl->prog = &prog;
  impl->loop = loop;
  impl->data = prog.loops[loop].data;
  impl->kind = prog.data[impl->data].kind;
  impl->key_slice = key_slice;
  impl->rewritten = std::move(body);
  Compiler c(prog, loop, impl.get(), impl->rewritten);
  RIGEL_RETURN_IF_ERROR(c.Run(widths));
  return Kernel(std::move(impl));
}

size_t Kernel::code_size() const { return impl_->code.size(); }

}  // namespace rigel::kernel
