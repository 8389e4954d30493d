#include "transport/create.h"

#include <utility>

#include "common/config.h"
#include "transport/zmq/transport.h"
#if RIGEL_HAVE_UCX
#include "transport/ucx/transport.h"
#endif

namespace rigel::transport {

namespace {

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

#if RIGEL_HAVE_UCX
UcxOptions ToUcx(const TransportOptions& o) {
  UcxOptions u;
  u.self = o.self;
  u.listen = o.listen;
  u.advertise = o.advertise;
  u.key_file = o.key_file;
  u.key = o.key;
  u.insecure_plain = o.insecure_plain;
  u.limits = o.limits;
  u.send_timeout = o.send_timeout;
  u.request_timeout = o.request_timeout;
  u.tls = o.ucx.tls;
  u.spin = o.ucx.spin;
  u.serve_spin = o.ucx.serve_spin;
  return u;
}
#endif

}  // namespace

std::string BuiltBackends() { return RIGEL_HAVE_UCX ? "zmq, ucx" : "zmq"; }

std::string DefaultListen(const std::string& backend) {
  return backend == "ucx" ? "ucx://127.0.0.1:*" : "tcp://127.0.0.1:*";
}

StatusOr<std::unique_ptr<Transport>> Create(const TransportOptions& options) {
  if (options.backend == "zmq") return CreateZmqTransport(ToZmq(options));
#if RIGEL_HAVE_UCX
  if (options.backend == "ucx") return CreateUcxTransport(ToUcx(options));
#else
  if (options.backend == "ucx") {
    return Unavailable("transport backend ucx is not built into this binary (built: " +
                       BuiltBackends() + "); install libucx-dev and rebuild");
  }
#endif
  return InvalidArgument("transport backend '" + options.backend +
                         "' is unknown (built: " + BuiltBackends() + ")");
}

}  // namespace rigel::transport
