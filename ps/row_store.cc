#include "ps/row_store.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>  // std::call_once
#include <vector>

#include "common/hash.h"
#include "common/mutex.h"

namespace rigel::ps {
namespace {

constexpr int kStripeBits = 4;
constexpr int kStripes = 1 << kStripeBits;
// Keys per thread below which a batch is not split: handing a few rows to
// other threads costs more than copying them.
constexpr size_t kParallelBatch = 32768;

int StripeOf(uint64_t hash) { return static_cast<int>(hash >> (64 - kStripeBits)); }

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

// Holds the lock stripes first, first + step, ... (below kStripes) from
// construction to destruction, taken in ascending order.
//
// Which stripe guards a row is computed at run time (from the key's hash, or
// its position in a range), and so is the set a lane holds: the analysis of
// common/thread_annotations.h cannot name either. Taking and releasing the
// set is therefore exempt from it, and the rows themselves carry no
// RIGEL_GUARDED_BY; Lanes is the one place that locks them for a batch.
class HeldStripes {
 public:
  HeldStripes(std::span<Mutex> locks, int first, int step) RIGEL_NO_THREAD_SAFETY_ANALYSIS
      : locks_(locks),
        first_(first),
        step_(step) {
    for (int s = first_; s < kStripes; s += step_) locks_[s].Lock();
  }
  ~HeldStripes() RIGEL_NO_THREAD_SAFETY_ANALYSIS {
    for (int s = first_; s < kStripes; s += step_) locks_[s].Unlock();
  }
  HeldStripes(const HeldStripes&) = delete;
  HeldStripes& operator=(const HeldStripes&) = delete;

 private:
  std::span<Mutex> locks_;
  int first_, step_;
};

// How a batch is shared among threads. Lane l of L owns the stripes s with
// s % L == l: it locks them (in ascending order, so lanes of concurrent
// batches cannot deadlock) and handles the batch's keys in those stripes in
// batch order, so reads of the pushed values and writes of the output stay
// nearly sequential. One lane (the calling thread) below kParallelBatch keys
// per lane.
class Lanes {
 public:
  Lanes(std::span<const int64_t> keys, std::span<Mutex> locks) : keys_(keys), locks_(locks) {
    int most = std::min(kStripes, tbb::this_task_arena::max_concurrency());
    while (lanes_ * 2 <= most && keys.size() / (lanes_ * 2) >= kParallelBatch) lanes_ *= 2;
  }

  // Calls fn(positions) once per lane, in parallel; `positions` are the
  // lane's indices into keys, ascending (all of them for a single lane,
  // as an empty span plus all() == true).
  template <typename Fn>
  void Run(const Fn& fn) const {
    auto lane = [&](int l) {
      std::vector<uint32_t> mine;
      if (lanes_ > 1) {
        for (size_t k = 0; k < keys_.size(); ++k) {
          if (StripeOf(Mix64(static_cast<uint64_t>(keys_[k]))) % lanes_ == l) {
            mine.push_back(static_cast<uint32_t>(k));
          }
        }
      }
      HeldStripes held(locks_, l, lanes_);
      fn(Positions{lanes_ == 1, mine});
    };
    if (lanes_ == 1) {
      lane(0);
    } else {
      tbb::parallel_for(0, lanes_, lane);
    }
  }

  struct Positions {
    bool all;
    std::span<const uint32_t> list;
  };

 private:
  std::span<const int64_t> keys_;
  std::span<Mutex> locks_;
  int lanes_ = 1;
};

// The j-th position of a lane and how many it has.
struct LanePositions {
  LanePositions(const Lanes::Positions& p, size_t keys) : p_(p), n_(p.all ? keys : p.list.size()) {}
  size_t size() const { return n_; }
  uint32_t operator[](size_t j) const { return p_.all ? static_cast<uint32_t>(j) : p_.list[j]; }

 private:
  Lanes::Positions p_;
  size_t n_;
};

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
    Lanes(keys, mu_).Run([&](const Lanes::Positions& lane) {
      LanePositions pos(lane, keys.size());
      for (size_t j = 0; j < pos.size(); ++j) {
        uint32_t k = pos[j];
        std::memcpy(out + k * width_, Row(keys[k]), sizeof(float) * width_);
      }
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
    Lanes(keys, mu_).Run([&](const Lanes::Positions& lane) {
      LanePositions pos(lane, keys.size());
      for (size_t j = 0; j < pos.size(); ++j) {
        uint32_t k = pos[j];
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
  std::array<Mutex, kStripes> mu_;  // lock stripes (Lanes)
};

class HashStore final : public RowStore {
 public:
  HashStore(int64_t width, RowInit init) : RowStore(width), init_(std::move(init)) {}

  Status Pull(std::span<const int64_t> keys, float* out) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    Lanes(keys, locks_).Run([&](const Lanes::Positions& lane) {
      ForRows(keys, LanePositions(lane, keys.size()), out,
              [&](uint32_t k, float* row, Stripe&, uint32_t) {
                std::memcpy(out + k * width_, row, sizeof(float) * width_);
              });
    });
    return Status::Ok();
  }

  Status Push(std::span<const int64_t> keys, const float* values, const UpdateOptions& o) override {
    RIGEL_RETURN_IF_ERROR(Check(keys));
    const int64_t w = width_;
    Lanes(keys, locks_).Run([&](const Lanes::Positions& lane) {
      LanePositions pos(lane, keys.size());
      if (o.rule == UpdateRule::kAdd) {
        // The common case gets its own loop so the row update vectorises
        // without a per-row branch on the rule.
        ForRows(keys, pos, values, [&](uint32_t k, float* row, Stripe&, uint32_t) {
          const float* v = values + k * w;
          for (int64_t c = 0; c < w; ++c) row[c] += v[c];
        });
      } else {
        ForRows(keys, pos, values, [&](uint32_t k, float* row, Stripe& st, uint32_t r) {
          float* h = o.rule == UpdateRule::kAdagrad ? st.State(r, w) : nullptr;
          Apply(row, h, values + k * w, w, o);
        });
      }
    });
    return Status::Ok();
  }

  int64_t rows() const override {
    int64_t n = 0;
    for (int s = 0; s < kStripes; ++s) {
      MutexLock l(&locks_[s]);
      n += stripes_[s].count;
    }
    return n;
  }

  size_t bytes() const override {
    size_t b = sizeof(*this);
    for (int i = 0; i < kStripes; ++i) {
      MutexLock l(&locks_[i]);
      const Stripe& s = stripes_[i];
      b += s.table.capacity() * sizeof(Entry);
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

  // A table slot: the row id (kEmpty when free) and its arena row, side by
  // side so one probe touches one cache line.
  struct Entry {
    int64_t key;
    uint32_t row;
  };

  // One lock stripe (guarded by locks_[its index]): an open-addressing table from row id to a slot
  // in this stripe's arena of row chunks (chunks never move, so row pointers stay valid while the
  // table grows).
  struct Stripe {
    std::vector<Entry> table;  // power-of-two capacity
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

  // A key's hash picks its stripe (high bits) and its home slot (low bits).
  static uint64_t Hash(int64_t key) { return Mix64(static_cast<uint64_t>(key)); }
  static size_t Home(uint64_t hash, size_t mask) { return static_cast<size_t>(hash) & mask; }

  void Grow(Stripe& st) {
    size_t cap = st.table.empty() ? 16 : st.table.size() * 2;
    std::vector<Entry> table(cap, Entry{kEmpty, 0});
    for (const Entry& e : st.table) {
      if (e.key == kEmpty) continue;
      size_t h = Home(Hash(e.key), cap - 1);
      while (table[h].key != kEmpty) h = (h + 1) & (cap - 1);
      table[h] = e;
    }
    st.table.swap(table);
  }

  // The arena row of `key`, created with its initial value if missing.
  uint32_t Find(Stripe& st, int64_t key, uint64_t hash) {
    if ((st.count + 1) * 4 > st.table.size() * 3) Grow(st);  // load factor <= 3/4
    size_t mask = st.table.size() - 1;
    size_t h = Home(hash, mask);
    while (st.table[h].key != kEmpty) {
      if (st.table[h].key == key) return st.table[h].row;
      h = (h + 1) & mask;
    }
    uint32_t r = st.count++;
    if (r / kChunkRows >= st.chunks.size()) {
      st.chunks.push_back(
          std::make_unique_for_overwrite<float[]>(kChunkRows * static_cast<size_t>(width_)));
    }
    init_(key, st.Row(r, width_));
    st.table[h] = Entry{key, r};
    return r;
  }

  // Calls op(k, row pointer, stripe, arena row) for keys[k], k in `pos`, in
  // order, creating missing rows. Rows are scattered over memory, so this is
  // a software pipeline: the table slot of a key is prefetched 2D keys
  // ahead, its row resolved and prefetched D keys ahead (with the caller's
  // row k in `side`, pushed values or the output), and op runs on rows that
  // are in cache by then. The caller holds the locks of every stripe
  // these keys are in.
  template <typename Op>
  void ForRows(std::span<const int64_t> keys, const LanePositions& pos, const float* side,
               const Op& op) {
    constexpr size_t kD = 8;
    const size_t n = pos.size();
    const size_t lines =
        std::min<size_t>((static_cast<size_t>(width_) * sizeof(float) + 63) / 64, 8);
    struct Resolved {
      Stripe* stripe;
      uint32_t row;
    };
    Resolved ring[kD];
    for (size_t j = 0; j < n + kD; ++j) {
      if (j + kD < n) {
        uint64_t h = Hash(keys[pos[j + kD]]);
        const Stripe& st = stripes_[StripeOf(h)];
        if (!st.table.empty()) __builtin_prefetch(&st.table[Home(h, st.table.size() - 1)]);
      }
      if (j >= kD) {  // before slot j % kD is reused below
        const Resolved& r = ring[(j - kD) % kD];
        op(pos[j - kD], r.stripe->Row(r.row, width_), *r.stripe, r.row);
      }
      if (j < n) {
        uint32_t k = pos[j];
        uint64_t h = Hash(keys[k]);
        Stripe& st = stripes_[StripeOf(h)];
        uint32_t r = Find(st, keys[k], h);
        ring[j % kD] = Resolved{&st, r};
        const char* p = reinterpret_cast<const char*>(st.Row(r, width_));
        const char* q = reinterpret_cast<const char*>(side + size_t{k} * width_);
        for (size_t l = 0; l < lines; ++l) {
          __builtin_prefetch(p + 64 * l, 1);
          __builtin_prefetch(q + 64 * l, 1);
        }
      }
    }
  }

  RowInit init_;
  mutable std::array<Mutex, kStripes> locks_;
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

}  // namespace rigel::ps
