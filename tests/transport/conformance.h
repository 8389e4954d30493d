// The backends the transport conformance suite (conformance_test.cc) runs
// over: one ConformanceCase per backend and configuration, each making a
// fresh ConformanceCluster for every test. A new backend is one more case in
// ConformanceCases(); what it cannot do it leaves null, and the tests that
// need it are skipped with a message saying which case and why.
//
// Thread-safety: a cluster's functions may be called from any thread.
#ifndef RIGEL_TESTS_TRANSPORT_CONFORMANCE_H_
#define RIGEL_TESTS_TRANSPORT_CONFORMANCE_H_

#include <zmq.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/status.h"
#include "transport/auth/keyfile.h"
#include "transport/create.h"
#include "transport/loopback_transport.h"
#include "transport/transport.h"
#include "transport/zmq/address.h"
#if RIGEL_HAVE_UCX
#include "transport/ucx/testing.h"
#endif

namespace rigel::transport::testing {

using MakeEndpoint = std::function<StatusOr<std::unique_ptr<Transport>>(const PeerId& self)>;
// Sends `frames` to `to` unvalidated, exactly as given (the first is the
// header frame), as a peer claiming to be `claimed` would.
using SendRawFrames =
    std::function<Status(Transport& to, const PeerId& claimed, std::vector<std::string> frames)>;

// The endpoints of one cluster (one loopback network, or one cluster key).
// Null members: the backend or case cannot do that.
struct ConformanceCluster {
  // An endpoint of this cluster whose CallOptions' negative values default to
  // `send_timeout` and `request_timeout`.
  std::function<StatusOr<std::unique_ptr<Transport>>(const PeerId& self, Millis send_timeout,
                                                     Millis request_timeout)>
      make;
  // An endpoint holding another cluster's key (keyed cases only).
  MakeEndpoint make_foreign;
  // An endpoint with no key (keyed cases only).
  MakeEndpoint make_plain;
  SendRawFrames send_raw;
};

struct ConformanceCase {
  std::string name;  // the test name's suffix: "zmq_curve"
  // Errors: kUnimplemented/kUnavailable when this machine cannot run the case
  // (the tests are skipped), anything else fails them.
  std::function<StatusOr<std::unique_ptr<ConformanceCluster>>()> new_cluster;
};

// For GoogleTest's messages: the case's name.
inline void PrintTo(const ConformanceCase& c, std::ostream* os) { *os << c.name; }

// Forwards to `inner`, giving CallOptions' negative values per-endpoint
// defaults (a LoopbackNetwork has one set for all its endpoints).
class WithDefaults final : public Transport {
 public:
  WithDefaults(std::unique_ptr<Transport> inner, Millis send_timeout, Millis request_timeout)
      : inner_(std::move(inner)), send_timeout_(send_timeout), request_timeout_(request_timeout) {}

  const PeerId& self() const override { return inner_->self(); }
  const std::string& address() const override { return inner_->address(); }
  Status Connect(const PeerId& peer, const std::string& address) override {
    return inner_->Connect(peer, address);
  }
  void SetHandler(Handler handler) override { inner_->SetHandler(std::move(handler)); }
  Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts) override {
    return inner_->Send(to, std::move(msg), Fill(opts));
  }
  Status Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                 const CallOptions& opts) override {
    return inner_->Request(to, std::move(msg), std::move(done), Fill(opts));
  }
  Status Respond(const InMessage& request, OutMessage response) override {
    return inner_->Respond(request, std::move(response));
  }
  TransportStats stats() const override { return inner_->stats(); }
  bool InReceiveThread() const override { return inner_->InReceiveThread(); }
  void Close() override { inner_->Close(); }

 private:
  CallOptions Fill(CallOptions o) const {
    if (o.send_timeout.count() < 0) o.send_timeout = send_timeout_;
    if (o.timeout.count() < 0) o.timeout = request_timeout_;
    return o;
  }

  std::unique_ptr<Transport> inner_;
  const Millis send_timeout_, request_timeout_;
};

inline ConformanceCase LoopbackCase() {
  return {"loopback", []() -> StatusOr<std::unique_ptr<ConformanceCluster>> {
            auto net = LoopbackNetwork::Create();
            auto c = std::make_unique<ConformanceCluster>();
            c->make = [net](const PeerId& self, Millis send_timeout,
                            Millis request_timeout) -> StatusOr<std::unique_ptr<Transport>> {
              RIGEL_ASSIGN_OR_RETURN(auto t, net->Join(self));
              return std::unique_ptr<Transport>(
                  std::make_unique<WithDefaults>(std::move(t), send_timeout, request_timeout));
            };
            // loopback_transport.h offers no way to put raw frames in an inbox.
            return c;
          }};
}

// Raw DEALER sockets presenting the routing id the ZeroMQ backend makes
// (zmq/address.h), with the cluster key pair when there is one; one socket
// per (receiver, claimed name), kept until the cluster goes, so that frames
// sent one after another arrive in that order.
class ZmqRawSender {
 public:
  explicit ZmqRawSender(std::optional<ClusterKey> key)
      : key_(std::move(key)), ctx_(zmq_ctx_new()) {}
  ~ZmqRawSender() {
    for (auto& [id, s] : sockets_) zmq_close(s);
    zmq_ctx_term(ctx_);
  }

  Status Send(Transport& to, const PeerId& claimed, const std::vector<std::string>& frames) {
    std::lock_guard<std::mutex> lock(mu_);
    RIGEL_ASSIGN_OR_RETURN(void* s, SocketFor(to.address(), claimed));
    for (size_t i = 0; i < frames.size(); ++i) {
      int more = i + 1 < frames.size() ? ZMQ_SNDMORE : 0;
      if (zmq_send(s, frames[i].data(), frames[i].size(), more) < 0) {
        return Unavailable(std::string("raw send: ") + zmq_strerror(zmq_errno()));
      }
    }
    return Status::Ok();
  }

 private:
  StatusOr<void*> SocketFor(const std::string& address, const PeerId& claimed) {
    std::string key = address + "|" + claimed.ToString();
    if (auto it = sockets_.find(key); it != sockets_.end()) return it->second;
    // The claimed address is never dialled successfully: a receiver that
    // connects back there only retries in the background.
    RIGEL_ASSIGN_OR_RETURN(std::string id,
                           zmq_internal::EncodeRoutingId(claimed, "tcp://127.0.0.1:1"));
    void* s = zmq_socket(ctx_, ZMQ_DEALER);
    int zero = 0;
    bool ok = s != nullptr && zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero) == 0 &&
              zmq_setsockopt(s, ZMQ_ROUTING_ID, id.data(), id.size()) == 0;
    if (ok && key_) {
      ok = zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, key_->public_key.c_str(), 41) == 0 &&
           zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, key_->public_key.c_str(), 41) == 0 &&
           zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, key_->secret_key.c_str(), 41) == 0;
    }
    ok = ok && zmq_connect(s, address.c_str()) == 0;
    if (!ok) {
      Status st = Internal(std::string("raw socket: ") + zmq_strerror(zmq_errno()));
      if (s != nullptr) zmq_close(s);
      return st;
    }
    sockets_.emplace(key, s);
    return s;
  }

  const std::optional<ClusterKey> key_;
  void* ctx_;
  std::mutex mu_;
  std::map<std::string, void*> sockets_;
};

// A backend's test seam that sends `frames` as given from its endpoint `from`
// to `to` (UCX's: ucx_testing::SendRawFrames, transport/ucx/testing.h).
using RawHook = std::function<Status(Transport& from, const PeerId& to,
                                     const std::vector<std::string>& frames)>;

// A raw sender over such a seam: the frames come from an endpoint of the
// cluster (made by `make`) named `claimed`, made on first use, connected to
// the receiver, and kept until the cluster goes.
inline SendRawFrames RawThroughEndpoint(decltype(ConformanceCluster::make) make, RawHook hook) {
  struct Senders {
    std::mutex mu;
    std::map<PeerId, std::unique_ptr<Transport>> by_name;
  };
  auto senders = std::make_shared<Senders>();
  return [make = std::move(make), hook = std::move(hook), senders](
             Transport& to, const PeerId& claimed, std::vector<std::string> frames) -> Status {
    std::lock_guard<std::mutex> lock(senders->mu);
    std::unique_ptr<Transport>& from = senders->by_name[claimed];
    if (from == nullptr) {
      const TransportOptions defaults;
      RIGEL_ASSIGN_OR_RETURN(from, make(claimed, defaults.send_timeout, defaults.request_timeout));
    }
    RIGEL_RETURN_IF_ERROR(from->Connect(to.self(), to.address()));
    return hook(*from, to.self(), frames);
  };
}

// A cluster of transport::Create endpoints made from `base` (its backend,
// listen address and backend options) and `key`. With a key, strangers too:
// endpoints with another cluster's key or with none.
inline std::unique_ptr<ConformanceCluster> CreateCluster(const TransportOptions& base,
                                                         std::optional<ClusterKey> key) {
  auto make = [base](const PeerId& self, std::optional<ClusterKey> key, Millis send_timeout,
                     Millis request_timeout) {
    TransportOptions o = base;
    o.self = self;
    o.key = std::move(key);
    o.send_timeout = send_timeout;
    o.request_timeout = request_timeout;
    return Create(o);
  };
  const TransportOptions defaults;
  auto c = std::make_unique<ConformanceCluster>();
  c->make = [make, key](const PeerId& self, Millis send_timeout, Millis request_timeout) {
    return make(self, key, send_timeout, request_timeout);
  };
  if (key) {
    c->make_foreign = [make, defaults](const PeerId& self) -> StatusOr<std::unique_ptr<Transport>> {
      RIGEL_ASSIGN_OR_RETURN(ClusterKey other, GenerateClusterKey());
      return make(self, other, defaults.send_timeout, defaults.request_timeout);
    };
    c->make_plain = [make, defaults](const PeerId& self) {
      return make(self, std::nullopt, defaults.send_timeout, defaults.request_timeout);
    };
  }
  return c;
}

inline ConformanceCase ZmqCase(std::string name, bool keyed) {
  return {std::move(name), [keyed]() -> StatusOr<std::unique_ptr<ConformanceCluster>> {
            TransportOptions base;
            base.backend = "zmq";
            base.listen = "tcp://127.0.0.1:*";
            std::optional<ClusterKey> key;
            if (keyed) {
              RIGEL_ASSIGN_OR_RETURN(key, GenerateClusterKey());
            }
            auto c = CreateCluster(base, key);
            auto raw = std::make_shared<ZmqRawSender>(key);
            c->send_raw = [raw](Transport& to, const PeerId& claimed,
                                std::vector<std::string> frames) {
              return raw->Send(to, claimed, frames);
            };
            return c;
          }};
}

#if RIGEL_HAVE_UCX
// UCX over the transports `tls` names (UCX_TLS syntax), keyed.
inline ConformanceCase UcxCase(std::string name, std::string tls) {
  return {std::move(name), [tls]() -> StatusOr<std::unique_ptr<ConformanceCluster>> {
            TransportOptions base;
            base.backend = "ucx";
            base.listen = "ucx://127.0.0.1:*";
            base.ucx.tls = tls;
            RIGEL_ASSIGN_OR_RETURN(ClusterKey key, GenerateClusterKey());
            auto c = CreateCluster(base, key);
            c->send_raw = RawThroughEndpoint(c->make, ucx_testing::SendRawFrames);
            return c;
          }};
}
#endif

// Every case this binary can run.
inline std::vector<ConformanceCase> ConformanceCases() {
  std::vector<ConformanceCase> cases = {LoopbackCase(), ZmqCase("zmq_plain", false),
                                        ZmqCase("zmq_curve", true)};
#if RIGEL_HAVE_UCX
  cases.push_back(UcxCase("ucx_tcp", "tcp"));
  // Shared memory between the endpoints; UCX sets connections up over tcp.
  cases.push_back(UcxCase("ucx_shm", "sm,tcp"));
#endif
  return cases;
}

}  // namespace rigel::transport::testing

#endif  // RIGEL_TESTS_TRANSPORT_CONFORMANCE_H_
