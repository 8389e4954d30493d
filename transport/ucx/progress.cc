// The UCX backend's progress thread: drives the worker, accepts connections,
// runs handshakes, receives and delivers messages, and handles failed
// connections. UCX callbacks only record what happened; everything else runs
// here after ucp_worker_progress returns (transport_impl.h).
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "common/logging.h"
#include "transport/ucx/address.h"
#include "transport/ucx/transport_impl.h"

namespace rigel::transport::ucx_internal {
namespace {

// A rendezvous receive in progress.
struct RecvCtx {
  UcxTransport* transport;
  uint64_t conn;
  std::shared_ptr<Incoming> in;
};

// A handshake message in flight: UCX reads its bytes until the send completes.
struct HandshakeCtx {
  std::vector<uint8_t> bytes;
};

// Largest active-message header accepted: a frame table and a header frame
// (UCX's own limit, max_am_header, is a few KiB on every transport).
constexpr size_t kMaxAmHeader = 64 << 10;
// Largest handshake message (an address or reason of 1,024 bytes and fields).
constexpr size_t kMaxHandshakeBytes = 4096;

size_t Padded(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

Buffer AllocateAligned(size_t n) {
  void* p = ::operator new(std::max<size_t>(n, 1), std::align_val_t(64));
  std::shared_ptr<void> owner(p, [](void* q) { ::operator delete(q, std::align_val_t(64)); });
  return Buffer(std::move(owner), p, n);
}

}  // namespace

ucs_status_t UcxTransport::OnHandshakeAm(void* arg, const void* header, size_t header_length,
                                         void* data, size_t length,
                                         const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->Arrive(kAmHandshake, header, header_length, data, length,
                                                 param);
}

ucs_status_t UcxTransport::OnMessageAm(void* arg, const void* header, size_t header_length,
                                       void* data, size_t length,
                                       const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->Arrive(kAmMessage, header, header_length, data, length,
                                                 param);
}

ucs_status_t UcxTransport::Arrive(unsigned id, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param) {
  Arrival a;
  a.id = id;
  a.ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
  a.length = length;
  // An oversized header is recorded empty and dropped as malformed.
  if (header_length <= kMaxAmHeader) {
    const auto* h = static_cast<const uint8_t*>(header);
    a.header.assign(h, h + header_length);
  }
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    // Received (or released) by the progress thread once it has checked the
    // sender and the sizes.
    a.rndv_desc = data;
    arrivals_.push_back(std::move(a));
    return UCS_INPROGRESS;
  }
  // Eager data lives only during this call; it is small (below UCX's
  // rendezvous threshold), so a copy costs less than keeping UCX's buffer.
  if (length > 0 && length <= opts_.limits.max_message_bytes + 8 * (opts_.limits.max_frames + 1)) {
    a.data = Buffer::Copy(data, length);
  }
  arrivals_.push_back(std::move(a));
  return UCS_OK;
}

void UcxTransport::OnConnRequest(ucp_conn_request_h request, void* arg) {
  static_cast<UcxTransport*>(arg)->conn_requests_.push_back(request);
}

void UcxTransport::OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* t = static_cast<UcxTransport*>(arg);
  MutexLock lock(&t->events_mu_);
  t->ep_errors_.emplace_back(ep, status);
}

void UcxTransport::OnRecvDone(void* request, ucs_status_t status, size_t /*length*/,
                              void* user_data) {
  auto* ctx = static_cast<RecvCtx*>(user_data);
  ctx->in->state.store(status == UCS_OK ? 1 : 2);
  ctx->transport->recv_done_.push_back(ctx->conn);
  ctx->transport->recv_pending_.erase(ctx);
  delete ctx;
  ucp_request_free(request);
}

void UcxTransport::OnHandshakeSent(void* request, ucs_status_t /*status*/, void* user_data) {
  delete static_cast<HandshakeCtx*>(user_data);
  ucp_request_free(request);
}

void UcxTransport::Run() {
  core_.SetReceiveThread(std::this_thread::get_id());
  Clock::time_point next = Clock::time_point::max();
  Clock::time_point last_active = Clock::now();
  while (!stop_.load()) {
    unsigned progressed = 0;
    {
      MutexLock lock(&ucx_mu_);
      for (int i = 0; i < 64; ++i) {
        unsigned n = ucp_worker_progress(worker_);
        if (n == 0) break;
        progressed += n;
      }
    }
    bool did = ProcessEvents();
    Clock::time_point now = Clock::now();
    next = core_.ExpireDue(now);
    if (now >= next_timer_) RunTimers(now);
    if (progressed > 0 || did) {
      last_active = now;
      continue;
    }
    // Poll on briefly after the last event: for `spin` while this endpoint
    // waits for responses (its own requests are pending), so a response that
    // comes quickly costs no wake-up, and for `serve_spin` otherwise, so the
    // next request of a stream finds a server awake. Then sleep.
    const bool waiting = next != Clock::time_point::max();
    if (now - last_active < (waiting ? spin_ : serve_spin_)) continue;
    // Idle: sleep on the worker's event descriptor until an event, a
    // signal (Wake), a request's deadline or a timer.
    sleeping_.store(true);
    ucs_status_t armed;
    {
      MutexLock lock(&ucx_mu_);
      armed = ucp_worker_arm(worker_);
    }
    if (armed == UCS_ERR_BUSY) {
      sleeping_.store(false);
      continue;
    }
    Clock::time_point until =
        core_.PlanWake(std::min(next, next_timer_), now + std::chrono::seconds(1));
    now = Clock::now();
    int timeout_ms =
        until <= now
            ? 0
            : static_cast<int>(std::chrono::duration_cast<Millis>(until - now).count() + 1);
    pollfd pfd{efd_, POLLIN, 0};
    if (!stop_.load()) ::poll(&pfd, 1, timeout_ms);
    sleeping_.store(false);
    last_active = Clock::now();
  }
}

bool UcxTransport::ProcessEvents() {
  bool did = false;
  if (!conn_requests_.empty()) {
    std::vector<ucp_conn_request_h> requests;
    requests.swap(conn_requests_);
    for (ucp_conn_request_h r : requests) Accept(r);
    did = true;
  }
  std::vector<std::pair<ucp_ep_h, ucs_status_t>> errors;
  std::vector<std::shared_ptr<Conn>> dial;
  {
    MutexLock lock(&events_mu_);
    errors.swap(ep_errors_);
    dial.swap(to_dial_);
  }
  for (auto& [ep, status] : errors) {
    auto it = by_ep_.find(ep);
    if (it != by_ep_.end()) {
      std::shared_ptr<Conn> c = it->second;  // OnLost erases the entry
      OnLost(c, status);
    }
    did = true;
  }
  for (auto& c : dial) {
    did = true;
    if (stop_.load()) break;
    if (!IsDialledRoute(c)) {
      Forget(c);
      continue;
    }
    conns_.emplace(c->id, c);
    bool dial_now = false;
    {
      MutexLock lock(&c->mu);
      if (c->ep == nullptr && c->state == ConnState::kDialing) {
        dial_now = true;
      } else if (c->ep == nullptr && c->state == ConnState::kLost) {
        // Something waits for a lost connection: dial when its back-off ends.
        dial_now = c->redial_at <= Clock::now();
        if (!dial_now) next_timer_ = std::min(next_timer_, c->redial_at);
      }
    }
    if (dial_now) Dial(c);
  }
  while (!arrivals_.empty()) {
    did = true;
    std::vector<Arrival> batch;
    batch.swap(arrivals_);
    for (Arrival& a : batch) {
      auto it = by_ep_.find(a.ep);
      if (it == by_ep_.end() || stop_.load()) {
        DropArrival(a);
        continue;
      }
      std::shared_ptr<Conn> c = it->second;
      if (a.id == kAmHandshake) {
        std::vector<uint8_t> bytes;
        if (a.rndv_desc == nullptr && !a.data.empty() && a.data.size() <= kMaxHandshakeBytes) {
          const auto* p = reinterpret_cast<const uint8_t*>(a.data.data());
          bytes.assign(p, p + a.data.size());
        }
        DropArrival(a);
        OnHandshake(c, bytes);
      } else {
        OnMessage(c, a);
      }
    }
  }
  if (!recv_done_.empty()) {
    did = true;
    std::vector<uint64_t> done;
    done.swap(recv_done_);
    for (uint64_t id : done) {
      auto it = conns_.find(id);
      if (it != conns_.end()) {
        std::shared_ptr<Conn> c = it->second;
        DeliverReady(c);
      }
    }
  }
  return did;
}

ucp_ep_h UcxTransport::MakeEp(const std::shared_ptr<Conn>& c, const ucp_ep_params_t& base,
                              bool same_host) {
  ucp_ep_params_t p = base;
  // UCX 1.13 leaves out every shared-memory transport from an endpoint that
  // asks to be told of its peer's failure, so a connection within the host
  // asks nothing (a dead peer then shows as requests timing out, as with
  // ZeroMQ, and a closing one says goodbye: kBye). Between hosts the
  // endpoint reports failures and the connection is dialled again.
  p.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.err_mode = same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  if (!same_host) {
    p.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.err_handler.cb = &UcxTransport::OnEpError;
    p.err_handler.arg = this;
  }
  ucp_ep_h ep = nullptr;
  ucs_status_t st;
  {
    MutexLock lock(&ucx_mu_);
    st = ucp_ep_create(worker_, &p, &ep);
  }
  if (st != UCS_OK) {
    core_.WarnOnce("ep:" + c->address, fmt::format("{}: UCX endpoint to {}: {}", self_.ToString(),
                                                   c->address.empty() ? "a new peer" : c->address,
                                                   ucs_status_string(st)));
    return nullptr;
  }
  by_ep_[ep] = c;
  conns_[c->id] = c;
  MutexLock lock(&c->mu);
  c->ep = ep;
  return ep;
}

void UcxTransport::Dial(const std::shared_ptr<Conn>& c) {
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
  p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&c->sockaddr);
  p.sockaddr.addrlen = c->sockaddr_len;
  Clock::time_point now = Clock::now();
  if (MakeEp(c, p, IsOwnAddress(c->sockaddr)) == nullptr) {
    MutexLock lock(&c->mu);
    c->state = ConnState::kLost;
    c->redial_at = now + c->backoff;
    c->backoff = std::min(kRedialMax, c->backoff * 2);
    next_timer_ = std::min(next_timer_, c->redial_at);
    return;
  }
  c->my_nonce = NewNonce();
  c->handshake_deadline = now + c->attempt_timeout;
  c->attempt_timeout = std::min(kHandshakeTimeout, c->attempt_timeout * 2);
  next_timer_ = std::min(next_timer_, c->handshake_deadline);
  Handshake hello;
  hello.type = HandshakeType::kHello;
  hello.peer = self_;
  hello.address = address_;
  hello.nonce = c->my_nonce;
  MutexLock lock(&c->mu);
  c->state = ConnState::kHandshake;
  SendHandshake(*c, hello);
}

void UcxTransport::Accept(ucp_conn_request_h request) {
  if (stop_.load() || unauthenticated_ >= kMaxUnauthenticated) {
    MutexLock lock(&ucx_mu_);
    ucp_listener_reject(listener_, request);
    return;
  }
  auto c = std::make_shared<Conn>(next_conn_id_.fetch_add(1), false);
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  bool same_host;
  {
    MutexLock lock(&ucx_mu_);
    same_host = ucp_conn_request_query(request, &attr) == UCS_OK;
  }
  same_host = same_host && IsOwnAddress(attr.client_address);
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
  p.conn_request = request;
  if (MakeEp(c, p, same_host) == nullptr) return;
  ++unauthenticated_;
  c->unauthenticated = true;
  c->handshake_deadline = Clock::now() + kHandshakeTimeout;
  next_timer_ = std::min(next_timer_, c->handshake_deadline);
  MutexLock lock(&c->mu);
  c->state = ConnState::kHandshake;
}

void UcxTransport::SendHandshake(Conn& c, const Handshake& h) {
  if (c.ep == nullptr) return;
  auto* ctx = new HandshakeCtx{EncodeHandshake(h)};
  ucp_request_param_t p{};
  p.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.cb.send = &UcxTransport::OnHandshakeSent;
  p.user_data = ctx;
  MutexLock lock(&ucx_mu_);
  ucs_status_ptr_t r =
      ucp_am_send_nbx(c.ep, kAmHandshake, nullptr, 0, ctx->bytes.data(), ctx->bytes.size(), &p);
  if (!UCS_PTR_IS_PTR(r)) delete ctx;
}

void UcxTransport::OnHandshake(const std::shared_ptr<Conn>& c, const std::vector<uint8_t>& bytes) {
  StatusOr<Handshake> h = DecodeHandshake(bytes);
  if (!h.ok()) {
    Refuse(c, fmt::format("a malformed handshake ({})", h.status().message()), c->outbound);
    return;
  }
  if (h->type == HandshakeType::kBye) {
    OnBye(c);
    return;
  }
  {
    MutexLock lock(&c->mu);
    if (c->state != ConnState::kHandshake && h->type != HandshakeType::kRefuse) return;
  }
  const std::string where =
      c->outbound     ? fmt::format("{} at {}", c->peer.ToString(), c->address)
      : c->hello_seen ? fmt::format("{} (listening at {})", c->peer.ToString(), c->address)
                      : fmt::format("a peer connecting to {}", address_);
  switch (h->type) {
    case HandshakeType::kRefuse:
      Refuse(c, fmt::format("{} refused the connection: {}", where, h->reason), true, false);
      return;
    case HandshakeType::kBye:
      return;
    case HandshakeType::kHello: {
      if (c->outbound || c->hello_seen) break;
      c->hello_seen = true;
      c->peer = h->peer;
      c->address = h->address;
      c->reply_address = std::make_shared<const std::string>(h->address);
      c->their_nonce = h->nonce;
      c->my_nonce = NewNonce();
      Handshake challenge;
      challenge.type = HandshakeType::kChallenge;
      challenge.nonce = c->my_nonce;
      if (auth_key_) challenge.proof = ListenerProof(*auth_key_, c->their_nonce, c->my_nonce);
      MutexLock lock(&c->mu);
      SendHandshake(*c, challenge);
      return;
    }
    case HandshakeType::kChallenge: {
      if (!c->outbound) break;
      c->their_nonce = h->nonce;
      if (auth_key_ && (!h->proof || !SameMac(*h->proof, ListenerProof(*auth_key_, c->my_nonce,
                                                                       c->their_nonce)))) {
        Refuse(c,
               fmt::format("{} does not hold this cluster's key ({})", where,
                           h->proof ? "its proof is for another key" : "it runs without a key"),
               true);
        return;
      }
      if (!auth_key_ && h->proof) {
        Refuse(c,
               fmt::format("{} requires the cluster key and this process has none (--key-file)",
                           where),
               true);
        return;
      }
      Handshake proof;
      proof.type = HandshakeType::kProof;
      if (auth_key_) {
        proof.proof = DiallerProof(*auth_key_, c->my_nonce, c->their_nonce, self_, address_);
      }
      {
        MutexLock lock(&c->mu);
        SendHandshake(*c, proof);
      }
      MarkReady(c);
      return;
    }
    case HandshakeType::kProof: {
      if (c->outbound || !c->hello_seen) break;
      if (auth_key_ &&
          (!h->proof || !SameMac(*h->proof, DiallerProof(*auth_key_, c->their_nonce, c->my_nonce,
                                                         c->peer, c->address)))) {
        Refuse(c,
               fmt::format("{} (claiming to be {}) did not prove it holds the cluster key ({})",
                           where, c->peer.ToString(),
                           h->proof ? "its proof is for another key" : "it runs without a key"),
               false);
        return;
      }
      MarkReady(c);
      return;
    }
  }
  Refuse(c, fmt::format("{} sent a handshake message out of turn", where), c->outbound);
}

void UcxTransport::MarkReady(const std::shared_ptr<Conn>& c) {
  std::shared_ptr<Conn> replaced;
  if (!c->outbound) {
    if (std::exchange(c->unauthenticated, false)) --unauthenticated_;
    MutexLock lock(&peers_mu_);
    replaced = std::exchange(peers_[c->peer].in, c);
  }
  ucp_ep_h ep;
  {
    MutexLock lock(&c->mu);
    c->state = ConnState::kReady;
    c->failed = Status::Ok();
    c->backoff = kRedialMin;
    c->attempt_timeout = kDialAttemptTimeout;
    ep = c->ep;
    while (!c->queued.empty()) {
      std::unique_ptr<SendCtx> ctx = std::move(c->queued.front());
      c->queued.pop_front();
      std::string why;
      Post(*c, std::move(ctx), &why);  // a failure is logged once by Post
    }
  }
  // Every connection's transports at debug level (-v); each new choice at
  // info, so a cluster whose peers all use shared memory says so once.
  const std::string lanes = Lanes(ep);
  const bool first = lanes_seen_.insert(lanes).second;
  Log(first ? LogLevel::kInfo : LogLevel::kDebug, "transport", "{}: {} {} ({}) over UCX: {}",
      self_.ToString(), c->outbound ? "connected to" : "accepted", c->peer.ToString(), c->address,
      lanes);
  if (replaced != nullptr && replaced != c) {
    // A restarted peer's new connection: the old one's process is gone.
    OnLost(replaced, UCS_ERR_CONNECTION_RESET);
  }
}

void UcxTransport::Refuse(const std::shared_ptr<Conn>& c, const std::string& reason, bool sticky,
                          bool tell_peer) {
  core_.counters().auth_refused.fetch_add(1, std::memory_order_relaxed);
  std::string message = fmt::format("{}: {}", self_.ToString(), reason);
  core_.WarnOnce("refused:" + (c->outbound ? c->address : c->peer.ToString()),
                 message + " (further refusals are counted in auth_refused)");
  Handshake refuse;
  refuse.type = HandshakeType::kRefuse;
  refuse.reason = reason;
  std::deque<std::unique_ptr<SendCtx>> dropped;
  {
    MutexLock lock(&c->mu);
    if (tell_peer) SendHandshake(*c, refuse);
    // The refusing side flushes its reason out; the refused one has nothing
    // to send and closes at once (two flushing closes would wait on each other).
    CloseEp(*c, !tell_peer);
    c->state = c->outbound && sticky ? ConnState::kRefused : ConnState::kClosed;
    c->failed = Unavailable(message);
    dropped.swap(c->queued);
  }
  for (auto& ctx : dropped) Finish(ctx.release());
  if (c->outbound) {
    if (sticky) core_.FailPeer(c->peer, Unavailable(message));
  } else {
    Forget(c);
  }
}

void UcxTransport::OnBye(const std::shared_ptr<Conn>& c) {
  bool was_ready;
  {
    MutexLock lock(&c->mu);
    was_ready = c->state == ConnState::kReady;
    CloseEp(*c, true);
    if (c->outbound && c->state != ConnState::kRefused && c->state != ConnState::kClosed) {
      // Dialled again when there is something to send (the peer may come back).
      c->state = ConnState::kLost;
      c->redial_at = Clock::now();
    }
  }
  if (was_ready && IsRoute(c)) {
    core_.FailPeer(c->peer, Unavailable(fmt::format("{}: {} closed its transport", self_.ToString(),
                                                    c->peer.ToString())));
  }
  if (!c->outbound) Forget(c);
}

bool UcxTransport::IsDialledRoute(const std::shared_ptr<Conn>& c) {
  MutexLock lock(&peers_mu_);
  auto it = peers_.find(c->peer);
  return it != peers_.end() && it->second.out == c;
}

bool UcxTransport::IsRoute(const std::shared_ptr<Conn>& c) {
  MutexLock lock(&peers_mu_);
  auto it = peers_.find(c->peer);
  return it != peers_.end() &&
         (it->second.out == c || (it->second.out == nullptr && it->second.in == c));
}

void UcxTransport::CountDrop(const Conn& c, DropReason reason, const Status& why) {
  const std::string who =
      c.hello_seen || c.outbound ? c.peer.ToString() : std::string("an unidentified peer");
  core_.CountDrop(who, fmt::format("{}#{}", who, c.id), reason, why);
}

void UcxTransport::DropArrival(Arrival& a) {
  if (a.rndv_desc != nullptr) {
    MutexLock lock(&ucx_mu_);
    ucp_am_data_release(worker_, a.rndv_desc);
  }
  a.rndv_desc = nullptr;
}

void UcxTransport::OnMessage(const std::shared_ptr<Conn>& c, Arrival& a) {
  bool ready;
  {
    MutexLock lock(&c->mu);
    ready = c->state == ConnState::kReady;
  }
  if (!ready) {
    DropArrival(a);
    CountDrop(*c, DropReason::kBadSender,
              InvalidArgument("a message before the connection's handshake finished"));
    return;
  }
  // The header: magic, frame count and flags, each frame's size, maybe
  // frame 0; the data: the other frames (transport_impl.h, kMessageMagic).
  const Limits& limits = opts_.limits;
  auto bad = [&](DropReason reason, std::string why) {
    DropArrival(a);
    CountDrop(*c, reason, InvalidArgument(std::move(why)));
  };
  if (a.header.size() < 8 || a.header.size() % 8 != 0) {
    return bad(DropReason::kMalformed, "no frame table");
  }
  std::vector<uint64_t> words(a.header.size() / 8);
  std::memcpy(words.data(), a.header.data(), a.header.size());
  const auto n = static_cast<size_t>((words[0] >> 32) & 0xffff);
  const uint64_t flags = words[0] >> 48;
  const bool head = (flags & kFrame0InHeader) != 0;
  if (static_cast<uint32_t>(words[0]) != kMessageMagic || (flags & ~kFrame0InHeader) != 0) {
    return bad(DropReason::kMalformed, "not a Rigel message");
  }
  if (n == 0 || words.size() < 1 + n) return bad(DropReason::kMalformed, "bad frame table");
  if (n > size_t{limits.max_frames} + 1) {
    return bad(DropReason::kOversized,
               fmt::format("more than {} payload frames", limits.max_frames));
  }
  uint64_t expected = 0, total = 0;
  for (size_t i = 1; i <= n; ++i) {
    if (words[i] > limits.max_message_bytes) {
      return bad(DropReason::kOversized, "a frame over the message size limit");
    }
    total += words[i];
    if (i == 1 && head) continue;
    expected += i < n ? Padded(words[i]) : words[i];
  }
  if (total > limits.max_message_bytes) {
    return bad(DropReason::kOversized,
               fmt::format("{} bytes, over the limit of {}", total, limits.max_message_bytes));
  }
  const size_t head_words = head ? Padded(words[1]) / 8 : 0;
  if (words.size() != 1 + n + head_words) {
    return bad(DropReason::kMalformed, "the header frame's size disagrees with the header");
  }
  if (expected != a.length)
    return bad(DropReason::kMalformed, "frame sizes disagree with the data");
  auto in = std::make_shared<Incoming>();
  in->sizes.assign(words.begin() + 1, words.begin() + 1 + n);
  if (head) {
    in->head = AllocateAligned(in->sizes[0]);
    if (in->sizes[0] > 0) {
      std::memcpy(const_cast<std::byte*>(in->head.data()), a.header.data() + 8 * (1 + n),
                  in->sizes[0]);
    }
  }
  if (a.rndv_desc == nullptr) {
    if (a.data.size() != a.length) return bad(DropReason::kMalformed, "data missing");
    in->data = std::move(a.data);
    in->state.store(1);
  } else {
    // Rendezvous: UCX moves the data (zero-copy where the transport allows)
    // into memory of ours that the message's Buffers then own.
    in->data = AllocateAligned(a.length);
    auto* ctx = new RecvCtx{this, c->id, in};
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = &UcxTransport::OnRecvDone;
    p.user_data = ctx;
    ucs_status_ptr_t r;
    {
      MutexLock lock(&ucx_mu_);
      r = ucp_am_recv_data_nbx(worker_, a.rndv_desc, const_cast<std::byte*>(in->data.data()),
                               a.length, &p);
    }
    a.rndv_desc = nullptr;
    if (UCS_PTR_IS_PTR(r)) {
      recv_pending_.insert(ctx);
    } else {
      delete ctx;
      in->state.store(UCS_PTR_STATUS(r) == UCS_OK ? 1 : 2);
    }
  }
  c->incoming.push_back(std::move(in));
  DeliverReady(c);
}

void UcxTransport::DeliverReady(const std::shared_ptr<Conn>& c) {
  // In arrival order: a message still being received holds back those after it.
  while (!c->incoming.empty() && c->incoming.front()->state.load() != 0 && !stop_.load()) {
    std::shared_ptr<Incoming> in = std::move(c->incoming.front());
    c->incoming.pop_front();
    if (in->state.load() == 2) {
      CountDrop(*c, DropReason::kMalformed, InvalidArgument("the rendezvous receive failed"));
      continue;
    }
    const bool head = in->head.data() != nullptr;
    std::span<const std::byte> header(head ? in->head.data() : in->data.data(), in->sizes[0]);
    std::vector<Buffer> frames;
    frames.reserve(in->sizes.size() - 1);
    size_t offset = head ? 0 : Padded(in->sizes[0]);
    for (size_t i = 1; i < in->sizes.size(); ++i) {
      frames.push_back(in->data.Slice(offset, in->sizes[i]));
      offset += Padded(in->sizes[i]);
    }
    DropReason reason;
    StatusOr<InMessage> msg =
        DecodeMessage(c->peer, c->reply_address, header, std::move(frames), opts_.limits, &reason);
    if (!msg.ok()) {
      CountDrop(*c, reason, msg.status());
      continue;
    }
    core_.Deliver(std::move(msg).value());
  }
}

void UcxTransport::CloseEp(Conn& c, bool force) {
  if (c.ep == nullptr) return;
  by_ep_.erase(c.ep);
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t r;
  {
    MutexLock lock(&ucx_mu_);
    r = ucp_ep_close_nbx(c.ep, &p);
  }
  if (UCS_PTR_IS_PTR(r)) closing_.push_back(r);
  c.ep = nullptr;
}

void UcxTransport::OnLost(const std::shared_ptr<Conn>& c, ucs_status_t status) {
  bool was_ready = false;
  std::string address;
  {
    MutexLock lock(&c->mu);
    CloseEp(*c, true);
    if (c->state == ConnState::kRefused || c->state == ConnState::kClosed) return;
    was_ready = c->state == ConnState::kReady;
    if (c->outbound) {
      // Dialled again after a back-off; messages sent meanwhile wait in
      // `queued` (bounded by send_hwm), as ZeroMQ keeps them while it reconnects.
      c->state = ConnState::kLost;
      c->redial_at = Clock::now() + c->backoff;
      if (!was_ready && c->backoff == kRedialMax) {
        // Several tries in a row failed before the handshake: not a peer
        // that is still starting. Said once per address.
        core_.WarnOnce("dial:" + c->address,
                       fmt::format("{}: cannot reach {} at {} over UCX ({}); still trying every "
                                   "{} ms (UCX_TLS must allow a transport both hosts have)",
                                   self_.ToString(), c->peer.ToString(), c->address,
                                   ucs_status_string(status), kRedialMax.count()));
      }
      c->backoff = std::min(kRedialMax, c->backoff * 2);
      next_timer_ = std::min(next_timer_, c->redial_at);
    } else {
      c->state = ConnState::kClosed;
    }
  }
  Status lost = Unavailable(fmt::format("{}: connection {} {} ({}) lost: {}", self_.ToString(),
                                        c->outbound ? "to" : "from", c->peer.ToString(), c->address,
                                        ucs_status_string(status)));
  if (was_ready) {
    // Requests pending there are left to their deadlines, as on ZeroMQ: the
    // cluster's heartbeats say who died, and failing them here would make
    // the member that noticed first look like the cause (a peer that closes
    // says goodbye, which fails them at once: OnBye).
    core_.WarnOnce("lost:" + c->peer.ToString() + c->address,
                   lost.message() + "; messages to it are dropped until it answers again");
  }
  if (!c->outbound) Forget(c);
}

void UcxTransport::Forget(const std::shared_ptr<Conn>& c) {
  std::deque<std::unique_ptr<SendCtx>> dropped;
  {
    MutexLock lock(&c->mu);
    CloseEp(*c, true);
    c->state = ConnState::kClosed;
    dropped.swap(c->queued);
  }
  for (auto& ctx : dropped) Finish(ctx.release());
  if (std::exchange(c->unauthenticated, false)) --unauthenticated_;
  conns_.erase(c->id);
  MutexLock lock(&peers_mu_);
  auto it = peers_.find(c->peer);
  if (it != peers_.end() && it->second.in == c) it->second.in = nullptr;
}

void UcxTransport::RunTimers(Clock::time_point now) {
  ReapCloses();
  next_timer_ = now + std::chrono::milliseconds(100);
  std::vector<std::shared_ptr<Conn>> redial, expired;
  for (auto& [id, c] : conns_) {
    MutexLock lock(&c->mu);
    if (c->state == ConnState::kLost && c->outbound && !c->queued.empty()) {
      if (c->redial_at <= now) {
        redial.push_back(c);
      } else {
        next_timer_ = std::min(next_timer_, c->redial_at);
      }
    } else if (c->state == ConnState::kHandshake) {
      if (c->handshake_deadline <= now) {
        expired.push_back(c);
      } else {
        next_timer_ = std::min(next_timer_, c->handshake_deadline);
      }
    }
  }
  if (closing_.empty() && redial.empty() && expired.empty() && next_timer_ == now + Millis(100)) {
    // Nothing waits on a timer: look again in a second.
    next_timer_ = now + std::chrono::seconds(1);
  }
  for (auto& c : expired) OnLost(c, UCS_ERR_TIMED_OUT);
  for (auto& c : redial) {
    if (!IsDialledRoute(c)) {
      Forget(c);
      continue;
    }
    Dial(c);
  }
}

void UcxTransport::ReapCloses() {
  MutexLock lock(&ucx_mu_);
  std::erase_if(closing_, [](void* r) {
    if (ucp_request_check_status(r) == UCS_INPROGRESS) return false;
    ucp_request_free(r);
    return true;
  });
}

std::string UcxTransport::Lanes(ucp_ep_h ep) {
  if (ep == nullptr) return "no endpoint";
  char* text = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (f == nullptr) return "unknown transports";
  {
    MutexLock lock(&ucx_mu_);
    ucp_ep_print_info(ep, f);
  }
  std::fclose(f);
  // Lines such as "lane[1]:  3:sysv/memory.0 md[2] -> md[2]/sysv/sysdev[255] am am_bw#0":
  // the transport and device, then what the lane carries.
  std::string out;
  std::string all(text, size);
  std::free(text);
  size_t pos = 0;
  while ((pos = all.find("lane[", pos)) != std::string::npos) {
    size_t eol = all.find('\n', pos);
    std::string line = all.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? all.size() : eol;
    size_t colon = line.find("]:");
    if (colon == std::string::npos) continue;
    std::string rest = line.substr(colon + 2);
    size_t start = rest.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string tl = rest.substr(start, rest.find(' ', start) - start);
    if (tl == "cm") continue;  // the connection manager only carries the setup
    if (size_t c = tl.find(':'); c != std::string::npos) tl = tl.substr(c + 1);
    size_t last = line.rfind(']');
    std::string use = last == std::string::npos ? "" : line.substr(last + 1);
    use.erase(0, use.find_first_not_of(' '));
    if (!out.empty()) out += ", ";
    out += use.empty() ? tl : fmt::format("{} ({})", tl, use);
  }
  return out.empty() ? "unknown transports" : out;
}

void UcxTransport::Teardown() {
  if (worker_ == nullptr) {
    if (context_ != nullptr) ucp_cleanup(context_);
    context_ = nullptr;
    return;
  }
  {
    // Senders may still be posting until their connection is marked closed.
    MutexLock lock(&ucx_mu_);
    for (ucp_conn_request_h r : conn_requests_) ucp_listener_reject(listener_, r);
    if (listener_ != nullptr) ucp_listener_destroy(listener_);
  }
  conn_requests_.clear();
  listener_ = nullptr;
  {
    MutexLock lock(&events_mu_);
    for (auto& c : to_dial_) conns_.emplace(c->id, c);
    to_dial_.clear();
  }
  // Every peer is told we are going (so it closes its side first and fails
  // what it waits for from us), sent messages get `linger` to go out, then
  // the endpoints are closed without a further exchange.
  std::vector<void*> flushes;
  for (auto& [id, c] : conns_) {
    std::deque<std::unique_ptr<SendCtx>> dropped;
    {
      MutexLock lock(&c->mu);
      const bool ready = c->state == ConnState::kReady;
      c->state = ConnState::kClosed;
      dropped.swap(c->queued);
      if (c->ep != nullptr && ready) {
        Handshake bye;
        bye.type = HandshakeType::kBye;
        SendHandshake(*c, bye);
        ucp_request_param_t p{};
        MutexLock ucx(&ucx_mu_);
        ucs_status_ptr_t r = ucp_ep_flush_nbx(c->ep, &p);
        if (UCS_PTR_IS_PTR(r)) flushes.push_back(r);
      }
    }
    for (auto& ctx : dropped) Finish(ctx.release());
  }
  Clock::time_point deadline = Clock::now() + opts_.linger;
  auto progress = [this] {
    MutexLock lock(&ucx_mu_);
    ucp_worker_progress(worker_);
  };
  auto cancel = [this](const std::vector<void*>& requests) {
    MutexLock lock(&ucx_mu_);
    for (void* r : requests) ucp_request_cancel(worker_, r);
  };
  auto reap = [this](std::vector<void*>& requests) {
    MutexLock lock(&ucx_mu_);
    std::erase_if(requests, [](void* r) {
      if (ucp_request_check_status(r) == UCS_INPROGRESS) return false;
      ucp_request_free(r);
      return true;
    });
  };
  while (!flushes.empty() && Clock::now() < deadline) {
    progress();
    reap(flushes);
  }
  cancel(flushes);
  for (auto& [id, c] : conns_) {
    MutexLock lock(&c->mu);
    CloseEp(*c, true);
  }
  deadline = Clock::now() + opts_.linger;
  while ((!closing_.empty() || !flushes.empty()) && Clock::now() < deadline) {
    progress();
    ReapCloses();
    reap(flushes);
  }
  // Past the linger: cancel what is left (its messages complete as canceled
  // and release their memory).
  cancel(closing_);
  for (int i = 0; i < 1000 && !closing_.empty(); ++i) {
    progress();
    ReapCloses();
  }
  for (Arrival& a : arrivals_) DropArrival(a);
  arrivals_.clear();
  {
    MutexLock lock(&ucx_mu_);
    ucp_worker_destroy(worker_);
    worker_ = nullptr;
  }
  closing_.clear();
  for (void* ctx : recv_pending_) delete static_cast<RecvCtx*>(ctx);
  recv_pending_.clear();
  ucp_cleanup(context_);
  context_ = nullptr;
  conns_.clear();
  by_ep_.clear();
  MutexLock lock(&peers_mu_);
  peers_.clear();
}

}  // namespace rigel::transport::ucx_internal
