#include "transport/ucx/address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>

#include <cstring>

namespace rigel::transport::ucx_internal {

StatusOr<UcxAddress> ParseUcxAddress(const std::string& address) {
  constexpr char kScheme[] = "ucx://";
  if (address.rfind(kScheme, 0) != 0) {
    return InvalidArgument(fmt::format(
        "'{}' is not a UCX address (ucx://HOST:PORT); the ucx transport takes ucx:// addresses",
        address));
  }
  std::string rest = address.substr(sizeof kScheme - 1);
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    return InvalidArgument(fmt::format("'{}': expected ucx://HOST:PORT", address));
  }
  UcxAddress out;
  out.host = rest.substr(0, colon);
  std::string port = rest.substr(colon + 1);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  for (char c : out.host) {
    if (c < 0x21 || c > 0x7e || c == '/' || c == ';') {
      return InvalidArgument(fmt::format("'{}': bad host", address));
    }
  }
  if (port == "*") return out;
  bool digits = !port.empty() && port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || port.size() > 5 || std::stoi(port) == 0 || std::stoi(port) > 65535) {
    return InvalidArgument(fmt::format("'{}': bad port '{}'", address, port));
  }
  out.port = std::stoi(port);
  return out;
}

std::string FormatUcxAddress(const std::string& host, int port) {
  return host.find(':') != std::string::npos ? fmt::format("ucx://[{}]:{}", host, port)
                                             : fmt::format("ucx://{}:{}", host, port);
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool IsWildcardHost(const std::string& host) {
  return host == "*" || host == "0.0.0.0" || host == "::";
}

StatusOr<sockaddr_storage> ResolveUcxAddress(const UcxAddress& address, socklen_t* length) {
  sockaddr_storage out{};
  if (address.host == "*") {
    auto* in = reinterpret_cast<sockaddr_in*>(&out);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    in->sin_port = htons(static_cast<uint16_t>(address.port));
    *length = sizeof(sockaddr_in);
    return out;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(address.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Unavailable(fmt::format("cannot resolve '{}': {}", address.host, gai_strerror(rc)));
  }
  std::memcpy(&out, res->ai_addr, res->ai_addrlen);
  *length = res->ai_addrlen;
  freeaddrinfo(res);
  const auto port = htons(static_cast<uint16_t>(address.port));
  if (out.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&out)->sin_port = port;
  } else {
    reinterpret_cast<sockaddr_in6*>(&out)->sin6_port = port;
  }
  return out;
}

bool IsOwnAddress(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(address).sin_addr;
    if ((ntohl(a.s_addr) >> 24) == 127) return true;
  } else if (address.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
  } else {
    return false;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool own = false;
  for (ifaddrs* i = list; i != nullptr && !own; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != address.ss_family) continue;
    if (address.ss_family == AF_INET) {
      own = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr ==
            reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr;
    } else {
      own = std::memcmp(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr,
                        &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr,
                        sizeof(in6_addr)) == 0;
    }
  }
  freeifaddrs(list);
  return own;
}

}  // namespace rigel::transport::ucx_internal
