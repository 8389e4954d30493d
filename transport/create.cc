#include "transport/create.h"

#include <utility>

#include "transport/zmq/transport.h"

namespace rigel::transport {

namespace {

// What the messages list as built; one entry per branch of Create.
constexpr char kBuilt[] = "zmq";

// Backends Rigel has a name for but this binary has no code for (the RDMA
// verbs transport is not written yet: docs/architecture.md). They are told
// apart from typos so that the message says to use another binary or
// backend, not to check the spelling.
bool KnownButNotBuilt(const std::string& backend) { return backend == "ibverbs"; }

ZmqOptions ToZmq(const TransportOptions& o) {
  ZmqOptions z;
  z.self = o.self;
  z.listen = o.listen;
  z.advertise = o.advertise;
  z.key_file = o.key_file;
  z.key = o.key;
  z.insecure_plain = o.insecure_plain;
  z.limits = o.limits;
  z.send_timeout = o.send_timeout;
  z.request_timeout = o.request_timeout;
  return z;
}

}  // namespace

StatusOr<std::unique_ptr<Transport>> Create(const TransportOptions& options) {
  if (options.backend == "zmq") return CreateZmqTransport(ToZmq(options));
  if (KnownButNotBuilt(options.backend)) {
    return Unavailable("transport backend " + options.backend +
                       " is not built into this binary (built: " + kBuilt + ")");
  }
  return InvalidArgument("transport backend '" + options.backend +
                         "' is unknown (built: " + kBuilt + ")");
}

}  // namespace rigel::transport
