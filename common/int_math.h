// Integer arithmetic the language defines beyond C++'s: the floored modulo of
// `a % b` (DSL.md, version 2), shared by the checker's constant folding, the
// serial driver and the kernel interpreter so that all three agree. Pure
// functions; thread-safe.
#ifndef RIGEL_COMMON_INT_MATH_H_
#define RIGEL_COMMON_INT_MATH_H_

#include <cstdint>

namespace rigel {

// a % b floored: the result has b's sign (-7 % 3 is 2, 7 % -3 is -2).
// Requires b != 0 (callers report that as an error first).
inline int64_t FlooredMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1, without INT64_MIN % -1 overflowing
  int64_t r = a % b;
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

}  // namespace rigel

#endif  // RIGEL_COMMON_INT_MATH_H_
