#include "transport/internal/core.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "common/logging.h"

namespace rigel::transport::internal {
namespace {

// Distinct peers (or keys) logged about; beyond this, drops are only counted,
// so a flood of forged identities cannot grow memory or the log without bound.
constexpr size_t kMaxLoggedKeys = 4096;

}  // namespace

Core::Core(std::string name, Millis default_timeout, int max_in_flight)
    : name_(std::move(name)),
      default_timeout_(default_timeout),
      max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight) {}

void Core::SetHandler(Handler handler) {
  auto h = handler ? std::make_shared<const Handler>(std::move(handler)) : nullptr;
  MutexLock lock(&handler_mu_);
  handler_ = std::move(h);
}

StatusOr<uint64_t> Core::AddRequest(const PeerId& to, uint64_t type, Millis timeout,
                                    ResponseCallback done, Clock::time_point wait_until,
                                    Clock::time_point* deadline) {
  if (timeout.count() < 0) timeout = default_timeout_;
  Clock::time_point start = Clock::now();
  MutexLock lock(&mu_);
  int& n = in_flight_[to];
  if (n >= max_in_flight_) {
    // The window bounds the responses a peer may owe us, so they always fit
    // in its send queue (see transport.h, back-pressure).
    if (!OnReceiveThread()) {
      ++window_waiters_;
      while (in_flight_[to] >= max_in_flight_) {
        if (window_cv_.WaitUntil(&mu_, wait_until) == std::cv_status::timeout) break;
      }
      --window_waiters_;
    }
    if (in_flight_[to] >= max_in_flight_) {
      counters_.send_queue_full.fetch_add(1, std::memory_order_relaxed);
      return Unavailable(
          fmt::format("{}: {} requests already in flight to {} (waited {} ms for one to finish)",
                      name_, max_in_flight_, to.ToString(),
                      std::chrono::duration_cast<Millis>(Clock::now() - start).count()));
    }
  }
  ++in_flight_[to];
  uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  *deadline = start + timeout;
  pending_.emplace(id, Pending{to, type, timeout, *deadline, std::move(done)});
  due_.emplace(*deadline, id);
  return id;
}

void Core::ReleaseSlot(const PeerId& to) {
  auto it = in_flight_.find(to);
  if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
  if (window_waiters_ > 0) window_cv_.NotifyAll();
}

Clock::time_point Core::NextDeadline() {
  MutexLock lock(&mu_);
  // Stale heap entries only make this earlier than needed: a harmless early wake.
  return due_.empty() ? Clock::time_point::max() : due_.top().first;
}

Clock::time_point Core::PlanWake(Clock::time_point next, Clock::time_point cap) {
  Clock::time_point t = std::min(next, cap);
  planned_wake_.store(t.time_since_epoch().count());
  return std::min(t, NextDeadline());
}

bool Core::CancelRequest(uint64_t id) {
  ResponseCallback dropped;  // destroyed outside the lock
  MutexLock lock(&mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  dropped = std::move(it->second.done);
  ReleaseSlot(it->second.to);
  pending_.erase(it);
  return true;
}

void Core::RunCallback(ResponseCallback& done, StatusOr<InMessage> result) {
  try {
    done(std::move(result));
  } catch (const std::exception& e) {
    counters_.handler_errors.fetch_add(1, std::memory_order_relaxed);
    WarnOnce("callback-exception",
             fmt::format("{}: a response callback threw: {}", name_, e.what()));
  } catch (...) {
    counters_.handler_errors.fetch_add(1, std::memory_order_relaxed);
    WarnOnce("callback-exception", fmt::format("{}: a response callback threw", name_));
  }
}

void Core::Deliver(InMessage msg) {
  counters_.messages_received.fetch_add(1, std::memory_order_relaxed);
  counters_.bytes_received.fetch_add(msg.wire_bytes(), std::memory_order_relaxed);
  if (msg.kind() == wire::Kind::RESPONSE) {
    ResponseCallback done;
    {
      MutexLock lock(&mu_);
      auto it = pending_.find(msg.request_id());
      // The sender must be the peer the request went to: request ids are
      // sequential, so another peer could otherwise answer for it.
      if (it != pending_.end() && it->second.to == msg.from()) {
        done = std::move(it->second.done);
        ReleaseSlot(it->second.to);
        pending_.erase(it);
      }
    }
    if (!done) {
      // Usually the request timed out first: say so once per peer, so that a
      // timeout is not mistaken for a lost response.
      counters_.late_responses.fetch_add(1, std::memory_order_relaxed);
      WarnOnce("late:" + msg.from().ToString(),
               fmt::format("{}: response to request #{} ({}) from {} matches no pending request "
                           "(it timed out, was answered already or went to another peer); "
                           "dropped, further ones are counted in late_responses",
                           name_, msg.request_id(), msg.type_name(), msg.from().ToString()));
      return;
    }
    if (msg.Is<transport::wire::Error>()) {
      RunCallback(done, ErrorToStatus(msg));
    } else {
      RunCallback(done, std::move(msg));
    }
    return;
  }
  std::shared_ptr<const Handler> handler;
  {
    MutexLock lock(&handler_mu_);
    handler = handler_;
  }
  if (!handler) {
    counters_.handler_errors.fetch_add(1, std::memory_order_relaxed);
    WarnOnce("no-handler", fmt::format("{}: no handler installed; dropping {} from {}", name_,
                                       msg.type_name(), msg.from().ToString()));
    return;
  }
  try {
    (*handler)(std::move(msg));
  } catch (const std::exception& e) {
    counters_.handler_errors.fetch_add(1, std::memory_order_relaxed);
    WarnOnce("handler-exception",
             fmt::format("{}: the message handler threw: {}", name_, e.what()));
  } catch (...) {
    counters_.handler_errors.fetch_add(1, std::memory_order_relaxed);
    WarnOnce("handler-exception", fmt::format("{}: the message handler threw", name_));
  }
}

Clock::time_point Core::ExpireDue(Clock::time_point now) {
  std::vector<std::pair<ResponseCallback, Status>> expired;
  Clock::time_point next = Clock::time_point::max();
  {
    MutexLock lock(&mu_);
    while (!due_.empty()) {
      auto [deadline, id] = due_.top();
      auto it = pending_.find(id);
      if (it == pending_.end() || it->second.deadline != deadline) {
        due_.pop();  // completed or cancelled already
        continue;
      }
      if (deadline > now) {
        next = deadline;
        break;
      }
      due_.pop();
      Pending& p = it->second;
      expired.emplace_back(std::move(p.done),
                           Unavailable(fmt::format(
                               "{}: request #{} ({}) to {} timed out after {} ms (deadline "
                               "exceeded: no response; a late one is counted in late_responses)",
                               name_, id, TypeName(p.type), p.to.ToString(), p.timeout.count())));
      ReleaseSlot(p.to);
      pending_.erase(it);
    }
  }
  counters_.requests_timed_out.fetch_add(expired.size(), std::memory_order_relaxed);
  for (auto& [done, status] : expired) RunCallback(done, status);
  return next;
}

void Core::FailAll(const Status& status) {
  std::vector<ResponseCallback> failed;
  {
    MutexLock lock(&mu_);
    for (auto& [id, p] : pending_) failed.push_back(std::move(p.done));
    pending_.clear();
    due_ = {};
    in_flight_.clear();
    if (window_waiters_ > 0) window_cv_.NotifyAll();
  }
  for (auto& done : failed) RunCallback(done, status);
}

void Core::FailPeer(const PeerId& peer, const Status& status) {
  std::vector<ResponseCallback> failed;
  {
    MutexLock lock(&mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.to == peer) {
        failed.push_back(std::move(it->second.done));
        ReleaseSlot(peer);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& done : failed) RunCallback(done, status);
}

void Core::CountDrop(const std::string& who, const std::string& connection, DropReason reason,
                     const Status& why) {
  counters_.dropped[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
  WarnOnce("drop:" + connection,
           fmt::format("{}: dropped a {} message from {}: {} (further drops on this connection "
                       "are counted, not logged)",
                       name_, DropReasonName(reason), who, why.message()));
}

void Core::WarnOnce(const std::string& key, const std::string& message) {
  {
    MutexLock lock(&log_mu_);
    if (logged_.size() >= kMaxLoggedKeys || !logged_.insert(key).second) return;
  }
  Log(LogLevel::kWarning, "transport", "{}", message);
}

TransportStats Core::Snapshot() const {
  TransportStats s;
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  s.messages_sent = get(counters_.messages_sent);
  s.bytes_sent = get(counters_.bytes_sent);
  s.messages_received = get(counters_.messages_received);
  s.bytes_received = get(counters_.bytes_received);
  s.requests_sent = get(counters_.requests_sent);
  s.requests_timed_out = get(counters_.requests_timed_out);
  s.late_responses = get(counters_.late_responses);
  s.responses_dropped = get(counters_.responses_dropped);
  s.send_queue_full = get(counters_.send_queue_full);
  s.handler_errors = get(counters_.handler_errors);
  s.auth_refused = get(counters_.auth_refused);
  for (size_t i = 0; i < s.dropped.size(); ++i) s.dropped[i] = get(counters_.dropped[i]);
  return s;
}

Status Core::SubmitRequest(const PeerId& to, uint64_t type, Millis timeout, ResponseCallback done,
                           Millis send_wait, const std::function<void()>& wake,
                           const std::function<Status(uint64_t id, Millis left)>& transmit) {
  Clock::time_point send_deadline = Clock::now() + send_wait, deadline;
  StatusOr<uint64_t> id = AddRequest(to, type, timeout, std::move(done), send_deadline, &deadline);
  if (!id.ok()) return id.status();
  if (NeedsWake(deadline)) wake();
  Millis left =
      std::max(Millis(0), std::chrono::duration_cast<Millis>(send_deadline - Clock::now()));
  Status st = transmit(*id, left);
  if (!st.ok()) return CancelRequest(*id) ? st : Status::Ok();
  counters_.requests_sent.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status Core::DropResponse(const PeerId& to, uint64_t id, const std::string& why) {
  counters_.responses_dropped.fetch_add(1, std::memory_order_relaxed);
  Status st = Unavailable(fmt::format(
      "{}: {}; response to request #{} dropped, the requester will time out", name_, why, id));
  WarnOnce("response-dropped:" + to.ToString(),
           st.message() + " (further drops are counted in responses_dropped)");
  return st;
}

}  // namespace rigel::transport::internal
