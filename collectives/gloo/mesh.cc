#include "collectives/gloo/mesh.h"

#include <fmt/format.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

namespace rigel::collectives::gloo_backend {

SigpipeBlocker::SigpipeBlocker() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  sigset_t pending;
  sigemptyset(&pending);
  was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

SigpipeBlocker::~SigpipeBlocker() {
  const int saved_errno = errno;
  sigset_t pending;
  sigemptyset(&pending);
  if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe, nullptr, &zero) == -1 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  errno = saved_errno;
}

namespace {

// Gloo's store interface reports failure by throwing; ours returns Status.
// The adapter throws gloo::IoException so Gloo's rendezvous unwinds cleanly,
// and keeps the Status for the caller.
class StoreAdapter : public ::gloo::rendezvous::Store {
 public:
  StoreAdapter(collectives::Store* store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Check(store_->Set(prefix_ + "/" + key, std::string(data.begin(), data.end())));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = store_->Get(prefix_ + "/" + key, timeout_);
    Check(v.status());
    return std::vector<char>(v->begin(), v->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    for (const std::string& k : keys) Check(store_->Get(prefix_ + "/" + k, t).status());
  }
  const Status& error() const { return error_; }

 private:
  void Check(const Status& s) {
    if (s.ok()) return;
    error_ = s;
    throw ::gloo::IoException(s.message());
  }
  collectives::Store* store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  Status error_;
};

// What rank `r` sends its peers in attempt `attempt`: a value no stray
// connection sends by chance.
uint64_t Token(int r, int attempt) {
  return 0x5249'4745'4c00'0000ULL ^ (static_cast<uint64_t>(attempt) << 32) ^
         static_cast<uint64_t>(r);
}

// Every rank sends its token to every other and checks theirs: a pair that
// took a stray connection for its peer fails here, within the timeout.
// Throws like Gloo does.
void CheckPairs(::gloo::Context& context, int attempt, std::chrono::milliseconds timeout) {
  const int n = context.size, me = context.rank;
  const uint64_t mine = Token(me, attempt);
  std::vector<uint64_t> got(n, 0);
  const uint64_t slot = context.nextSlot();
  std::vector<std::unique_ptr<::gloo::transport::UnboundBuffer>> sends, recvs;
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    sends.push_back(context.createUnboundBuffer(const_cast<uint64_t*>(&mine), sizeof mine));
    sends.back()->send(r, slot);
    recvs.push_back(context.createUnboundBuffer(&got[r], sizeof got[r]));
    recvs.back()->recv(r, slot);
  }
  // One deadline for the whole check, so that an attempt's length has a
  // bound the other ranks can wait out (JoinMesh).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  for (auto& b : sends) {
    if (!b->waitSend(left())) throw ::gloo::IoException("a pair check send was aborted");
  }
  for (auto& b : recvs) {
    if (!b->waitRecv(left())) throw ::gloo::IoException("a pair check receive was aborted");
  }
  for (int r = 0; r < n; ++r) {
    if (r != me && got[r] != Token(r, attempt)) {
      throw ::gloo::IoException(
          fmt::format("the pair to rank {} is not connected to it (got {:#x})", r, got[r]));
    }
  }
}

// One attempt on fresh ports with keys under `prefix`. A store error while
// waiting for the first addresses (a rank missing, the store failing) goes
// to `*store_error`; other failures are the returned Status.
StatusOr<Mesh> JoinOnce(Store* store, const CommunicatorOptions& o, const std::string& prefix,
                        int attempt, Status* store_error) {
  StoreAdapter adapter(store, prefix, o.timeout);
  StoreAdapter sync_adapter(store, prefix + "/sync", o.timeout);
  try {
    ::gloo::transport::tcp::attr attr;
    attr.hostname = o.host;
    Mesh m;
    m.device = ::gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<::gloo::rendezvous::Context>(o.rank, o.size);
    context->setTimeout(o.timeout);
    auto sync_context = std::make_shared<::gloo::rendezvous::Context>(o.rank, o.size);
    sync_context->setTimeout(o.timeout);
    if (o.size > 1) {
      context->connectFullMesh(adapter, m.device);
      sync_context->connectFullMesh(sync_adapter, m.device);
      CheckPairs(*context, attempt, o.timeout);
      CheckPairs(*sync_context, attempt, o.timeout);
      for (int r = 0; r < o.size; ++r) {
        if (r != o.rank) sync_context->getPair(r)->setSync(true, false);
      }
    }
    m.context = std::move(context);
    m.sync_context = std::move(sync_context);
    return m;
  } catch (const std::exception& e) {
    // Every rank publishes its first addresses before it connects anything:
    // waiting for them in vain means a rank never started. A rank that
    // failed while connecting publishes no sync addresses, so waiting for
    // those is this attempt failing, like a Gloo error.
    if (!adapter.error().ok()) {
      *store_error = adapter.error();
      return adapter.error();
    }
    return Unavailable(!sync_adapter.error().ok() ? sync_adapter.error().message() : e.what());
  }
}

}  // namespace

StatusOr<Mesh> JoinMesh(Store* store, const CommunicatorOptions& o) {
  // Also while the device (and so its thread) is created.
  SigpipeBlocker no_sigpipe;
  std::string first_failure;
  for (int attempt = 0; attempt < kJoinAttempts; ++attempt) {
    const std::string prefix =
        attempt == 0 ? o.prefix : fmt::format("{}/retry{}", o.prefix, attempt);
    Status store_error;
    StatusOr<Mesh> mesh = JoinOnce(store, o, prefix, attempt, &store_error);
    if (!store_error.ok()) return store_error;
    if (o.size == 1) return mesh;
    // Every rank learns how every other's attempt went, so that either all
    // keep this mesh or all make a new one.
    RIGEL_RETURN_IF_ERROR(store->Set(fmt::format("{}/joined/{}", prefix, o.rank),
                                     mesh.ok() ? "ok" : mesh.status().message()));
    // A rank that failed fast waits for peers that may still be waiting out
    // their pairs: Gloo waits up to o.timeout per pair and mesh, the check
    // o.timeout per mesh. Waiting that long only happens when all ranks are
    // alive (a missing one ends the join in JoinOnce).
    const auto longest_attempt = (2 * (o.size - 1) + 3) * o.timeout;
    bool all = true;
    for (int r = 0; r < o.size; ++r) {
      RIGEL_ASSIGN_OR_RETURN(std::string outcome,
                             store->Get(fmt::format("{}/joined/{}", prefix, r), longest_attempt));
      if (outcome == "ok") continue;
      all = false;
      if (first_failure.empty()) {
        first_failure = fmt::format("attempt {}, rank {}: {}", attempt + 1, r, outcome);
      }
    }
    if (all) return mesh;
  }
  return Unavailable(
      fmt::format("gloo: rank {} of {} could not join on {} in {} attempts; the "
                  "first failure: {}",
                  o.rank, o.size, o.host, kJoinAttempts, first_failure));
}

}  // namespace rigel::collectives::gloo_backend
