// Sorting the row keys of a batch: the parameter client sorts every pull and
// push batch (the wire carries keys in ascending order), so these are LSD
// radix sorts, 11 bits per pass over only the bits the largest key uses (2
// passes for 10^6 rows, 4 for row ids below 2^44), several times faster than
// std::sort on the 10^4-10^5 keys of a batch. Keys must be non-negative.
// Pure functions; thread-safe.
#ifndef RIGEL_COMMON_KEY_SORT_H_
#define RIGEL_COMMON_KEY_SORT_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace rigel {

namespace key_sort_internal {

inline int BitsOf(uint64_t max) { return 64 - __builtin_clzll(max | 1); }

// One stable counting pass of `in` into `out` on bits [shift, shift + 11)
// of key(x).
template <typename T, typename Key>
void RadixPass(const std::vector<T>& in, std::vector<T>* out, int shift, const Key& key) {
  size_t count[2049] = {};
  for (const T& x : in) ++count[((key(x) >> shift) & 2047) + 1];
  for (int b = 0; b < 2048; ++b) count[b + 1] += count[b];
  for (const T& x : in) (*out)[count[(key(x) >> shift) & 2047]++] = x;
}

}  // namespace key_sort_internal

// Sorts `keys` ascending, using `tmp` as scratch.
inline void SortKeys(std::vector<int64_t>* keys, std::vector<int64_t>* tmp) {
  if (keys->size() < 256) {
    std::sort(keys->begin(), keys->end());
    return;
  }
  int64_t max = *std::max_element(keys->begin(), keys->end());
  int bits = key_sort_internal::BitsOf(static_cast<uint64_t>(max));
  tmp->resize(keys->size());
  for (int shift = 0; shift < bits; shift += 11) {
    key_sort_internal::RadixPass(*keys, tmp, shift, [](int64_t k) { return k; });
    keys->swap(*tmp);
  }
}

// The positions 0..n-1 of `keys` in ascending key order, equal keys in
// input order (a stable sort), and, if `sorted` is given, the keys in that
// order (sorted[i] == keys[order[i]]: callers walk the keys in order without
// scattered reads). Already-sorted input costs one pass.
inline std::vector<uint32_t> SortedOrder(std::span<const int64_t> keys,
                                         std::vector<int64_t>* sorted = nullptr) {
  const size_t n = keys.size();
  std::vector<uint32_t> order(n);
  bool in_order = true;
  for (size_t k = 0; k < n; ++k) {
    order[k] = static_cast<uint32_t>(k);
    if (k > 0 && keys[k] < keys[k - 1]) in_order = false;
  }
  if (in_order || n < 256) {
    if (!in_order) {
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    }
    if (sorted) {
      sorted->resize(n);
      for (size_t i = 0; i < n; ++i) (*sorted)[i] = keys[order[i]];
    }
    return order;
  }
  struct Pair {
    uint64_t key;
    uint32_t pos;
  };
  std::vector<Pair> a(n), b(n);
  uint64_t max = 0;
  for (size_t k = 0; k < n; ++k) {
    a[k] = Pair{static_cast<uint64_t>(keys[k]), static_cast<uint32_t>(k)};
    max = std::max(max, a[k].key);
  }
  int bits = key_sort_internal::BitsOf(max);
  for (int shift = 0; shift < bits; shift += 11) {
    key_sort_internal::RadixPass(a, &b, shift, [](const Pair& p) { return p.key; });
    a.swap(b);
  }
  if (sorted) sorted->resize(n);
  for (size_t k = 0; k < n; ++k) {
    order[k] = a[k].pos;
    if (sorted) (*sorted)[k] = static_cast<int64_t>(a[k].key);
  }
  return order;
}

}  // namespace rigel

#endif  // RIGEL_COMMON_KEY_SORT_H_
