#include "worker/sync/hot_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rigel::worker::sync {

Status HotRows::Load(RowIo& io, int p, const kernel::ParamBinding& b, SyncMetrics* m) {
  if (rows_.empty()) return Status::Ok();
  RIGEL_RETURN_IF_ERROR(io.PullInto(p, b, rows_, &start_, m, "hot"));
  base_ = start_;
  return Status::Ok();
}

Replica HotRows::Gather(const kernel::ParamBinding& b) {
  const size_t width = static_cast<size_t>(b.width);
  const size_t values = rows_.size() * width;
  local_.resize(values + (averaged_ ? rows_.size() : 0));
  for (size_t k = 0; k < rows_.size(); ++k) {
    std::memcpy(local_.data() + k * width, b.Row(rows_[k]), sizeof(float) * width);
  }
  if (!averaged_) return Replica{local_.data(), base_.data(), local_.size()};
  // A row this worker wrote since the last merge counts it as a writer.
  for (size_t k = 0; k < rows_.size(); ++k) {
    local_[values + k] =
        std::memcmp(local_.data() + k * width, base_.data() + k * width, sizeof(float) * width) != 0
            ? 1.0f
            : 0.0f;
  }
  merge_base_.assign(base_.begin(), base_.end());
  merge_base_.resize(local_.size(), 0.0f);
  return Replica{local_.data(), merge_base_.data(), local_.size()};
}

Status HotRows::Scatter(const kernel::ParamBinding& b, const std::string& name) {
  const size_t width = static_cast<size_t>(b.width);
  if (averaged_) {
    // local_ is base_ + the writers' summed deltas, then the writers.
    const size_t values = rows_.size() * width;
    for (size_t k = 0; k < rows_.size(); ++k) {
      const float writers = local_[values + k];
      if (writers <= 1.0f) continue;
      float* v = local_.data() + k * width;
      const float* was = base_.data() + k * width;
      for (size_t c = 0; c < width; ++c) v[c] = was[c] + (v[c] - was[c]) / writers;
    }
    std::copy_n(local_.begin(), values, base_.begin());
  }
  for (size_t k = 0; k < rows_.size(); ++k) {
    const float* v = local_.data() + k * width;
    for (size_t c = 0; c < width; ++c) {
      if (!std::isfinite(v[c])) {
        return FailedPrecondition("a merged update of '" + name + "' row " +
                                  std::to_string(rows_[k]) + " is not finite (" +
                                  std::to_string(v[c]) + " at column " + std::to_string(c) + ")");
      }
    }
    std::memcpy(b.Row(rows_[k]), v, sizeof(float) * width);
  }
  return Status::Ok();
}

Status HotRows::Commit(ps::RowExchange& exchange, const cluster::ShardMap& map, int p,
                       const kernel::ParamBinding& b, SyncMetrics* m) {
  if (rows_.empty()) return Status::Ok();
  std::vector<int64_t> keys;
  std::vector<float> deltas;
  const size_t width = static_cast<size_t>(b.width);
  for (size_t k = 0; k < rows_.size(); ++k) {
    const float* now = base_.data() + k * width;
    const float* was = start_.data() + k * width;
    bool any = false;
    const size_t at = deltas.size();
    for (size_t c = 0; c < width; ++c) {
      deltas.push_back(now[c] - was[c]);
      any |= deltas.back() != 0.0f;
    }
    if (any) {
      keys.push_back(rows_[k]);
    } else {
      deltas.resize(at);
    }
  }
  m->bytes["hot"] += static_cast<double>(keys.size() * (8 + sizeof(float) * width));
  return exchange.PushReplicated(p, b.width, map, keys, deltas);
}

}  // namespace rigel::worker::sync
