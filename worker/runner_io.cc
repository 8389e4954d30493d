// Runner's data movement: local parameter rows to and from the servers and
// to and from the neighbouring worker (the 2-D hand-off). Split from
// runner.cc, which decides what moves when.
#include <chrono>
#include <cstring>

#include "transport/message.h"
#include "worker/runner.h"

namespace rigel::worker {

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

void Runner::Gather(int p, const std::vector<int64_t>& keys, std::vector<float>* out) const {
  const kernel::ParamBinding& b = ex_->bindings()[p];
  out->resize(keys.size() * b.width);
  for (size_t k = 0; k < keys.size(); ++k) {
    std::memcpy(out->data() + k * b.width, b.data + keys[k] * b.width, b.width * sizeof(float));
  }
}

void Runner::Scatter(int p, const std::vector<int64_t>& keys, const float* rows) {
  const kernel::ParamBinding& b = ex_->bindings()[p];
  for (size_t k = 0; k < keys.size(); ++k) {
    std::memcpy(b.data + keys[k] * b.width, rows + k * b.width, b.width * sizeof(float));
  }
}

Status Runner::PullRows(int p, const std::vector<int64_t>& keys, bool synchronous,
                        std::vector<float>* pulled, Metrics* m, const char* strategy) {
  if (keys.empty()) {
    if (pulled) pulled->clear();
    return Status::Ok();
  }
  return TakeRows(p, keys, synchronous ? client_->PullSynchronous(p, keys) : client_->Pull(p, keys),
                  pulled, m, strategy);
}

Status Runner::TakeRows(int p, const std::vector<int64_t>& keys,
                        std::future<StatusOr<std::vector<float>>> pull, std::vector<float>* pulled,
                        Metrics* m, const char* strategy, const std::vector<int64_t>* keep_local) {
  auto t = Clock::now();
  StatusOr<std::vector<float>> rows = pull.get();
  m->comm_s += Since(t);
  if (!rows.ok()) return rows.status();
  if (keep_local) {
    // Rows this worker just updated: its own values are newer than those the
    // servers had when they answered (which may lack its last deltas), and
    // the next delta is taken against them, so nothing is counted twice.
    const kernel::ParamBinding& b = ex_->bindings()[p];
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

Status Runner::PushDeltas(int p, const std::vector<int64_t>& keys, std::vector<float>* base,
                          Metrics* m, const char* strategy) {
  const int64_t width = ex_->bindings()[p].width;
  std::vector<float> now;
  Gather(p, keys, &now);
  std::vector<int64_t> changed;
  std::vector<float> deltas;
  for (size_t k = 0; k < keys.size(); ++k) {
    bool any = false;
    for (int64_t c = 0; c < width; ++c) {
      float d = now[k * width + c] - (*base)[k * width + c];
      any |= d != 0.0f;
    }
    if (!any) continue;
    changed.push_back(keys[k]);
    for (int64_t c = 0; c < width; ++c) {
      float& b = (*base)[k * width + c];
      float d = now[k * width + c] - b;
      deltas.push_back(d);
      // What the server computes when it adds the delta: the next delta is
      // taken against exactly that.
      b += d;
    }
  }
  if (changed.empty()) return Status::Ok();
  m->bytes[strategy] += static_cast<double>(deltas.size() * sizeof(float));
  return client_->Push(p, changed, deltas.data());
}

Status Runner::SendColumn(int loop, uint64_t launch, int64_t step, int p, int64_t column,
                          const std::vector<int64_t>& keys, Metrics* m) {
  auto t = Clock::now();
  std::vector<float> rows;
  Gather(p, keys, &rows);
  const uint32_t width = static_cast<uint32_t>(ex_->bindings()[p].width);
  transport::OutMessage msg;
  auto b = msg.header().getBody().initBlockHandoff();
  b.setLoop(static_cast<uint32_t>(loop));
  b.setParam(static_cast<uint32_t>(p));
  b.setBlock(static_cast<uint32_t>(column));
  b.setRowBegin(0);
  b.setRowEnd(keys.size());
  b.setEpoch(static_cast<uint32_t>(launch));
  b.setStep(static_cast<uint64_t>(step));
  m->bytes["rotate"] += static_cast<double>(rows.size() * sizeof(float));
  msg.SetRows(b.initRows(), transport::Buffer::FromVector(std::move(rows)), width);
  int to = (opts_.rank + opts_.workers - 1) % opts_.workers;
  Status st = transport_->Send({transport::Role::kWorker, to}, std::move(msg));
  m->comm_s += Since(t);
  return st;
}

Status Runner::TakeColumn(int loop, uint64_t launch, int64_t step, int p, int64_t column,
                          const std::vector<int64_t>& keys, Metrics* m) {
  auto t = Clock::now();
  transport::InMessage msg;
  {
    std::unique_lock<std::mutex> l(mu_);
    auto key = std::make_tuple(loop, static_cast<uint64_t>(static_cast<uint32_t>(launch)), step, p);
    cv_.wait(l, [&] { return !aborted_.ok() || mailbox_.count(key); });
    if (!aborted_.ok()) return aborted_;
    msg = std::move(mailbox_[key]);
    mailbox_.erase(key);
  }
  m->wait_s += Since(t);
  auto b = msg.header().getBody().getBlockHandoff();
  transport::RowsView rows = msg.Rows(b.getRows());
  const int64_t width = ex_->bindings()[p].width;
  if (b.getBlock() != column || rows.rows != keys.size() || rows.width != width) {
    return Internal("worker " + std::to_string(msg.from().rank) + " handed over block column " +
                    std::to_string(b.getBlock()) + " with " + std::to_string(rows.rows) +
                    " rows of " + std::to_string(rows.width) + "; expected column " +
                    std::to_string(column) + " with " + std::to_string(keys.size()) + " rows of " +
                    std::to_string(width));
  }
  Scatter(p, keys, rows.values.data());
  return Status::Ok();
}

}  // namespace rigel::worker
