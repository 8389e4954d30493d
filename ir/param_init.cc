#include "ir/param_init.h"

#include <cmath>

#include "common/hash.h"

namespace rigel::ir {

float InitialValue(const ir::ParamDecl& p, int64_t row, int64_t col) {
  auto r = static_cast<uint64_t>(row), c = static_cast<uint64_t>(col);
  switch (p.init) {
    case ir::ParamDecl::kZeros:
      return 0.0f;
    case ir::ParamDecl::kFill:
      return static_cast<float>(p.a);
    case ir::ParamDecl::kNormal:
      return static_cast<float>(
          p.a + p.b * NormalFromHashes(HashCoords(p.seed, 1, r, c), HashCoords(p.seed, 2, r, c)));
    case ir::ParamDecl::kUniform:
      return static_cast<float>(p.a + (p.b - p.a) * UnitDouble(HashCoords(p.seed, 3, r, c)));
    case ir::ParamDecl::kRandInt:
      // floor of a value in [0, n): an integer in [0, n), exact below 2^24.
      return static_cast<float>(std::floor(UnitDouble(HashCoords(p.seed, 4, r, c)) * p.a));
  }
  return 0.0f;
}

void InitialRow(const ir::ParamDecl& p, int64_t row, float* out) {
  int64_t w = p.width > 0 ? p.width : 1;
  for (int64_t c = 0; c < w; ++c) out[c] = InitialValue(p, row, c);
}

}  // namespace rigel::ir
