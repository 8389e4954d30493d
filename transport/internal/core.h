// The backend-independent half of a transport endpoint: request correlation
// and per-request deadlines, the handler, counters, and "log once per peer"
// for dropped messages. The ZeroMQ and loopback backends both embed one, so
// requests, timeouts and drops behave the same whatever carries the bytes.
//
// Thread-safety: every method is thread-safe. Callbacks and the handler are
// always invoked without any internal lock held.
#ifndef RIGEL_TRANSPORT_INTERNAL_CORE_H_
#define RIGEL_TRANSPORT_INTERNAL_CORE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "transport/transport.h"

namespace rigel::transport::internal {

class Core {
 public:
  struct Counters {
    std::atomic<uint64_t> messages_sent{0}, bytes_sent{0}, messages_received{0}, bytes_received{0},
        requests_sent{0}, requests_timed_out{0}, late_responses{0}, responses_dropped{0},
        send_queue_full{0}, handler_errors{0}, auth_refused{0};
    std::array<std::atomic<uint64_t>, static_cast<size_t>(DropReason::kCount)> dropped{};
  };

  // `name` prefixes log lines ("worker:0"); `default_timeout` applies to
  // requests whose CallOptions::timeout is negative; at most `max_in_flight`
  // requests may be pending per peer.
  Core(std::string name, Millis default_timeout, int max_in_flight);

  // Declares the backend's receive thread: requests made on it never wait
  // for a window slot (the responses that would free one are delivered by
  // that very thread).
  void SetReceiveThread(std::thread::id id) { receive_thread_.store(id); }
  bool OnReceiveThread() const { return std::this_thread::get_id() == receive_thread_.load(); }

  void SetHandler(Handler handler) RIGEL_EXCLUDES(handler_mu_);

  // Registers a request to `to` whose response is due by `now + timeout`
  // (timeout negative: the default). If `to` already has max_in_flight
  // requests pending, waits for one to finish until `wait_until` (not on the
  // receive thread), then fails with Unavailable and drops `done` uncalled.
  // Returns the request id (never 0) and its deadline in *deadline; the
  // backend must make sure its receive thread wakes by then (see PlanWake).
  StatusOr<uint64_t> AddRequest(const PeerId& to, uint64_t type, Millis timeout,
                                ResponseCallback done, Clock::time_point wait_until,
                                Clock::time_point* deadline) RIGEL_EXCLUDES(mu_);
  // Forgets request `id` without calling its callback (its send failed).
  // Returns false if it was no longer pending: its callback has run or is
  // running (it timed out or the transport closed meanwhile).
  bool CancelRequest(uint64_t id) RIGEL_EXCLUDES(mu_);

  // Hands a received, validated message on: a response completes its request
  // (or counts as late), anything else goes to the handler.
  void Deliver(InMessage msg) RIGEL_EXCLUDES(mu_, handler_mu_);

  // Fails every request whose deadline is <= now with a timeout; returns the
  // earliest remaining deadline (Clock::time_point::max() if none).
  Clock::time_point ExpireDue(Clock::time_point now) RIGEL_EXCLUDES(mu_);
  // The earliest pending deadline (Clock::time_point::max() if none).
  Clock::time_point NextDeadline() RIGEL_EXCLUDES(mu_);
  // Fails every pending request with `status` (used by Close).
  void FailAll(const Status& status) RIGEL_EXCLUDES(mu_);
  // Fails every pending request to `peer` with `status`.
  void FailPeer(const PeerId& peer, const Status& status) RIGEL_EXCLUDES(mu_);

  // Counts a dropped message from `who` (a peer name or, when the identity
  // is unknown, its address) and logs it if it is the first on
  // `connection`: the warning is rationed per connection, not per claimed
  // name, so that junk sent under a forged name does not use up the real
  // peer's warning.
  void CountDrop(const std::string& who, const std::string& connection, DropReason reason,
                 const Status& why);
  // The Request of every backend: registers the request (waiting for a
  // window slot until the send deadline, now + send_wait), calls `wake` when
  // the receive thread must wake earlier for its deadline, then
  // `transmit(id, time left to send)`. A failed send forgets the request
  // unless its callback already ran (timeout, close), which then stays its
  // only outcome.
  Status SubmitRequest(const PeerId& to, uint64_t type, Millis timeout, ResponseCallback done,
                       Millis send_wait, const std::function<void()>& wake,
                       const std::function<Status(uint64_t id, Millis left)>& transmit);
  // A response to `to` (for request `id`) that could not be queued: counts
  // it, logs the first per requester and returns the kUnavailable for
  // Respond (handlers usually ignore it and the requester sees only its
  // timeout, so the reason is logged here).
  Status DropResponse(const PeerId& to, uint64_t id, const std::string& why);

  // Logs `message` at warning level once per `key` (bounded memory).
  void WarnOnce(const std::string& key, const std::string& message) RIGEL_EXCLUDES(log_mu_);

  // The receive thread's wake-up protocol, shared by the backends:
  //   receive thread: t = PlanWake(ExpireDue(now)); sleep until t or woken.
  //   requester:      AddRequest(..., &d); if (NeedsWake(d)) wake the thread.
  // PlanWake publishes the planned wake time and then re-reads the earliest
  // deadline, so a request added concurrently is either seen by the receive
  // thread or sees the published time and wakes it. Returns the time to sleep until.
  Clock::time_point PlanWake(Clock::time_point next, Clock::time_point cap) RIGEL_EXCLUDES(mu_);
  bool NeedsWake(Clock::time_point deadline) const {
    return deadline.time_since_epoch().count() < planned_wake_.load();
  }

  Counters& counters() { return counters_; }
  TransportStats Snapshot() const;
  const std::string& name() const { return name_; }
  Millis default_timeout() const { return default_timeout_; }

 private:
  struct Pending {
    PeerId to;
    uint64_t type;  // the request body's type id, for messages
    Millis timeout;
    Clock::time_point deadline;
    ResponseCallback done;
  };
  using Due = std::pair<Clock::time_point, uint64_t>;

  void RunCallback(ResponseCallback& done, StatusOr<InMessage> result) RIGEL_EXCLUDES(mu_);
  // Frees `to`'s window slot.
  void ReleaseSlot(const PeerId& to) RIGEL_REQUIRES(mu_);

  const std::string name_;
  const Millis default_timeout_;
  const int max_in_flight_;
  std::atomic<std::thread::id> receive_thread_{};
  Counters counters_;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<Clock::rep> planned_wake_{0};

  Mutex handler_mu_;
  std::shared_ptr<const Handler> handler_ RIGEL_GUARDED_BY(handler_mu_);

  Mutex mu_;
  std::unordered_map<uint64_t, Pending> pending_ RIGEL_GUARDED_BY(mu_);
  std::unordered_map<PeerId, int, PeerIdHash> in_flight_ RIGEL_GUARDED_BY(mu_);
  CondVar window_cv_;  // a window slot was freed
  int window_waiters_ RIGEL_GUARDED_BY(mu_) = 0;
  // Min-heap of deadlines; entries whose request is gone are skipped lazily.
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_ RIGEL_GUARDED_BY(mu_);

  Mutex log_mu_;
  std::unordered_set<std::string> logged_ RIGEL_GUARDED_BY(log_mu_);
};

}  // namespace rigel::transport::internal

#endif  // RIGEL_TRANSPORT_INTERNAL_CORE_H_
