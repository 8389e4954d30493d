// Private to kernel/run.cc: what each bytecode instruction does, one function
// per opcode (kernel/operands.h says what the operand fields mean). Every
// function takes the interpreter's state and its instruction and returns the
// instruction to run next: o + 1, a jump target, or kFaultedOp after
// recording a Fault. They are forced inline so that
// Kernel::RunSome's dispatch keeps the whole interpreter in one frame, with
// its state in registers. Not thread-safe: a Machine belongs to one run.
#ifndef RIGEL_KERNEL_OPS_H_
#define RIGEL_KERNEL_OPS_H_

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "common/hash.h"
#include "common/int_math.h"
#include "kernel/float_ops.h"
#include "kernel/kernel_impl.h"
#include "kernel/row_calls.h"
#include "kernel/vec_ops.h"

namespace rigel::kernel::ops {

#define RIGEL_OP __attribute__((always_inline)) inline const VOp*

// Why a run stopped at an instruction; Kernel::RunSome turns it into a
// Status naming the source position and the element.
struct Fault {
  enum Kind : uint8_t {
    kNone,
    kOverflow,
    kDivByZero,
    kModByZero,
    kBadInt,
    kBadI32,
    kBadRow,
    kBadColumn,
    kBadRandInt,
    kBadRadius,
    kBadElement,
    kBadOneHot,
    kBadSample,
    kBadAccumElement,  // param: the accumulator
    // An element (value) of a data set held in part that this process does
    // not hold: a bug in the hold plan (exec/hold_plan.h), not the user's.
    kNotHeld,
    // A row (value; -1: the whole parameter) of a parameter held through a
    // slot map that the map does not hold: a bug in the rows planned for
    // the step (analysis/step_plan.h), not the user's.
    kRowNotHeld
  };
  Kind kind = kNone;
  const VOp* op = nullptr;
  int64_t value = 0;   // the bad index, bound or radius
  int64_t limit = 0;   // the index's limit
  int32_t param = -1;  // the parameter indexed (kBadRow, kBadColumn) or the accumulator
  int32_t loc = -1;    // the source position, when not op->loc
  double real = 0;     // the value int() could not convert (kBadInt), the bad weight (kBadSample)
};

// One past the last opcode: its entry in the dispatch table ends the run
// with the Machine's fault.
inline constexpr uint16_t kFaulted = kKey + 1;
inline constexpr VOp kFaultedOp = [] {
  VOp op;
  op.code = kFaulted;
  return op;
}();

// The state of one Kernel::RunSome call. Plain data: nothing in it owns
// memory, so the compiler can keep its fields in registers.
struct Machine {
  Slot* S;
  float** V;
  const ParamBinding* P;
  const data::Dataset* const* datas;
  const VOp* code;
  const Term* terms;
  double* acc;
  std::vector<int64_t>* key_out;  // key slices only
  size_t* key_mark;               // key slices: key_out[p].size() when the element began
  uint64_t rand_seed;
  uint64_t negative_seed;
  uint64_t run_key;
  int64_t e;      // the element being run
  uint64_t draw;  // random draws so far in this element
  Fault fault;

  const VOp* Fail(Fault::Kind kind, const VOp* o, int64_t value = 0) {
    fault = Fault{kind, o, value, 0, -1, o->loc};
    return &kFaultedOp;
  }
  const VOp* BadIndex(Fault::Kind kind, const VOp* o, int32_t param, int32_t loc, int64_t value,
                      int64_t limit) {
    fault = Fault{kind, o, value, limit, param, loc};
    return &kFaultedOp;
  }
  const VOp* BadRow(const VOp* o, const ParamBinding& p, int64_t row) {
    return BadIndex(Fault::kBadRow, o, o->aux, o->loc, row, p.rows);
  }
  const VOp* BadColumn(const VOp* o, const ParamBinding& p, int64_t col) {
    return BadIndex(Fault::kBadColumn, o, o->aux, o->loc, col, p.width);
  }
  const VOp* NotHeld(const VOp* o, int32_t param, int64_t row) {
    fault = Fault{Fault::kRowNotHeld, o, row, 0, param, o->loc};
    return &kFaultedOp;
  }
  const VOp* Jump(int32_t target) const { return code + target; }
};

inline bool OutOfRange(int64_t index, int64_t limit) {
  return static_cast<uint64_t>(index) >= static_cast<uint64_t>(limit);
}

// f may call libm (exp, log ...), which no vectoriser vectorises: clang
// (the JIT's bitcode, the sanitizer build) would warn that it could not do
// what RIGEL_IVDEP asks, so only GCC gets the pragma.
template <typename N, typename F>
__attribute__((always_inline)) inline void VecMap(float* d, N n, F f) {
#if !defined(__clang__)
  RIGEL_IVDEP
#endif
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = f(k);
}

// Integer scalars: overflow and division by zero are faults, as in the
// serial executor (exec/executor.cc), never undefined behaviour.
#define RIGEL_CHECKED_OP(name, builtin)              \
  RIGEL_OP name(Machine& m, const VOp* o) {          \
    Slot* S = m.S;                                   \
    if (builtin(S[o->a].i, S[o->b].i, &S[o->d].i)) { \
      return m.Fail(Fault::kOverflow, o);            \
    }                                                \
    return o + 1;                                    \
  }
RIGEL_CHECKED_OP(IAdd, __builtin_add_overflow)
RIGEL_CHECKED_OP(ISub, __builtin_sub_overflow)
RIGEL_CHECKED_OP(IMul, __builtin_mul_overflow)
#undef RIGEL_CHECKED_OP
RIGEL_OP IDiv(Machine& m, const VOp* o) {
  Slot* S = m.S;
  if (S[o->b].i == 0) return m.Fail(Fault::kDivByZero, o);
  if (S[o->b].i == -1 && S[o->a].i == std::numeric_limits<int64_t>::min()) {
    return m.Fail(Fault::kOverflow, o);
  }
  S[o->d].i = S[o->a].i / S[o->b].i;
  return o + 1;
}
RIGEL_OP IMod(Machine& m, const VOp* o) {
  Slot* S = m.S;
  if (S[o->b].i == 0) return m.Fail(Fault::kModByZero, o);
  S[o->d].i = FlooredMod(S[o->a].i, S[o->b].i);
  return o + 1;
}
RIGEL_OP INeg(Machine& m, const VOp* o) {
  Slot* S = m.S;
  if (S[o->a].i == std::numeric_limits<int64_t>::min()) return m.Fail(Fault::kOverflow, o);
  S[o->d].i = -S[o->a].i;
  return o + 1;
}

// d = a op b on the int (i) or float (f) field of two slots; comparisons
// store 0/1 in the int field.
#define RIGEL_SCALAR_OP(name, out, in, expr) \
  RIGEL_OP name(Machine& m, const VOp* o) {  \
    Slot* S = m.S;                           \
    auto x = S[o->a].in, y = S[o->b].in;     \
    S[o->d].out = (expr);                    \
    return o + 1;                            \
  }
RIGEL_SCALAR_OP(IMin, i, i, std::min(x, y))
RIGEL_SCALAR_OP(IMax, i, i, std::max(x, y))
RIGEL_SCALAR_OP(ILt, i, i, x < y)
RIGEL_SCALAR_OP(ILe, i, i, x <= y)
RIGEL_SCALAR_OP(IGt, i, i, x > y)
RIGEL_SCALAR_OP(IGe, i, i, x >= y)
RIGEL_SCALAR_OP(IEq, i, i, x == y)
RIGEL_SCALAR_OP(INe, i, i, x != y)
RIGEL_SCALAR_OP(FAdd, f, f, x + y)
RIGEL_SCALAR_OP(FSub, f, f, x - y)
RIGEL_SCALAR_OP(FMul, f, f, x* y)
RIGEL_SCALAR_OP(FDiv, f, f, x / y)
RIGEL_SCALAR_OP(FMin, f, f, std::min(x, y))
RIGEL_SCALAR_OP(FMax, f, f, std::max(x, y))
RIGEL_SCALAR_OP(FPow, f, f, ApplyBin(ir::kPow, x, y))
RIGEL_SCALAR_OP(FLt, i, f, x < y)
RIGEL_SCALAR_OP(FLe, i, f, x <= y)
RIGEL_SCALAR_OP(FGt, i, f, x > y)
RIGEL_SCALAR_OP(FGe, i, f, x >= y)
RIGEL_SCALAR_OP(FEq, i, f, x == y)
RIGEL_SCALAR_OP(FNe, i, f, x != y)
RIGEL_SCALAR_OP(BAnd, i, i, x&& y)
RIGEL_SCALAR_OP(BOr, i, i, x || y)
#undef RIGEL_SCALAR_OP

RIGEL_OP BNot(Machine& m, const VOp* o) {
  m.S[o->d].i = !m.S[o->a].i;
  return o + 1;
}
RIGEL_OP FUn(Machine& m, const VOp* o) {
  m.S[o->d].f = ApplyUn(o->fn, m.S[o->a].f);
  return o + 1;
}
RIGEL_OP IToF(Machine& m, const VOp* o) {
  m.S[o->d].f = static_cast<float>(m.S[o->a].i);
  return o + 1;
}
RIGEL_OP IToI32(Machine& m, const VOp* o) {
  const int64_t i = m.S[o->a].i;
  if (i < -ir::kMaxExactInt || i > ir::kMaxExactInt) return m.Fail(Fault::kBadI32, o, i);
  m.S[o->d].f = static_cast<float>(i);
  return o + 1;
}
RIGEL_OP FToI(Machine& m, const VOp* o) {
  const float x = m.S[o->a].f;
  std::optional<int64_t> i = TruncToInt(x);
  if (!i) {
    m.Fail(Fault::kBadInt, o);
    m.fault.real = x;
    return &kFaultedOp;
  }
  m.S[o->d].i = *i;
  return o + 1;
}

RIGEL_OP FClip(Machine& m, const VOp* o) {
  Slot* S = m.S;
  S[o->d].f = std::min(std::max(S[o->a].f, S[o->b].f), S[o->c].f);
  return o + 1;
}
RIGEL_OP SMove(Machine& m, const VOp* o) {
  m.S[o->d] = m.S[o->a];
  return o + 1;
}

// Vectors of o->n floats.
RIGEL_OP VMove(Machine& m, const VOp* o) {
  if (m.V[o->d] != m.V[o->a]) row::CallCopy(o, m.V[o->d], m.V[o->a], o->n);
  return o + 1;
}
RIGEL_OP VZero(Machine& m, const VOp* o) {
  std::memset(m.V[o->d], 0, sizeof(float) * o->n);
  return o + 1;
}
RIGEL_OP VLin(Machine& m, const VOp* o) {
  row::CallLin(o, m.V[o->d], m.terms + o->t, m.S, m.V, nullptr, o->n);
  return o + 1;
}
RIGEL_OP VBin(Machine& m, const VOp* o) {
  const float *a = m.V[o->a], *b = m.V[o->b];
  uint8_t fn = o->fn;
  VecMap(m.V[o->d], o->n, [&](int64_t k) { return ApplyBin(fn, a[k], b[k]); });
  return o + 1;
}
RIGEL_OP VBinVS(Machine& m, const VOp* o) {
  const float* a = m.V[o->a];
  float b = m.S[o->b].f;
  uint8_t fn = o->fn;
  VecMap(m.V[o->d], o->n, [&](int64_t k) { return ApplyBin(fn, a[k], b); });
  return o + 1;
}
RIGEL_OP VBinSV(Machine& m, const VOp* o) {
  float a = m.S[o->a].f;
  const float* b = m.V[o->b];
  uint8_t fn = o->fn;
  VecMap(m.V[o->d], o->n, [&](int64_t k) { return ApplyBin(fn, a, b[k]); });
  return o + 1;
}
RIGEL_OP VUn(Machine& m, const VOp* o) {
  const float* a = m.V[o->a];
  uint8_t fn = o->fn;
  VecMap(m.V[o->d], o->n, [&](int64_t k) { return ApplyUn(fn, a[k]); });
  return o + 1;
}
RIGEL_OP VClip(Machine& m, const VOp* o) {
  const float* a = m.V[o->a];
  float lo = m.S[o->b].f, hi = m.S[o->c].f;
  VecMap(m.V[o->d], o->n, [&](int64_t k) { return std::min(std::max(a[k], lo), hi); });
  return o + 1;
}
RIGEL_OP Dot(Machine& m, const VOp* o) {
  m.S[o->d].f = row::CallDot(o, m.V[o->a], m.V[o->b], o->n);
  return o + 1;
}
RIGEL_OP DotOp(Machine& m, const VOp* o) {
  float dot = row::CallDot(o, m.V[o->a], m.V[o->b], o->n);
  float c = m.S[o->c].f;
  float x = o->t ? dot : c, y = o->t ? c : dot;
  m.S[o->d].f = o->fn == kFAdd ? x + y : o->fn == kFSub ? x - y : x * y;
  return o + 1;
}
RIGEL_OP Sum(Machine& m, const VOp* o) {
  m.S[o->d].f = vec::Sum(m.V[o->a], o->n);
  return o + 1;
}
RIGEL_OP Norm(Machine& m, const VOp* o) {
  m.S[o->d].f = std::sqrt(row::CallDot(o, m.V[o->a], m.V[o->a], o->n));
  return o + 1;
}
RIGEL_OP VElem(Machine& m, const VOp* o) {
  const int64_t k = m.S[o->b].i;
  if (k < 0 || k >= o->n) return m.BadIndex(Fault::kBadElement, o, -1, o->loc, k, o->n);
  m.S[o->d].f = m.V[o->a][k];
  return o + 1;
}
RIGEL_OP VPick(Machine& m, const VOp* o) {
  const float* v = m.V[o->a];
  const bool larger = o->fn == ir::kPickMax || o->fn == ir::kPickArgMax;
  int64_t best = 0;
  // Strict comparisons keep the first index on ties, as DSL.md asks.
  for (int64_t k = 1; k < o->n; ++k) {
    if (larger ? v[k] > v[best] : v[k] < v[best]) best = k;
  }
  if (o->fn >= ir::kPickArgMax) {
    m.S[o->d].i = best;
  } else {
    m.S[o->d].f = v[best];
  }
  return o + 1;
}
RIGEL_OP OneHot(Machine& m, const VOp* o) {
  const int64_t k = m.S[o->a].i;
  if (k < 0 || k >= o->n) return m.BadIndex(Fault::kBadOneHot, o, -1, o->loc, k, o->n);
  std::memset(m.V[o->d], 0, sizeof(float) * o->n);
  m.V[o->d][k] = 1.0f;
  return o + 1;
}
RIGEL_OP VSet(Machine& m, const VOp* o) {
  const int64_t k = m.S[o->b].i;
  if (k < 0 || k >= o->n) return m.BadIndex(Fault::kBadElement, o, -1, o->loc, k, o->n);
  float& x = m.V[o->d][k];
  x = ApplyBin(o->fn, x, m.S[o->c].f);
  return o + 1;
}
// Inverse-CDF draw over the cumulative weights, summed in double so that a
// tail of small weights keeps its share. Checking every weight first makes
// a bad vector an error on every draw, not only when the walk reaches it.
RIGEL_OP Sample(Machine& m, const VOp* o) {
  const float* p = m.V[o->a];
  double total = 0;
  for (int64_t k = 0; k < o->n; ++k) {
    // Also refuses NaN and infinities: !(x >= 0) is true for NaN.
    if (!(p[k] >= 0.0f) || std::isinf(p[k])) {
      m.fault = Fault{Fault::kBadSample, o, k, 0, -1, o->loc, p[k]};
      return &kFaultedOp;
    }
    total += p[k];
  }
  if (!(total > 0)) return m.Fail(Fault::kBadSample, o, -1);
  const double u = UnitDouble(HashCoords(m.rand_seed, m.run_key, m.e, m.draw++)) * total;
  double c = 0;
  int64_t last = 0;
  for (int64_t k = 0; k < o->n; ++k) {
    if (p[k] <= 0.0f) continue;
    last = k;
    c += p[k];
    if (u < c) break;
  }
  m.S[o->d].i = last;
  return o + 1;
}

// Parameter reads. Every index is checked: a bad one is a program error
// reported at its source position, never a wild memory access. A binding
// held through a slot map (ParamBinding::slots) finds the row's cell there;
// a row it does not hold is a fault, not a read of other memory.
__attribute__((always_inline)) inline float* RowPtr(const ParamBinding& p, int64_t i) {
  if (p.slots == nullptr) [[likely]]
    return p.data + i * p.width;
  const int32_t s = p.slots[i];
  return s < 0 ? nullptr : p.data + static_cast<int64_t>(s) * p.width;
}
RIGEL_OP RdElem1(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  const float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  m.S[o->d].f = *r;
  return o + 1;
}
RIGEL_OP RdElem2(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i, j = m.S[o->b].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  if (OutOfRange(j, p.width)) return m.BadColumn(o, p, j);
  const float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  m.S[o->d].f = r[j];
  return o + 1;
}
RIGEL_OP RdRowView(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  m.V[o->d] = r;
  return o + 1;
}
RIGEL_OP RdRowCopy(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  const float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  row::CallCopy(o, m.V[o->d], r, o->n);
  return o + 1;
}
// Two reads fused into one instruction; a bad second row is reported at the
// second read's own position (o->n) and parameter (o->t).
RIGEL_OP RdRowView2(Machine& m, const VOp* o) {
  const ParamBinding& p1 = m.P[o->aux];
  const ParamBinding& p2 = m.P[o->t];
  int64_t i = m.S[o->a].i, j = m.S[o->c].i;
  if (OutOfRange(i, p1.rows)) return m.BadRow(o, p1, i);
  if (OutOfRange(j, p2.rows)) return m.BadIndex(Fault::kBadRow, o, o->t, o->n, j, p2.rows);
  float* r1 = RowPtr(p1, i);
  float* r2 = RowPtr(p2, j);
  if (r1 == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  if (r2 == nullptr) [[unlikely]]
    return m.NotHeld(o, o->t, j);
  m.V[o->d] = r1;
  m.V[o->b] = r2;
  return o + 1;
}
RIGEL_OP RdWholeView(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  if (p.slots != nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, -1);
  m.V[o->d] = p.data;
  return o + 1;
}
RIGEL_OP RdWholeCopy(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  if (p.slots != nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, -1);
  row::CallCopy(o, m.V[o->d], p.data, o->n);
  return o + 1;
}

// Parameter writes: element and row updates `op=` (o->fn) a scalar, a
// vector or a linear combination. Each counts the row when the binding has
// a tracker (a worker's row cache).
#ifdef RIGEL_KERNEL_JIT_BITCODE
// A compiled body counts through the host (kernel/jit/jit.cc), whose code
// is this function's: a worker's cache is rare and its vectors' growth is
// no code to compile into every body.
extern "C" void rigel_jit_track(const RowTracker* t, int64_t row);
__attribute__((always_inline)) inline void Track(const ParamBinding& p, int64_t row) {
  if (p.tracker != nullptr) [[unlikely]]
    rigel_jit_track(p.tracker, row);
}
#else
__attribute__((always_inline)) inline void Track(const ParamBinding& p, int64_t row) {
  if (p.tracker == nullptr) [[likely]]
    return;
  const RowTracker& t = *p.tracker;
  int64_t at = row;
  if (t.cells != nullptr) {
    at = t.cells[row];
    if (at < 0) return;  // a row the cache leaves out (a hot row)
  }
  const uint32_t n = ++t.updates[at];
  if (n == 1 && t.started != nullptr) t.started->push_back(row);
  if (n == t.bound) t.due->push_back(row);
}
#endif
RIGEL_OP WrElem1(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  *r = ApplyBin(o->fn, *r, m.S[o->c].f);
  Track(p, i);
  return o + 1;
}
RIGEL_OP WrElem2(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i, j = m.S[o->b].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  if (OutOfRange(j, p.width)) return m.BadColumn(o, p, j);
  float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  float& x = r[j];
  x = ApplyBin(o->fn, x, m.S[o->c].f);
  Track(p, i);
  return o + 1;
}
__attribute__((always_inline)) inline void UpdateWithVector(float* dst, int64_t n, uint8_t fn,
                                                            const float* s) {
  VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s[k]); });
}
__attribute__((always_inline)) inline void UpdateWithScalar(float* dst, int64_t n, uint8_t fn,
                                                            float s) {
  VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s); });
}
RIGEL_OP WrRowVec(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  UpdateWithVector(r, p.width, o->fn, m.V[o->c]);
  Track(p, i);
  return o + 1;
}
RIGEL_OP WrRowScalar(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  float* r = RowPtr(p, i);
  if (r == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  UpdateWithScalar(r, p.width, o->fn, m.S[o->c].f);
  Track(p, i);
  return o + 1;
}
// The hot case of every SGD update: one fused pass into the row.
RIGEL_OP WrRowLin(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  float* dst = RowPtr(p, i);
  if (dst == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  row::CallLin(o, dst, m.terms + o->t, m.S, m.V, dst, p.width);
  Track(p, i);
  return o + 1;
}
// Sequentially the first row is written before the second write fails:
// that write is done (the second lands in scratch) before the fault.
// Out of line in the interpreter, whose hot loop it would crowd; inlined in
// a compiled body, where the instruction's counts are constants (one kernel
// instead of every pair kernel).
#ifdef RIGEL_KERNEL_JIT_BITCODE
#define RIGEL_PAIR_FAULT_PATH __attribute__((always_inline)) inline
#else
#define RIGEL_PAIR_FAULT_PATH __attribute__((noinline, cold)) inline
#endif
RIGEL_PAIR_FAULT_PATH void WriteFirstOfPair(const VOp* o, float* first, int64_t width,
                                            const Term* terms, const Slot* S, float* const* V) {
  std::vector<float> scratch(static_cast<size_t>(width), 0.0f);
  row::CallPair(o, first, scratch.data(), terms + o->t, S, V, width);
}
#undef RIGEL_PAIR_FAULT_PATH
RIGEL_OP WrRowPair(Machine& m, const VOp* o) {
  const ParamBinding& p1 = m.P[o->aux];
  const ParamBinding& p2 = m.P[o->d];
  int64_t i = m.S[o->a].i, j = m.S[o->b].i;
  if (OutOfRange(i, p1.rows)) return m.BadRow(o, p1, i);
  float* r1 = RowPtr(p1, i);
  if (r1 == nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, i);
  if (OutOfRange(j, p2.rows)) {
    WriteFirstOfPair(o, r1, p1.width, m.terms, m.S, m.V);
    return m.BadIndex(Fault::kBadRow, o, o->d, o->n, j, p2.rows);
  }
  float* r2 = RowPtr(p2, j);
  if (r2 == nullptr) [[unlikely]]
    return m.NotHeld(o, o->d, j);
  row::CallPair(o, r1, r2, m.terms + o->t, m.S, m.V, p1.width);
  Track(p1, i);
  Track(p2, j);
  return o + 1;
}
RIGEL_OP WrWholeVec(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  if (p.slots != nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, -1);
  UpdateWithVector(p.data, p.rows, o->fn, m.V[o->c]);
  return o + 1;
}
RIGEL_OP WrWholeScalar(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  if (p.slots != nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, -1);
  UpdateWithScalar(p.data, p.rows, o->fn, m.S[o->c].f);
  return o + 1;
}
RIGEL_OP WrWholeLin(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  if (p.slots != nullptr) [[unlikely]]
    return m.NotHeld(o, o->aux, -1);
  row::CallLin(o, p.data, m.terms + o->t, m.S, m.V, p.data, p.rows);
  return o + 1;
}
RIGEL_OP Accum(Machine& m, const VOp* o) {
  m.acc[o->c] += m.S[o->a].f;
  return o + 1;
}
RIGEL_OP AccumVec(Machine& m, const VOp* o) {
  double* acc = m.acc + o->c;
  const float* v = m.V[o->a];
  for (int32_t k = 0; k < o->n; ++k) acc[k] += v[k];
  return o + 1;
}
RIGEL_OP AccumElem(Machine& m, const VOp* o) {
  int64_t k = m.S[o->b].i;
  if (OutOfRange(k, o->n)) {
    return m.BadIndex(Fault::kBadAccumElement, o, o->aux, o->loc, k, o->n);
  }
  m.acc[o->c + k] += m.S[o->a].f;
  return o + 1;
}

// Random draws: a hash of (seed, loop and launch, element, draw number), so
// a draw does not depend on which worker runs the element or in what order.
RIGEL_OP Rand(Machine& m, const VOp* o) {
  m.S[o->d].f = UnitFloat(HashCoords(m.rand_seed, m.run_key, m.e, m.draw++));
  return o + 1;
}
RIGEL_OP RandInt(Machine& m, const VOp* o) {
  int64_t n = m.S[o->a].i;
  if (n <= 0) return m.Fail(Fault::kBadRandInt, o, n);
  m.S[o->d].i =
      static_cast<int64_t>(UnitDouble(HashCoords(m.rand_seed, m.run_key, m.e, m.draw++)) * n);
  return o + 1;
}
RIGEL_OP Negative(Machine& m, const VOp* o) {
  m.S[o->d].i =
      m.datas[o->aux]->negatives.Sample(HashCoords(m.negative_seed, m.run_key, m.e, m.draw++));
  return o + 1;
}

// Data reads.
// Elements are read at their column position (Dataset::Local), which is the
// element itself unless the data set is held in part.
RIGEL_OP Label(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  const int64_t l = d.Local(m.S[o->a].i);
  if (l < 0) return m.Fail(Fault::kNotHeld, o, m.S[o->a].i);
  m.S[o->d].f = d.labels[l];
  return o + 1;
}
RIGEL_OP RowX(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  const int64_t l = d.Local(m.S[o->a].i);
  if (l < 0) return m.Fail(Fault::kNotHeld, o, m.S[o->a].i);
  m.V[o->d] = const_cast<float*>(d.x.data()) + l * d.dim;
  return o + 1;
}

// Control flow; targets are instruction indices (o->n).
RIGEL_OP Jump(Machine& m, const VOp* o) { return m.Jump(o->n); }
RIGEL_OP JumpIfFalse(Machine& m, const VOp* o) { return m.S[o->a].i ? o + 1 : m.Jump(o->n); }
RIGEL_OP ForInit(Machine& m, const VOp* o) {
  Slot* S = m.S;
  S[o->d].i = S[o->a].i;
  S[o->c].i = S[o->b].i;
  return S[o->d].i >= S[o->c].i ? m.Jump(o->n) : o + 1;
}
RIGEL_OP ForNext(Machine& m, const VOp* o) {
  return ++m.S[o->d].i < m.S[o->c].i ? m.Jump(o->n) : o + 1;
}
// `for (f, x) in features(row)`: hidden slots c and c+1 hold the position
// in the row's features and its end.
RIGEL_OP FeatInit(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  Slot* S = m.S;
  const int64_t row = d.Local(S[o->a].i);
  if (row < 0) return m.Fail(Fault::kNotHeld, o, S[o->a].i);
  int64_t p = d.feat_offset[row], q = d.feat_offset[row + 1];
  S[o->c].i = p;
  S[o->c + 1].i = q;
  if (p >= q) return m.Jump(o->n);
  S[o->d].i = d.feat_index[p];
  S[o->b].f = d.feat_value[p];
  return o + 1;
}
RIGEL_OP FeatNext(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  Slot* S = m.S;
  int64_t p = ++S[o->c].i;
  if (p >= S[o->c + 1].i) return o + 1;
  S[o->d].i = d.feat_index[p];
  S[o->b].f = d.feat_value[p];
  return m.Jump(o->n);
}
// `for c in window(t, r)`: hidden slots c, c+1, c+2 hold the position, the
// end and the centre, which is skipped.
RIGEL_OP WinInit(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  Slot* S = m.S;
  int64_t t = S[o->a].i, r = S[o->b].i;
  if (r < 0) return m.Fail(Fault::kBadRadius, o, r);
  // 128-bit bounds: t and r are program values and may be huge.
  int64_t lo = static_cast<int64_t>(std::max<__int128>(0, __int128{t} - r));
  int64_t hi = static_cast<int64_t>(std::min<__int128>(d.count, __int128{t} + r + 1));
  // A corpus held in part holds the window around each of its elements,
  // without a gap: both ends held, as far apart in the columns as in the corpus.
  if (d.in_part && lo < hi) {
    const int64_t a = d.Local(lo), b = d.Local(hi - 1);
    if (a < 0 || b < 0 || b - a != hi - 1 - lo)
      return m.Fail(Fault::kNotHeld, o, a < 0 ? lo : hi - 1);
  }
  if (d.lines && lo < hi) {
    // One document per line: the window stops at its line's ends. A centre
    // outside the corpus has no line, and so no neighbours.
    if (t < 0 || t >= d.count) {
      hi = lo;
    } else {
      const int32_t doc = d.token_doc[d.Local(t)];
      while (d.token_doc[d.Local(lo)] != doc) ++lo;
      while (d.token_doc[d.Local(hi - 1)] != doc) --hi;
    }
  }
  if (lo == t) ++lo;
  S[o->c].i = lo;
  S[o->c + 1].i = hi;
  S[o->c + 2].i = t;
  if (lo >= hi) return m.Jump(o->n);
  S[o->d].i = d.tokens[d.Local(lo)];
  return o + 1;
}
RIGEL_OP WinNext(Machine& m, const VOp* o) {
  const data::Dataset& d = *m.datas[o->aux];
  Slot* S = m.S;
  int64_t q = ++S[o->c].i;
  if (q == S[o->c + 2].i) q = ++S[o->c].i;
  if (q >= S[o->c + 1].i) return o + 1;
  S[o->d].i = d.tokens[d.Local(q)];
  return m.Jump(o->n);
}

// Key slices: the row an access would touch, checked as the access would be.
RIGEL_OP Key(Machine& m, const VOp* o) {
  const ParamBinding& p = m.P[o->aux];
  int64_t i = m.S[o->a].i;
  if (OutOfRange(i, p.rows)) return m.BadRow(o, p, i);
  if (o->b >= 0 && OutOfRange(m.S[o->b].i, p.width)) return m.BadColumn(o, p, m.S[o->b].i);
  // A row an element repeats back to back (the elements of one row in an
  // inner loop, as LDA's ndk[d, k]) is recorded once for that element.
  std::vector<int64_t>& out = m.key_out[o->aux];
  if (out.size() == m.key_mark[o->aux] || out.back() != i) out.push_back(i);
  return o + 1;
}

#undef RIGEL_OP

}  // namespace rigel::kernel::ops

#endif  // RIGEL_KERNEL_OPS_H_
