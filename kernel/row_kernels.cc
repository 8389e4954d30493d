#include "kernel/row_kernels.h"

#include <type_traits>

#include "kernel/row_kernel_bodies.h"

namespace rigel::kernel {
namespace {

using row::CopyT;
using row::DotT;
using row::LinT;
using row::LinWide;
using row::PairT;

template <int64_t W, int C1>
PairFn PairFor2(int c2) {
  switch (c2) {
    case 1:
      return PairT<C1, 1, W>;
    case 2:
      return PairT<C1, 2, W>;
    case 3:
      return PairT<C1, 3, W>;
    case 4:
      return PairT<C1, 4, W>;
    default:
      return nullptr;
  }
}

template <int64_t W>
PairFn PairFor(int c1, int c2) {
  switch (c1) {
    case 1:
      return PairFor2<W, 1>(c2);
    case 2:
      return PairFor2<W, 2>(c2);
    case 3:
      return PairFor2<W, 3>(c2);
    case 4:
      return PairFor2<W, 4>(c2);
    default:
      return nullptr;
  }
}

template <int64_t W>
LinFn LinFor(int count) {
  switch (count) {
    case 1:
      return LinT<1, W>;
    case 2:
      return LinT<2, W>;
    case 3:
      return LinT<3, W>;
    case 4:
      return LinT<4, W>;
    default:
      return nullptr;
  }
}

// Width-specialised variants exist for these row widths.
template <typename F>
auto ByWidth(int64_t width, F f) {
  switch (width) {
    case 8:
      return f(std::integral_constant<int64_t, 8>{});
    case 16:
      return f(std::integral_constant<int64_t, 16>{});
    case 32:
      return f(std::integral_constant<int64_t, 32>{});
    case 64:
      return f(std::integral_constant<int64_t, 64>{});
    case 128:
      return f(std::integral_constant<int64_t, 128>{});
    default:
      return f(std::integral_constant<int64_t, 0>{});
  }
}

}  // namespace

LinFn SelectLin(int count, int64_t width) {
  if (count > 4) {
    // Wide combinations are rare; instantiate a few counts, beyond that the
    // compiler splits the combination (see kernel/lower/linear.cc).
    switch (count) {
      case 5:
        return LinWide<5>;
      case 6:
        return LinWide<6>;
      case 7:
        return LinWide<7>;
      default:
        return LinWide<8>;
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
