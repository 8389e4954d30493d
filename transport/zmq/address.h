// Address parsing and connection identities for the ZeroMQ backend (internal).
#ifndef RIGEL_TRANSPORT_ZMQ_ADDRESS_H_
#define RIGEL_TRANSPORT_ZMQ_ADDRESS_H_

#include <cstddef>
#include <string>

#include "common/status.h"
#include "transport/message.h"

namespace rigel::transport::zmq_internal {

struct ParsedAddress {
  std::string scheme;  // "tcp", "ipc" or "inproc"
  std::string host;    // tcp only, without IPv6 brackets
  std::string port;    // tcp only: digits or "*"
};

// Parses tcp://HOST:PORT, ipc://PATH or inproc://NAME. Returns InvalidArgument
// naming the problem for anything else.
StatusOr<ParsedAddress> ParseAddress(const std::string& address);

// Whether traffic to/from this address cannot leave the machine: tcp on a
// loopback host (127.0.0.0/8, ::1, localhost), ipc or inproc.
bool IsLocalOnly(const ParsedAddress& address);

// Whether a tcp host is a wildcard (`*`, 0.0.0.0, ::), which peers cannot dial.
bool HasWildcardHost(const ParsedAddress& address);

// The ZeroMQ routing id a DEALER presents: 'R', format version 1, role, rank
// (int32 little-endian), then the advertised address. At most 255 bytes;
// returns InvalidArgument if the address is too long.
StatusOr<std::string> EncodeRoutingId(const PeerId& self, const std::string& address);

// Parses a routing id made by EncodeRoutingId. Returns false for anything
// else (bad marker, version, role, negative rank, non-printable address).
bool DecodeRoutingId(const void* data, size_t size, PeerId* peer, std::string* address);

}  // namespace rigel::transport::zmq_internal

#endif  // RIGEL_TRANSPORT_ZMQ_ADDRESS_H_
