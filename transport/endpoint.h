// Endpoint: a transport address as a value ("tcp://10.0.0.2:4100",
// "ucx://[fe80::1]:4100", "ipc:///tmp/x", "inproc://name"), and which backend
// speaks it. The one place outside a backend where addresses are parsed:
// launchers, routing and the collectives' host take what they need from it
// instead of cutting strings. Schemes: tcp, ipc, inproc (the zmq backend),
// ucx (the ucx backend).
//
// Thread-safety: values; functions are thread-safe.
#ifndef RIGEL_TRANSPORT_ENDPOINT_H_
#define RIGEL_TRANSPORT_ENDPOINT_H_

#include <string>

#include "common/status.h"

namespace rigel::transport {

struct Endpoint {
  std::string scheme;  // "tcp", "ucx", "ipc", "inproc"
  std::string host;    // tcp and ucx: a name or an IP, without IPv6 brackets
  std::string port;    // tcp and ucx: digits, or "*" (any free port; listening only)
  std::string path;    // ipc and inproc

  // The backend that speaks this scheme: "zmq" or "ucx".
  std::string backend() const;
  // Whether it names a host and port (tcp, ucx).
  bool has_host() const { return !host.empty(); }
  // Whether traffic to it stays on this machine: a loopback host, ipc, inproc.
  bool IsLocalOnly() const;
  // Whether the host is a wildcard (`*`, 0.0.0.0, ::), which peers cannot dial.
  bool HasWildcardHost() const;
  // The port as a number; 0 for "*" or none.
  int port_number() const;
  // The address text, bracketing an IPv6 host.
  std::string ToString() const;
};

// Parses an address of any known scheme. InvalidArgument naming the problem
// ("'x' is not an address (tcp://HOST:PORT, ucx://HOST:PORT, ipc://PATH or
// inproc://NAME)", a bad port, an empty host).
StatusOr<Endpoint> ParseEndpoint(const std::string& address);

// The backend whose addresses `address` has ("zmq" for tcp/ipc/inproc, "ucx");
// InvalidArgument as ParseEndpoint.
StatusOr<std::string> BackendOfAddress(const std::string& address);

// The address of `host`:`port` for `backend` ("zmq": tcp://, "ucx": ucx://);
// port "*" for any free port.
std::string HostAddress(const std::string& backend, const std::string& host,
                        const std::string& port);

// InvalidArgument unless `backend` is "zmq" or "ucx" (the names --transport takes).
Status CheckBackendName(const std::string& backend);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_ENDPOINT_H_
