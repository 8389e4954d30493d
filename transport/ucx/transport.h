// The UCX backend of Transport (contract: transport/transport.h; how to choose
// it and configure UCX: docs/transport.md, "UCX backend"), on UCX's ucp API:
// shared memory between processes of one host, RDMA verbs (rc, dc, ud) where
// the host has an InfiniBand or RoCE device, TCP otherwise, as UCX picks (the
// log says what it picked per peer; UCX_TLS and UCX_NET_DEVICES restrict it).
//
// Each endpoint has one UCX worker and listens on ucx://HOST:PORT (UCX's
// sockaddr connection manager). A connection is made when a peer is first
// reached and carries both directions; messages are active messages whose
// header lists the frame sizes and whose data are the frames (UCX's
// rendezvous, zero-copy, above its threshold). One progress thread per
// endpoint polls while there is traffic and sleeps on the worker's event file
// descriptor when idle (UcxOptions::spin).
//
// Security: UCX authenticates nothing, so every connection starts with a
// challenge and response on the cluster key (transport/ucx/handshake.h): a
// member admits only peers that prove they hold it, and trusts a listener only
// if it proves the same. Traffic is authenticated, not encrypted: for trusted
// fabrics. Without a key the endpoint listens only on loopback unless
// insecure_plain says otherwise.
//
// Errors and thread-safety as in transport/transport.h.
#ifndef RIGEL_TRANSPORT_UCX_TRANSPORT_H_
#define RIGEL_TRANSPORT_UCX_TRANSPORT_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "transport/auth/keyfile.h"
#include "transport/transport.h"

namespace rigel::transport {

struct UcxOptions {
  PeerId self;
  // Where the listener accepts connections (ucx://HOST:PORT, `*`: any free port).
  std::string listen = "ucx://127.0.0.1:*";
  // The address peers should use; empty: the bound one (not a wildcard host).
  std::string advertise;
  // Cluster key file (ReadKeyFile); empty: use `key`; neither: plain mode.
  std::string key_file;
  std::optional<ClusterKey> key;
  bool insecure_plain = false;
  // UCX transports this endpoint may use (UCX_TLS syntax, "tcp",
  // "posix,sysv,cma,self", "rc,sm"...); empty: the environment's UCX_TLS, or all.
  std::string tls;
  Limits limits;
  // Messages queued or in flight per connection before Send waits.
  int send_hwm = 1000;
  // Requests pending per peer before Request waits.
  int max_in_flight = 500;
  Millis send_timeout{5000};
  Millis request_timeout{10000};
  // How long Close() keeps flushing unsent messages.
  Millis linger{1000};
  // How long the progress thread keeps polling after the last event before
  // it sleeps on the worker's event descriptor: `spin` while requests of this
  // endpoint are pending (a response within it costs no wake-up), `serve_spin`
  // otherwise (the next request of a stream finds a server awake). Default 0:
  // sleep at once, so that a job never uses more CPU than on ZeroMQ (polling
  // took 1.0-1.2x ZeroMQ's CPU per epoch with 5 processes on 2 cores, while
  // it cuts a 64 B round trip 3x where cores are free: docs/transport.md).
  // $RIGEL_UCX_SPIN_US and $RIGEL_UCX_SERVE_SPIN_US override them.
  std::chrono::microseconds spin{0};
  std::chrono::microseconds serve_spin{0};
};

// Creates the worker, listens and starts the progress thread. Errors:
// InvalidArgument (bad address or options), FailedPrecondition (plain mode
// asked to listen beyond loopback), Unavailable (address in use, UCX could
// not start), and key file errors (ReadKeyFile).
StatusOr<std::unique_ptr<Transport>> CreateUcxTransport(const UcxOptions& options);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_UCX_TRANSPORT_H_
