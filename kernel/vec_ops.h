// Contiguous f32 vector kernels used by the bytecode interpreter and the JIT's
// bitcode. Written as simple loops the compiler vectorises; RIGEL_IVDEP is
// sound because every output element depends only on input elements at the
// same index (outputs may alias inputs exactly, never with an offset).
#ifndef RIGEL_KERNEL_VEC_OPS_H_
#define RIGEL_KERNEL_VEC_OPS_H_

#include <cmath>
#include <cstdint>

// Before a loop whose iterations are independent: each writes only its own
// index, and an output that aliases an input aliases it exactly. GCC's
// `ivdep` and clang's `assume_safety` both let the loop be vectorised with
// no run-time overlap checks (clang ignores GCC's pragma; clang compiles the
// JIT's bitcode and the sanitizer build).
#if defined(__clang__)
#define RIGEL_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define RIGEL_IVDEP _Pragma("GCC ivdep")
#endif

namespace rigel::kernel::vec {

#ifdef RIGEL_KERNEL_JIT_BITCODE
// The JIT's bitcode (kernel/jit/ops_bitcode.cc, clang only) writes each loop
// over chunks of 8 lanes of clang's vector type, then one element at a time.
// Every lane does what the interpreter's loop (below) does at its index, in
// the same order (Dot's and Sum's 8 partial sums are the 8 lanes), so the
// results are the interpreter's bit for bit. Written out because the trip
// counts are constants in a compiled body: LLVM unrolls such loops fully
// before its loop vectoriser would see them, and its SLP vectoriser cannot
// prove that an output does not overlap an input (it may, exactly).
typedef float F8 __attribute__((ext_vector_type(8)));
__attribute__((always_inline)) inline F8 Load8(const float* p) {
  F8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((always_inline)) inline void Store8(float* p, F8 v) {
  __builtin_memcpy(p, &v, sizeof v);
}
__attribute__((always_inline)) inline float Load1(const float* p) { return *p; }
__attribute__((always_inline)) inline void Store1(float* p, float v) { *p = v; }
// f(k, load, store) for every index k of [0, n): 8 lanes at a time with
// Load8/Store8, then one at a time with Load1/Store1.
template <typename F>
__attribute__((always_inline)) inline void ByChunks(int64_t n, F f) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) f(k, Load8, Store8);
  for (; k < n; ++k) f(k, Load1, Store1);
}

template <typename N>
__attribute__((always_inline)) inline float Dot(const float* a, const float* b, N n) {
  F8 acc = 0;
  int64_t k = 0;
  const int64_t full = static_cast<int64_t>(n) / 8 * 8;
  for (; k < full; k += 8) acc += Load8(a + k) * Load8(b + k);
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; k < static_cast<int64_t>(n); ++k) s += a[k] * b[k];
  return s;
}

template <typename N>
__attribute__((always_inline)) inline float Sum(const float* a, N n) {
  F8 acc = 0;
  int64_t k = 0;
  const int64_t full = static_cast<int64_t>(n) / 8 * 8;
  for (; k < full; k += 8) acc += Load8(a + k);
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; k < static_cast<int64_t>(n); ++k) s += a[k];
  return s;
}

template <typename N>
__attribute__((always_inline)) inline void Lin1(float* d, float c0, const float* s0, N n) {
  ByChunks(n, [&](int64_t k, auto ld, auto st) { st(d + k, c0 * ld(s0 + k)); });
}
template <typename N>
__attribute__((always_inline)) inline void Lin2(float* d, float c0, const float* s0, float c1,
                                                const float* s1, N n) {
  ByChunks(n, [&](int64_t k, auto ld, auto st) { st(d + k, c0 * ld(s0 + k) + c1 * ld(s1 + k)); });
}
template <typename N>
__attribute__((always_inline)) inline void Lin3(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2, N n) {
  ByChunks(n, [&](int64_t k, auto ld, auto st) {
    st(d + k, c0 * ld(s0 + k) + c1 * ld(s1 + k) + c2 * ld(s2 + k));
  });
}
template <typename N>
__attribute__((always_inline)) inline void Lin4(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2,
                                                float c3, const float* s3, N n) {
  ByChunks(n, [&](int64_t k, auto ld, auto st) {
    st(d + k, c0 * ld(s0 + k) + c1 * ld(s1 + k) + c2 * ld(s2 + k) + c3 * ld(s3 + k));
  });
}

#else  // the interpreter's

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
  RIGEL_IVDEP
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin2(float* d, float c0, const float* s0, float c1,
                                                const float* s1, N n) {
  RIGEL_IVDEP
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k] + c1 * s1[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin3(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2, N n) {
  RIGEL_IVDEP
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = c0 * s0[k] + c1 * s1[k] + c2 * s2[k];
}
template <typename N>
__attribute__((always_inline)) inline void Lin4(float* d, float c0, const float* s0, float c1,
                                                const float* s1, float c2, const float* s2,
                                                float c3, const float* s3, N n) {
  RIGEL_IVDEP
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k)
    d[k] = c0 * s0[k] + c1 * s1[k] + c2 * s2[k] + c3 * s3[k];
}

#endif  // RIGEL_KERNEL_JIT_BITCODE

}  // namespace rigel::kernel::vec

#endif  // RIGEL_KERNEL_VEC_OPS_H_
