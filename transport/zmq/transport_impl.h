// The ZeroMQ backend's implementation class, shared by transport.cc (setup,
// sending, shutdown) and receive.cc (the receive thread). Internal.
#ifndef RIGEL_TRANSPORT_ZMQ_TRANSPORT_IMPL_H_
#define RIGEL_TRANSPORT_ZMQ_TRANSPORT_IMPL_H_

#include <zmq.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/check.h"
#include "common/mutex.h"
#include "transport/internal/core.h"
#include "transport/zmq/transport.h"

namespace rigel::transport::zmq_internal {

using internal::Core;

// Messages taken from the inbox per wake-up before timers are looked at again.
constexpr int kReceiveBatch = 256;
// How often a sender looks at its connection's monitor for a refused handshake.
constexpr Millis kMonitorCheckInterval{100};
// Reconnect attempts back off from 100 ms up to this (a refused or absent peer
// is retried without flooding it or the logs).
constexpr int kReconnectMaxMs = 1000;
constexpr int kInboxEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// What the receive thread knows about one connection identity (routing id).
struct Identity {
  bool valid = false;  // the routing id parsed
  PeerId peer;
  std::shared_ptr<const std::string> address;
  std::string name;      // for logs: "worker:3" or "an unidentified peer at ..."
  bool learned = false;  // we connected back to `address`
};

// Heterogeneous lookup: find a routing id without building a std::string.
struct BytesHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// One peer we send to: a DEALER socket and its handshake monitor.
struct Peer {
  Mutex mu;  // held while sending
  void* socket RIGEL_GUARDED_BY(mu) = nullptr;
  void* monitor RIGEL_GUARDED_BY(mu) = nullptr;
  std::string address RIGEL_GUARDED_BY(mu);
  Status failed RIGEL_GUARDED_BY(mu);  // sticky: authentication refused
  Clock::time_point next_monitor_check RIGEL_GUARDED_BY(mu){};
  uint32_t sends RIGEL_GUARDED_BY(mu) = 0;
};

// "WHAT: <libzmq's description of the last error>".
std::string ZmqError(const std::string& what);
int SetInt(void* socket, int option, int value);

class ZmqTransport final : public Transport {
 public:
  explicit ZmqTransport(const ZmqOptions& o)
      : opts_(o),
        ctx_(o.context),
        self_(o.self),
        core_(o.self.ToString(), o.request_timeout, o.max_in_flight) {}

  ~ZmqTransport() override {
    RIGEL_CHECK_MSG(std::this_thread::get_id() != thread_.get_id(),
                    "a transport must not be destroyed by its own handler");
    Close();
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

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

 private:
  Status Closed() const { return FailedPrecondition(self_.ToString() + ": transport is closed"); }
  Millis SendWait(const CallOptions& o) const {
    return o.send_timeout.count() < 0 ? opts_.send_timeout : o.send_timeout;
  }
  void Wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  Status CheckAddress(const std::string& address) const;
  Status OpenPeerSocket(Peer& p, const std::string& address) RIGEL_REQUIRES(p.mu);
  static void ClosePeerSocket(Peer& p) RIGEL_REQUIRES(p.mu);
  std::shared_ptr<Peer> FindPeer(const PeerId& to) RIGEL_EXCLUDES(peers_mu_);
  void CheckPeerMonitor(Peer& p, const PeerId& to, Status* newly_failed, bool sweep)
      RIGEL_REQUIRES(p.mu);
  Status Transmit(const PeerId& to, OutMessage& msg, wire::Kind kind, uint64_t id, Millis wait,
                  bool is_response, const std::string* reply_address);
  void Run();
  void ReceiveBatch();
  void Process(size_t n, bool too_many);
  Identity& IdentityOf(zmq_msg_t* routing_id, zmq_msg_t* first_frame);
  void DrainInboxMonitor();
  void SweepPeerMonitors() RIGEL_EXCLUDES(peers_mu_);
  void Teardown() RIGEL_REQUIRES(teardown_mu_) RIGEL_EXCLUDES(peers_mu_);

  const ZmqOptions opts_;
  std::shared_ptr<ZmqContext> ctx_;
  std::optional<ClusterKey> key_;
  std::string zap_domain_;
  const PeerId self_;
  std::string address_;
  std::string routing_id_;
  void* inbox_ = nullptr;
  void* inbox_monitor_ = nullptr;
  int wake_fd_ = -1;
  Core core_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> stop_{false};
  Mutex teardown_mu_;  // one Close joins the receive thread and tears down
  Mutex peers_mu_;
  std::unordered_map<PeerId, std::shared_ptr<Peer>, PeerIdHash> peers_ RIGEL_GUARDED_BY(peers_mu_);
  // Receive thread only: known identities (bounded), receive scratch frames.
  std::unordered_map<std::string, Identity, BytesHash, std::equal_to<>> identities_;
  std::vector<zmq_msg_t> scratch_;
  zmq_msg_t discard_;
  std::thread thread_;
};

}  // namespace rigel::transport::zmq_internal

#endif  // RIGEL_TRANSPORT_ZMQ_TRANSPORT_IMPL_H_
