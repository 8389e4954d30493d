// The UCX backend: setup, connecting, sending and shutdown. The progress
// thread is in progress.cc.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/logging.h"
#include "transport/ucx/address.h"
#include "transport/ucx/log.h"
#include "transport/ucx/testing.h"
#include "transport/ucx/transport_impl.h"

namespace rigel::transport {
namespace ucx_internal {
namespace {

std::string UcxError(const std::string& what, ucs_status_t status) {
  return fmt::format("{}: {}", what, ucs_status_string(status));
}

size_t Padded(size_t n) { return (n + 7) & ~size_t{7}; }

}  // namespace

void UcxTransport::Lay(const std::vector<Buffer>& frames, SendCtx& ctx) const {
  const size_t n = frames.size();
  for (const Buffer& f : frames) ctx.bytes += f.size();
  const size_t table = 8 * (1 + n);
  const bool head = n > 0 && table + Padded(frames[0].size()) <= max_am_header_;
  ctx.header.resize(1 + n + (head ? Padded(frames[0].size()) / 8 : 0), 0);
  ctx.header[0] =
      uint64_t{kMessageMagic} | (uint64_t{n} << 32) | ((head ? kFrame0InHeader : 0) << 48);
  for (size_t i = 0; i < n; ++i) ctx.header[1 + i] = frames[i].size();
  if (head && !frames[0].empty()) {
    std::memcpy(&ctx.header[1 + n], frames[0].data(), frames[0].size());
  }
  const size_t first = head ? 1 : 0;
  if (n - first == 1) {
    ctx.data = frames[first];  // zero-copy
  } else if (n - first > 1) {
    size_t total = 0;
    for (size_t i = first; i < n; ++i)
      total += i + 1 < n ? Padded(frames[i].size()) : frames[i].size();
    auto joined = std::shared_ptr<std::byte[]>(new std::byte[std::max<size_t>(total, 1)]());
    size_t at = 0;
    for (size_t i = first; i < n; ++i) {
      if (!frames[i].empty()) std::memcpy(joined.get() + at, frames[i].data(), frames[i].size());
      at += Padded(frames[i].size());
    }
    ctx.data = Buffer(std::shared_ptr<const void>(joined, joined.get()), joined.get(), total);
  }
}

UcxTransport::~UcxTransport() {
  RIGEL_CHECK_MSG(std::this_thread::get_id() != thread_.get_id(),
                  "a transport must not be destroyed by its own handler");
  Close();
}

Status UcxTransport::Init() {
  if (self_.role == Role::kUnknown || self_.rank < 0) {
    return InvalidArgument("UcxOptions::self needs a role and a rank >= 0");
  }
  std::optional<ClusterKey> key = opts_.key;
  if (!opts_.key_file.empty()) {
    RIGEL_ASSIGN_OR_RETURN(key, ReadKeyFile(opts_.key_file));
  }
  if (key) {
    RIGEL_ASSIGN_OR_RETURN(auth_key_, DeriveAuthKey(*key));
  }
  RIGEL_ASSIGN_OR_RETURN(UcxAddress listen, ParseUcxAddress(opts_.listen));
  if (!auth_key_) {
    if (!IsLoopbackHost(listen.host) && !opts_.insecure_plain) {
      return FailedPrecondition(fmt::format(
          "{}: refusing to listen on {} without a cluster key; plain (unauthenticated) mode binds "
          "only to loopback (make a key with `rigel keygen` and give --key-file, or accept an "
          "open port with --insecure-plain)",
          self_.ToString(), opts_.listen));
    }
    if (opts_.insecure_plain) {
      Log(LogLevel::kWarning, "transport",
          "{}: no cluster key and --insecure-plain: anyone who reaches {} can join or read the job",
          self_.ToString(), opts_.listen);
    }
  }
  std::string advertise = opts_.advertise;
  if (!advertise.empty()) {
    RIGEL_ASSIGN_OR_RETURN(UcxAddress a, ParseUcxAddress(advertise));
    if (IsWildcardHost(a.host) || a.port == 0) {
      return InvalidArgument(fmt::format("{}: peers cannot dial the advertised address {}",
                                         self_.ToString(), advertise));
    }
  } else if (IsWildcardHost(listen.host)) {
    return InvalidArgument(
        fmt::format("{}: listening on {}, peers cannot dial it; set an advertise address",
                    self_.ToString(), opts_.listen));
  }

  RouteUcxLog();  // before UCX can say anything: its default is standard output
  if (const char* s = std::getenv("RIGEL_UCX_SPIN_US"); s != nullptr && *s != '\0') {
    spin_ = std::chrono::microseconds(std::atoi(s));
  }
  if (const char* s = std::getenv("RIGEL_UCX_SERVE_SPIN_US"); s != nullptr && *s != '\0') {
    serve_spin_ = std::chrono::microseconds(std::atoi(s));
  }
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) return Unavailable(UcxError("UCX configuration", st));
  if (!opts_.tls.empty()) {
    st = ucp_config_modify(config, "TLS", opts_.tls.c_str());
    if (st != UCS_OK) {
      ucp_config_release(config);
      return InvalidArgument(UcxError(fmt::format("UCX transports '{}'", opts_.tls), st));
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  st = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (st != UCS_OK) return Unavailable(UcxError("UCX could not start", st));

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // ucx_mu_ serialises
  st = ucp_worker_create(context_, &wp, &worker_);
  if (st != UCS_OK) return Unavailable(UcxError("UCX worker", st));
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  st = ucp_worker_query(worker_, &attr);
  if (st != UCS_OK) return Unavailable(UcxError("UCX worker attributes", st));
  max_am_header_ = attr.max_am_header;
  st = ucp_worker_get_efd(worker_, &efd_);
  if (st != UCS_OK) return Unavailable(UcxError("UCX event descriptor", st));

  for (unsigned id : {kAmHandshake, kAmMessage}) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = id;
    hp.cb = id == kAmHandshake ? &UcxTransport::OnHandshakeAm : &UcxTransport::OnMessageAm;
    hp.arg = this;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    st = ucp_worker_set_am_recv_handler(worker_, &hp);
    if (st != UCS_OK) return Internal(UcxError("UCX active message handler", st));
  }

  socklen_t len = 0;
  RIGEL_ASSIGN_OR_RETURN(sockaddr_storage sa, ResolveUcxAddress(listen, &len));
  ucp_listener_params_t lp{};
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa);
  lp.sockaddr.addrlen = len;
  lp.conn_handler.cb = &UcxTransport::OnConnRequest;
  lp.conn_handler.arg = this;
  st = ucp_listener_create(worker_, &lp, &listener_);
  if (st != UCS_OK) {
    return Unavailable(
        UcxError(fmt::format("{}: cannot listen on {}", self_.ToString(), opts_.listen), st));
  }
  int port = listen.port;
  if (port == 0) {
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    st = ucp_listener_query(listener_, &attr);
    if (st != UCS_OK) return Internal(UcxError("UCX listener address", st));
    port = attr.sockaddr.ss_family == AF_INET
               ? ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port)
               : ntohs(reinterpret_cast<const sockaddr_in6*>(&attr.sockaddr)->sin6_port);
  }
  address_ = advertise.empty() ? FormatUcxAddress(listen.host, port) : advertise;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

Status UcxTransport::Connect(const PeerId& peer, const std::string& address) {
  if (closed_.load()) return Closed();
  RIGEL_ASSIGN_OR_RETURN(UcxAddress a, ParseUcxAddress(address));
  if (a.port == 0 || IsWildcardHost(a.host)) {
    return InvalidArgument(fmt::format("{}: cannot connect to '{}'", self_.ToString(), address));
  }
  if (!auth_key_ && !opts_.insecure_plain && !IsLoopbackHost(a.host)) {
    return FailedPrecondition(fmt::format(
        "{}: will not connect to {} without a cluster key (plain mode is loopback only)",
        self_.ToString(), address));
  }
  auto c = std::make_shared<Conn>(next_conn_id_.fetch_add(1), true);
  c->peer = peer;
  c->address = address;
  c->reply_address = std::make_shared<const std::string>(address);
  RIGEL_ASSIGN_OR_RETURN(c->sockaddr, ResolveUcxAddress(a, &c->sockaddr_len));
  std::shared_ptr<Conn> old;
  {
    MutexLock lock(&peers_mu_);
    Route& r = peers_[peer];
    if (r.out != nullptr && r.out->address == address) return Status::Ok();
    old = std::exchange(r.out, c);
  }
  {
    MutexLock lock(&events_mu_);
    to_dial_.push_back(c);
    // The progress thread closes a replaced connection when it sees it is no
    // longer anyone's route (Forget in RunTimers); marking it closed here
    // stops senders that still hold it.
    if (old != nullptr) to_dial_.push_back(old);
  }
  if (old != nullptr) {
    MutexLock lock(&old->mu);
    if (old->state != ConnState::kClosed) old->state = ConnState::kLost;
    old->failed = Unavailable(fmt::format("{}: connection to {} replaced by one to {}",
                                          self_.ToString(), peer.ToString(), address));
  }
  Wake();
  return Status::Ok();
}

std::shared_ptr<Conn> UcxTransport::RouteTo(const PeerId& to) {
  MutexLock lock(&peers_mu_);
  auto it = peers_.find(to);
  if (it == peers_.end()) return nullptr;
  return it->second.out != nullptr ? it->second.out : it->second.in;
}

void UcxTransport::Finish(SendCtx* ctx) {
  std::shared_ptr<Conn> conn = std::move(ctx->conn);
  delete ctx;
  if (conn == nullptr) return;
  conn->in_flight.fetch_sub(1);
  if (flow_waiters_.load() > 0) {
    MutexLock lock(&flow_mu_);
    flow_cv_.NotifyAll();
  }
}

void UcxTransport::OnSendDone(void* request, ucs_status_t status, void* user_data) {
  auto* ctx = static_cast<SendCtx*>(user_data);
  ctx->transport->Finish(ctx);
  ucp_request_free(request);
}

bool UcxTransport::Post(Conn& c, std::unique_ptr<SendCtx> ctx, std::string* why) {
  ucp_request_param_t p{};
  p.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.cb.send = &UcxTransport::OnSendDone;
  SendCtx* raw = ctx.get();
  p.user_data = raw;
  ucs_status_ptr_t r;
  {
    MutexLock lock(&ucx_mu_);
    r = ucp_am_send_nbx(c.ep, kAmMessage, raw->header.data(), raw->header.size() * sizeof(uint64_t),
                        raw->data.data(), raw->data.size(), &p);
  }
  if (UCS_PTR_IS_PTR(r)) {
    ctx.release();  // OnSendDone frees it
    // A posted send may need progress (a rendezvous, a full socket); wake a
    // sleeping progress thread.
    if (sleeping_.load()) Wake();
    return true;
  }
  Finish(ctx.release());
  if (UCS_PTR_STATUS(r) != UCS_OK) {
    *why = UcxError(fmt::format("{}: sending to {} failed", self_.ToString(), c.peer.ToString()),
                    UCS_PTR_STATUS(r));
    core_.WarnOnce("send:" + c.peer.ToString(), *why);
    return false;
  }
  return true;
}

Status UcxTransport::Transmit(const PeerId& to, OutMessage& msg, wire::Kind kind, uint64_t id,
                              Millis wait, bool is_response, const std::string* reply_address) {
  if (closed_.load()) return Closed();
  std::shared_ptr<Conn> c = RouteTo(to);
  if (c == nullptr && reply_address != nullptr && !reply_address->empty() &&
      Connect(to, *reply_address).ok()) {
    c = RouteTo(to);
  }
  if (c == nullptr) {
    std::string why = fmt::format("no address known for {}", to.ToString());
    if (is_response) return core_.DropResponse(to, id, why);
    return Unavailable(fmt::format("{}: {}", self_.ToString(), why));
  }
  RIGEL_RETURN_IF_ERROR(ValidateOutgoing(msg, opts_.limits));
  msg.header().setKind(kind);
  msg.header().setRequestId(id);

  // The message's pieces, built before any lock: the header frame (with the
  // small payload frames packed behind it), then the others, zero-copy.
  Frame0 plan = PlanFrame0(msg, opts_.limits);
  Buffer frame0 = EncodeFrame0ToBuffer(msg, plan);  // reads the packed frames
  std::vector<Buffer> payload = msg.TakeFrames();
  std::vector<Buffer> frames;
  frames.reserve(payload.size() - plan.packed + 1);
  frames.push_back(std::move(frame0));
  for (size_t i = plan.packed; i < payload.size(); ++i) frames.push_back(std::move(payload[i]));
  auto ctx = std::make_unique<SendCtx>();
  Lay(frames, *ctx);
  return Enqueue(c, std::move(ctx), to, id, wait, is_response);
}

Status UcxTransport::Enqueue(const std::shared_ptr<Conn>& c, std::unique_ptr<SendCtx> ctx,
                             const PeerId& to, uint64_t id, Millis wait, bool is_response) {
  const size_t bytes = ctx->bytes;
  // Room on the connection: wait up to `wait` (responses never wait).
  if (c->in_flight.load() >= opts_.send_hwm) {
    if (is_response) {
      return core_.DropResponse(
          to, id,
          fmt::format("send queue to {} is full ({} messages)", to.ToString(), opts_.send_hwm));
    }
    Clock::time_point deadline = Clock::now() + wait;
    MutexLock lock(&flow_mu_);
    flow_waiters_.fetch_add(1);
    while (c->in_flight.load() >= opts_.send_hwm && !closed_.load()) {
      if (flow_cv_.WaitUntil(&flow_mu_, deadline) == std::cv_status::timeout) break;
    }
    flow_waiters_.fetch_sub(1);
    if (c->in_flight.load() >= opts_.send_hwm) {
      core_.counters().send_queue_full.fetch_add(1, std::memory_order_relaxed);
      return Unavailable(fmt::format("{}: send queue to {} full for {} ms (peer slow or gone)",
                                     self_.ToString(), to.ToString(), wait.count()));
    }
  }

  ctx->conn = c;
  ctx->transport = this;
  Status result;
  bool wake = false, lost = false;
  {
    MutexLock lock(&c->mu);
    switch (c->state) {
      case ConnState::kRefused:
      case ConnState::kClosed:
        result = c->failed.ok() ? Closed() : c->failed;
        ctx->conn = nullptr;
        break;
      case ConnState::kReady:
        c->in_flight.fetch_add(1);
        if (std::string why; !Post(*c, std::move(ctx), &why)) {
          // The peer is gone (killed, or its host unreachable). As on a
          // ZeroMQ connection to a dead peer, the message is dropped, not
          // refused: whether a member died is the cluster's heartbeats' call,
          // and a member that failed here first would be blamed for it. The
          // progress thread closes the endpoint and dials again on demand.
          MutexLock events(&events_mu_);
          ep_errors_.emplace_back(c->ep, UCS_ERR_CONNECTION_RESET);
          lost = true;
        }
        break;
      default:
        if (!c->outbound) {
          // An inbound connection that failed: nothing will dial it again.
          result = Unavailable(
              fmt::format("{}: the connection from {} is gone", self_.ToString(), to.ToString()));
          ctx->conn = nullptr;
          break;
        }
        c->in_flight.fetch_add(1);
        c->queued.push_back(std::move(ctx));
        // A lost connection is dialled again once something waits for it.
        wake = c->state == ConnState::kDialing ||
               (c->state == ConnState::kLost && c->queued.size() == 1);
        break;
    }
  }
  if (wake) {
    {
      MutexLock lock(&events_mu_);
      to_dial_.push_back(c);
    }
    Wake();
  }
  if (lost) Wake();
  if (!result.ok()) {
    if (is_response) return core_.DropResponse(to, id, result.message());
    return result;
  }
  auto& counters = core_.counters();
  counters.messages_sent.fetch_add(1, std::memory_order_relaxed);
  counters.bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
  return Status::Ok();
}

Status UcxTransport::Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                             const CallOptions& opts) {
  if (closed_.load()) return Closed();
  return core_.SubmitRequest(
      to, msg.type(), opts.timeout, std::move(done), SendWait(opts), [this] { Wake(); },
      [&](uint64_t id, Millis left) {
        return Transmit(to, msg, wire::Kind::REQUEST, id, left, false, nullptr);
      });
}

void UcxTransport::Close() {
  closed_.store(true);
  stop_.store(true);
  Wake();
  {
    MutexLock lock(&flow_mu_);
    flow_cv_.NotifyAll();
  }
  if (std::this_thread::get_id() == thread_.get_id()) {
    // From a handler: the progress thread stops after it returns; the
    // destructor (elsewhere) tears down.
    core_.FailAll(Unavailable(self_.ToString() + ": transport closed"));
    return;
  }
  MutexLock teardown(&teardown_mu_);
  if (thread_.joinable()) thread_.join();
  core_.FailAll(Unavailable(self_.ToString() + ": transport closed"));
  Teardown();
}

Status UcxTransport::TransmitRaw(const PeerId& to, std::vector<Buffer> frames) {
  if (closed_.load()) return Closed();
  std::shared_ptr<Conn> c = RouteTo(to);
  if (c == nullptr) return InvalidArgument("no route to " + to.ToString());
  auto ctx = std::make_unique<SendCtx>();
  Lay(frames, *ctx);
  return Enqueue(c, std::move(ctx), to, 0, opts_.send_timeout, false);
}

}  // namespace ucx_internal

namespace ucx_testing {

Status SendRawFrames(Transport& from, const PeerId& to, const std::vector<std::string>& frames) {
  auto* ucx = dynamic_cast<ucx_internal::UcxTransport*>(&from);
  if (ucx == nullptr) return InvalidArgument("not a UCX transport");
  std::vector<Buffer> buffers;
  for (const std::string& f : frames) buffers.push_back(Buffer::Copy(f.data(), f.size()));
  return ucx->TransmitRaw(to, std::move(buffers));
}

}  // namespace ucx_testing

StatusOr<std::unique_ptr<Transport>> CreateUcxTransport(const UcxOptions& options) {
  auto t = std::make_unique<ucx_internal::UcxTransport>(options);
  RIGEL_RETURN_IF_ERROR(t->Init());
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace rigel::transport
