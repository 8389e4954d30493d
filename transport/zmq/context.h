// ZmqContext: a libzmq context plus its ZAP authentication handler.
//
// A libzmq context holds the I/O threads; inproc:// addresses only connect
// sockets of the same context, so transports that talk over inproc must share
// one (ZmqOptions::context). ZAP (ZeroMQ's authentication protocol) has one
// handler per context, at inproc://zeromq.zap.01; this class runs it on its
// own thread once a CURVE transport registers a ZAP domain, and answers each
// handshake: accepted if the client proved it holds the key registered for
// its domain, refused (status 400, logged once per peer address with that
// address) otherwise. Peers that never reach ZAP (wrong server key, no CURVE
// at all) fail earlier in the handshake; the transport counts those through a
// socket monitor.
//
// Lifetime: transports hold a shared_ptr; the context is terminated (waiting
// for each socket's linger) when the last holder goes away.
// Thread-safety: all methods are thread-safe.
#ifndef RIGEL_TRANSPORT_ZMQ_CONTEXT_H_
#define RIGEL_TRANSPORT_ZMQ_CONTEXT_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace rigel::transport {

class ZmqContext {
 public:
  // A new context with `io_threads` libzmq I/O threads.
  static StatusOr<std::shared_ptr<ZmqContext>> Create(int io_threads = 1);
  ~ZmqContext();
  ZmqContext(const ZmqContext&) = delete;
  ZmqContext& operator=(const ZmqContext&) = delete;

  // The raw `void*` libzmq context.
  void* get() const { return ctx_; }

  // Accepts, for CURVE handshakes in ZAP domain `domain`, exactly the clients
  // whose long-term public key is `client_key_z85`. Starts the ZAP handler on
  // first use. `name` prefixes log lines about refusals. Returns Internal if
  // the handler cannot be bound.
  Status AddCurveDomain(const std::string& domain, const std::string& client_key_z85,
                        const std::string& name) RIGEL_EXCLUDES(mu_);
  void RemoveCurveDomain(const std::string& domain) RIGEL_EXCLUDES(mu_);
  // Handshakes refused by the ZAP handler for `domain` so far.
  uint64_t refused(const std::string& domain) const RIGEL_EXCLUDES(mu_);

  // A process-unique suffix for inproc endpoint and domain names.
  uint64_t NextId() { return next_id_.fetch_add(1); }

 private:
  struct Domain {
    std::string key;  // 32 raw bytes
    std::string name;
    uint64_t refused = 0;
  };

  explicit ZmqContext(void* ctx) : ctx_(ctx) {}
  void RunZap(void* socket);
  // Decides one ZAP request: returns "200" or "400" and logs refusals.
  std::string Authenticate(const std::string& domain, const std::string& address,
                           const std::string& mechanism, const std::string& key)
      RIGEL_EXCLUDES(mu_);

  void* ctx_;
  std::atomic<uint64_t> next_id_{1};
  mutable Mutex mu_;
  std::map<std::string, Domain> domains_ RIGEL_GUARDED_BY(mu_);
  std::set<std::string> logged_ RIGEL_GUARDED_BY(mu_);  // "domain|address" already logged
  std::thread zap_thread_ RIGEL_GUARDED_BY(mu_);        // started by the first AddCurveDomain
  std::atomic<bool> stop_{false};
};

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_ZMQ_CONTEXT_H_
