#include "ps/cache.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/key_sort.h"
#include "ps/wire/messages.h"

namespace rigel::ps {

using transport::Buffer;
using transport::InMessage;
using transport::OutMessage;

// One exchange's part of one cache for one server.
struct RowCache::Out {
  std::vector<uint64_t> push_keys;
  std::vector<float> push_rows;
  std::vector<uint8_t> push_scaled;  // per push: 1 where the row's merges are scaled
  std::vector<uint64_t> fetch_keys, drop_keys;
  bool reset = false;
};

namespace {

bool Contains(std::span<const int64_t> sorted, int64_t row) {
  return std::binary_search(sorted.begin(), sorted.end(), row);
}

// Sorts keys ascending (the wire wants them so), moving each pushed row with
// its key.
void SortOut(int64_t width, std::vector<uint64_t>* push_keys, std::vector<float>* push_rows,
             std::vector<uint8_t>* push_scaled, std::vector<uint64_t>* fetch,
             std::vector<uint64_t>* drop) {
  std::sort(fetch->begin(), fetch->end());
  std::sort(drop->begin(), drop->end());
  if (std::is_sorted(push_keys->begin(), push_keys->end())) return;
  std::vector<uint32_t> order(push_keys->size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return (*push_keys)[a] < (*push_keys)[b]; });
  std::vector<uint64_t> keys(order.size());
  std::vector<float> rows(push_rows->size());
  std::vector<uint8_t> scaled(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    keys[k] = (*push_keys)[order[k]];
    scaled[k] = (*push_scaled)[order[k]];
    std::memcpy(rows.data() + k * width, push_rows->data() + order[k] * width,
                sizeof(float) * width);
  }
  push_keys->swap(keys);
  push_rows->swap(rows);
  push_scaled->swap(scaled);
}

// BytesRef frames carry no alignment promise: copied out.
template <typename T>
std::vector<T> FromBytes(const Buffer& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace

RowCache::RowCache(int param, const cluster::ShardMap& map, float* values, int64_t capacity,
                   uint32_t push_bound)
    : param_(param),
      map_(map),
      values_(values),
      rows_(map.params()[param].rows),
      width_(map.params()[param].width),
      capacity_(std::max<int64_t>(capacity, 1)),
      whole_(capacity_ >= rows_),
      push_bound_(std::max<uint32_t>(push_bound, 1)) {
  wire::RegisterMessages();
  // The cells are not reserved up to the capacity: they grow as rows come
  // (and move, which the worker's binding follows: data()). Reserved,
  // FM 2^22 x 16 on 2 workers peaked at 335 MB a worker instead of 289 MB
  // although its caches held the same 164k rows.
  slot_.assign(static_cast<size_t>(rows_), -1);
}

int32_t RowCache::NewSlot(int64_t row, CellState state) {
  int32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<int32_t>(row_.size());
    row_.push_back(-1);
    state_.push_back(kFree);
    base_.resize(base_.size() + static_cast<size_t>(width_));
    if (values_ == nullptr) cells_.resize(cells_.size() + static_cast<size_t>(width_));
    version_.push_back(0);
    own_.push_back(0);
    updates_.push_back(0);
    started_at_.push_back(-1);
    used_.push_back(0);
    single_bit_.push_back(0);
  }
  const size_t i = static_cast<size_t>(s);
  row_[i] = row;
  state_[i] = state;
  slot_[static_cast<size_t>(row)] = s;
  updates_[i] = 0;
  started_at_[i] = -1;
  used_[i] = 0;
  version_[i] = 0;
  own_[i] = 0;
  single_bit_[i] = Contains(single_, row) ? 1 : 0;
  if (state == kAsked) ++asked_count_;
  return s;
}

void RowCache::FreeCell(int32_t s) {
  const size_t i = static_cast<size_t>(s);
  if (state_[i] == kAsked) --asked_count_;
  slot_[static_cast<size_t>(row_[i])] = -1;
  row_[i] = -1;
  state_[i] = kFree;
  updates_[i] = 0;
  free_.push_back(s);
}

void RowCache::Exclude(std::span<const int64_t> rows) {
  for (int64_t r : rows) {
    int32_t s = slot_[static_cast<size_t>(r)];
    if (s < 0) {
      NewSlot(r, kExcluded);
      continue;
    }
    const size_t i = static_cast<size_t>(s);
    if (state_[i] == kExcluded) continue;
    // Held, or asked for (its answer is then ignored, Apply): the servers
    // forget this worker holds it.
    if (state_[i] == kAsked) --asked_count_;
    drops_.push_back(r);
    state_[i] = kExcluded;
    updates_[i] = 0;
  }
}

void RowCache::SetSingleWriter(std::span<const int64_t> rows) {
  single_.assign(rows.begin(), rows.end());
  for (size_t s = 0; s < row_.size(); ++s) {
    single_bit_[s] = row_[s] >= 0 && Contains(single_, row_[s]) ? 1 : 0;
  }
}

void RowCache::SetScaledRows(std::span<const int64_t> rows) {
  scaled_.assign(rows.begin(), rows.end());
}

void RowCache::Reset() {
  for (size_t s = 0; s < row_.size(); ++s) {
    if (state_[s] == kHeld || state_[s] == kAsked) FreeCell(static_cast<int32_t>(s));
  }
  started_.clear(), aging_.clear();
  due_.clear(), drops_.clear(), last_next_.clear();
  hand_ = 0;
  loaded_ = false;
  reset_ = true;
}

void RowCache::RestoreLocal() {
  if (values_ == nullptr) return;  // only the cache writes its cells
  for (size_t s = 0; s < row_.size(); ++s) {
    if (state_[s] != kHeld) continue;
    std::memcpy(values_ + row_[s] * width_, base_.data() + s * width_, sizeof(float) * width_);
  }
}

// One merge: the delta since the base goes out, and the base moves exactly
// as the server's row will, so the next delta is taken against that.
void RowCache::PushRow(int64_t row, std::vector<Out>* out) {
  const int32_t s = slot_[static_cast<size_t>(row)];
  updates_[static_cast<size_t>(s)] = 0;
  float* local = Local(row, s);
  float* base = base_.data() + static_cast<size_t>(s) * width_;
  Out& o = (*out)[static_cast<size_t>(map_.ServerOf(param_, row))];
  const size_t at = o.push_rows.size();
  o.push_rows.resize(at + static_cast<size_t>(width_));
  float* d = o.push_rows.data() + at;
  bool any = false;
  for (int64_t c = 0; c < width_; ++c) {
    d[c] = local[c] - base[c];
    any |= d[c] != 0.0f;
  }
  if (!any) {
    o.push_rows.resize(at);
    return;
  }
  for (int64_t c = 0; c < width_; ++c) base[c] += d[c];
  o.push_scaled.push_back(Contains(scaled_, row) ? 1 : 0);
  o.push_keys.push_back(static_cast<uint64_t>(row));
  ++own_[s];
  ++stats_.pushed;
}

// Rows whose oldest unpushed update is `push_age_` exchanges old. An entry
// whose row was pushed since (and maybe started again: a later entry) is
// stale and dropped.
void RowCache::PushAged(int64_t step, std::vector<Out>* out) {
  for (int64_t r : started_) {
    const int32_t s = slot_[static_cast<size_t>(r)];
    if (s < 0) continue;
    started_at_[s] = step;
    aging_.emplace_back(r, step);
  }
  started_.clear();
  while (!aging_.empty() && aging_.front().second + push_age_ <= step) {
    const auto [r, at] = aging_.front();
    aging_.pop_front();
    const int32_t s = slot_[static_cast<size_t>(r)];
    if (s < 0) continue;
    const size_t i = static_cast<size_t>(s);
    if (state_[i] != kHeld || started_at_[i] != at || updates_[i] == 0 || single_bit_[i]) continue;
    started_at_[i] = -1;
    PushRow(r, out);
  }
}

void RowCache::Prepare(std::span<const int64_t> next, bool flush, int64_t step,
                       std::vector<Out>* out) {
  if (reset_) {
    for (Out& o : *out) o.reset = true;
    reset_ = false;
  }
  for (int64_t r : drops_) {
    (*out)[static_cast<size_t>(map_.ServerOf(param_, r))].drop_keys.push_back(
        static_cast<uint64_t>(r));
  }
  drops_.clear();
  if (flush) {
    for (size_t s = 0; s < row_.size(); ++s) {
      if (state_[s] == kHeld && updates_[s] > 0) PushRow(row_[s], out);
    }
  } else {
    for (int64_t r : due_) {
      // Listed once per crossing; pushed (count reset) since, or excluded.
      // A row with one writer waits for the flush.
      const int32_t s = slot_[static_cast<size_t>(r)];
      if (s < 0) continue;
      const size_t i = static_cast<size_t>(s);
      if (state_[i] == kHeld && updates_[i] >= push_bound_ && !single_bit_[i]) PushRow(r, out);
    }
    if (push_age_ > 0) PushAged(step, out);
  }
  due_.clear();
  if (flush) {
    started_.clear();
    aging_.clear();
  }
  Fetch(next, out);
  for (Out& o : *out) {
    SortOut(width_, &o.push_keys, &o.push_rows, &o.push_scaled, &o.fetch_keys, &o.drop_keys);
  }
}

void RowCache::Fetch(std::span<const int64_t> next, std::vector<Out>* out) {
  std::vector<int64_t> want;
  if (whole_) {
    if (loaded_) return;
    loaded_ = true;
    for (int64_t r = 0; r < rows_; ++r) {
      if (slot_[static_cast<size_t>(r)] < 0) want.push_back(r);
    }
    // Every cell is made now, once: exactly as many as the rows, where
    // growing them one by one would leave up to half of each array unused
    // (word2vec's two caches: 10.7 MB for 7.7 MB of cells).
    const size_t n = row_.size() + want.size(), w = static_cast<size_t>(width_);
    row_.reserve(n);
    state_.reserve(n);
    base_.reserve(n * w);
    if (values_ == nullptr) cells_.reserve(n * w);
    version_.reserve(n);
    own_.reserve(n);
    updates_.reserve(n);
    started_at_.reserve(n);
    used_.reserve(n);
    single_bit_.reserve(n);
  } else {
    for (int64_t r : next) {
      const int32_t s = slot_[static_cast<size_t>(r)];
      if (s < 0) {
        want.push_back(r);
      } else if (state_[static_cast<size_t>(s)] == kHeld) {
        used_[static_cast<size_t>(s)] = 1;
      }
    }
    const int64_t need = held() + static_cast<int64_t>(want.size()) - capacity_;
    if (need > 0) Evict(need, next, out);
    last_next_.assign(next.begin(), next.end());
  }
  for (int64_t r : want) {
    NewSlot(r, kAsked);
    (*out)[static_cast<size_t>(map_.ServerOf(param_, r))].fetch_keys.push_back(
        static_cast<uint64_t>(r));
  }
}

// Clock: a row used since the hand last passed is spared once; rows the
// mini-batch under way or the coming one touches, rows asked for and
// excluded rows are never taken. Gives up after two turns (the capacity is
// then smaller than two mini-batches' rows, and the cache holds more than
// it for a while).
void RowCache::Evict(int64_t need, std::span<const int64_t> next, std::vector<Out>* out) {
  const size_t slots = row_.size();
  for (size_t seen = 0; need > 0 && seen < 2 * slots; ++seen) {
    const size_t s = hand_;
    hand_ = (hand_ + 1) % slots;
    const int64_t r = row_[s];
    if (state_[s] != kHeld || Contains(next, r) || Contains(last_next_, r)) continue;
    if (used_[s]) {
      used_[s] = 0;
      continue;
    }
    if (updates_[s] > 0) PushRow(r, out);
    (*out)[static_cast<size_t>(map_.ServerOf(param_, r))].drop_keys.push_back(
        static_cast<uint64_t>(r));
    FreeCell(static_cast<int32_t>(s));
    ++stats_.evicted;
    --need;
  }
}

Status RowCache::Apply(const InMessage& msg, wire::RowSyncReplySection::Reader sec) {
  std::span<const uint64_t> keys = msg.Keys(sec.getKeys());
  transport::RowsView rows = msg.Rows(sec.getRows());
  if (!keys.empty() && rows.width != width_) {
    return Internal("a rowSync answer has rows of width " + std::to_string(rows.width) + " for '" +
                    map_.params()[param_].name + "' (width " + std::to_string(width_) + ")");
  }
  const std::vector<uint64_t> versions = FromBytes<uint64_t>(msg.Bytes(sec.getVersions()));
  for (size_t k = 0; k < keys.size(); ++k) {
    const int64_t r = static_cast<int64_t>(keys[k]);
    if (r >= rows_ || excluded(r)) continue;  // a drop is on its way
    std::span<const float> v = rows.row(k);
    int32_t s = slot_[static_cast<size_t>(r)];
    if (s < 0 || state_[static_cast<size_t>(s)] == kAsked) {
      // Asked for, or (not asked) a row the servers still count as held.
      if (s < 0) {
        s = NewSlot(r, kHeld);
      } else {
        state_[static_cast<size_t>(s)] = kHeld;
        --asked_count_;
      }
      std::memcpy(Local(r, s), v.data(), sizeof(float) * width_);
      ++stats_.fetched;
    } else {
      // The server's value plus what this worker has not merged yet.
      float* local = Local(r, s);
      float* base = base_.data() + static_cast<size_t>(s) * width_;
      for (int64_t c = 0; c < width_; ++c) {
        const double lacked = static_cast<double>(v[c]) - base[c];
        stats_.drift_sq += lacked * lacked;
        stats_.norm_sq += static_cast<double>(v[c]) * v[c];
        local[c] = v[c] + (local[c] - base[c]);
      }
      ++stats_.refreshed;
    }
    std::memcpy(base_.data() + static_cast<size_t>(s) * width_, v.data(), sizeof(float) * width_);
    version_[s] = versions[k];
    own_[s] = 0;
  }
  stats_.bytes_in += keys.size() * (8 + 8 + sizeof(float) * width_);
  std::span<const uint64_t> audit = msg.Keys(sec.getAuditKeys());
  const std::vector<uint64_t> audit_versions =
      FromBytes<uint64_t>(msg.Bytes(sec.getAuditVersions()));
  for (size_t k = 0; k < audit.size(); ++k) {
    const int64_t r = static_cast<int64_t>(audit[k]);
    if (r >= rows_ || !holds(r)) continue;
    const int32_t s = slot_[static_cast<size_t>(r)];
    const int64_t lag = static_cast<int64_t>(audit_versions[k]) -
                        static_cast<int64_t>(version_[s]) - static_cast<int64_t>(own_[s]);
    stats_.max_lag = std::max(stats_.max_lag, lag);
    ++stats_.audited;
  }
  return Status::Ok();
}

RowExchange::RowExchange(transport::Transport* transport, int servers, transport::CallOptions call)
    : transport_(transport), servers_(servers), call_(call) {}

Status RowExchange::Send(std::span<RowCache* const> caches,
                         const std::vector<std::span<const int64_t>>& next, bool flush,
                         uint32_t staleness, uint64_t step) {
  if (!replies_.empty()) return Internal("a row exchange is already in flight");
  std::vector<OutMessage> msgs(static_cast<size_t>(servers_));
  std::vector<wire::RowSync::Builder> req;
  for (OutMessage& m : msgs) {
    auto r = m.InitBody<ps::wire::RowSync>();
    r.setStaleness(staleness);
    r.setStep(step);
    r.setAudit(audit_);
    r.initSections(static_cast<unsigned>(caches.size()));
    req.push_back(r);
  }
  for (size_t i = 0; i < caches.size(); ++i) {
    RowCache& c = *caches[i];
    std::vector<RowCache::Out> out(static_cast<size_t>(servers_));
    c.Prepare(i < next.size() ? next[i] : std::span<const int64_t>{}, flush,
              static_cast<int64_t>(step), &out);
    for (int s = 0; s < servers_; ++s) {
      RowCache::Out& o = out[static_cast<size_t>(s)];
      c.stats_.bytes_out += (o.push_keys.size() + o.fetch_keys.size() + o.drop_keys.size()) * 8 +
                            o.push_rows.size() * sizeof(float);
      auto sec = req[static_cast<size_t>(s)].getSections()[static_cast<unsigned>(i)];
      sec.setParam(static_cast<uint32_t>(c.param()));
      sec.setReset(o.reset);
      OutMessage& m = msgs[static_cast<size_t>(s)];
      m.SetKeys(sec.initPushKeys(), Buffer::FromVector(std::move(o.push_keys)));
      m.SetRows(sec.initPushRows(), Buffer::FromVector(std::move(o.push_rows)),
                static_cast<uint32_t>(c.width_));
      m.SetBytes(sec.initPushScaled(), Buffer::FromVector(std::move(o.push_scaled)));
      m.SetKeys(sec.initFetchKeys(), Buffer::FromVector(std::move(o.fetch_keys)));
      m.SetKeys(sec.initDropKeys(), Buffer::FromVector(std::move(o.drop_keys)));
    }
  }
  caches_.assign(caches.begin(), caches.end());
  for (int s = 0; s < servers_; ++s) {
    replies_.push_back(transport_->RequestAsync(transport::PeerId{transport::Role::kServer, s},
                                                std::move(msgs[static_cast<size_t>(s)]), call_));
  }
  return Status::Ok();
}

Status RowExchange::Receive() {
  Status first;
  for (size_t s = 0; s < replies_.size(); ++s) {
    StatusOr<InMessage> r = replies_[s].get();
    if (!first.ok()) continue;
    if (!r.ok()) {
      first = r.status();
      continue;
    }
    if (!r->Is<ps::wire::RowSyncReply>()) {
      first = Internal(std::string("a rowSync was answered with ") + r->type_name());
      continue;
    }
    auto sections = r->Body<ps::wire::RowSyncReply>().getSections();
    if (sections.size() != caches_.size()) {
      first = Internal("a rowSync answer has " + std::to_string(sections.size()) +
                       " sections for " + std::to_string(caches_.size()) + " parameters");
      continue;
    }
    for (size_t i = 0; i < caches_.size() && first.ok(); ++i) {
      first = caches_[i]->Apply(*r, sections[static_cast<unsigned>(i)]);
    }
  }
  replies_.clear();
  caches_.clear();
  return first;
}

Status RowExchange::PushReplicated(int param, int64_t width, const cluster::ShardMap& map,
                                   std::span<const int64_t> keys, std::span<const float> deltas) {
  if (!replies_.empty()) return Internal("a row exchange is already in flight");
  std::vector<std::vector<uint64_t>> k(static_cast<size_t>(servers_));
  std::vector<std::vector<float>> v(static_cast<size_t>(servers_));
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t s = static_cast<size_t>(map.ServerOf(param, keys[i]));
    k[s].push_back(static_cast<uint64_t>(keys[i]));
    v[s].insert(v[s].end(), deltas.begin() + static_cast<ptrdiff_t>(i * width),
                deltas.begin() + static_cast<ptrdiff_t>((i + 1) * width));
  }
  std::vector<std::future<StatusOr<InMessage>>> replies;
  for (int s = 0; s < servers_; ++s) {
    if (k[static_cast<size_t>(s)].empty()) continue;
    OutMessage m;
    auto r = m.InitBody<ps::wire::RowSync>();
    r.setReplica(true);
    auto sec = r.initSections(1)[0];
    sec.setParam(static_cast<uint32_t>(param));
    m.SetKeys(sec.initPushKeys(), Buffer::FromVector(std::move(k[static_cast<size_t>(s)])));
    m.SetRows(sec.initPushRows(), Buffer::FromVector(std::move(v[static_cast<size_t>(s)])),
              static_cast<uint32_t>(width));
    m.SetKeys(sec.initFetchKeys(), Buffer::FromVector(std::vector<uint64_t>{}));
    m.SetKeys(sec.initDropKeys(), Buffer::FromVector(std::vector<uint64_t>{}));
    m.SetBytes(sec.initPushScaled(), Buffer::FromVector(std::vector<uint8_t>{}));
    replies.push_back(transport_->RequestAsync(transport::PeerId{transport::Role::kServer, s},
                                               std::move(m), call_));
  }
  Status first;
  for (auto& f : replies) {
    StatusOr<InMessage> r = f.get();
    if (first.ok() && !r.ok()) first = r.status();
  }
  return first;
}

}  // namespace rigel::ps
