#include "worker/sync/handoff.h"

#include <chrono>
#include <string>
#include <thread>

#include "common/seconds.h"
#include "transport/message.h"
#include "worker/wire/messages.h"

namespace rigel::worker::sync {

using Clock = std::chrono::steady_clock;

bool Handoffs::Put(const transport::InMessage& msg) {
  if (!msg.Is<worker::wire::BlockHandoff>()) return false;
  auto b = msg.Body<worker::wire::BlockHandoff>();
  MutexLock l(&mu_);
  mailbox_[{static_cast<int>(b.getLoop()), b.getEpoch(), static_cast<int64_t>(b.getStep()),
            static_cast<int>(b.getParam())}] = msg;
  cv_.NotifyAll();
  return true;
}

void Handoffs::Abort(const Status& why) {
  MutexLock l(&mu_);
  if (aborted_.ok()) aborted_ = why.ok() ? Unavailable("the job ended") : why;
  cv_.NotifyAll();
}

Status Handoffs::Send(const ColumnId& id, const std::vector<int64_t>& keys, SyncMetrics* m) {
  auto t = Clock::now();
  std::vector<float> rows;
  io_->Gather(id.param, keys, &rows);
  const uint32_t width = static_cast<uint32_t>(io_->param(id.param).width);
  transport::OutMessage msg;
  auto b = msg.InitBody<worker::wire::BlockHandoff>();
  b.setLoop(static_cast<uint32_t>(id.loop));
  b.setParam(static_cast<uint32_t>(id.param));
  b.setBlock(static_cast<uint32_t>(id.column));
  b.setRowBegin(0);
  b.setRowEnd(keys.size());
  b.setEpoch(static_cast<uint32_t>(id.launch));
  b.setStep(static_cast<uint64_t>(id.step));
  m->bytes["rotate"] += static_cast<double>(rows.size() * sizeof(float));
  msg.SetRows(b.initRows(), transport::Buffer::FromVector(std::move(rows)), width);
  const int to = (rank_ + workers_ - 1) % workers_;
  Status st = transport_->Send({transport::Role::kWorker, to}, std::move(msg));
  m->comm_s += SecondsSince(t);
  if (st.ok() && pause_.count() > 0) {
    // The column is on its way and this worker has not gone on: a kill now
    // lands in the middle of the hand-off (the receiver may hold it untaken).
    if (pause_log_) {
      *pause_log_ << "rigel-worker " << rank_ << ": handed block column " << id.column
                  << " of parameter " << id.param << " (launch " << id.launch << ", step "
                  << id.step << ") to worker " << to << "; pausing " << pause_.count()
                  << " ms (RIGEL_TEST_HANDOFF_PAUSE_MS)" << std::endl;
    }
    std::this_thread::sleep_for(pause_);
    if (pause_log_) *pause_log_ << "rigel-worker " << rank_ << ": pause over" << std::endl;
  }
  return st;
}

Status Handoffs::Take(const ColumnId& id, const std::vector<int64_t>& keys, SyncMetrics* m) {
  auto t = Clock::now();
  transport::InMessage msg;
  {
    MutexLock l(&mu_);
    // The wire's epoch is 32 bits wide.
    auto key = std::make_tuple(id.loop, static_cast<uint64_t>(static_cast<uint32_t>(id.launch)),
                               id.step, id.param);
    while (aborted_.ok() && !mailbox_.count(key)) cv_.Wait(&mu_);
    if (!aborted_.ok()) return aborted_;
    msg = std::move(mailbox_[key]);
    mailbox_.erase(key);
  }
  m->wait_s += SecondsSince(t);
  auto b = msg.Body<worker::wire::BlockHandoff>();
  transport::RowsView rows = msg.Rows(b.getRows());
  const int64_t width = io_->param(id.param).width;
  if (b.getBlock() != id.column || rows.rows != keys.size() || rows.width != width) {
    return Internal("worker " + std::to_string(msg.from().rank) + " handed over block column " +
                    std::to_string(b.getBlock()) + " with " + std::to_string(rows.rows) +
                    " rows of " + std::to_string(rows.width) + "; expected column " +
                    std::to_string(id.column) + " with " + std::to_string(keys.size()) +
                    " rows of " + std::to_string(width));
  }
  io_->Scatter(id.param, keys, rows.values.data());
  return Status::Ok();
}

}  // namespace rigel::worker::sync
