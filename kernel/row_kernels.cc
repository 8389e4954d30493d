#include "kernel/row_kernels.h"

#include <type_traits>

#include "kernel/vec_ops.h"

namespace rigel::kernel {
namespace {

template <int64_t W>
constexpr int64_t Width(int64_t n) {
  return W > 0 ? W : n;
}

inline const float* Src(const Term& t, float* const* V, const float* self) {
  return t.src < 0 ? self : V[t.src];
}

inline float Coef(const Term& t, const Slot* S) { return S[t.coef].f * S[t.coef2].f; }

template <int C, int64_t W>
void LinT(float* d, const Term* t, const Slot* S, float* const* V, const float* self, int64_t n) {
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
void LinWide(float* d, const Term* t, const Slot* S, float* const* V, const float* self,
             int64_t n) {
  LinT<4, 0>(d, t, S, V, self, n);
  for (int i = 4; i < C; ++i) {
    const float c = Coef(t[i], S);
    const float* s = Src(t[i], V, self);
#pragma GCC ivdep
    for (int64_t k = 0; k < n; ++k) d[k] += c * s[k];
  }
}

template <int C>
__attribute__((always_inline)) inline float Combine(const float* const* src, const float* c,
                                                    int64_t k) {
  float x = c[0] * src[0][k];
  if constexpr (C > 1) x += c[1] * src[1][k];
  if constexpr (C > 2) x += c[2] * src[2][k];
  if constexpr (C > 3) x += c[3] * src[3][k];
  return x;
}

template <int C1, int C2, int64_t W>
void PairT(float* d1, float* d2, const Term* t, const Slot* S, float* const* V, int64_t n) {
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
#pragma GCC ivdep
  for (int64_t k = 0; k < w; ++k) {
    float x = Combine<C1>(s1, c1, k);
    float y = Combine<C2>(s2, c2, k);
    d1[k] = x;
    d2[k] = y;
  }
}

template <int64_t W, int C1>
PairFn PairFor2(int c2) {
  switch (c2) {
    case 1: return PairT<C1, 1, W>;
    case 2: return PairT<C1, 2, W>;
    case 3: return PairT<C1, 3, W>;
    case 4: return PairT<C1, 4, W>;
    default: return nullptr;
  }
}

template <int64_t W>
PairFn PairFor(int c1, int c2) {
  switch (c1) {
    case 1: return PairFor2<W, 1>(c2);
    case 2: return PairFor2<W, 2>(c2);
    case 3: return PairFor2<W, 3>(c2);
    case 4: return PairFor2<W, 4>(c2);
    default: return nullptr;
  }
}

template <int64_t W>
float DotT(const float* a, const float* b, int64_t n) {
  return vec::Dot(a, b, Width<W>(n));
}

template <int64_t W>
void CopyT(float* d, const float* s, int64_t n) {
  const int64_t w = Width<W>(n);
#pragma GCC ivdep
  for (int64_t k = 0; k < w; ++k) d[k] = s[k];
}

template <int64_t W>
LinFn LinFor(int count) {
  switch (count) {
    case 1: return LinT<1, W>;
    case 2: return LinT<2, W>;
    case 3: return LinT<3, W>;
    case 4: return LinT<4, W>;
    default: return nullptr;
  }
}

// Width-specialised variants exist for these row widths.
template <typename F>
auto ByWidth(int64_t width, F f) {
  switch (width) {
    case 8: return f(std::integral_constant<int64_t, 8>{});
    case 16: return f(std::integral_constant<int64_t, 16>{});
    case 32: return f(std::integral_constant<int64_t, 32>{});
    case 64: return f(std::integral_constant<int64_t, 64>{});
    case 128: return f(std::integral_constant<int64_t, 128>{});
    default: return f(std::integral_constant<int64_t, 0>{});
  }
}

}  // namespace

LinFn SelectLin(int count, int64_t width) {
  if (count > 4) {
    // Wide combinations are rare; instantiate a few counts, beyond that the
    // compiler splits the combination (see kernel/lower/linear.cc).
    switch (count) {
      case 5: return LinWide<5>;
      case 6: return LinWide<6>;
      case 7: return LinWide<7>;
      default: return LinWide<8>;
    }
  }
  return ByWidth(width, [&](auto w) { return LinFor<decltype(w)::value>(count); });
}

PairFn SelectPair(int c1, int c2, int64_t width) {
  return ByWidth(width, [&](auto w) { return PairFor<decltype(w)::value>(c1, c2); });
}

DotFn SelectDot(int64_t width) {
  return ByWidth(width, [](auto w) -> DotFn { return DotT<decltype(w)::value>; });
}

CopyFn SelectCopy(int64_t width) {
  return ByWidth(width, [](auto w) -> CopyFn { return CopyT<decltype(w)::value>; });
}

}  // namespace rigel::kernel
