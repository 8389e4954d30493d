// FlatIndex: a map from non-negative int64 keys to uint32 slots, open
// addressing with linear probing (no allocation per key), for the parameter
// client's row cache and delta buffers, which look up every key of every
// batch. Not thread-safe (the client locks around it).
#ifndef RIGEL_COMMON_FLAT_INDEX_H_
#define RIGEL_COMMON_FLAT_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/hash.h"

namespace rigel {

class FlatIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The slot of `key`, or kNone.
  uint32_t Find(int64_t key) const {
    if (keys_.empty()) return kNone;
    size_t mask = keys_.size() - 1;
    for (size_t h = Home(key, mask);; h = (h + 1) & mask) {
      if (keys_[h] == key) return slots_[h];
      if (keys_[h] == kEmpty) return kNone;
    }
  }

  // The slot of `key`; if absent, inserts it with slot `next` and sets
  // *inserted.
  uint32_t FindOrInsert(int64_t key, uint32_t next, bool* inserted) {
    if ((size_ + 1) * 10 > keys_.size() * 7) Grow();
    size_t mask = keys_.size() - 1;
    size_t h = Home(key, mask);
    for (; keys_[h] != kEmpty; h = (h + 1) & mask) {
      if (keys_[h] == key) {
        *inserted = false;
        return slots_[h];
      }
    }
    keys_[h] = key;
    slots_[h] = next;
    ++size_;
    *inserted = true;
    return next;
  }

  size_t size() const { return size_; }
  void Clear() {
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    size_ = 0;
  }

 private:
  static constexpr int64_t kEmpty = -1;
  static size_t Home(int64_t key, size_t mask) {
    return static_cast<size_t>(Mix64(static_cast<uint64_t>(key))) & mask;
  }
  void Grow() {
    std::vector<int64_t> keys(keys_.empty() ? 64 : keys_.size() * 2, kEmpty);
    std::vector<uint32_t> slots(keys.size());
    size_t mask = keys.size() - 1;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == kEmpty) continue;
      size_t h = Home(keys_[i], mask);
      while (keys[h] != kEmpty) h = (h + 1) & mask;
      keys[h] = keys_[i];
      slots[h] = slots_[i];
    }
    keys_.swap(keys);
    slots_.swap(slots);
  }

  std::vector<int64_t> keys_;
  std::vector<uint32_t> slots_;
  size_t size_ = 0;
};

}  // namespace rigel

#endif  // RIGEL_COMMON_FLAT_INDEX_H_
