// Addresses of the UCX backend (internal): ucx://HOST:PORT, where HOST is a
// name, an IPv4 address or a bracketed IPv6 address and PORT digits or `*`
// (listen only: any free port). The port is a TCP port on which the endpoint's
// UCX listener accepts connections (UCX's sockaddr connection manager); the
// transports the connection then uses are UCX's choice (docs/transport.md).
#ifndef RIGEL_TRANSPORT_UCX_ADDRESS_H_
#define RIGEL_TRANSPORT_UCX_ADDRESS_H_

#include <sys/socket.h>

#include <string>

#include "common/status.h"

namespace rigel::transport::ucx_internal {

struct UcxAddress {
  std::string host;  // without IPv6 brackets
  int port = 0;      // 0: `*`
};

// Parses ucx://HOST:PORT. InvalidArgument naming the problem otherwise.
StatusOr<UcxAddress> ParseUcxAddress(const std::string& address);

// ucx://HOST:PORT, bracketing an IPv6 host.
std::string FormatUcxAddress(const std::string& host, int port);

// Whether the host is loopback (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(const std::string& host);
// Whether the host is a wildcard (`*`, 0.0.0.0, ::), which peers cannot dial.
bool IsWildcardHost(const std::string& host);

// The socket address of host:port (numeric hosts, or names resolved with
// getaddrinfo; `*` is the IPv4 wildcard). Unavailable if the name does not
// resolve.
StatusOr<sockaddr_storage> ResolveUcxAddress(const UcxAddress& address, socklen_t* length);

// Whether `address` is one of this host's own: loopback, or the address of
// one of its interfaces (getifaddrs).
bool IsOwnAddress(const sockaddr_storage& address);

}  // namespace rigel::transport::ucx_internal

#endif  // RIGEL_TRANSPORT_UCX_ADDRESS_H_
