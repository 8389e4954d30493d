// The UCX backend's implementation class, shared by transport.cc (setup,
// sending, shutdown) and progress.cc (the progress thread: receiving,
// handshakes, connection failures). Internal.
//
// Threads and locks. The progress thread owns the UCX worker's progress, the
// listener, every endpoint's creation and closing, and the maps below marked
// "progress thread". Senders (any thread) post active messages on a Ready
// connection's endpoint under that connection's `mu`, which keeps a
// connection's messages in order; ucx_mu_ serialises every call into UCX.
// UCX callbacks run inside ucp_worker_progress with ucx_mu_ held, so they
// take no Conn::mu: they only record what happened (arrivals_, leaf locks,
// atomics), and the progress thread acts on it after progress returns. Lock
// order: Conn::mu, then ucx_mu_; peers_mu_, flow_mu_ and events_mu_ are leaves.
#ifndef RIGEL_TRANSPORT_UCX_TRANSPORT_IMPL_H_
#define RIGEL_TRANSPORT_UCX_TRANSPORT_IMPL_H_

#include <sys/socket.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/check.h"
#include "common/mutex.h"
#include "transport/internal/core.h"
#include "transport/ucx/handshake.h"
#include "transport/ucx/transport.h"

namespace rigel::transport::ucx_internal {

using internal::Core;

// Active message ids.
constexpr unsigned kAmHandshake = 1;
constexpr unsigned kAmMessage = 2;
// A message is one active message. Its header: a word of magic (low 32
// bits), frame count (next 16) and flags (top 16), each frame's size (u64),
// then, with kFrame0InHeader, frame 0 (the encoded header frame) padded to 8.
// Its data: the other frames, contiguous, each but the last padded to 8, so
// that a message with one large payload frame goes from that frame's memory
// by UCX's rendezvous (zero-copy where the transport can) and several are
// joined into one buffer first (UCX 1.13 sends a scattered buffer by copying
// fragments, not by rendezvous).
constexpr uint32_t kMessageMagic = 0x4d4c4752;  // "RGLM"
constexpr uint64_t kFrame0InHeader = 1;
// How long a connection may take to finish its handshake.
constexpr Millis kHandshakeTimeout{10000};
// How long one dial may wait for the listener's challenge: a connection
// within the host reports no failure (UCP_ERR_HANDLING_MODE_NONE), so a peer
// not listening yet (ranks started together by mpirun) shows only as no
// answer. Each failed attempt doubles it, up to kHandshakeTimeout.
constexpr Millis kDialAttemptTimeout{1000};
// Redial back-off after a lost or failed connection.
constexpr Millis kRedialMin{100};
constexpr Millis kRedialMax{1000};
// Inbound connections not yet authenticated, at most.
constexpr size_t kMaxUnauthenticated = 1024;

struct Conn;
class UcxTransport;

// One outgoing message: the active-message header and data, alive until UCX
// is done with them (`data` owns its bytes: the one payload frame it is, or
// the frames joined).
struct SendCtx {
  std::vector<uint64_t> header;  // the active-message header, in words
  Buffer data;                   // the active message's data (may be empty)
  size_t bytes = 0;              // the frames' bytes, for the counters
  std::shared_ptr<Conn> conn;    // whose in-flight count this message holds
  UcxTransport* transport = nullptr;
};

// One received message of a connection, delivered in arrival order.
struct Incoming {
  std::vector<uint64_t> sizes;  // frame sizes (frame 0: the header frame)
  Buffer head;                  // frame 0 when it came in the header
  Buffer data;                  // the other frames (or all), padded
  std::atomic<int> state{0};    // 0: receiving, 1: complete, 2: failed
};

enum class ConnState {
  kDialing,    // outbound, not yet dialled (the progress thread will)
  kHandshake,  // endpoint made, handshake under way
  kReady,      // authenticated; messages flow
  kLost,       // the endpoint failed; outbound ones are dialled again
  kRefused,    // authentication failed: stays failed until Connect names a new address
  kClosed,
};

struct Conn {
  Conn(uint64_t id, bool outbound) : id(id), outbound(outbound) {}
  const uint64_t id;
  const bool outbound;

  Mutex mu;
  ucp_ep_h ep RIGEL_GUARDED_BY(mu) = nullptr;
  ConnState state RIGEL_GUARDED_BY(mu) = ConnState::kDialing;
  Status failed RIGEL_GUARDED_BY(mu);                                // kRefused: why
  std::deque<std::unique_ptr<SendCtx>> queued RIGEL_GUARDED_BY(mu);  // until kReady

  // Messages queued or posted and not yet completed (back-pressure).
  std::atomic<int> in_flight{0};

  // Outbound: whom and where we dial (fixed). Inbound: set from the hello.
  PeerId peer;
  std::string address;
  sockaddr_storage sockaddr{};
  socklen_t sockaddr_len = 0;
  std::shared_ptr<const std::string> reply_address;

  // Progress thread only.
  Nonce my_nonce{};
  Nonce their_nonce{};
  bool hello_seen = false;
  bool unauthenticated = false;  // counted in unauthenticated_
  Clock::time_point handshake_deadline{};
  Clock::time_point redial_at{};
  Millis backoff{kRedialMin};
  Millis attempt_timeout{kDialAttemptTimeout};
  std::deque<std::shared_ptr<Incoming>> incoming;
};

// What a UCX callback saw, for the progress thread to act on.
struct Arrival {
  unsigned id = 0;
  ucp_ep_h ep = nullptr;
  std::vector<uint8_t> header;
  Buffer data;  // eager data, copied
  void* rndv_desc = nullptr;
  size_t length = 0;
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(const UcxOptions& o)
      : opts_(o),
        self_(o.self),
        spin_(o.spin),
        serve_spin_(o.serve_spin),
        core_(o.self.ToString(), o.request_timeout, o.max_in_flight) {}
  ~UcxTransport() override;

  Status Init();

  const PeerId& self() const override { return self_; }
  const std::string& address() const override { return address_; }
  Status Connect(const PeerId& peer, const std::string& address) override RIGEL_EXCLUDES(peers_mu_);
  void SetHandler(Handler handler) override { core_.SetHandler(std::move(handler)); }
  Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts) override {
    return Transmit(to, msg, wire::Kind::ONE_WAY, 0, SendWait(opts), false, nullptr);
  }
  Status Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                 const CallOptions& opts) override;
  Status Respond(const InMessage& request, OutMessage response) override {
    if (!request.valid() || !request.is_request()) {
      return InvalidArgument("Respond needs a received request");
    }
    return Transmit(request.from(), response, wire::Kind::RESPONSE, request.request_id(), Millis(0),
                    true, &request.reply_address());
  }
  TransportStats stats() const override { return core_.Snapshot(); }
  bool InReceiveThread() const override { return core_.OnReceiveThread(); }
  void Close() override;

  // Sends `frames` as they are (ucx_testing::SendRawFrames).
  Status TransmitRaw(const PeerId& to, std::vector<Buffer> frames);

  // UCX callbacks (progress.cc).
  static ucs_status_t OnHandshakeAm(void* arg, const void* header, size_t header_length, void* data,
                                    size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t OnMessageAm(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param);
  static void OnHandshakeSent(void* request, ucs_status_t status, void* user_data);
  static void OnConnRequest(ucp_conn_request_h request, void* arg);
  static void OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void OnSendDone(void* request, ucs_status_t status, void* user_data);
  static void OnRecvDone(void* request, ucs_status_t status, size_t length, void* user_data);

 private:
  Status Closed() const { return FailedPrecondition(self_.ToString() + ": transport is closed"); }
  Millis SendWait(const CallOptions& o) const {
    return o.send_timeout.count() < 0 ? opts_.send_timeout : o.send_timeout;
  }
  // Wakes the progress thread (a worker that Teardown destroyed is not touched).
  void Wake() {
    MutexLock lock(&ucx_mu_);
    if (worker_ != nullptr) ucp_worker_signal(worker_);
  }
  Status Transmit(const PeerId& to, OutMessage& msg, wire::Kind kind, uint64_t id, Millis wait,
                  bool is_response, const std::string* reply_address);
  // Waits for room (not for responses), then posts `ctx` or queues it until
  // the connection is ready.
  Status Enqueue(const std::shared_ptr<Conn>& c, std::unique_ptr<SendCtx> ctx, const PeerId& to,
                 uint64_t id, Millis wait, bool is_response);
  std::shared_ptr<Conn> RouteTo(const PeerId& to) RIGEL_EXCLUDES(peers_mu_);
  // Posts `ctx` on the connection's endpoint. Returns false (releasing the
  // message, saying why in *why) if UCX refused it.
  bool Post(Conn& c, std::unique_ptr<SendCtx> ctx, std::string* why) RIGEL_REQUIRES(c.mu);
  // Releases a message UCX is done with (or never took) and its room.
  void Finish(SendCtx* ctx);
  // Lays `frames` (the header frame first) out as ctx's header and data.
  void Lay(const std::vector<Buffer>& frames, SendCtx& ctx) const;

  // Progress thread (progress.cc).
  void Run();
  ucs_status_t Arrive(unsigned id, const void* header, size_t header_length, void* data,
                      size_t length, const ucp_am_recv_param_t* param);
  bool ProcessEvents();
  void Dial(const std::shared_ptr<Conn>& c);
  void Accept(ucp_conn_request_h request);
  // Makes the connection's endpoint; `same_host`: the peer is on this host.
  ucp_ep_h MakeEp(const std::shared_ptr<Conn>& c, const ucp_ep_params_t& base, bool same_host);
  void SendHandshake(Conn& c, const Handshake& h) RIGEL_REQUIRES(c.mu);
  void OnHandshake(const std::shared_ptr<Conn>& c, const std::vector<uint8_t>& bytes);
  // Counts and logs a failed handshake, tells the peer why (unless it told
  // us), closes the connection; an outbound one stays failed if `sticky`.
  void Refuse(const std::shared_ptr<Conn>& c, const std::string& reason, bool sticky,
              bool tell_peer = true);
  void MarkReady(const std::shared_ptr<Conn>& c);
  void OnBye(const std::shared_ptr<Conn>& c);
  // Whether `c` is how this endpoint reaches its peer.
  bool IsRoute(const std::shared_ptr<Conn>& c) RIGEL_EXCLUDES(peers_mu_);
  // Whether `c` is the connection this endpoint dialled to its peer (not one
  // a later Connect replaced).
  bool IsDialledRoute(const std::shared_ptr<Conn>& c) RIGEL_EXCLUDES(peers_mu_);
  void OnMessage(const std::shared_ptr<Conn>& c, Arrival& a);
  void DeliverReady(const std::shared_ptr<Conn>& c);
  void OnLost(const std::shared_ptr<Conn>& c, ucs_status_t status);
  // Closes the connection's endpoint (flushing first unless `force`).
  void CloseEp(Conn& c, bool force) RIGEL_REQUIRES(c.mu);
  void Forget(const std::shared_ptr<Conn>& c);
  void RunTimers(Clock::time_point now);
  void ReapCloses();
  void DropArrival(Arrival& a);
  std::string Lanes(ucp_ep_h ep);
  void CountDrop(const Conn& c, DropReason reason, const Status& why);
  void Teardown();

  const UcxOptions opts_;
  const PeerId self_;
  size_t max_am_header_ = 0;  // the worker's limit on an active message's header
  // UcxOptions::spin and serve_spin, or $RIGEL_UCX_SPIN_US and
  // $RIGEL_UCX_SERVE_SPIN_US.
  std::chrono::microseconds spin_, serve_spin_;
  std::optional<AuthKey> auth_key_;
  std::string address_;
  Core core_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_listener_h listener_ = nullptr;
  int efd_ = -1;
  std::atomic<bool> closed_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> sleeping_{false};
  std::atomic<uint64_t> next_conn_id_{1};
  Mutex teardown_mu_;
  // Every call into the UCX worker (UCS_THREAD_MODE_SERIALIZED): a sleeping
  // lock, where UCX's own (UCS_THREAD_MODE_MULTI) spins, and senders and the
  // progress thread spun on it for a fifth of a worker's CPU time (perf, a9a
  // on 2 workers). UCX callbacks run under it, inside ucp_worker_progress.
  Mutex ucx_mu_;

  // Routes: the connection we dialled to a peer, else the last authenticated
  // one it dialled to us.
  struct Route {
    std::shared_ptr<Conn> out;
    std::shared_ptr<Conn> in;
  };
  Mutex peers_mu_;
  std::unordered_map<PeerId, Route, PeerIdHash> peers_ RIGEL_GUARDED_BY(peers_mu_);

  // Back-pressure: senders wait here for a connection's in-flight count to drop.
  Mutex flow_mu_;
  CondVar flow_cv_;
  std::atomic<int> flow_waiters_{0};

  // Handed from other threads (and UCX callbacks) to the progress thread.
  Mutex events_mu_;
  std::vector<std::shared_ptr<Conn>> to_dial_ RIGEL_GUARDED_BY(events_mu_);
  std::vector<std::pair<ucp_ep_h, ucs_status_t>> ep_errors_ RIGEL_GUARDED_BY(events_mu_);

  // Progress thread only (UCX calls its callbacks there).
  std::vector<Arrival> arrivals_;
  std::vector<ucp_conn_request_h> conn_requests_;
  std::vector<uint64_t> recv_done_;         // connections whose rendezvous finished
  std::unordered_set<void*> recv_pending_;  // RecvCtx of rendezvous in progress
  std::unordered_map<uint64_t, std::shared_ptr<Conn>> conns_;
  std::unordered_map<ucp_ep_h, std::shared_ptr<Conn>> by_ep_;
  std::vector<void*> closing_;  // ucp_ep_close_nbx requests not yet complete
  size_t unauthenticated_ = 0;
  std::unordered_set<std::string> lanes_seen_;  // transport choices logged at info
  Clock::time_point next_timer_{};
  std::thread thread_;
};

}  // namespace rigel::transport::ucx_internal

#endif  // RIGEL_TRANSPORT_UCX_TRANSPORT_IMPL_H_
