#include "transport/loopback_transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/mutex.h"
#include "transport/codec.h"
#include "transport/internal/core.h"

namespace rigel::transport {
namespace internal {

// What travels between loopback endpoints: the encoded header (decoded and
// validated on arrival, as over a socket) and the payload Buffers themselves.
struct LoopbackItem {
  PeerId from;
  std::shared_ptr<const std::string> reply_address;
  Buffer header;
  std::vector<Buffer> frames;
};

// A bounded FIFO with a blocking, deadline-limited push (the back-pressure)
// and a pop that the owner's timer can interrupt.
class LoopbackInbox {
 public:
  enum class PushResult { kOk, kFull, kClosed };

  explicit LoopbackInbox(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  // Responses skip the capacity check: the requester's window bounds them
  // (as ZeroMQ's per-connection queue does for the socket backend).
  PushResult Push(LoopbackItem item, Millis wait, bool response) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (!Room(response) && wait.count() > 0) {
      const auto deadline = std::chrono::steady_clock::now() + wait;
      while (!Room(response)) {
        if (not_full_.WaitUntil(&mu_, deadline) == std::cv_status::timeout) break;
      }
    }
    if (closed_) return PushResult::kClosed;
    if (!response && q_.size() >= capacity_) return PushResult::kFull;
    q_.push_back(std::move(item));
    not_empty_.NotifyOne();
    return PushResult::kOk;
  }

  // Waits until an item arrives, `until` passes, Wake() is called or the inbox
  // closes; returns whether *out was filled.
  bool Pop(LoopbackItem* out, Clock::time_point until) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!closed_ && !woken_ && q_.empty()) {
      if (not_empty_.WaitUntil(&mu_, until) == std::cv_status::timeout) break;
    }
    woken_ = false;
    if (closed_ || q_.empty()) return false;
    *out = std::move(q_.front());
    q_.pop_front();
    not_full_.NotifyOne();
    return true;
  }

  void Wake() RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    woken_ = true;
    not_empty_.NotifyOne();
  }

  void Close() RIGEL_EXCLUDES(mu_) {
    std::deque<LoopbackItem> dropped;  // released outside the lock
    MutexLock lock(&mu_);
    closed_ = true;
    dropped.swap(q_);
    not_empty_.NotifyAll();
    not_full_.NotifyAll();
  }

  bool closed() RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return closed_;
  }

 private:
  // Whether Push may add an item now (or must stop trying: closed).
  bool Room(bool response) const RIGEL_REQUIRES(mu_) {
    return closed_ || response || q_.size() < capacity_;
  }

  const size_t capacity_;
  Mutex mu_;
  CondVar not_empty_, not_full_;
  std::deque<LoopbackItem> q_ RIGEL_GUARDED_BY(mu_);
  bool closed_ RIGEL_GUARDED_BY(mu_) = false;
  bool woken_ RIGEL_GUARDED_BY(mu_) = false;
};

}  // namespace internal

namespace {

using internal::LoopbackInbox;
using internal::LoopbackItem;

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(std::shared_ptr<LoopbackNetwork> net, const PeerId& self,
                    std::shared_ptr<LoopbackInbox> inbox)
      : net_(std::move(net)),
        self_(self),
        address_(std::make_shared<const std::string>("loopback://" + self.ToString())),
        inbox_(std::move(inbox)),
        core_(self.ToString(), net_->options().request_timeout, net_->options().max_in_flight) {
    thread_ = std::thread([this] { Run(); });
  }

  ~LoopbackTransport() override {
    RIGEL_CHECK_MSG(std::this_thread::get_id() != thread_.get_id(),
                    "a transport must not be destroyed by its own handler");
    Close();
  }

  const PeerId& self() const override { return self_; }
  const std::string& address() const override { return *address_; }

  Status Connect(const PeerId& peer, const std::string& address) override {
    if (closed_.load()) return FailedPrecondition(self_.ToString() + ": transport is closed");
    if (address.rfind("loopback://", 0) != 0) {
      return InvalidArgument(fmt::format("'{}' is not a loopback:// address", address));
    }
    return Status::Ok();
  }

  void SetHandler(Handler handler) override { core_.SetHandler(std::move(handler)); }

  Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts) override {
    return SendItem(to, msg, wire::Kind::ONE_WAY, 0, SendWait(opts), false);
  }

  Status Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                 const CallOptions& opts) override {
    if (closed_.load()) return FailedPrecondition(self_.ToString() + ": transport is closed");
    Clock::time_point send_deadline = Clock::now() + SendWait(opts), deadline;
    StatusOr<uint64_t> id =
        core_.AddRequest(to, msg.type(), opts.timeout, std::move(done), send_deadline, &deadline);
    if (!id.ok()) return id.status();
    if (core_.NeedsWake(deadline)) inbox_->Wake();
    Millis left =
        std::max(Millis(0), std::chrono::duration_cast<Millis>(send_deadline - Clock::now()));
    Status st = closed_.load() ? FailedPrecondition(self_.ToString() + ": transport is closed")
                               : SendItem(to, msg, wire::Kind::REQUEST, *id, left, false);
    if (!st.ok()) {
      // If it is no longer pending its callback already ran (timeout/close):
      // report success so the callback stays the only outcome.
      return core_.CancelRequest(*id) ? st : Status::Ok();
    }
    core_.counters().requests_sent.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }

  Status Respond(const InMessage& request, OutMessage response) override {
    if (!request.valid() || !request.is_request()) {
      return InvalidArgument("Respond needs a received request");
    }
    return SendItem(request.from(), response, wire::Kind::RESPONSE, request.request_id(), Millis(0),
                    true);
  }

  TransportStats stats() const override { return core_.Snapshot(); }
  bool InReceiveThread() const override { return core_.OnReceiveThread(); }

  void Close() override {
    if (closed_.exchange(true)) return;
    net_->Leave(self_, inbox_.get());
    inbox_->Close();
    if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
    core_.FailAll(Unavailable(self_.ToString() + ": transport closed"));
  }

 private:
  Millis SendWait(const CallOptions& opts) const {
    return opts.send_timeout.count() < 0 ? net_->options().send_timeout : opts.send_timeout;
  }

  Status SendItem(const PeerId& to, OutMessage& msg, wire::Kind kind, uint64_t id, Millis wait,
                  bool is_response) {
    if (closed_.load()) return FailedPrecondition(self_.ToString() + ": transport is closed");
    RIGEL_RETURN_IF_ERROR(ValidateOutgoing(msg, net_->options().limits));
    msg.header().setKind(kind);
    msg.header().setRequestId(id);
    // The same first frame as over a socket (small frames packed), so the
    // decoder's unpacking is exercised here too; larger frames are shared.
    Frame0 plan = PlanFrame0(msg, net_->options().limits);
    LoopbackItem item{self_, address_, EncodeFrame0ToBuffer(msg, plan), msg.TakeFrames()};
    item.frames.erase(item.frames.begin(), item.frames.begin() + plan.packed);
    size_t bytes = item.header.size();
    for (const Buffer& f : item.frames) bytes += f.size();
    auto& c = core_.counters();
    std::shared_ptr<LoopbackInbox> target = net_->Find(to);
    if (target == nullptr) {
      if (is_response) c.responses_dropped.fetch_add(1, std::memory_order_relaxed);
      return Unavailable(
          fmt::format("{}: no loopback endpoint {}", self_.ToString(), to.ToString()));
    }
    switch (target->Push(std::move(item), wait, is_response)) {
      case LoopbackInbox::PushResult::kOk:
        break;
      case LoopbackInbox::PushResult::kClosed:
        if (is_response) c.responses_dropped.fetch_add(1, std::memory_order_relaxed);
        return Unavailable(fmt::format("{}: {} is closed", self_.ToString(), to.ToString()));
      case LoopbackInbox::PushResult::kFull:
        if (is_response) {
          c.responses_dropped.fetch_add(1, std::memory_order_relaxed);
          return Unavailable(fmt::format("{}: inbox of {} is full; response dropped",
                                         self_.ToString(), to.ToString()));
        }
        c.send_queue_full.fetch_add(1, std::memory_order_relaxed);
        return Unavailable(fmt::format("{}: send queue to {} full for {} ms", self_.ToString(),
                                       to.ToString(), wait.count()));
    }
    c.messages_sent.fetch_add(1, std::memory_order_relaxed);
    c.bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
    return Status::Ok();
  }

  // The receive thread: decode, validate and deliver; expire requests.
  void Run() {
    core_.SetReceiveThread(std::this_thread::get_id());
    Clock::time_point next = Clock::time_point::max();
    while (true) {
      LoopbackItem item;
      // Wake at least once a second even with nothing due (cheap).
      Clock::time_point until = core_.PlanWake(next, Clock::now() + std::chrono::seconds(1));
      if (inbox_->Pop(&item, until)) {
        DropReason reason;
        const Buffer& h = item.header;
        StatusOr<InMessage> msg =
            DecodeMessage(item.from, item.reply_address, {h.data(), h.size()},
                          std::move(item.frames), net_->options().limits, &reason);
        if (msg.ok()) {
          core_.Deliver(std::move(msg).value());
        } else {
          core_.CountDrop(item.from.ToString(), item.from.ToString(), reason, msg.status());
        }
      } else if (inbox_->closed()) {
        return;
      }
      next = core_.ExpireDue(Clock::now());
    }
  }

  std::shared_ptr<LoopbackNetwork> net_;
  const PeerId self_;
  const std::shared_ptr<const std::string> address_;
  std::shared_ptr<LoopbackInbox> inbox_;
  internal::Core core_;
  std::atomic<bool> closed_{false};
  std::thread thread_;
};

}  // namespace

std::shared_ptr<LoopbackNetwork> LoopbackNetwork::Create(const LoopbackOptions& options) {
  return std::make_shared<LoopbackNetwork>(options);
}

StatusOr<std::unique_ptr<Transport>> LoopbackNetwork::Join(const PeerId& self) {
  auto inbox = std::make_shared<LoopbackInbox>(options_.queue_capacity);
  {
    MutexLock lock(&mu_);
    auto [it, inserted] = endpoints_.emplace(self, inbox);
    if (!inserted) {
      return InvalidArgument(fmt::format("loopback endpoint {} already exists", self.ToString()));
    }
  }
  return std::unique_ptr<Transport>(
      std::make_unique<LoopbackTransport>(shared_from_this(), self, std::move(inbox)));
}

std::shared_ptr<internal::LoopbackInbox> LoopbackNetwork::Find(const PeerId& peer) {
  MutexLock lock(&mu_);
  auto it = endpoints_.find(peer);
  return it == endpoints_.end() ? nullptr : it->second;
}

void LoopbackNetwork::Leave(const PeerId& peer, const internal::LoopbackInbox* inbox) {
  MutexLock lock(&mu_);
  auto it = endpoints_.find(peer);
  if (it != endpoints_.end() && it->second.get() == inbox) endpoints_.erase(it);
}

}  // namespace rigel::transport
