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
#include <cstdio>
#include <optional>
#include <string>

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
// kLog1pExp, kFloor, kCeil); x itself for any other fn.
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
    case ir::kFloor:
      return std::floor(x);
    case ir::kCeil:
      return std::ceil(x);
    default:
      return x;
  }
}

// int(x): x toward zero, or nothing when x is NaN or outside the int64 range
// (the caller reports BadIntMessage at the expression).
template <typename T>
inline std::optional<int64_t> TruncToInt(T x) {
  // +-2^63 are exact in float and double: [-2^63, 2^63) converts; the
  // negated comparisons also catch NaN.
  if (!(x >= T(-9223372036854775808.0)) || !(x < T(9223372036854775808.0))) {
    return std::nullopt;
  }
  return static_cast<int64_t>(x);
}

// "int() of nan", "int() of 1e+30 is outside the int range".
inline std::string BadIntMessage(double x) {
  if (std::isnan(x)) return "int() of NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "int() of %g is outside the int range", x);
  return buf;
}

// "sample needs non-negative numbers; element 3 is -0.5" (NaN and infinities
// too), or, for element < 0, the message for a vector with no positive weight.
inline std::string BadSampleMessage(int64_t element, double x) {
  if (element < 0) return "sample needs a vector with a positive element; every element is 0";
  char value[32];
  std::snprintf(value, sizeof value, "%g", x);
  return "sample needs finite, non-negative numbers; element " + std::to_string(element) + " is " +
         (std::isnan(x) ? "NaN" : value);
}

// x fn y for an ir::BinOp from kAdd to kPow; y for any other fn (the
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
    case ir::kPow:
      return std::pow(x, y);
    default:
      return y;
  }
}

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_FLOAT_OPS_H_
