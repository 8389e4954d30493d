// The value of a unary function or a binary operator of the language, in f32
// as the kernel interpreter computes it (kernel/ops.h) and in double as the
// serial driver does (exec/executor.cc). Constant folding (kernel/passes/
// fold_constants.cc) uses the f32 versions, so a folded value is the value
// the run would have computed. Pure functions; thread-safe.
#ifndef RIGEL_KERNEL_FLOAT_OPS_H_
#define RIGEL_KERNEL_FLOAT_OPS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/ir.h"

namespace rigel::kernel {

template <typename T>
inline T Sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// log(1 + exp(x)) without overflow for large x.
template <typename T>
inline T Log1pExp(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// fn(x) for an ir::UnFn that computes in floating point (kNeg, kSqrt ...
// kLog1pExp); x itself for any other fn.
template <typename T>
inline T ApplyUn(uint8_t fn, T x) {
  switch (fn) {
    case ir::kNeg:
      return -x;
    case ir::kSqrt:
      return std::sqrt(x);
    case ir::kExp:
      return std::exp(x);
    case ir::kLog:
      return std::log(x);
    case ir::kAbs:
      return std::fabs(x);
    case ir::kTanh:
      return std::tanh(x);
    case ir::kSigmoid:
      return Sigmoid(x);
    case ir::kLog1pExp:
      return Log1pExp(x);
    default:
      return x;
  }
}

// x fn y for an ir::BinOp from kAdd to kMax; y for any other fn (the
// kernel's plain assignment, kPlainAssign).
template <typename T>
inline T ApplyBin(uint8_t fn, T x, T y) {
  switch (fn) {
    case ir::kAdd:
      return x + y;
    case ir::kSub:
      return x - y;
    case ir::kMul:
      return x * y;
    case ir::kDiv:
      return x / y;
    case ir::kMin:
      return std::min(x, y);
    case ir::kMax:
      return std::max(x, y);
    default:
      return y;
  }
}

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_FLOAT_OPS_H_
