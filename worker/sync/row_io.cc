#include "worker/sync/row_io.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/seconds.h"

namespace rigel::worker::sync {

using Clock = std::chrono::steady_clock;

void RowIo::Gather(int p, const std::vector<int64_t>& keys, std::vector<float>* out) const {
  const kernel::ParamBinding& b = param(p);
  out->resize(keys.size() * b.width);
  for (size_t k = 0; k < keys.size(); ++k) {
    std::memcpy(out->data() + k * b.width, b.data + keys[k] * b.width, b.width * sizeof(float));
  }
}

void RowIo::Scatter(int p, const std::vector<int64_t>& keys, const float* rows) const {
  const kernel::ParamBinding& b = param(p);
  for (size_t k = 0; k < keys.size(); ++k) {
    std::memcpy(b.data + keys[k] * b.width, rows + k * b.width, b.width * sizeof(float));
  }
}

namespace {
constexpr size_t kPullPieceBytes = size_t{1} << 20;
}  // namespace

Status RowIo::Pull(int p, const std::vector<int64_t>& keys, bool synchronous,
                   std::vector<float>* pulled, SyncMetrics* m, const char* strategy) {
  if (keys.empty()) {
    if (pulled) pulled->clear();
    return Status::Ok();
  }
  auto pull = [&](const std::vector<int64_t>& k) {
    return synchronous ? client_->PullSynchronous(p, k) : client_->Pull(p, k);
  };
  // Rows nobody keeps in a list come in pieces of about kPullPieceBytes:
  // a run that reads many rows once (a test loop's every row) would
  // otherwise hold the whole answer twice, as a message and as floats.
  const size_t piece = std::max<size_t>(
      1024, kPullPieceBytes / (sizeof(float) * static_cast<size_t>(param(p).width)));
  if (pulled != nullptr || keys.size() <= piece) {
    return Take(p, keys, pull(keys), pulled, m, strategy);
  }
  std::vector<int64_t> part;
  for (size_t at = 0; at < keys.size(); at += piece) {
    part.assign(keys.begin() + static_cast<std::ptrdiff_t>(at),
                keys.begin() + static_cast<std::ptrdiff_t>(std::min(keys.size(), at + piece)));
    RIGEL_RETURN_IF_ERROR(Take(p, part, pull(part), nullptr, m, strategy));
  }
  return Status::Ok();
}

Status RowIo::PullInto(int p, const kernel::ParamBinding& b, const std::vector<int64_t>& keys,
                       std::vector<float>* pulled, SyncMetrics* m, const char* strategy) {
  auto t = Clock::now();
  StatusOr<std::vector<float>> rows = client_->PullSynchronous(p, keys).get();
  m->comm_s += SecondsSince(t);
  if (!rows.ok()) return rows.status();
  for (size_t k = 0; k < keys.size(); ++k) {
    std::memcpy(b.Row(keys[k]), rows->data() + k * b.width, b.width * sizeof(float));
  }
  m->bytes[strategy] += static_cast<double>(rows->size() * sizeof(float));
  *pulled = std::move(rows).value();
  return Status::Ok();
}

Status RowIo::Take(int p, const std::vector<int64_t>& keys,
                   std::future<StatusOr<std::vector<float>>> pull, std::vector<float>* pulled,
                   SyncMetrics* m, const char* strategy, const std::vector<int64_t>* keep_local) {
  auto t = Clock::now();
  StatusOr<std::vector<float>> rows = pull.get();
  m->comm_s += SecondsSince(t);
  if (!rows.ok()) return rows.status();
  if (keep_local) {
    // Rows this worker just updated: its own values are newer than those the
    // servers had when they answered (which may lack its last deltas), and
    // the next delta is taken against them, so nothing is counted twice.
    const kernel::ParamBinding& b = param(p);
    size_t j = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      while (j < keep_local->size() && (*keep_local)[j] < keys[k]) ++j;
      if (j < keep_local->size() && (*keep_local)[j] == keys[k]) {
        std::memcpy(rows->data() + k * b.width, b.data + keys[k] * b.width,
                    b.width * sizeof(float));
      }
    }
  }
  Scatter(p, keys, rows->data());
  m->bytes[strategy] += static_cast<double>(rows->size() * sizeof(float));
  if (pulled) *pulled = std::move(rows).value();
  return Status::Ok();
}

Status RowIo::PushDeltas(int p, const std::vector<int64_t>& keys, std::vector<float>* base,
                         SyncMetrics* m, const char* strategy) {
  const int64_t width = param(p).width;
  std::vector<float> now;
  Gather(p, keys, &now);
  std::vector<int64_t> changed;
  changed.reserve(keys.size());
  std::vector<float> deltas(now.size());
  size_t n = 0;  // rows with a delta so far
  for (size_t k = 0; k < keys.size(); ++k) {
    const float* a = now.data() + k * width;
    float* b = base->data() + k * width;
    float* d = deltas.data() + n * width;
    bool any = false;
    for (int64_t c = 0; c < width; ++c) {
      d[c] = a[c] - b[c];
      any |= d[c] != 0.0f;
    }
    if (!any) continue;
    // What the server computes when it adds the delta: the next delta is
    // taken against exactly that.
    for (int64_t c = 0; c < width; ++c) b[c] += d[c];
    changed.push_back(keys[k]);
    ++n;
  }
  deltas.resize(n * width);
  if (changed.empty()) return Status::Ok();
  m->bytes[strategy] += static_cast<double>(deltas.size() * sizeof(float));
  return client_->Push(p, changed, deltas.data());
}

}  // namespace rigel::worker::sync
