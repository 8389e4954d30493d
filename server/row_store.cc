#include "server/row_store.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/hash.h"

namespace rigel::server {
namespace {

constexpr int kStripeBits = 6;
constexpr int kStripes = 1 << kStripeBits;
// Batches smaller than this are handled on the calling thread: handing a
// few rows to other threads costs more than copying them.
constexpr size_t kParallelBatch = 8192;

int StripeOf(int64_t key) {
  return static_cast<int>(Mix64(static_cast<uint64_t>(key)) >> (64 - kStripeBits));
}

void Apply(float* w, float* h, const float* v, int64_t width, const UpdateOptions& o) {
  switch (o.rule) {
    case UpdateRule::kAssign:
      std::memcpy(w, v, sizeof(float) * width);
      return;
    case UpdateRule::kAdd:
      for (int64_t c = 0; c < width; ++c) w[c] += v[c];
      return;
    case UpdateRule::kSgd:
      for (int64_t c = 0; c < width; ++c) w[c] -= o.lr * v[c];
      return;
    case UpdateRule::kAdagrad:
      for (int64_t c = 0; c < width; ++c) {
        h[c] += v[c] * v[c];
        w[c] -= o.lr * v[c] / (std::sqrt(h[c]) + o.eps);
      }
      return;
  }
}

// The positions 0..n-1 of a batch grouped by stripe (a stable counting
// sort, so repeated keys keep their order), with each stripe's range.
struct Grouped {
  std::vector<uint32_t> order;
  std::array<uint32_t, kStripes + 1> start{};
};

Grouped GroupByStripe(std::span<const int64_t> keys) {
  Grouped g;
  std::vector<uint8_t> stripe(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    stripe[k] = static_cast<uint8_t>(StripeOf(keys[k]));
    ++g.start[stripe[k] + 1];
  }
  for (int s = 0; s < kStripes; ++s) g.start[s + 1] += g.start[s];
  g.order.resize(keys.size());
  std::array<uint32_t, kStripes> next;
  std::copy(g.start.begin(), g.start.end() - 1, next.begin());
  for (size_t k = 0; k < keys.size(); ++k) g.order[next[stripe[k]]++] = static_cast<uint32_t>(k);
  return g;
}

// Runs fn(stripe, positions) for every stripe that has keys, in parallel for
// large batches.
template <typename Fn>
void ForEachStripe(const Grouped& g, size_t n, const Fn& fn) {
  auto one = [&](int s) {
    if (g.start[s] == g.start[s + 1]) return;
    fn(s, std::span<const uint32_t>(g.order.data() + g.start[s], g.start[s + 1] - g.start[s]));
  };
  if (n < kParallelBatch) {
    for (int s = 0; s < kStripes; ++s) one(s);
  } else {
    tbb::parallel_for(0, kStripes, one);
  }
}

class RangeStore final : public RowStore {
 public:
  RangeStore(int64_t begin, int64_t end, int64_t width)
      : RowStore(width),
        begin_(begin),
        end_(end),
        values_(static_cast<size_t>((end - begin) * width)) {}

  void Init(const RowInit& init) {
    tbb::parallel_for(begin_, end_, [&](int64_t r) { init(r, Row(r)); });
  }

  Status Pull(std::span<const int64_t> keys, float* out) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    Grouped g = GroupByStripe(keys);
    ForEachStripe(g, keys.size(), [&](int s, std::span<const uint32_t> pos) {
      std::lock_guard<std::mutex> l(mu_[s]);
      for (uint32_t k : pos) std::memcpy(out + k * width_, Row(keys[k]), sizeof(float) * width_);
    });
    return Status::Ok();
  }

  Status Push(std::span<const int64_t> keys, const float* values, const UpdateOptions& o) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    // Only Adagrad pushes touch the state, and only after it exists.
    float* state = nullptr;
    if (o.rule == UpdateRule::kAdagrad) {
      std::call_once(state_once_, [&] { state_.assign(values_.size(), 0.0f); });
      state = state_.data();
    }
    Grouped g = GroupByStripe(keys);
    ForEachStripe(g, keys.size(), [&](int s, std::span<const uint32_t> pos) {
      std::lock_guard<std::mutex> l(mu_[s]);
      for (uint32_t k : pos) {
        size_t off = static_cast<size_t>((keys[k] - begin_) * width_);
        Apply(values_.data() + off, state ? state + off : nullptr, values + k * width_, width_, o);
      }
    });
    return Status::Ok();
  }

  int64_t rows() const override { return end_ - begin_; }
  size_t bytes() const override {
    return sizeof(*this) + values_.capacity() * sizeof(float) + state_.capacity() * sizeof(float);
  }

 private:
  float* Row(int64_t r) { return values_.data() + (r - begin_) * width_; }
  Status Check(std::span<const int64_t> keys) const {
    for (int64_t k : keys) {
      if (k < begin_ || k >= end_) {
        return OutOfRange("row " + std::to_string(k) + " is outside this shard's rows [" +
                          std::to_string(begin_) + ", " + std::to_string(end_) + ")");
      }
    }
    return Status::Ok();
  }

  int64_t begin_, end_;
  std::vector<float> values_;
  std::vector<float> state_;  // Adagrad's sums of squares, made on first use
  std::once_flag state_once_;
  std::array<std::mutex, kStripes> mu_;
};

class HashStore final : public RowStore {
 public:
  HashStore(int64_t width, RowInit init) : RowStore(width), init_(std::move(init)) {}

  Status Pull(std::span<const int64_t> keys, float* out) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    Grouped g = GroupByStripe(keys);
    ForEachStripe(g, keys.size(), [&](int s, std::span<const uint32_t> pos) {
      Stripe& st = stripes_[s];
      std::lock_guard<std::mutex> l(st.mu);
      for (uint32_t k : pos) {
        std::memcpy(out + k * width_, st.Row(Find(st, keys[k]), width_), sizeof(float) * width_);
      }
    });
    return Status::Ok();
  }

  Status Push(std::span<const int64_t> keys, const float* values, const UpdateOptions& o) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    Grouped g = GroupByStripe(keys);
    ForEachStripe(g, keys.size(), [&](int s, std::span<const uint32_t> pos) {
      Stripe& st = stripes_[s];
      std::lock_guard<std::mutex> l(st.mu);
      for (uint32_t k : pos) {
        uint32_t r = Find(st, keys[k]);
        float* h = o.rule == UpdateRule::kAdagrad ? st.State(r, width_) : nullptr;
        Apply(st.Row(r, width_), h, values + k * width_, width_, o);
      }
    });
    return Status::Ok();
  }

  int64_t rows() const override {
    int64_t n = 0;
    for (const Stripe& s : stripes_) {
      std::lock_guard<std::mutex> l(s.mu);
      n += s.count;
    }
    return n;
  }

  size_t bytes() const override {
    size_t b = sizeof(*this);
    for (const Stripe& s : stripes_) {
      std::lock_guard<std::mutex> l(s.mu);
      b += s.keys.capacity() * sizeof(int64_t) + s.slots.capacity() * sizeof(uint32_t);
      b += (s.chunks.capacity() + s.state.capacity()) * sizeof(std::unique_ptr<float[]>);
      size_t chunk_bytes = kChunkRows * static_cast<size_t>(width_) * sizeof(float);
      b += s.chunks.size() * chunk_bytes;
      for (const auto& c : s.state) b += c ? chunk_bytes : 0;
    }
    return b;
  }

 private:
  static constexpr uint32_t kChunkRows = 256;
  static constexpr int64_t kEmpty = -1;

  // One lock stripe: an open-addressing table from row id to a slot in this
  // stripe's arena of row chunks (chunks never move, so row pointers stay
  // valid while the table grows).
  struct Stripe {
    mutable std::mutex mu;
    std::vector<int64_t> keys;    // power-of-two capacity; kEmpty marks a free slot
    std::vector<uint32_t> slots;  // arena row of each key
    uint32_t count = 0;
    std::vector<std::unique_ptr<float[]>> chunks;
    std::vector<std::unique_ptr<float[]>> state;  // Adagrad, per chunk, made on first use

    float* Row(uint32_t r, int64_t width) {
      return chunks[r / kChunkRows].get() + (r % kChunkRows) * width;
    }
    float* State(uint32_t r, int64_t width) {
      size_t c = r / kChunkRows;
      if (state.size() <= c) state.resize(chunks.size());
      if (!state[c]) {
        state[c] = std::make_unique<float[]>(kChunkRows * static_cast<size_t>(width));  // zeroed
      }
      return state[c].get() + (r % kChunkRows) * width;
    }
  };

  static Status Check(std::span<const int64_t> keys) {
    for (int64_t k : keys) {
      if (k < 0) return OutOfRange("row " + std::to_string(k) + " is negative");
    }
    return Status::Ok();
  }

  static size_t Home(int64_t key, size_t mask) {
    // The low bits of the mix (the stripe used the high ones).
    return static_cast<size_t>(Mix64(static_cast<uint64_t>(key))) & mask;
  }

  void Grow(Stripe& st) {
    size_t cap = st.keys.empty() ? 16 : st.keys.size() * 2;
    std::vector<int64_t> keys(cap, kEmpty);
    std::vector<uint32_t> slots(cap);
    for (size_t i = 0; i < st.keys.size(); ++i) {
      if (st.keys[i] == kEmpty) continue;
      size_t h = Home(st.keys[i], cap - 1);
      while (keys[h] != kEmpty) h = (h + 1) & (cap - 1);
      keys[h] = st.keys[i];
      slots[h] = st.slots[i];
    }
    st.keys.swap(keys);
    st.slots.swap(slots);
  }

  // The arena row of `key`, created with its initial value if missing.
  uint32_t Find(Stripe& st, int64_t key) {
    if ((st.count + 1) * 4 > st.keys.size() * 3) Grow(st);  // load factor <= 3/4
    size_t mask = st.keys.size() - 1;
    size_t h = Home(key, mask);
    while (st.keys[h] != kEmpty) {
      if (st.keys[h] == key) return st.slots[h];
      h = (h + 1) & mask;
    }
    uint32_t r = st.count++;
    if (r / kChunkRows >= st.chunks.size()) {
      st.chunks.push_back(
          std::make_unique_for_overwrite<float[]>(kChunkRows * static_cast<size_t>(width_)));
    }
    init_(key, st.Row(r, width_));
    st.keys[h] = key;
    st.slots[h] = r;
    return r;
  }

  RowInit init_;
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace

StatusOr<std::unique_ptr<RowStore>> NewRangeStore(int64_t begin, int64_t end, int64_t width,
                                                  const RowInit& init) {
  if (width < 1) return InvalidArgument("row width must be at least 1");
  if (end <= begin || begin < 0) {
    return InvalidArgument("a range shard needs 0 <= begin < end, got [" + std::to_string(begin) +
                           ", " + std::to_string(end) + ")");
  }
  if ((end - begin) > (int64_t{1} << 36) / width) {
    return InvalidArgument("range shard [" + std::to_string(begin) + ", " + std::to_string(end) +
                           ") of width " + std::to_string(width) + " is too large for one server");
  }
  auto s = std::make_unique<RangeStore>(begin, end, width);
  s->Init(init);
  return std::unique_ptr<RowStore>(std::move(s));
}

std::unique_ptr<RowStore> NewHashStore(int64_t width, RowInit init) {
  return std::make_unique<HashStore>(width, std::move(init));
}

}  // namespace rigel::server
