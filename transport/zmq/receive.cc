// The ZeroMQ backend's receive thread: polls the inbox, decodes and
// validates each message, delivers it, watches handshake failures.
#include <fmt/format.h>
#include <unistd.h>
#include <zmq.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>

#include "transport/zmq/address.h"
#include "transport/zmq/transport_impl.h"

namespace rigel::transport::zmq_internal {
namespace {

// Received payload frames of one message; the message's Buffers alias this
// object, so each frame's memory lives until the last Buffer of the message.
struct ReceivedFrames {
  explicit ReceivedFrames(size_t n) : count(n) {
    if (n > kInline) heap.reset(new zmq_msg_t[n]);
    msgs = n > kInline ? heap.get() : inline_msgs;
    for (size_t i = 0; i < n; ++i) zmq_msg_init(&msgs[i]);
  }
  ~ReceivedFrames() {
    for (size_t i = 0; i < count; ++i) zmq_msg_close(&msgs[i]);
  }
  static constexpr size_t kInline = 4;
  zmq_msg_t inline_msgs[kInline];
  std::unique_ptr<zmq_msg_t[]> heap;
  zmq_msg_t* msgs;
  size_t count;
};

}  // namespace

void ZmqTransport::Run() {
  core_.SetReceiveThread(std::this_thread::get_id());
  zmq_pollitem_t items[3] = {{inbox_, 0, ZMQ_POLLIN, 0},
                             {inbox_monitor_, 0, ZMQ_POLLIN, 0},
                             {nullptr, wake_fd_, ZMQ_POLLIN, 0}};
  Clock::time_point next = Clock::time_point::max();
  Clock::time_point next_sweep = Clock::now() + std::chrono::seconds(1);
  while (!stop_.load()) {
    Clock::time_point now = Clock::now();
    Clock::time_point until = core_.PlanWake(next, now + std::chrono::seconds(1));
    long timeout_ms =
        until <= now ? 0 : std::chrono::duration_cast<Millis>(until - now).count() + 1;
    int rc = zmq_poll(items, 3, timeout_ms);
    if (rc < 0 && zmq_errno() == ETERM) break;
    if (rc > 0) {
      if (items[2].revents & ZMQ_POLLIN) {
        uint64_t n;
        (void)!::read(wake_fd_, &n, sizeof n);
      }
      if (items[0].revents & ZMQ_POLLIN) ReceiveBatch();
      if (items[1].revents & ZMQ_POLLIN) DrainInboxMonitor();
    }
    now = Clock::now();
    next = core_.ExpireDue(now);
    if (now >= next_sweep) {
      SweepPeerMonitors();
      next_sweep = now + std::chrono::seconds(1);
    }
  }
}

void ZmqTransport::SweepPeerMonitors() {
  // libzmq blocks the emitting I/O thread when a monitor's queue is full, so
  // peer monitors must be drained even when nothing is being sent.
  std::vector<std::pair<PeerId, std::shared_ptr<Peer>>> peers;
  {
    MutexLock lock(&peers_mu_);
    peers.assign(peers_.begin(), peers_.end());
  }
  for (auto& [id, p] : peers) {
    Status failed;
    if (!p->mu.TryLock()) continue;  // a sender holds it and checks the monitor itself
    CheckPeerMonitor(*p, id, &failed, true);
    p->mu.Unlock();
    if (!failed.ok()) core_.FailPeer(id, failed);
  }
}

void ZmqTransport::ReceiveBatch() {
  for (int m = 0; m < kReceiveBatch && !stop_.load(); ++m) {
    if (zmq_msg_recv(&scratch_[0], inbox_, ZMQ_DONTWAIT) < 0) return;
    // A multipart message is delivered whole, so its other frames are here
    // already. Frames beyond the limit are received and released at once.
    size_t n = 1;
    bool too_many = false;
    bool more = zmq_msg_more(&scratch_[0]);
    while (more) {
      zmq_msg_t* dst = n < scratch_.size() ? &scratch_[n] : &discard_;
      if (zmq_msg_recv(dst, inbox_, 0) < 0) break;
      more = zmq_msg_more(dst);
      if (dst == &discard_) {
        too_many = true;
      } else {
        ++n;
      }
    }
    Process(n, too_many);
  }
}

Identity& ZmqTransport::IdentityOf(zmq_msg_t* routing_id, zmq_msg_t* first_frame) {
  std::string_view id(static_cast<const char*>(zmq_msg_data(routing_id)), zmq_msg_size(routing_id));
  auto it = identities_.find(id);
  if (it != identities_.end()) return it->second;
  // Bounded: a flood of distinct identities only costs re-parsing.
  constexpr size_t kMaxIdentities = 4096;
  if (identities_.size() >= kMaxIdentities) identities_.clear();
  Identity ident;
  std::string address;
  ident.valid = zmq_internal::DecodeRoutingId(id.data(), id.size(), &ident.peer, &address);
  if (ident.valid) {
    ident.address = std::make_shared<const std::string>(std::move(address));
    ident.name = ident.peer.ToString();
  } else {
    const char* a = first_frame != nullptr ? zmq_msg_gets(first_frame, "Peer-Address") : nullptr;
    ident.name = fmt::format("an unidentified peer at {}", a ? a : "an unknown address");
  }
  return identities_.emplace(std::string(id), std::move(ident)).first->second;
}

void ZmqTransport::Process(size_t n, bool too_many) {
  Identity& ident = IdentityOf(&scratch_[0], n > 1 ? &scratch_[1] : nullptr);
  // The connection a drop is rationed by: its socket (libzmq's ZMQ_SRCFD
  // metadata, -1 where there is none) and its routing id. A forger claiming
  // a member's name comes on a connection of its own, so its junk does not
  // silence the member's warnings.
  const int fd = zmq_msg_get(&scratch_[n > 1 ? 1 : 0], ZMQ_SRCFD);
  const std::string_view id(static_cast<const char*>(zmq_msg_data(&scratch_[0])),
                            zmq_msg_size(&scratch_[0]));
  auto drop = [&](DropReason reason, const Status& why) {
    core_.CountDrop(ident.name,
                    fmt::format("{}#{}#{:x}", ident.name, fd, std::hash<std::string_view>()(id)),
                    reason, why);
  };
  if (!ident.valid) {
    drop(DropReason::kBadSender, InvalidArgument("connection identity is not Rigel's"));
    return;
  }
  if (too_many) {
    drop(DropReason::kOversized,
         InvalidArgument(fmt::format("more than {} payload frames", opts_.limits.max_frames)));
    return;
  }
  if (n < 2) {
    drop(DropReason::kMalformed, InvalidArgument("message without a header frame"));
    return;
  }
  std::vector<Buffer> frames;
  if (n > 2) {
    auto holder = std::make_shared<ReceivedFrames>(n - 2);
    frames.reserve(n - 2);
    for (size_t i = 0; i + 2 < n; ++i) {
      zmq_msg_t* m = &holder->msgs[i];
      zmq_msg_move(m, &scratch_[i + 2]);
      frames.emplace_back(std::shared_ptr<const void>(holder, m), zmq_msg_data(m), zmq_msg_size(m));
    }
  }
  DropReason reason;
  const auto* header = static_cast<const std::byte*>(zmq_msg_data(&scratch_[1]));
  StatusOr<InMessage> msg =
      DecodeMessage(ident.peer, ident.address, {header, zmq_msg_size(&scratch_[1])},
                    std::move(frames), opts_.limits, &reason);
  if (!msg.ok()) {
    drop(reason, msg.status());
    return;
  }
  if (!ident.learned) {
    // Connect back, so we can answer (a restarted peer may be at a new address).
    Status st = Connect(ident.peer, *ident.address);
    if (!st.ok()) core_.WarnOnce("connect:" + ident.name, st.message());
    ident.learned = true;
  }
  core_.Deliver(std::move(msg).value());
}

void ZmqTransport::DrainInboxMonitor() {
  zmq_msg_t ev;
  zmq_msg_init(&ev);
  while (zmq_msg_recv(&ev, inbox_monitor_, ZMQ_DONTWAIT) >= 0) {
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&ev) >= 6) {
      std::memcpy(&event, zmq_msg_data(&ev), 2);
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&ev)) + 2, 4);
    }
    std::string endpoint;
    while (zmq_msg_more(&ev) && zmq_msg_recv(&ev, inbox_monitor_, 0) >= 0) {
      endpoint.assign(static_cast<const char*>(zmq_msg_data(&ev)), zmq_msg_size(&ev));
    }
    if ((event & kInboxEvents) == 0) continue;
    core_.counters().auth_refused.fetch_add(1, std::memory_order_relaxed);
    const char* what = event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                           ? "the peer's key is not the cluster key"
                       : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                           ? "security handshake failed (a plain peer, or a peer with another "
                             "cluster's key)"
                           : "security handshake failed";
    core_.WarnOnce(fmt::format("handshake:{}", event),
                   fmt::format("{}: refused a connection on {}: {} (code {:#x}); further refusals "
                               "are counted in auth_refused",
                               self_.ToString(), endpoint, what, value));
  }
  zmq_msg_close(&ev);
}

}  // namespace rigel::transport::zmq_internal
