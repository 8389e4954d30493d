// LoopbackTransport: endpoints in one process connected through a
// LoopbackNetwork, for unit tests of the layers above the transport (servers,
// workers, scheduler) without sockets.
//
// It behaves like the ZeroMQ backend where upper layers can tell: headers are
// encoded and go through the same decoder and validation; payload Buffers are
// passed by reference (zero copy, so the Buffer ownership rule matters just as
// much); each endpoint has its own receive thread running the handler and
// response callbacks; each has a bounded inbox (LoopbackOptions::queue_capacity
// messages) that gives the same back-pressure: Send/Request wait for room up
// to their send timeout, then fail with kUnavailable, and Request also waits
// for a slot in its per-peer window (max_in_flight). Responses are always
// queued (the window bounds them). Messages between two endpoints arrive in
// the order they were sent.
//
// Addresses are "loopback://ROLE:RANK"; every endpoint of a network can reach
// every other without Connect.
//
// Thread-safety: LoopbackNetwork and its transports are thread-safe.
#ifndef RIGEL_TRANSPORT_LOOPBACK_TRANSPORT_H_
#define RIGEL_TRANSPORT_LOOPBACK_TRANSPORT_H_

#include <cstddef>
#include <map>
#include <memory>

#include "common/mutex.h"
#include "common/status.h"
#include "transport/transport.h"

namespace rigel::transport {

struct LoopbackOptions {
  Limits limits;
  // Requests and one-way messages waiting in an endpoint's inbox. Responses
  // are not counted: each requester's window (max_in_flight) bounds them.
  size_t queue_capacity = 1024;
  int max_in_flight = 500;        // requests pending per peer before Request waits
  Millis send_timeout{5000};      // default CallOptions::send_timeout
  Millis request_timeout{10000};  // default CallOptions::timeout
};

namespace internal {
class LoopbackInbox;
}

class LoopbackNetwork : public std::enable_shared_from_this<LoopbackNetwork> {
 public:
  static std::shared_ptr<LoopbackNetwork> Create(const LoopbackOptions& options = {});

  // A new endpoint `self` on this network. Returns InvalidArgument if `self`
  // is already taken by an open endpoint. The endpoint leaves the network when
  // closed or destroyed.
  StatusOr<std::unique_ptr<Transport>> Join(const PeerId& self) RIGEL_EXCLUDES(mu_);

  const LoopbackOptions& options() const { return options_; }

  // Internal: the open inbox of `peer`, or null.
  std::shared_ptr<internal::LoopbackInbox> Find(const PeerId& peer) RIGEL_EXCLUDES(mu_);
  // Internal: removes `peer`'s registration if it is still `inbox`.
  void Leave(const PeerId& peer, const internal::LoopbackInbox* inbox) RIGEL_EXCLUDES(mu_);

  explicit LoopbackNetwork(const LoopbackOptions& options) : options_(options) {}

 private:
  const LoopbackOptions options_;
  Mutex mu_;
  std::map<PeerId, std::shared_ptr<internal::LoopbackInbox>> endpoints_ RIGEL_GUARDED_BY(mu_);
};

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_LOOPBACK_TRANSPORT_H_
