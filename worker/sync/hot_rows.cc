#include "worker/sync/hot_rows.h"

#include <cmath>
#include <cstring>

namespace rigel::worker::sync {

Status HotRows::Load(RowIo& io, int p, SyncMetrics* m) {
  if (rows_.empty()) return Status::Ok();
  RIGEL_RETURN_IF_ERROR(io.Pull(p, rows_, true, &start_, m, "hot"));
  base_ = start_;
  return Status::Ok();
}

Replica HotRows::Gather(const kernel::ParamBinding& b) {
  const size_t width = static_cast<size_t>(b.width);
  local_.resize(rows_.size() * width);
  for (size_t k = 0; k < rows_.size(); ++k) {
    std::memcpy(local_.data() + k * width, b.data + rows_[k] * b.width, sizeof(float) * width);
  }
  return Replica{local_.data(), base_.data(), local_.size()};
}

Status HotRows::Scatter(const kernel::ParamBinding& b, const std::string& name) {
  const size_t width = static_cast<size_t>(b.width);
  for (size_t k = 0; k < rows_.size(); ++k) {
    const float* v = local_.data() + k * width;
    for (size_t c = 0; c < width; ++c) {
      if (!std::isfinite(v[c])) {
        return FailedPrecondition("a merged update of '" + name + "' row " +
                                  std::to_string(rows_[k]) + " is not finite (" +
                                  std::to_string(v[c]) + " at column " + std::to_string(c) + ")");
      }
    }
    std::memcpy(b.data + rows_[k] * b.width, v, sizeof(float) * width);
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
