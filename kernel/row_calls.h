// How an opcode (kernel/ops.h) calls its row kernel. The interpreter calls
// the kernel the compiler picked for the instruction (VOp::k,
// kernel/row_kernels.h) through its pointer. The JIT's bitcode
// (kernel/jit/ops_bitcode.cc, which defines RIGEL_KERNEL_JIT_BITCODE)
// instantiates the same template (kernel/row_kernel_bodies.h) from the
// instruction's term counts, which are constants in a compiled body, so the
// kernel is inlined and unrolled there. Every instantiation computes the same
// sums in the same order, so both tiers' results are equal bit for bit.
// Private to kernel/. Pure functions; thread-safe.
#ifndef RIGEL_KERNEL_ROW_CALLS_H_
#define RIGEL_KERNEL_ROW_CALLS_H_

#include <cstdint>

#include "kernel/kernel_impl.h"

#ifdef RIGEL_KERNEL_JIT_BITCODE
#include "kernel/row_kernel_bodies.h"
#endif

namespace rigel::kernel::row {

#ifndef RIGEL_KERNEL_JIT_BITCODE

__attribute__((always_inline)) inline void CallLin(const VOp* o, float* d, const Term* t,
                                                   const Slot* S, float* const* V,
                                                   const float* self, int64_t n) {
  o->k.lin(d, t, S, V, self, n);
}
__attribute__((always_inline)) inline void CallPair(const VOp* o, float* d1, float* d2,
                                                    const Term* t, const Slot* S, float* const* V,
                                                    int64_t n) {
  o->k.pair(d1, d2, t, S, V, n);
}
__attribute__((always_inline)) inline float CallDot(const VOp* o, const float* a, const float* b,
                                                    int64_t n) {
  return o->k.dot(a, b, n);
}
__attribute__((always_inline)) inline void CallCopy(const VOp* o, float* d, const float* s,
                                                    int64_t n) {
  o->k.copy(d, s, n);
}

#else  // RIGEL_KERNEL_JIT_BITCODE

// In a compiled body `o` points into a constant copy of the bytecode whose
// VOp::k holds the width the kernel was picked for (kernel/jit/jit.cc), so
// every switch below folds to one instantiation, unrolled for that width. A
// compiled body runs only over bindings of the widths it was compiled for
// (Kernel::RunSome checks), where `n` is that width.
#define RIGEL_ROW_CALL __attribute__((always_inline)) inline

RIGEL_ROW_CALL void CallLin(const VOp* o, float* d, const Term* t, const Slot* S, float* const* V,
                            const float* self, int64_t) {
  const int64_t w = o->k.width;
  switch (o->c) {
    case 1:
      return LinT<1, 0>(d, t, S, V, self, w);
    case 2:
      return LinT<2, 0>(d, t, S, V, self, w);
    case 3:
      return LinT<3, 0>(d, t, S, V, self, w);
    case 4:
      return LinT<4, 0>(d, t, S, V, self, w);
    case 5:
      return LinWide<5>(d, t, S, V, self, w);
    case 6:
      return LinWide<6>(d, t, S, V, self, w);
    case 7:
      return LinWide<7>(d, t, S, V, self, w);
    default:
      return LinWide<8>(d, t, S, V, self, w);
  }
}

template <int C1>
RIGEL_ROW_CALL void PairOf(int c2, float* d1, float* d2, const Term* t, const Slot* S,
                           float* const* V, int64_t w) {
  switch (c2) {
    case 1:
      return PairT<C1, 1, 0>(d1, d2, t, S, V, w);
    case 2:
      return PairT<C1, 2, 0>(d1, d2, t, S, V, w);
    case 3:
      return PairT<C1, 3, 0>(d1, d2, t, S, V, w);
    default:
      return PairT<C1, 4, 0>(d1, d2, t, S, V, w);
  }
}

// A pair's counts are 1 to 4 each (kernel/row_kernels.h SelectPair).
RIGEL_ROW_CALL void CallPair(const VOp* o, float* d1, float* d2, const Term* t, const Slot* S,
                             float* const* V, int64_t) {
  const int64_t w = o->k.width;
  switch (o->c) {
    case 1:
      return PairOf<1>(o->fn, d1, d2, t, S, V, w);
    case 2:
      return PairOf<2>(o->fn, d1, d2, t, S, V, w);
    case 3:
      return PairOf<3>(o->fn, d1, d2, t, S, V, w);
    default:
      return PairOf<4>(o->fn, d1, d2, t, S, V, w);
  }
}
RIGEL_ROW_CALL float CallDot(const VOp* o, const float* a, const float* b, int64_t) {
  return DotT<0>(a, b, o->k.width);
}
RIGEL_ROW_CALL void CallCopy(const VOp* o, float* d, const float* s, int64_t) {
  CopyT<0>(d, s, o->k.width);
}

#undef RIGEL_ROW_CALL

#endif  // RIGEL_KERNEL_JIT_BITCODE

}  // namespace rigel::kernel::row

#endif  // RIGEL_KERNEL_ROW_CALLS_H_
