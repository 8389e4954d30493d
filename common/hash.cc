#include "common/hash.h"

#include <cmath>

namespace rigel {

double NormalFromHashes(uint64_t h1, uint64_t h2) {
  // Shift u1 into (0, 1] so log() never sees zero.
  double u1 = 1.0 - UnitDouble(h1);
  double u2 = UnitDouble(h2);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace rigel
