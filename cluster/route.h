// Which of this host's addresses other hosts reach it by: the source address
// the kernel's routing table picks for packets to a given host. Members
// listen there (never on a loopback address another host cannot use).
//
// Thread-safe.
#ifndef RIGEL_CLUSTER_ROUTE_H_
#define RIGEL_CLUSTER_ROUTE_H_

#include <string>

#include "common/status.h"

namespace rigel::cluster {

// The local IPv4 address that routes to `host` (a name or address) at
// `port`; "127.0.0.1" for a loopback host. No packet is sent (a UDP socket is
// connected and asked for its address). Unavailable naming the host when it
// does not resolve or no route leads there.
StatusOr<std::string> LocalAddressTowards(const std::string& host, int port);

// The listen address of a member whose scheduler is at `scheduler`
// ("tcp://HOST:PORT" or "ucx://HOST:PORT"): the same scheme at IP, any port,
// with IP = LocalAddressTowards(HOST); the backend's loopback address for a
// scheduler without a host (ipc, inproc). Errors as LocalAddressTowards, and
// InvalidArgument for a scheduler address that is not one
// (transport/endpoint.h).
StatusOr<std::string> ListenTowards(const std::string& scheduler);

// Whether `host` is a loopback name or address (localhost, 127.x.x.x, ::1).
bool IsLoopbackHost(const std::string& host);

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_ROUTE_H_
