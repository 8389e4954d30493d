#include "transport/ucx/handshake.h"

#include <fmt/format.h>
#include <sodium.h>
#include <zmq.h>

#include <cstring>

namespace rigel::transport::ucx_internal {
namespace {

constexpr uint8_t kMagic[4] = {'R', 'G', 'L', 'U'};
constexpr uint8_t kFormat = 1;
constexpr size_t kMaxText = 1024;

class Writer {
 public:
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) { Bytes(&v, sizeof v); }
  void Text(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  std::vector<uint8_t> Take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool Bytes(void* p, size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool U8(uint8_t* v) { return Bytes(v, 1); }
  bool U32(uint32_t* v) { return Bytes(v, sizeof *v); }
  bool Text(std::string* s) {
    uint32_t n;
    if (!U32(&n) || n > kMaxText || in_.size() - pos_ < n) return false;
    s->assign(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == in_.size(); }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

Mac Compute(const AuthKey& key, const std::vector<uint8_t>& input) {
  static_assert(crypto_auth_BYTES == 32 && crypto_auth_KEYBYTES == 32);
  Mac mac;
  crypto_auth(mac.data(), input.data(), input.size(), key.data());
  return mac;
}

void InitSodium() {
  // Idempotent and thread-safe; libzmq calls it too when it uses CURVE.
  static const int once = sodium_init();
  (void)once;
}

}  // namespace

StatusOr<AuthKey> DeriveAuthKey(const ClusterKey& key) {
  InitSodium();
  uint8_t secret[32];
  if (key.secret_key.size() != 40 || zmq_z85_decode(secret, key.secret_key.c_str()) == nullptr) {
    return InvalidArgument("the cluster secret key is not a 40-character Z85 key");
  }
  // A key of its own for the MACs, so the CURVE secret is never used for
  // anything else.
  static constexpr char kLabel[] = "rigel ucx handshake key v1";
  AuthKey out;
  crypto_generichash(out.data(), out.size(), secret, sizeof secret,
                     reinterpret_cast<const uint8_t*>(kLabel), sizeof kLabel - 1);
  sodium_memzero(secret, sizeof secret);
  return out;
}

Nonce NewNonce() {
  InitSodium();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

Mac ListenerProof(const AuthKey& key, const Nonce& dialler, const Nonce& listener) {
  static constexpr char kLabel[] = "rigel-ucx listener";
  std::vector<uint8_t> in(kLabel, kLabel + sizeof kLabel);
  in.insert(in.end(), dialler.begin(), dialler.end());
  in.insert(in.end(), listener.begin(), listener.end());
  return Compute(key, in);
}

Mac DiallerProof(const AuthKey& key, const Nonce& dialler, const Nonce& listener,
                 const PeerId& peer, const std::string& address) {
  static constexpr char kLabel[] = "rigel-ucx dialler";
  std::vector<uint8_t> in(kLabel, kLabel + sizeof kLabel);
  in.insert(in.end(), listener.begin(), listener.end());
  in.insert(in.end(), dialler.begin(), dialler.end());
  in.push_back(static_cast<uint8_t>(peer.role));
  const auto rank = static_cast<uint32_t>(peer.rank);
  const auto* r = reinterpret_cast<const uint8_t*>(&rank);
  in.insert(in.end(), r, r + sizeof rank);
  in.insert(in.end(), address.begin(), address.end());
  return Compute(key, in);
}

bool SameMac(const Mac& a, const Mac& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::vector<uint8_t> EncodeHandshake(const Handshake& h) {
  Writer w;
  w.Bytes(kMagic, sizeof kMagic);
  w.U8(kFormat);
  w.U8(static_cast<uint8_t>(h.type));
  switch (h.type) {
    case HandshakeType::kHello:
      w.U8(static_cast<uint8_t>(h.peer.role));
      w.U32(static_cast<uint32_t>(h.peer.rank));
      w.Text(h.address);
      w.Bytes(h.nonce.data(), h.nonce.size());
      break;
    case HandshakeType::kChallenge:
      w.Bytes(h.nonce.data(), h.nonce.size());
      [[fallthrough]];
    case HandshakeType::kProof:
      w.U8(h.proof ? 1 : 0);
      if (h.proof) w.Bytes(h.proof->data(), h.proof->size());
      break;
    case HandshakeType::kRefuse:
      w.Text(h.reason.substr(0, kMaxText));
      break;
    case HandshakeType::kBye:
      break;
  }
  return w.Take();
}

StatusOr<Handshake> DecodeHandshake(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint8_t magic[4] = {}, format = 0, type = 0;
  if (!r.Bytes(magic, 4) || std::memcmp(magic, kMagic, 4) != 0) {
    return InvalidArgument("not a Rigel UCX handshake message");
  }
  if (!r.U8(&format) || format != kFormat) {
    return InvalidArgument(
        fmt::format("handshake format {} (this build speaks {})", format, kFormat));
  }
  if (!r.U8(&type) || type < 1 || type > 5) return InvalidArgument("unknown handshake type");
  Handshake h;
  h.type = static_cast<HandshakeType>(type);
  bool ok = true;
  switch (h.type) {
    case HandshakeType::kHello: {
      uint8_t role = 0;
      uint32_t rank = 0;
      ok = r.U8(&role) && r.U32(&rank) && r.Text(&h.address) &&
           r.Bytes(h.nonce.data(), h.nonce.size());
      if (ok && (role == 0 || role > static_cast<uint8_t>(Role::kClient) ||
                 static_cast<int32_t>(rank) < 0)) {
        return InvalidArgument("handshake names no valid role and rank");
      }
      h.peer = {static_cast<Role>(role), static_cast<int32_t>(rank)};
      break;
    }
    case HandshakeType::kChallenge:
      ok = r.Bytes(h.nonce.data(), h.nonce.size());
      [[fallthrough]];
    case HandshakeType::kProof: {
      uint8_t has = 0;
      ok = ok && r.U8(&has) && has <= 1;
      if (ok && has == 1) {
        Mac m{};
        ok = r.Bytes(m.data(), m.size());
        h.proof = m;
      }
      break;
    }
    case HandshakeType::kRefuse:
      ok = r.Text(&h.reason);
      break;
    case HandshakeType::kBye:
      break;
  }
  if (!ok || !r.AtEnd()) return InvalidArgument("truncated or overlong handshake message");
  return h;
}

}  // namespace rigel::transport::ucx_internal
