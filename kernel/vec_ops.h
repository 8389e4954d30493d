// Contiguous f32 vector kernels used by the bytecode interpreter. Written as
// simple loops the compiler vectorises; `ivdep` is sound because every output
// element depends only on input elements at the same index (outputs may alias
// inputs exactly, never with an offset).
#ifndef RIGEL_KERNEL_VEC_OPS_H_
#define RIGEL_KERNEL_VEC_OPS_H_

#include <cmath>
#include <cstdint>

namespace rigel::kernel::vec {

template <typename N>
__attribute__((always_inline)) inline float Dot(const float* a, const float* b, N n) {
  // Eight partial sums let the compiler keep one SIMD accumulator and break
  // the dependency chain of a sequential sum.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  const int64_t full = static_cast<int64_t>(n) / 8 * 8;
  for (; k < full; k += 8) {
    for (int u = 0; u < 8; ++u) acc[u] += a[k + u] * b[k + u];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; k < static_cast<int64_t>(n); ++k) s += a[k] * b[k];
  return s;
}

template <typename N>
__attribute__((always_inline)) inline float Sum(const float* a, N n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  const int64_t full = static_cast<int64_t>(n) / 8 * 8;
  for (; k < full; k += 8) {
    for (int u = 0; u < 8; ++u) acc[u] += a[k + u];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; k < static_cast<int64_t>(n); ++k) s += a[k];
  return s;
}

template <typename N>
__attribute__((always_inline)) inline void Lin1(float* d, float c0, const float* s0, N n) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin2(float* d, float c0, const float* s0, float c1,
                                                const float* s1, N n) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k] + c1 * s1[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin3(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2, N n) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k] + c1 * s1[k] + c2 * s2[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin4(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2,
                                                float c3, const float* s3, N n) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k)
    d[k] = c0 * s0[k] + c1 * s1[k] + c2 * s2[k] + c3 * s3[k];
}

}  // namespace rigel::kernel::vec

#endif  // RIGEL_KERNEL_VEC_OPS_H_
