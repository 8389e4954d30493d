#include "transport/zmq/address.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

namespace rigel::transport::zmq_internal {
namespace {

constexpr char kMarker = 'R';
constexpr char kFormat = 1;
constexpr size_t kFixedBytes = 7;  // marker, format, role, rank
constexpr size_t kMaxRoutingId = 255;

bool Printable(const std::string& s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

StatusOr<ParsedAddress> ParseAddress(const std::string& address) {
  ParsedAddress out;
  size_t sep = address.find("://");
  if (sep == std::string::npos) {
    return InvalidArgument(
        fmt::format("'{}' is not an address (tcp://HOST:PORT, ipc://PATH or "
                    "inproc://NAME)",
                    address));
  }
  out.scheme = address.substr(0, sep);
  std::string rest = address.substr(sep + 3);
  if (rest.empty() || !Printable(rest)) {
    return InvalidArgument(fmt::format("'{}': empty or non-printable location", address));
  }
  if (out.scheme == "ipc" || out.scheme == "inproc") return out;
  if (out.scheme != "tcp") {
    return InvalidArgument(fmt::format("'{}': unsupported transport '{}'", address, out.scheme));
  }
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    return InvalidArgument(fmt::format("'{}': expected tcp://HOST:PORT", address));
  }
  out.host = rest.substr(0, colon);
  out.port = rest.substr(colon + 1);
  if (out.host.find(';') != std::string::npos) {
    return InvalidArgument(fmt::format("'{}': source-address syntax is not supported", address));
  }
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  bool digits = out.port.find_first_not_of("0123456789") == std::string::npos;
  if (out.port != "*" && (!digits || out.port.size() > 5 || std::stoi(out.port) > 65535)) {
    return InvalidArgument(fmt::format("'{}': bad port '{}'", address, out.port));
  }
  return out;
}

bool IsLocalOnly(const ParsedAddress& a) {
  if (a.scheme != "tcp") return true;
  if (a.host == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, a.host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  return inet_pton(AF_INET6, a.host.c_str(), &v6) == 1 &&
         std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
}

bool HasWildcardHost(const ParsedAddress& a) {
  return a.scheme == "tcp" && (a.host == "*" || a.host == "0.0.0.0" || a.host == "::");
}

StatusOr<std::string> EncodeRoutingId(const PeerId& self, const std::string& address) {
  if (kFixedBytes + address.size() > kMaxRoutingId) {
    return InvalidArgument(fmt::format("address '{}' is longer than {} characters", address,
                                       kMaxRoutingId - kFixedBytes));
  }
  std::string id(kFixedBytes, '\0');
  id[0] = kMarker;
  id[1] = kFormat;
  id[2] = static_cast<char>(self.role);
  uint32_t rank = static_cast<uint32_t>(self.rank);
  for (int i = 0; i < 4; ++i) id[3 + i] = static_cast<char>((rank >> (8 * i)) & 0xff);
  return id + address;
}

bool DecodeRoutingId(const void* data, size_t size, PeerId* peer, std::string* address) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < kFixedBytes + 1 || size > kMaxRoutingId || p[0] != kMarker || p[1] != kFormat) {
    return false;
  }
  if (p[2] == 0 || p[2] > static_cast<unsigned char>(Role::kClient)) return false;
  uint32_t rank = 0;
  for (int i = 0; i < 4; ++i) rank |= uint32_t{p[3 + i]} << (8 * i);
  if (static_cast<int32_t>(rank) < 0) return false;
  std::string addr(reinterpret_cast<const char*>(p + kFixedBytes), size - kFixedBytes);
  if (!Printable(addr)) return false;
  peer->role = static_cast<Role>(p[2]);
  peer->rank = static_cast<int32_t>(rank);
  *address = std::move(addr);
  return true;
}

}  // namespace rigel::transport::zmq_internal
