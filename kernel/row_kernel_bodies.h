// The bodies of the row kernels (kernel/row_kernels.h), templated on the
// term counts and the row width (0: any width, read from `n`). Private to
// kernel/: row_kernels.cc instantiates them for the interpreter, and
// kernel/jit/ops_bitcode.cc compiles the same templates to the bitcode the
// JIT inlines, so both tiers do the same operations in the same order.
// Every instantiation of a template computes the same sums in the same order
// whatever W is. Pure functions; thread-safe.
#ifndef RIGEL_KERNEL_ROW_KERNEL_BODIES_H_
#define RIGEL_KERNEL_ROW_KERNEL_BODIES_H_

#include <cstdint>

#include "kernel/kernel_impl.h"
#include "kernel/vec_ops.h"

namespace rigel::kernel::row {

// In the JIT's bitcode every body is inlined into the instruction that calls
// it (whose counts and width are constants there); the interpreter calls
// them through pointers.
#ifdef RIGEL_KERNEL_JIT_BITCODE
#define RIGEL_ROW_BODY __attribute__((always_inline)) inline
#else
#define RIGEL_ROW_BODY inline
#endif

template <int64_t W>
constexpr int64_t Width(int64_t n) {
  return W > 0 ? W : n;
}

inline const float* Src(const Term& t, float* const* V, const float* self) {
  return t.src < 0 ? self : V[t.src];
}

inline float Coef(const Term& t, const Slot* S) { return S[t.coef].f * S[t.coef2].f; }

template <int C, int64_t W>
RIGEL_ROW_BODY void LinT(float* d, const Term* t, const Slot* S, float* const* V, const float* self,
                         int64_t n) {
  const int64_t w = Width<W>(n);
  const float* s0 = Src(t[0], V, self);
  const float c0 = Coef(t[0], S);
  if constexpr (C == 1) {
    vec::Lin1(d, c0, s0, w);
  } else {
    const float* s1 = Src(t[1], V, self);
    const float c1 = Coef(t[1], S);
    if constexpr (C == 2) {
      vec::Lin2(d, c0, s0, c1, s1, w);
    } else {
      const float* s2 = Src(t[2], V, self);
      const float c2 = Coef(t[2], S);
      if constexpr (C == 3) {
        vec::Lin3(d, c0, s0, c1, s1, c2, s2, w);
      } else {
        vec::Lin4(d, c0, s0, c1, s1, c2, s2, Coef(t[3], S), Src(t[3], V, self), w);
      }
    }
  }
}

// More than four terms: the first four, then one pass per extra term.
template <int C>
RIGEL_ROW_BODY void LinWide(float* d, const Term* t, const Slot* S, float* const* V,
                            const float* self, int64_t n) {
  LinT<4, 0>(d, t, S, V, self, n);
  for (int i = 4; i < C; ++i) {
    const float c = Coef(t[i], S);
    const float* s = Src(t[i], V, self);
#ifdef RIGEL_KERNEL_JIT_BITCODE
    vec::ByChunks(n, [&](int64_t k, auto ld, auto st) { st(d + k, ld(d + k) + c * ld(s + k)); });
#else
    RIGEL_IVDEP
    for (int64_t k = 0; k < n; ++k) d[k] += c * s[k];
#endif
  }
}

// The C-term sum at index k, a float or (the JIT's bitcode) 8 lanes from k,
// as `ld` loads them.
template <int C, typename Load>
__attribute__((always_inline)) inline auto Combine(const float* const* src, const float* c,
                                                   int64_t k, Load ld) {
  auto x = c[0] * ld(src[0] + k);
  if constexpr (C > 1) x += c[1] * ld(src[1] + k);
  if constexpr (C > 2) x += c[2] * ld(src[2] + k);
  if constexpr (C > 3) x += c[3] * ld(src[3] + k);
  return x;
}

template <int C1, int C2, int64_t W>
RIGEL_ROW_BODY void PairT(float* d1, float* d2, const Term* t, const Slot* S, float* const* V,
                          int64_t n) {
  const int64_t w = Width<W>(n);
  const float* s1[C1];
  const float* s2[C2];
  float c1[C1], c2[C2];
  for (int i = 0; i < C1; ++i) {
    s1[i] = Src(t[i], V, d1);
    c1[i] = Coef(t[i], S);
  }
  for (int i = 0; i < C2; ++i) {
    s2[i] = Src(t[C1 + i], V, d2);
    c2[i] = Coef(t[C1 + i], S);
  }
  // Sources may be the destination rows themselves (exactly, never offset),
  // and both sums at index k are computed before either store at k.
#ifdef RIGEL_KERNEL_JIT_BITCODE
  vec::ByChunks(w, [&](int64_t k, auto ld, auto st) {
    auto x = Combine<C1>(s1, c1, k, ld);
    auto y = Combine<C2>(s2, c2, k, ld);
    st(d1 + k, x);
    st(d2 + k, y);
  });
#else
  const auto ld = [](const float* p) { return *p; };
  RIGEL_IVDEP
  for (int64_t k = 0; k < w; ++k) {
    float x = Combine<C1>(s1, c1, k, ld);
    float y = Combine<C2>(s2, c2, k, ld);
    d1[k] = x;
    d2[k] = y;
  }
#endif
}

template <int64_t W>
RIGEL_ROW_BODY float DotT(const float* a, const float* b, int64_t n) {
  return vec::Dot(a, b, Width<W>(n));
}

template <int64_t W>
RIGEL_ROW_BODY void CopyT(float* d, const float* s, int64_t n) {
  const int64_t w = Width<W>(n);
#ifdef RIGEL_KERNEL_JIT_BITCODE
  vec::ByChunks(w, [&](int64_t k, auto ld, auto st) { st(d + k, ld(s + k)); });
#else
  RIGEL_IVDEP
  for (int64_t k = 0; k < w; ++k) d[k] = s[k];
#endif
}

#undef RIGEL_ROW_BODY

}  // namespace rigel::kernel::row

#endif  // RIGEL_KERNEL_ROW_KERNEL_BODIES_H_
