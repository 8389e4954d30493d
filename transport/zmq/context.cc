#include "transport/zmq/context.h"

#include <fmt/format.h>
#include <zmq.h>

#include <array>
#include <vector>

#include "common/logging.h"

namespace rigel::transport {
namespace {

// How often the ZAP thread checks for shutdown while idle.
constexpr long kZapPollMs = 100;
// Peer addresses logged per context; refusals beyond it are only counted.
constexpr size_t kMaxLogged = 4096;

std::string FrameString(zmq_msg_t* m) {
  return std::string(static_cast<const char*>(zmq_msg_data(m)), zmq_msg_size(m));
}

}  // namespace

StatusOr<std::shared_ptr<ZmqContext>> ZmqContext::Create(int io_threads) {
  void* ctx = zmq_ctx_new();
  if (ctx == nullptr) return Internal(fmt::format("zmq_ctx_new: {}", zmq_strerror(zmq_errno())));
  if (zmq_ctx_set(ctx, ZMQ_IO_THREADS, io_threads < 1 ? 1 : io_threads) != 0) {
    zmq_ctx_term(ctx);
    return InvalidArgument(
        fmt::format("zmq I/O threads {}: {}", io_threads, zmq_strerror(zmq_errno())));
  }
  return std::shared_ptr<ZmqContext>(new ZmqContext(ctx));
}

ZmqContext::~ZmqContext() {
  stop_.store(true);
  if (zap_thread_.joinable()) zap_thread_.join();
  // Blocks until every socket of the context is closed and has lingered.
  while (zmq_ctx_term(ctx_) != 0 && zmq_errno() == EINTR) {
  }
}

Status ZmqContext::AddCurveDomain(const std::string& domain, const std::string& client_key_z85,
                                  const std::string& name) {
  std::array<uint8_t, 32> key;
  if (client_key_z85.size() != 40 ||
      zmq_z85_decode(key.data(), client_key_z85.c_str()) == nullptr) {
    return InvalidArgument("CURVE key is not 40 characters of Z85");
  }
  MutexLock lock(&mu_);
  if (!zap_thread_.joinable()) {
    // Bound here, before any CURVE socket of this context can handshake:
    // without a ZAP handler libzmq would accept any client key.
    void* socket = zmq_socket(ctx_, ZMQ_REP);
    if (socket == nullptr)
      return Internal(fmt::format("ZAP socket: {}", zmq_strerror(zmq_errno())));
    int linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(socket, "inproc://zeromq.zap.01") != 0) {
      std::string err = zmq_strerror(zmq_errno());
      zmq_close(socket);
      return Internal("cannot bind the ZAP handler: " + err);
    }
    zap_thread_ = std::thread([this, socket] { RunZap(socket); });
  }
  domains_[domain] =
      Domain{std::string(reinterpret_cast<const char*>(key.data()), key.size()), name, 0};
  return Status::Ok();
}

void ZmqContext::RemoveCurveDomain(const std::string& domain) {
  MutexLock lock(&mu_);
  domains_.erase(domain);
}

uint64_t ZmqContext::refused(const std::string& domain) const {
  MutexLock lock(&mu_);
  auto it = domains_.find(domain);
  return it == domains_.end() ? 0 : it->second.refused;
}

std::string ZmqContext::Authenticate(const std::string& domain, const std::string& address,
                                     const std::string& mechanism, const std::string& key) {
  std::string name, why;
  {
    MutexLock lock(&mu_);
    auto it = domains_.find(domain);
    if (it != domains_.end() && mechanism == "CURVE" && key == it->second.key) return "200";
    if (it == domains_.end()) {
      why = fmt::format("unknown ZAP domain '{}'", domain);
      name = "zap";
    } else {
      ++it->second.refused;
      name = it->second.name;
      why = mechanism == "CURVE" ? "it did not present the cluster key"
                                 : fmt::format("it used the {} mechanism, not CURVE", mechanism);
    }
    if (logged_.size() >= kMaxLogged || !logged_.insert(domain + "|" + address).second)
      return "400";
  }
  std::string shown;
  if (key.size() == 32) {
    char z85[41];
    zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(key.data()), 32);
    shown = fmt::format(" (its key {}...)", std::string(z85, 8));
  }
  Log(LogLevel::kWarning, "transport", "{}: refused a peer at {}: {}{}", name, address, why, shown);
  return "400";
}

void ZmqContext::RunZap(void* socket) {
  // ZAP 1.0 (rfc.zeromq.org/spec/27): request frames are version, request id,
  // domain, address, identity, mechanism, then credentials.
  std::vector<zmq_msg_t> frames;
  while (!stop_.load()) {
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&item, 1, kZapPollMs);
    if (rc < 0 && zmq_errno() == ETERM) break;
    if (rc <= 0) continue;
    for (auto& f : frames) zmq_msg_close(&f);
    frames.clear();
    bool more = true;
    while (more) {
      frames.emplace_back();
      zmq_msg_init(&frames.back());
      if (zmq_msg_recv(&frames.back(), socket, 0) < 0) {
        more = false;
        break;
      }
      more = zmq_msg_more(&frames.back());
    }
    auto field = [&](size_t i) {
      return i < frames.size() ? FrameString(&frames[i]) : std::string();
    };
    std::string version = field(0), request_id = field(1), domain = field(2), address = field(3),
                mechanism = field(5), key = field(6);
    // A REP socket must answer every request, even one libzmq would never send.
    std::string status = version == "1.0" && frames.size() >= 6
                             ? Authenticate(domain, address, mechanism, key)
                             : std::string("400");
    const std::string reply[] = {
        "1.0", request_id, status, status == "200" ? "OK" : "not a cluster member", "", ""};
    for (size_t i = 0; i < 6; ++i) {
      zmq_send(socket, reply[i].data(), reply[i].size(), i + 1 < 6 ? ZMQ_SNDMORE : 0);
    }
  }
  for (auto& f : frames) zmq_msg_close(&f);
  zmq_close(socket);
}

}  // namespace rigel::transport
