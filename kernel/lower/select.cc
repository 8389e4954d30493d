// Instruction selection for values: constants, driver values, moves,
// scalar and vector arithmetic, reductions and draws. Linear vector
// arithmetic becomes forms (kernel/lower/linear.cc); parameter accesses and
// control flow have their own files.
#include "kernel/lower/lowering.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel::lower {

using ir::Inst;
using ir::Op;
using ir::Type;

void Lowering::EmitOne(const Inst& in) {
  switch (in.op) {
    case Op::kConstI:
      k_->slot_init[in.dst].i = in.ival;
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
    case Op::kClip:
      return Clip(in);
    case Op::kDot:
    case Op::kSum:
    case Op::kNorm:
      return Reduce(in);
    case Op::kElem:
    case Op::kVecPick:
    case Op::kOneHot:
    case Op::kSetElem:
    case Op::kSample:
      return VectorV2(in);
    case Op::kRead:
      return Read(in);
    case Op::kWrite:
      return Write(in);
    case Op::kFor:
      return For(in);
    case Op::kForFeatures:
      return Features(in);
    case Op::kForWindow:
      return Window(in);
    case Op::kIf:
      return If(in);
    case Op::kAccumAdd:
      return Accumulate(in);
    default:
      return Simple(in);
  }
}

// Instructions that map to one bytecode instruction field by field.
void Lowering::Simple(const Inst& in) {
  switch (in.op) {
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
    default:
      return;  // every other op has its own method (EmitOne)
  }
}

void Lowering::Move(const Inst& in) {
  if (RegOf(in.dst).type != Type::kVec) {
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
  o.k.copy = SelectCopy(0);
}

void Lowering::Unary(const Inst& in) {
  if (RegOf(in.dst).type == Type::kVec) {
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
  Type at = RegOf(in.a).type;
  VOp& o = Op0(in.fn == ir::kIntToF32                    ? kIToF
               : in.fn == ir::kF32ToInt                  ? kFToI
               : in.fn == ir::kIntToI32                  ? kIToI32
               : in.fn == ir::kNot                       ? kBNot
               : (in.fn == ir::kNeg && at == Type::kInt) ? kINeg
                                                         : kFUn);
  o.fn = in.fn, o.d = in.dst, o.a = in.a;
  o.loc = Loc(in);
}

void Lowering::Binary(const Inst& in) {
  if (RegOf(in.dst).type != Type::kVec) return ScalarBinary(in);
  bool av = RegOf(in.a).type == Type::kVec, bv = RegOf(in.b).type == Type::kVec;
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

void Lowering::ScalarBinary(const Inst& in) {
  bool is_int = RegOf(in.a).type != Type::kF32;
  // Indexed by ir::BinOp. `%` takes ints only and pow f32 only (the checker
  // and ir/verify.cc), so the f32 entry of one and the int entry of the
  // other are never used. Bools are ints here: == and != of two bools are
  // kIEq and kINe.
  static const uint16_t kInt[] = {kIAdd, kISub, kIMul, kIDiv, kIMod, kIMin, kIMax, kFPow,
                                  kILt,  kILe,  kIGt,  kIGe,  kIEq,  kINe,  kBAnd, kBOr};
  static const uint16_t kF32[] = {kFAdd, kFSub, kFMul, kFDiv, kIMod, kFMin, kFMax, kFPow,
                                  kFLt,  kFLe,  kFGt,  kFGe,  kFEq,  kFNe,  kBAnd, kBOr};
  VOp& o = Op0(is_int ? kInt[in.fn] : kF32[in.fn]);
  o.d = in.dst, o.a = in.a, o.b = in.b;
  if (is_int && in.fn <= ir::kMod) o.loc = Loc(in);  // for overflow, division and modulo errors
}

void Lowering::Clip(const Inst& in) {
  bool vec = RegOf(in.dst).type == Type::kVec;
  int a = vec ? Materialise(in.a) : in.a;  // before Op0: it may emit code
  VOp& o = Op0(vec ? kVClip : kFClip);
  o.d = in.dst, o.a = a, o.b = in.b, o.c = in.c;
  o.n = vec ? static_cast<int32_t>(Width(in.dst)) : 0;
}

void Lowering::Reduce(const Inst& in) {
  int a = Materialise(in.a);
  int b = in.b >= 0 ? Materialise(in.b) : -1;
  VOp& o = Op0(in.op == Op::kDot ? kDot : in.op == Op::kSum ? kSum : kNorm);
  o.d = in.dst, o.a = a, o.b = b, o.n = static_cast<int32_t>(Width(a));
  // Marks a dot product whose value feeds exactly one instruction, so the
  // fuse-dot pass may fuse it into that instruction.
  o.fn = Deferrable(in.dst) ? 1 : 0;
  // The width-independent kernel; specialise-row-kernels picks a faster one.
  o.k.dot = SelectDot(0);
}

void Lowering::Accumulate(const Inst& in) {
  const ir::AccumDecl& acc = p_.accums[in.index];
  const int32_t offset = static_cast<int32_t>(ir::AccumOffset(p_.accums, in.index));
  if (acc.width > 0 && in.b < 0) {
    int a = Materialise(in.a);  // before Op0: it may emit code
    VOp& o = Op0(kAccumVec);
    o.a = a, o.c = offset, o.aux = in.index, o.n = static_cast<int32_t>(acc.width);
    return;
  }
  VOp& o = Op0(in.b >= 0 ? kAccumElem : kAccum);
  o.a = in.a, o.b = in.b, o.c = offset, o.aux = in.index;
  if (in.b >= 0) {
    o.n = static_cast<int32_t>(acc.width);
    o.loc = Loc(in);
  }
}

void Lowering::VectorV2(const Inst& in) {
  if (in.op == Op::kOneHot) {
    VOp& o = Op0(kOneHot);
    o.d = in.dst, o.a = in.a, o.n = static_cast<int32_t>(Width(in.dst));
    o.loc = Loc(in);
    return;
  }
  if (in.op == Op::kSetElem) {
    // A var vector is named, so never deferred: its buffer is current.
    VOp& o = Op0(kVSet);
    o.d = in.dst, o.a = in.dst, o.b = in.b, o.c = in.c, o.fn = in.fn;
    o.n = static_cast<int32_t>(Width(in.dst));
    o.loc = Loc(in);
    return;
  }
  int a = Materialise(in.a);  // before Op0: it may emit code
  if (in.op == Op::kSample) {
    VOp& o = Op0(kSample);
    o.d = in.dst, o.a = a, o.n = static_cast<int32_t>(Width(a));
    o.loc = Loc(in);
    return;
  }
  VOp& o = Op0(in.op == Op::kElem ? kVElem : kVPick);
  o.d = in.dst, o.a = a, o.b = in.op == Op::kElem ? in.b : -1;
  o.fn = in.op == Op::kVecPick ? in.fn : 0;
  o.n = static_cast<int32_t>(Width(a));
  o.loc = Loc(in);
}

}  // namespace rigel::kernel::lower
