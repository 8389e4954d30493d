// The radix sorts of common/key_sort.h against std::sort / std::stable_sort.
#include "common/key_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace rigel {
namespace {

std::vector<int64_t> RandomKeys(size_t n, int64_t max, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> keys(n);
  for (auto& k : keys) k = static_cast<int64_t>(rng() % static_cast<uint64_t>(max));
  return keys;
}

TEST(KeySort, SortKeysMatchesStdSort) {
  for (size_t n : {0, 1, 100, 255, 256, 5000, 100000}) {
    for (int64_t max : {int64_t{10}, int64_t{1000000}, int64_t{1} << 44}) {
      std::vector<int64_t> keys = RandomKeys(n, max, n + max), tmp;
      std::vector<int64_t> want = keys;
      std::sort(want.begin(), want.end());
      SortKeys(&keys, &tmp);
      EXPECT_EQ(keys, want) << n << " keys below " << max;
    }
  }
}

TEST(KeySort, SortedOrderIsAStableSort) {
  for (size_t n : {0, 1, 100, 255, 256, 5000, 100000}) {
    for (int64_t max : {int64_t{10}, int64_t{1000000}, int64_t{1} << 44}) {
      std::vector<int64_t> keys = RandomKeys(n, max, 3 * n + max);
      std::vector<uint32_t> want(n);
      std::iota(want.begin(), want.end(), 0u);
      std::stable_sort(want.begin(), want.end(),
                       [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
      EXPECT_EQ(SortedOrder(keys), want) << n << " keys below " << max;
    }
  }
  std::vector<int64_t> sorted = {1, 1, 2, 5, 9};
  EXPECT_EQ(SortedOrder(sorted), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace rigel
