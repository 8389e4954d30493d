// The ZeroMQ backend of Transport (see transport/transport.h for the contract
// and docs/transport.md for the design).
//
// Sockets. Each endpoint binds one ROUTER socket, its inbox, and opens one
// DEALER socket per peer it sends to. Everything a peer sends us (requests,
// one-way messages, responses) arrives on our inbox; everything we send to a
// peer leaves on our DEALER to it. So a pair of peers that talk both ways has
// two connections, and:
//  - the caller's thread sends directly on the DEALER (under a per-peer mutex):
//    no hand-off to another thread on the send path;
//  - one receive thread per transport polls the inbox, decodes and validates
//    each message, completes requests and runs the handler.
// A DEALER's routing id carries our PeerId and advertised address, so a
// receiver learns who sent a message and how to reach them (it connects back
// on its own when it first needs to answer).
//
// Addresses: tcp://HOST:PORT (PORT `*` for any free port), ipc://PATH,
// inproc://NAME (only between transports sharing a ZmqContext).
//
// Security. With a cluster key (key_file or key), every socket uses CURVE and
// the context's ZAP handler admits only peers holding the cluster key; others
// are refused and logged with their address. Without a key, the transport is
// plain and refuses to listen on anything but loopback (127.0.0.0/8, ::1,
// localhost), ipc or inproc, and logs that it runs unauthenticated.
//
// A peer that restarts at the same address is reconnected to automatically
// (ZeroMQ reconnects; messages queued meanwhile are delivered to the new
// process; requests in flight to the old one time out).
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
