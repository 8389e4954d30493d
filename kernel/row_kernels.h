// Row kernels specialised at kernel-compile time on the row width (8, 16,
// 32, 64, 128, or any) and, for linear combinations, on the number of terms,
// so the interpreter calls straight-line SIMD code through one pointer with
// no per-call switching. Pure functions; thread-safe.
#ifndef RIGEL_KERNEL_ROW_KERNELS_H_
#define RIGEL_KERNEL_ROW_KERNELS_H_

#include <cstdint>

#include "kernel/kernel_impl.h"

namespace rigel::kernel {

// A LinFn computes d = sum_i S[t[i].coef] * src_i over `count` terms fixed
// at selection; a term whose src is -1 reads `self` (the destination row
// before the write). `count` is at most kMaxLinTerms.
constexpr int kMaxLinTerms = 8;
LinFn SelectLin(int count, int64_t width);
// A PairFn for c1 terms into d1 followed by c2 terms into d2 (terms with
// src -1 read d1 in the first group and d2 in the second); null if a count
// is outside 1..4.
PairFn SelectPair(int c1, int c2, int64_t width);
DotFn SelectDot(int64_t width);
CopyFn SelectCopy(int64_t width);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_ROW_KERNELS_H_
