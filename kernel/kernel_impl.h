// Private to kernel/ (the compiler in kernel/lower/ and kernel/passes/, the
// interpreter in kernel/run.cc): the bytecode the kernel interpreter runs.
// kernel/operands.h says what each field means per opcode; kernel/verify.h
// checks a program against it.
#ifndef RIGEL_KERNEL_KERNEL_IMPL_H_
#define RIGEL_KERNEL_KERNEL_IMPL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/kernel.h"

namespace rigel::kernel {

// Every opcode but kEnd, in code order, with the name the disassembly gives
// it (CodeName): the enum below, the interpreter's dispatch table and
// handlers (run.cc) and the JIT's table of handlers (jit/ops_bitcode.cc)
// are made from this one list. Comments here are /* */: a // comment would
// swallow the line continuation.
#define RIGEL_KERNEL_OPCODES(X)                                                                  \
  /* Scalars: d = a op b over slots. Bools are ints 0/1. */                                      \
  X(IAdd, "iadd")                                                                                \
  X(ISub, "isub")                                                                                \
  X(IMul, "imul")                                                                                \
  X(IDiv, "idiv")                                                                                \
  X(IMod, "imod") /* floored (common/int_math.h) */                                              \
  X(IMin, "imin")                                                                                \
  X(IMax, "imax")                                                                                \
  X(ILt, "ilt")                                                                                  \
  X(ILe, "ile")                                                                                  \
  X(IGt, "igt")                                                                                  \
  X(IGe, "ige")                                                                                  \
  X(IEq, "ieq")                                                                                  \
  X(INe, "ine")                                                                                  \
  X(INeg, "ineg")                                                                                \
  X(FAdd, "fadd")                                                                                \
  X(FSub, "fsub")                                                                                \
  X(FMul, "fmul")                                                                                \
  X(FDiv, "fdiv")                                                                                \
  X(FMin, "fmin")                                                                                \
  X(FMax, "fmax")                                                                                \
  X(FPow, "fpow")                                                                                \
  X(FLt, "flt")                                                                                  \
  X(FLe, "fle")                                                                                  \
  X(FGt, "fgt")                                                                                  \
  X(FGe, "fge")                                                                                  \
  X(FEq, "feq")                                                                                  \
  X(FNe, "fne")                                                                                  \
  X(FUn, "fun") /* d = fn(a), fn an ir::UnFn on f32 */                                           \
  X(IToF, "itof")                                                                                \
  X(FToI, "ftoi") /* int(): toward zero; NaN or out of range is a fault */                       \
  /* an int to an i32 parameter's f32 cell; beyond 2^24 in magnitude a fault */                  \
  X(IToI32, "itoi32")                                                                            \
  X(BAnd, "band")                                                                                \
  X(BOr, "bor")                                                                                  \
  X(BNot, "bnot")                                                                                \
  X(FClip, "fclip")                                                                              \
  X(SMove, "smove")                                                                              \
  /* Vectors of n floats: V[d] (owned buffer) = ... */                                           \
  X(VMove, "vmove")                                                                              \
  X(VZero, "vzero")                                                                              \
  X(VLin, "vlin")     /* V[d] = sum over terms[t .. t+c) of S[coef] * V[src] */                  \
  X(VBin, "vbin")     /* V[d] = V[a] fn V[b] */                                                  \
  X(VBinVS, "vbinvs") /* V[d] = V[a] fn S[b] */                                                  \
  X(VBinSV, "vbinsv") /* V[d] = S[a] fn V[b] */                                                  \
  X(VUn, "vun")                                                                                  \
  X(VClip, "vclip")                                                                              \
  X(Dot, "dot") /* fn 1: the value is read once (kernel/passes/fuse_dot.cc may fuse it) */       \
  X(Sum, "sum")                                                                                  \
  X(Norm, "norm")                                                                                \
  X(VElem, "velem")   /* S[d] = V[a][S[b]] (width n; out of range: a fault) */                   \
  X(VPick, "vpick")   /* S[d] = max/min (f) or argmax/argmin (i) of V[a] by fn (ir::PickFn) */   \
  X(OneHot, "onehot") /* V[d] = 1 at S[a], 0 elsewhere (width n; out of range: a fault) */       \
  X(VSet, "vset")     /* V[d][S[b]] fn= S[c], in place (a == d; fn ir::BinOp or kPlainAssign) */ \
  /* S[d] = k with probability V[a][k] / sum (one draw; a bad vector: a fault) */                \
  X(Sample, "sample")                                                                            \
  /* S[d] = S[c] fn dot(V[a], V[b]) (or dot fn S[c] when t == 1); fn kFAdd/kFSub/kFMul */        \
  X(DotOp, "dot.op")                                                                             \
  /* Parameters: param index aux, subscripts in slots a (row) and b (column). */                 \
  X(RdElem1, "rd.elem1")                                                                         \
  X(RdElem2, "rd.elem2")                                                                         \
  /* A row or whole copy with fn 1 may be a view: no write to its parameter */                   \
  /* can happen while the value is live (kernel/passes/read_views.cc). */                        \
  X(RdRowView, "rd.row.view")                                                                    \
  X(RdRowCopy, "rd.row.copy")                                                                    \
  X(RdWholeView, "rd.whole.view")                                                                \
  X(RdWholeCopy, "rd.whole.copy")                                                                \
  X(RdRowView2, "rd.row.view2") /* two views: V[d] = P[aux] row S[a]; V[b] = P[t] row S[c] */    \
  X(WrElem1, "wr.elem1")                                                                         \
  X(WrElem2, "wr.elem2") /* P op= S[c]  (fn: ir::BinOp or kPlainAssign) */                       \
  X(WrRowVec, "wr.row.vec")                                                                      \
  X(WrRowScalar, "wr.row.scalar") /* row op= V[c] / S[c] */                                      \
  X(WrRowLin, "wr.row.lin")       /* row = terms (src -1 is the row itself) */                   \
  X(WrRowPair, "wr.row.pair") /* rows aux[a] and d[b] = terms t..t+c and t+c..t+c+fn, at once */ \
  X(WrWholeVec, "wr.whole.vec")                                                                  \
  X(WrWholeScalar, "wr.whole.scalar")                                                            \
  X(WrWholeLin, "wr.whole.lin")                                                                  \
  /* Accumulators (accumulator aux, its first slot in RunContext::accums c): */                  \
  X(Accum, "accum")          /* accums[c] += S[a] */                                             \
  X(AccumVec, "accum.vec")   /* accums[c + k] += V[a][k] for k < n (the accumulator's width) */  \
  X(AccumElem, "accum.elem") /* accums[c + S[b]] += S[a] (S[b] outside [0, n): a fault) */       \
  X(Rand, "rand")                                                                                \
  X(RandInt, "randint")                                                                          \
  X(Negative, "negative") /* data set aux for negative */                                        \
  X(Label, "label")                                                                              \
  X(RowX, "rowx") /* row slot a of data aux */                                                   \
  X(Jump, "jump")                                                                                \
  X(JumpIfFalse, "jump.if.false") /* target n */                                                 \
  X(ForInit, "for.init")                                                                         \
  X(ForNext, "for.next") /* var d, lo a, hi b, hidden slot c; exit / body target n */            \
  X(FeatInit, "feat.init")                                                                       \
  X(FeatNext, "feat.next") /* f d, x b, row a, hidden slots c, c+1; data aux */                  \
  X(WinInit, "win.init")                                                                         \
  X(WinNext, "win.next") /* c d, t a, radius b, hidden slots c, c+1, c+2; data aux */            \
  /* Key slices only (key_slice.h): append row S[a] of param aux to the key */                   \
  /* trace after checking it (and column S[b] when b >= 0) like a read would. */                 \
  X(Key, "key")

#define RIGEL_KERNEL_ENUM(name, text) k##name,
enum Code : uint16_t { kEnd, RIGEL_KERNEL_OPCODES(RIGEL_KERNEL_ENUM) };
#undef RIGEL_KERNEL_ENUM

const char* CodeName(uint16_t code);

struct Term;
union Slot;
// Row kernels chosen when the bytecode is compiled (row_kernels.h).
using LinFn = void (*)(float* d, const Term* t, const Slot* S, float* const* V, const float* self,
                       int64_t n);
using DotFn = float (*)(const float* a, const float* b, int64_t n);
using CopyFn = void (*)(float* d, const float* s, int64_t n);
// Two linear combinations into two rows of equal width in one pass; both
// read every input before either row is stored (row_kernels.h).
using PairFn = void (*)(float* d1, float* d2, const Term* t, const Slot* S, float* const* V,
                        int64_t n);

struct VOp {
  uint16_t code = kEnd;
  uint8_t fn = 0;
  int32_t d = -1, a = -1, b = -1, c = -1;
  int32_t n = 0;     // vector width, term count or jump target
  int32_t aux = -1;  // param / data / accum index
  int32_t t = -1;    // first term of a linear combination (count in c)
  int32_t loc = -1;  // index into Impl::locs for run-time errors
  union {
    LinFn lin;
    DotFn dot;
    CopyFn copy;
    PairFn pair;
    // Only in a compiled body's constant copy of the bytecode (kernel/jit/):
    // the row width the kernel was picked for (kernel/row_calls.h).
    int64_t width;
  } k = {nullptr};  // kVLin/kWr*Lin, kDot/kNorm, row copies
};

// One term of a linear combination: S[coef] * S[coef2] * V[src]. A product
// of two slots lets `lr * g * x` need no separate scalar instruction; coef2
// is a slot holding 1 when there is a single factor.
struct Term {
  int32_t coef;
  int32_t coef2;
  int32_t src;  // vector index, or -1 for the destination row itself
};

union Slot {
  int64_t i;
  float f;
};

class Tier;  // kernel/tier.h

struct Kernel::Impl {
  Impl();
  ~Impl();
  const ir::Program* prog = nullptr;
  ir::Loop rewritten;  // the loop after the IR passes; what `code` was made from
  int loop = -1;
  data::DataKind kind = data::DataKind::kRange;
  int data = -1;
  std::vector<VOp> code;
  std::vector<Term> terms;
  std::vector<ir::Loc> locs;
  int num_slots = 0;
  int num_vecs = 0;
  std::vector<Slot> slot_init;      // constants prefilled; others zero
  std::vector<int64_t> vec_width;   // per vector index
  std::vector<int64_t> vec_offset;  // arena offset of owned buffers, -1 for views
  int64_t arena_size = 0;
  std::vector<std::pair<int, int>> outer;  // (slot, DExpr id) filled at run start
  std::vector<int> var_slots;              // loop variable slots in pattern order
  std::vector<bool> is_view;               // per vector index: points into other memory
  // A key slice: row and element accesses were compiled to kKey.
  bool key_slice = false;
  // Which tier runs the body; set once the bytecode is final. Shared by
  // copies of an Impl (the verifier's tests break copies). The last member:
  // destroyed first, it waits for a compile that reads the others.
  std::shared_ptr<Tier> tier;
};

// The bytecode of `k` as text, one instruction per line (kernel/debug.cc).
std::string Disassemble(const Kernel::Impl& k);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_KERNEL_IMPL_H_
