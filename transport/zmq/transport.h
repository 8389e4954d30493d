// The ZeroMQ backend of Transport (contract: transport/transport.h; sockets,
// routing ids and reconnection: docs/transport.md, "ZeroMQ backend").
//
// Each endpoint binds one ROUTER inbox and opens one DEALER per peer it sends
// to; callers send on the DEALER directly, one receive thread per transport
// decodes, validates and dispatches. Addresses: tcp://HOST:PORT (`*`: any
// free port), ipc://PATH, inproc://NAME (transports sharing a ZmqContext).
// With a cluster key every socket uses CURVE and only key holders are
// admitted; without one the transport refuses to listen beyond loopback, ipc
// or inproc unless ZmqOptions::insecure_plain asks for it. Errors and thread-safety as in
// transport/transport.h.
#ifndef RIGEL_TRANSPORT_ZMQ_TRANSPORT_H_
#define RIGEL_TRANSPORT_ZMQ_TRANSPORT_H_

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "transport/auth/keyfile.h"
#include "transport/transport.h"
#include "transport/zmq/context.h"

namespace rigel::transport {

struct ZmqOptions {
  PeerId self;
  // Where the inbox listens.
  std::string listen = "tcp://127.0.0.1:*";
  // The address peers should use to reach us; default: the bound address
  // (which must then not have a wildcard host such as 0.0.0.0).
  std::string advertise;
  // Cluster key file (ReadKeyFile); empty: use `key`; neither: plain mode.
  std::string key_file;
  std::optional<ClusterKey> key;
  // Plain mode beyond loopback, when a user asks for it (`--insecure-plain`):
  // no authentication and no encryption, for networks nobody else can reach.
  bool insecure_plain = false;
  // Shared context (needed for inproc); null: the transport makes its own.
  std::shared_ptr<ZmqContext> context;
  Limits limits;
  int send_hwm = 1000;  // messages queued per peer before Send waits
  int recv_hwm = 1000;  // messages queued per connection before ZeroMQ stops reading it
  // Requests pending per peer before Request waits. Keep it <= half the
  // peers' send_hwm: then the responses a peer owes us always fit in its
  // queue (ZeroMQ learns of reads in batches of half the high-water mark, so
  // a queue can look full with only half of it in use).
  int max_in_flight = 500;
  Millis send_timeout{5000};
  Millis request_timeout{10000};
  // How long unsent messages are kept trying after Close() (ZMQ_LINGER); the
  // transport's destructor (the context's termination) may wait that long.
  Millis linger{1000};
};

// Binds the inbox and starts the receive thread. Errors: InvalidArgument (bad
// address or options), FailedPrecondition (plain mode asked to listen beyond
// loopback), Unavailable (address in use), and key file errors (ReadKeyFile).
StatusOr<std::unique_ptr<Transport>> CreateZmqTransport(const ZmqOptions& options);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_ZMQ_TRANSPORT_H_
