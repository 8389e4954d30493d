// The UCX backend's connection handshake: how two endpoints prove to each
// other that they hold the cluster key (UCX itself authenticates nothing).
//
// The dialling side sends kHello (its PeerId, advertised address, a fresh
// nonce); the listening side answers kChallenge (its own nonce and, when it
// holds a key, a MAC of both nonces proving it); the dialler checks that proof
// and answers kProof (a MAC of both nonces, its PeerId and address). Either
// side that finds the other without the key, or with another cluster's key,
// sends kRefuse with the reason and closes the connection. The MACs are
// HMAC-SHA-512/256 (libsodium's crypto_auth) under a key derived from the
// cluster secret key, with a different label per direction, so a proof cannot
// be replayed or reflected. Without a cluster key both sides send empty
// proofs and a keyed side refuses them. Traffic after the handshake is
// authenticated by the connection it arrives on, not encrypted.
//
// Encoding: little-endian; magic "RGLU", format 1, the type, then the fields
// of that type. Decode never reads outside its input.
//
// Thread-safety: all functions are thread-safe.
#ifndef RIGEL_TRANSPORT_UCX_HANDSHAKE_H_
#define RIGEL_TRANSPORT_UCX_HANDSHAKE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/auth/keyfile.h"
#include "transport/message.h"

namespace rigel::transport::ucx_internal {

using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

// kBye: the sender is closing; the receiver closes its side first (and fails
// the requests it has pending there) so neither sees the other vanish.
enum class HandshakeType : uint8_t {
  kHello = 1,
  kChallenge = 2,
  kProof = 3,
  kRefuse = 4,
  kBye = 5,
};

struct Handshake {
  HandshakeType type = HandshakeType::kHello;
  // kHello: the dialler's identity and where it listens.
  PeerId peer;
  std::string address;
  // kHello: the dialler's nonce; kChallenge: the listener's.
  Nonce nonce{};
  // kChallenge, kProof: present when the sender holds a key.
  std::optional<Mac> proof;
  // kRefuse: why.
  std::string reason;
};

// The key the MACs use, derived from a cluster key (BLAKE2b of a label and
// the decoded secret key). InvalidArgument if the secret is not Z85.
using AuthKey = std::array<uint8_t, 32>;
StatusOr<AuthKey> DeriveAuthKey(const ClusterKey& key);

// A fresh random nonce (libsodium's randombytes).
Nonce NewNonce();

// The listener's proof: MAC("rigel-ucx listener" || dialler nonce || listener nonce).
Mac ListenerProof(const AuthKey& key, const Nonce& dialler, const Nonce& listener);
// The dialler's proof: MAC("rigel-ucx dialler" || listener nonce || dialler
// nonce || role || rank || address).
Mac DiallerProof(const AuthKey& key, const Nonce& dialler, const Nonce& listener,
                 const PeerId& peer, const std::string& address);
// Constant-time comparison.
bool SameMac(const Mac& a, const Mac& b);

std::vector<uint8_t> EncodeHandshake(const Handshake& h);
// InvalidArgument naming the problem for bytes that are not a handshake
// message of this format (wrong magic, format, type, lengths; an address or
// reason over 1,024 bytes).
StatusOr<Handshake> DecodeHandshake(std::span<const uint8_t> bytes);

}  // namespace rigel::transport::ucx_internal

#endif  // RIGEL_TRANSPORT_UCX_HANDSHAKE_H_
