#include "transport/endpoint.h"

#include <fmt/format.h>

namespace rigel::transport {

std::string Endpoint::backend() const { return scheme == "ucx" ? "ucx" : "zmq"; }

bool Endpoint::IsLocalOnly() const {
  if (scheme == "ipc" || scheme == "inproc") return true;
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool Endpoint::HasWildcardHost() const { return host == "*" || host == "0.0.0.0" || host == "::"; }

int Endpoint::port_number() const {
  if (port.empty() || port == "*") return 0;
  return std::stoi(port);
}

std::string Endpoint::ToString() const {
  if (!has_host()) return scheme + "://" + path;
  return host.find(':') != std::string::npos ? fmt::format("{}://[{}]:{}", scheme, host, port)
                                             : fmt::format("{}://{}:{}", scheme, host, port);
}

StatusOr<Endpoint> ParseEndpoint(const std::string& address) {
  Endpoint e;
  const size_t sep = address.find("://");
  if (sep == std::string::npos) {
    return InvalidArgument(fmt::format(
        "'{}' is not an address (tcp://HOST:PORT, ucx://HOST:PORT, ipc://PATH or inproc://NAME)",
        address));
  }
  e.scheme = address.substr(0, sep);
  const std::string rest = address.substr(sep + 3);
  for (char c : rest) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidArgument(fmt::format("'{}': non-printable characters", address));
    }
  }
  if (rest.empty()) return InvalidArgument(fmt::format("'{}': nothing after '://'", address));
  if (e.scheme == "ipc" || e.scheme == "inproc") {
    e.path = rest;
    return e;
  }
  if (e.scheme != "tcp" && e.scheme != "ucx") {
    return InvalidArgument(fmt::format(
        "'{}': unknown scheme '{}' (tcp and ipc: the zmq transport; ucx: the ucx transport)",
        address, e.scheme));
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    return InvalidArgument(fmt::format("'{}': expected {}://HOST:PORT", address, e.scheme));
  }
  e.host = rest.substr(0, colon);
  e.port = rest.substr(colon + 1);
  if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  if (e.host.empty() || e.host.find_first_of("/;[]") != std::string::npos) {
    return InvalidArgument(fmt::format("'{}': bad host", address));
  }
  const bool digits = e.port.find_first_not_of("0123456789") == std::string::npos;
  if (e.port != "*" && (!digits || e.port.size() > 5 || std::stoi(e.port) > 65535)) {
    return InvalidArgument(fmt::format("'{}': bad port '{}'", address, e.port));
  }
  return e;
}

StatusOr<std::string> BackendOfAddress(const std::string& address) {
  RIGEL_ASSIGN_OR_RETURN(Endpoint e, ParseEndpoint(address));
  return e.backend();
}

std::string HostAddress(const std::string& backend, const std::string& host,
                        const std::string& port) {
  Endpoint e;
  e.scheme = backend == "ucx" ? "ucx" : "tcp";
  e.host = host;
  e.port = port;
  return e.ToString();
}

Status CheckBackendName(const std::string& backend) {
  if (backend == "zmq" || backend == "ucx") return Status::Ok();
  return InvalidArgument(fmt::format("--transport '{}': expected zmq or ucx", backend));
}

}  // namespace rigel::transport
