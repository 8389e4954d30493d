// transport::Create: how a role gets its Transport, choosing the backend by
// name, so that code outside transport/ never names a backend's header
// (the zmq/ sub-folder and any later one). The contract of what it returns
// is transport/transport.h's.
//
// Backends: "zmq" (ZeroMQ, always built; addresses and security as in
// transport/zmq/transport.h) and "ucx" (UCX: shared memory, RDMA verbs, TCP;
// built where CMake found libucx-dev, RIGEL_HAVE_UCX; transport/ucx/transport.h). The in-process LoopbackTransport and the
// FaultInjectingTransport wrapper are made from their own headers: they need
// objects (a LoopbackNetwork, an inner transport) that options cannot name.
//
// Thread-safety: Create may be called from any thread.
#ifndef RIGEL_TRANSPORT_CREATE_H_
#define RIGEL_TRANSPORT_CREATE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "transport/auth/keyfile.h"
#include "transport/codec.h"
#include "transport/message.h"
#include "transport/transport.h"

namespace rigel::transport {

// What every backend needs to know, then what only one backend reads.
// Defaults are the zmq backend's.
struct TransportOptions {
  // Which backend: "zmq" or "ucx".
  std::string backend = "zmq";
  PeerId self;
  // Where the inbox listens ("tcp://HOST:PORT" for zmq, "ucx://HOST:PORT" for
  // ucx; `*` for any free port). DefaultListen(backend) gives a loopback one.
  std::string listen = "tcp://127.0.0.1:*";
  // The address peers should use to reach us; empty: the bound address
  // (which must then not have a wildcard host such as 0.0.0.0).
  std::string advertise;
  // Cluster key file (ReadKeyFile); empty: use `key`; neither: plain mode.
  std::string key_file;
  std::optional<ClusterKey> key;
  // Plain mode beyond loopback, when a user asks for it (`--insecure-plain`):
  // no authentication and no encryption.
  bool insecure_plain = false;
  Limits limits;
  // Defaults for CallOptions' negative values (transport/transport.h).
  Millis send_timeout{5000};
  Millis request_timeout{10000};

  // The ucx backend's own options (transport/ucx/transport.h, UcxOptions).
  struct Ucx {
    // UCX transports to use (UCX_TLS syntax); empty: the environment's UCX_TLS, or all.
    std::string tls;
    // How long the progress thread polls after traffic before it sleeps,
    // waiting for responses and otherwise (UcxOptions; default 0).
    std::chrono::microseconds spin{0};
    std::chrono::microseconds serve_spin{0};
  } ucx;
};

// The backends this binary was built with, in the order Create knows them
// ("zmq" or "zmq, ucx").
std::string BuiltBackends();

// A loopback listen address with any free port for `backend`
// ("tcp://127.0.0.1:*", "ucx://127.0.0.1:*"); the zmq one for unknown names.
std::string DefaultListen(const std::string& backend);

// Makes the transport `options.backend` names, bound and receiving. The
// caller owns it. Errors: InvalidArgument for a backend name Rigel does not
// know ("transport backend 'x' is unknown (built: zmq, ucx)"); Unavailable
// for one Rigel knows that this binary was built without ("transport backend
// ucx is not built into this binary (built: zmq); install libucx-dev and
// rebuild"); otherwise the backend's own errors (bad address or options,
// plain mode beyond loopback, address in use, key file errors).
StatusOr<std::unique_ptr<Transport>> Create(const TransportOptions& options);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_CREATE_H_
