#include "transport/create.h"

#include <utility>

#include "common/config.h"
#include "transport/zmq/transport.h"
#if RIGEL_HAVE_UCX
#include "transport/ucx/transport.h"
#endif

namespace rigel::transport {

namespace {

// The fields every backend's options share, under the same names.
template <typename BackendOptions>
BackendOptions Common(const TransportOptions& o) {
  BackendOptions b;
  b.self = o.self;
  b.listen = o.listen;
  b.advertise = o.advertise;
  b.key_file = o.key_file;
  b.key = o.key;
  b.insecure_plain = o.insecure_plain;
  b.limits = o.limits;
  b.send_timeout = o.send_timeout;
  b.request_timeout = o.request_timeout;
  return b;
}

#if RIGEL_HAVE_UCX
UcxOptions ToUcx(const TransportOptions& o) {
  UcxOptions u = Common<UcxOptions>(o);
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
  if (options.backend == "zmq") return CreateZmqTransport(Common<ZmqOptions>(options));
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
