#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cstring>

#include "common/logging.h"
#include "transport/zmq/address.h"
#include "transport/zmq/transport_impl.h"

namespace rigel::transport {
namespace zmq_internal {
namespace {

// The free callback of zero-copy frames: drops the transport's reference to
// the Buffer's owner once libzmq is done with the bytes (on a libzmq thread).
void ReleaseOwner(void* /*data*/, void* hint) {
  delete static_cast<std::shared_ptr<const void>*>(hint);
}

// The frames of one outgoing message. Whatever was not handed to libzmq is
// closed on destruction, which also releases zero-copy owners.
class OutgoingParts {
 public:
  explicit OutgoingParts(size_t n) : n_(n) {
    if (n > kInline) heap_.resize(n);
    parts_ = n > kInline ? heap_.data() : inline_;
    for (size_t i = 0; i < n; ++i) zmq_msg_init(&parts_[i]);
  }
  ~OutgoingParts() {
    for (size_t i = 0; i < n_; ++i) zmq_msg_close(&parts_[i]);
  }
  zmq_msg_t* operator[](size_t i) { return &parts_[i]; }
  size_t size() const { return n_; }

 private:
  static constexpr size_t kInline = 8;
  size_t n_;
  zmq_msg_t inline_[kInline];
  std::vector<zmq_msg_t> heap_;
  zmq_msg_t* parts_;
};

// Sends `part` without blocking, waiting up to `wait` for room in the queue
// (0: not at all). Returns zmq_msg_send's result; -1 with EAGAIN: still full.
int SendWithin(void* socket, zmq_msg_t* part, int flags, Millis wait) {
  int rc = zmq_msg_send(part, socket, ZMQ_DONTWAIT | flags);
  if (rc >= 0 || zmq_errno() != EAGAIN) return rc;
  // EAGAIN from a send may be stale: libzmq's send reads the socket's command
  // mailbox, where the I/O thread reports how much of the queue it has written
  // out, at most about once a millisecond. Fast round trips thus see a drained
  // queue as full, and Respond, which does not wait, would drop responses the
  // requester's window has room for. zmq_poll reads the mailbox unthrottled,
  // so every retry follows a poll, even with no time to wait: only a queue
  // that is full after that is really full.
  Clock::time_point deadline = Clock::now() + wait;
  for (;;) {
    auto left =
        std::max<int64_t>(0, std::chrono::duration_cast<Millis>(deadline - Clock::now()).count());
    zmq_pollitem_t item{socket, 0, ZMQ_POLLOUT, 0};
    zmq_poll(&item, 1, static_cast<long>(left));
    rc = zmq_msg_send(part, socket, ZMQ_DONTWAIT | flags);
    if (rc >= 0 || zmq_errno() != EAGAIN || left == 0) return rc;
  }
}

}  // namespace

std::string ZmqError(const std::string& what) {
  return fmt::format("{}: {}", what, zmq_strerror(zmq_errno()));
}

int SetInt(void* socket, int option, int value) {
  return zmq_setsockopt(socket, option, &value, sizeof value);
}

Status ZmqTransport::Init() {
  if (self_.role == Role::kUnknown || self_.rank < 0) {
    return InvalidArgument("ZmqOptions::self needs a role and a rank >= 0");
  }
  if (!ctx_) {
    RIGEL_ASSIGN_OR_RETURN(ctx_, ZmqContext::Create(1));
  }
  if (!opts_.key_file.empty()) {
    RIGEL_ASSIGN_OR_RETURN(key_, ReadKeyFile(opts_.key_file));
  } else {
    key_ = opts_.key;
  }
  if (key_ && !zmq_has("curve")) return Unimplemented("this libzmq was built without CURVE");
  RIGEL_ASSIGN_OR_RETURN(auto listen, ParseAddress(opts_.listen));
  if (!key_) {
    if (!zmq_internal::IsLocalOnly(listen) && !opts_.insecure_plain) {
      return FailedPrecondition(fmt::format(
          "{}: refusing to listen on {} without a cluster key; plain (unauthenticated) mode binds "
          "only to loopback, ipc or inproc (make a key with `rigel keygen` and give --key-file, "
          "or accept an open port with --insecure-plain)",
          self_.ToString(), opts_.listen));
    }
    if (opts_.insecure_plain) {
      Log(LogLevel::kWarning, "transport",
          "{}: no cluster key and --insecure-plain: anyone who reaches {} can join or read "
          "the job",
          self_.ToString(), opts_.listen);
    } else {
      Log(LogLevel::kInfo, "transport", "{}: no cluster key: plain mode, loopback only ({})",
          self_.ToString(), opts_.listen);
    }
  }

  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Internal(fmt::format("eventfd: {}", std::strerror(errno)));
  inbox_ = zmq_socket(ctx_->get(), ZMQ_ROUTER);
  if (inbox_ == nullptr) return Internal(ZmqError("inbox socket"));
  int64_t max_frame = static_cast<int64_t>(opts_.limits.max_message_bytes);
  if (SetInt(inbox_, ZMQ_ROUTER_HANDOVER, 1) != 0 ||
      SetInt(inbox_, ZMQ_RCVHWM, opts_.recv_hwm) != 0 || SetInt(inbox_, ZMQ_LINGER, 0) != 0 ||
      zmq_setsockopt(inbox_, ZMQ_MAXMSGSIZE, &max_frame, sizeof max_frame) != 0) {
    return InvalidArgument(ZmqError("inbox options"));
  }
  if (key_) {
    zap_domain_ = fmt::format("rigel/{}/{}", self_.ToString(), ctx_->NextId());
    RIGEL_RETURN_IF_ERROR(ctx_->AddCurveDomain(zap_domain_, key_->public_key, self_.ToString()));
    if (zmq_setsockopt(inbox_, ZMQ_ZAP_DOMAIN, zap_domain_.data(), zap_domain_.size()) != 0 ||
        SetInt(inbox_, ZMQ_CURVE_SERVER, 1) != 0 ||
        zmq_setsockopt(inbox_, ZMQ_CURVE_SECRETKEY, key_->secret_key.c_str(), 41) != 0) {
      return InvalidArgument(ZmqError("CURVE server options"));
    }
  }
  std::string monitor = fmt::format("inproc://rigel-inbox-monitor-{}", ctx_->NextId());
  if (zmq_socket_monitor(inbox_, monitor.c_str(), kInboxEvents) != 0 ||
      (inbox_monitor_ = zmq_socket(ctx_->get(), ZMQ_PAIR)) == nullptr ||
      SetInt(inbox_monitor_, ZMQ_LINGER, 0) != 0 ||
      zmq_connect(inbox_monitor_, monitor.c_str()) != 0) {
    return Internal(ZmqError("inbox monitor"));
  }
  if (zmq_bind(inbox_, opts_.listen.c_str()) != 0) {
    return Unavailable(
        ZmqError(fmt::format("{}: cannot listen on {}", self_.ToString(), opts_.listen)));
  }
  char bound[512];
  size_t len = sizeof bound;
  if (zmq_getsockopt(inbox_, ZMQ_LAST_ENDPOINT, bound, &len) != 0) {
    return Internal(ZmqError("bound address"));
  }
  address_ = opts_.advertise.empty() ? std::string(bound) : opts_.advertise;
  RIGEL_ASSIGN_OR_RETURN(auto advertised, ParseAddress(address_));
  if (zmq_internal::HasWildcardHost(advertised)) {
    return InvalidArgument(
        fmt::format("{}: listening on {}, peers cannot dial it; set an "
                    "advertise address",
                    self_.ToString(), address_));
  }
  RIGEL_ASSIGN_OR_RETURN(routing_id_, zmq_internal::EncodeRoutingId(self_, address_));
  scratch_.resize(opts_.limits.max_frames + 2);
  for (auto& m : scratch_) zmq_msg_init(&m);
  zmq_msg_init(&discard_);
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

Status ZmqTransport::CheckAddress(const std::string& address) const {
  RIGEL_ASSIGN_OR_RETURN(auto parsed, ParseAddress(address));
  if (!key_ && !opts_.insecure_plain && !zmq_internal::IsLocalOnly(parsed)) {
    return FailedPrecondition(fmt::format(
        "{}: will not connect to {} without a cluster key (plain mode is loopback only)",
        self_.ToString(), address));
  }
  if (zmq_internal::HasWildcardHost(parsed) || parsed.port == "*") {
    return InvalidArgument(fmt::format("{}: cannot connect to '{}'", self_.ToString(), address));
  }
  return Status::Ok();
}

Status ZmqTransport::Connect(const PeerId& peer, const std::string& address) {
  if (closed_.load()) return Closed();
  RIGEL_RETURN_IF_ERROR(CheckAddress(address));
  std::shared_ptr<Peer> p;
  {
    MutexLock lock(&peers_mu_);
    std::shared_ptr<Peer>& slot = peers_[peer];
    if (!slot) slot = std::make_shared<Peer>();
    p = slot;
  }
  MutexLock lock(&p->mu);
  if (closed_.load()) return Closed();  // Teardown may have collected the peers already
  if (p->socket != nullptr && p->address == address) return Status::Ok();
  ClosePeerSocket(*p);
  p->failed = Status::Ok();
  return OpenPeerSocket(*p, address);
}

Status ZmqTransport::OpenPeerSocket(Peer& p, const std::string& address) {
  void* s = zmq_socket(ctx_->get(), ZMQ_DEALER);
  if (s == nullptr) return Internal(ZmqError("peer socket"));
  int linger = static_cast<int>(opts_.linger.count());
  bool ok = zmq_setsockopt(s, ZMQ_ROUTING_ID, routing_id_.data(), routing_id_.size()) == 0 &&
            SetInt(s, ZMQ_SNDHWM, opts_.send_hwm) == 0 && SetInt(s, ZMQ_LINGER, linger) == 0 &&
            SetInt(s, ZMQ_RECONNECT_IVL_MAX, kReconnectMaxMs) == 0;
  if (ok && key_) {
    ok = zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, key_->public_key.c_str(), 41) == 0 &&
         zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, key_->public_key.c_str(), 41) == 0 &&
         zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, key_->secret_key.c_str(), 41) == 0;
  }
  std::string monitor = fmt::format("inproc://rigel-peer-monitor-{}", ctx_->NextId());
  void* m = nullptr;
  ok = ok && zmq_socket_monitor(s, monitor.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) == 0 &&
       (m = zmq_socket(ctx_->get(), ZMQ_PAIR)) != nullptr && SetInt(m, ZMQ_LINGER, 0) == 0 &&
       zmq_connect(m, monitor.c_str()) == 0 && zmq_connect(s, address.c_str()) == 0;
  if (!ok) {
    Status st =
        InvalidArgument(ZmqError(fmt::format("{}: connecting to {}", self_.ToString(), address)));
    if (m != nullptr) zmq_close(m);
    zmq_close(s);
    return st;
  }
  p.socket = s;
  p.monitor = m;
  p.address = address;
  return Status::Ok();
}

void ZmqTransport::ClosePeerSocket(Peer& p) {
  if (p.socket != nullptr) {
    zmq_socket_monitor(p.socket, nullptr, 0);
    zmq_close(p.socket);
  }
  if (p.monitor != nullptr) zmq_close(p.monitor);
  p.socket = p.monitor = nullptr;
}

std::shared_ptr<Peer> ZmqTransport::FindPeer(const PeerId& to) {
  MutexLock lock(&peers_mu_);
  auto it = peers_.find(to);
  return it == peers_.end() ? nullptr : it->second;
}

void ZmqTransport::CheckPeerMonitor(Peer& p, const PeerId& to, Status* newly_failed, bool sweep) {
  // Senders look only every 16th send (reading the clock every time costs
  // more than the look); the receive thread's sweep always does.
  if (!sweep && (p.sends++ & 15) != 0) return;
  Clock::time_point now = Clock::now();
  if (now < p.next_monitor_check || p.monitor == nullptr) return;
  p.next_monitor_check = now + kMonitorCheckInterval;
  zmq_msg_t ev;
  zmq_msg_init(&ev);
  while (zmq_msg_recv(&ev, p.monitor, ZMQ_DONTWAIT) >= 0) {
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&ev) >= 6) {
      std::memcpy(&event, zmq_msg_data(&ev), 2);
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&ev)) + 2, 4);
    }
    while (zmq_msg_more(&ev) && zmq_msg_recv(&ev, p.monitor, 0) >= 0) {
    }
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH && p.failed.ok()) {
      p.failed = Unavailable(fmt::format(
          "{}: {} at {} refused our connection: authentication failed (ZAP status {}); is this "
          "the cluster's key file?",
          self_.ToString(), to.ToString(), p.address, value));
      Log(LogLevel::kWarning, "transport", "{}", p.failed.message());
      *newly_failed = p.failed;
    }
  }
  zmq_msg_close(&ev);
}

Status ZmqTransport::Transmit(const PeerId& to, OutMessage& msg, wire::Kind kind, uint64_t id,
                              Millis wait, bool is_response, const std::string* reply_address) {
  if (closed_.load()) return Closed();
  auto& c = core_.counters();
  std::shared_ptr<Peer> p = FindPeer(to);
  if (p == nullptr && reply_address != nullptr && !reply_address->empty() &&
      Connect(to, *reply_address).ok()) {
    p = FindPeer(to);
  }
  if (p == nullptr) {
    std::string why = fmt::format("no address known for {}", to.ToString());
    if (is_response) return core_.DropResponse(to, id, why);
    return Unavailable(fmt::format("{}: {}", self_.ToString(), why));
  }
  RIGEL_RETURN_IF_ERROR(ValidateOutgoing(msg, opts_.limits));
  msg.header().setKind(kind);
  msg.header().setRequestId(id);

  // Build every frame before taking the peer's lock: the header with the
  // small payload frames packed behind it, then the others, zero-copy.
  Frame0 plan = PlanFrame0(msg, opts_.limits);
  OutgoingParts parts(msg.frames().size() - plan.packed + 1);
  if (zmq_msg_init_size(parts[0], plan.total_bytes) != 0) return Internal(ZmqError("header frame"));
  EncodeFrame0(msg, plan, {static_cast<std::byte*>(zmq_msg_data(parts[0])), plan.total_bytes});
  std::vector<Buffer> frames = msg.TakeFrames();
  size_t bytes = plan.total_bytes;
  for (size_t i = plan.packed; i < frames.size(); ++i) {
    const Buffer& f = frames[i];
    zmq_msg_t* part = parts[i - plan.packed + 1];
    bytes += f.size();
    if (f.size() >= kZeroCopyMinBytes && f.owner() != nullptr) {
      auto* hint = new std::shared_ptr<const void>(f.owner());
      if (zmq_msg_init_data(part, const_cast<std::byte*>(f.data()), f.size(), &ReleaseOwner,
                            hint) != 0) {
        delete hint;
        return Internal(ZmqError("payload frame"));
      }
    } else {
      // Small frames after a large one (only a prefix is packed), or frames
      // without an owner to keep alive: copied.
      if (zmq_msg_init_size(part, f.size()) != 0) return Internal(ZmqError("payload frame"));
      if (f.size() > 0) std::memcpy(zmq_msg_data(part), f.data(), f.size());
    }
  }

  Status newly_failed;
  Status result;
  {
    MutexLock lock(&p->mu);
    if (p->socket == nullptr) return Closed();
    CheckPeerMonitor(*p, to, &newly_failed, false);
    if (!p->failed.ok()) {
      result = p->failed;
    } else {
      const int more = parts.size() > 1 ? ZMQ_SNDMORE : 0;
      int rc = SendWithin(p->socket, parts[0], more, wait);
      if (rc < 0) {
        if (zmq_errno() != EAGAIN) {
          result = Unavailable(
              ZmqError(fmt::format("{}: sending to {}", self_.ToString(), to.ToString())));
        } else if (is_response) {
          result = core_.DropResponse(
              to, id,
              fmt::format("send queue to {} is full ({} messages)", to.ToString(), opts_.send_hwm));
        } else {
          c.send_queue_full.fetch_add(1, std::memory_order_relaxed);
          result =
              Unavailable(fmt::format("{}: send queue to {} full for {} ms (peer slow or gone)",
                                      self_.ToString(), to.ToString(), wait.count()));
        }
      } else {
        // Once the first frame is queued ZeroMQ accepts the rest of the
        // message (the high-water mark counts whole messages).
        for (size_t i = 1; i < parts.size() && rc >= 0; ++i) {
          rc = zmq_msg_send(parts[i], p->socket, i + 1 < parts.size() ? ZMQ_SNDMORE : 0);
        }
        if (rc < 0) result = Internal(ZmqError("sending a message's frames"));
      }
    }
  }
  if (!newly_failed.ok()) core_.FailPeer(to, newly_failed);
  if (!result.ok()) return result;
  c.messages_sent.fetch_add(1, std::memory_order_relaxed);
  c.bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
  return Status::Ok();
}

Status ZmqTransport::Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                             const CallOptions& opts) {
  if (closed_.load()) return Closed();
  return core_.SubmitRequest(
      to, msg.type(), opts.timeout, std::move(done), SendWait(opts), [this] { Wake(); },
      [&](uint64_t id, Millis left) {
        return Transmit(to, msg, wire::Kind::REQUEST, id, left, false, nullptr);
      });
}

void ZmqTransport::Close() {
  closed_.store(true);
  stop_.store(true);
  if (wake_fd_ >= 0) Wake();
  if (std::this_thread::get_id() == thread_.get_id()) {
    // From a handler: the receive thread stops after it returns; sockets are
    // closed by the destructor (which must run elsewhere).
    core_.FailAll(Unavailable(self_.ToString() + ": transport closed"));
    return;
  }
  MutexLock teardown(&teardown_mu_);
  if (thread_.joinable()) thread_.join();
  core_.FailAll(Unavailable(self_.ToString() + ": transport closed"));
  Teardown();
}

void ZmqTransport::Teardown() {
  std::vector<std::shared_ptr<Peer>> peers;
  {
    MutexLock lock(&peers_mu_);
    for (auto& [id, p] : peers_) peers.push_back(p);
    peers_.clear();
  }
  for (auto& p : peers) {
    MutexLock lock(&p->mu);
    ClosePeerSocket(*p);
  }
  if (inbox_ != nullptr) {
    zmq_socket_monitor(inbox_, nullptr, 0);
    zmq_close(inbox_);
    inbox_ = nullptr;
  }
  for (auto& m : scratch_) zmq_msg_close(&m);
  if (!scratch_.empty()) zmq_msg_close(&discard_);
  scratch_.clear();
  if (inbox_monitor_ != nullptr) zmq_close(inbox_monitor_);
  inbox_monitor_ = nullptr;
  if (!zap_domain_.empty()) ctx_->RemoveCurveDomain(zap_domain_);
  zap_domain_.clear();
  // wake_fd_ stays open until the destructor: a racing Request may still write to it.
}

}  // namespace zmq_internal

StatusOr<std::unique_ptr<Transport>> CreateZmqTransport(const ZmqOptions& options) {
  auto t = std::make_unique<zmq_internal::ZmqTransport>(options);
  RIGEL_RETURN_IF_ERROR(t->Init());
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace rigel::transport
