#include "transport/fault_injecting_transport.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace rigel::transport {
namespace {

Status CheckOptions(const FaultOptions& o) {
  for (double p : {o.drop, o.duplicate, o.reorder, o.delay}) {
    if (!(p >= 0 && p <= 1)) return InvalidArgument("fault probabilities must be in [0, 1]");
  }
  if (o.drop + o.duplicate + o.reorder + o.delay > 1 + 1e-9) {
    return InvalidArgument("fault probabilities must sum to at most 1");
  }
  if (o.delay_min.count() < 0 || o.delay_min > o.delay_max) {
    return InvalidArgument("fault delay range must satisfy 0 <= delay_min <= delay_max");
  }
  return Status::Ok();
}

enum class Fault { kNone, kDrop, kDuplicate, kReorder, kDelay, kCut };

}  // namespace

class FaultInjectingTransport::Impl {
 public:
  // Sends one copy of a message through the inner transport.
  using Transmit = std::function<Status(OutMessage)>;

  Impl(std::unique_ptr<Transport> inner, const FaultOptions& options)
      : inner_(std::move(inner)), opts_(options), rng_(options.seed) {
    timer_thread_ = std::thread([this] { RunTimers(); });
  }

  ~Impl() { Close(); }

  Status SetOptions(const FaultOptions& o) RIGEL_EXCLUDES(mu_) {
    RIGEL_RETURN_IF_ERROR(CheckOptions(o));
    MutexLock lock(&mu_);
    opts_ = o;
    rng_.seed(o.seed);
    return Status::Ok();
  }

  void Cut(const PeerId& p) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cut_.insert(p);
  }
  void Heal(const PeerId& p) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    cut_.erase(p);
  }
  bool IsCut(const PeerId& p) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (cut_.count(p) == 0) return false;
    ++counts_.cut;
    return true;
  }
  FaultCounts counts() const RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return counts_;
  }
  Transport& inner() { return *inner_; }
  bool InTimerOrReceiveThread() const {
    return inner_->InReceiveThread() || std::this_thread::get_id() == timer_thread_.get_id();
  }

  void SetHandler(Handler handler) {
    if (!handler) return inner_->SetHandler(nullptr);
    inner_->SetHandler([this, handler = std::move(handler)](InMessage msg) {
      if (!IsCut(msg.from())) handler(std::move(msg));
    });
  }

  Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts) {
    if (closed_.load()) return FailedPrecondition("transport is closed");
    return Outgoing(to, std::move(msg), [this, to, opts](OutMessage m) {
      return inner_->Send(to, std::move(m), opts);
    });
  }

  Status Respond(const InMessage& request, OutMessage response) {
    if (closed_.load()) return FailedPrecondition("transport is closed");
    if (!request.valid() || !request.is_request()) {
      return InvalidArgument("Respond needs a received request");
    }
    return Outgoing(request.from(), std::move(response), [this, request](OutMessage m) {
      return inner_->Respond(request, std::move(m));
    });
  }

  Status Request(const PeerId& to, OutMessage msg, ResponseCallback done, const CallOptions& opts)
      RIGEL_EXCLUDES(mu_) {
    if (closed_.load()) return FailedPrecondition("transport is closed");
    Millis timeout;
    auto state = std::make_shared<RequestState>(std::move(done));
    {
      MutexLock lock(&mu_);
      timeout = opts.timeout.count() < 0 ? opts_.request_timeout : opts.timeout;
      state->id = next_request_++;
      live_.emplace(state->id, state);
    }
    const Clock::time_point deadline = Clock::now() + timeout;
    // A response arriving over a cut link is swallowed; the deadline timer
    // below then reports the timeout, as a real cut would.
    ResponseCallback on_response = [this, state, to](StatusOr<InMessage> r) {
      if (r.ok() && IsCut(to)) return;
      Finish(state, std::move(r));
    };
    Transmit send = [this, to, opts, deadline, on_response](OutMessage m) {
      CallOptions o = opts;
      o.timeout = std::max(Millis(1), std::chrono::duration_cast<Millis>(deadline - Clock::now()));
      return inner_->Request(to, std::move(m), on_response, o);
    };
    Schedule(deadline, [this, state, to, timeout] {
      Finish(state, Unavailable(fmt::format("request to {} timed out after {} ms (fault injector)",
                                            to.ToString(), timeout.count())));
    });
    Status st = Outgoing(to, std::move(msg), send);
    if (!st.ok() && !Cancel(state)) return Status::Ok();  // already completed: keep "exactly once"
    return st;
  }

  void Close() RIGEL_EXCLUDES(mu_) {
    if (closed_.exchange(true)) return;
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    if (timer_thread_.joinable()) timer_thread_.join();
    inner_->Close();
    std::vector<std::shared_ptr<RequestState>> live;
    {
      MutexLock lock(&mu_);
      for (auto& [id, s] : live_) live.push_back(s);
    }
    for (auto& s : live) Finish(s, Unavailable("transport closed"));
  }

 private:
  struct RequestState {
    explicit RequestState(ResponseCallback d) : done(std::move(d)) {}
    uint64_t id = 0;  // set before the state is shared
    Mutex mu;
    ResponseCallback done RIGEL_GUARDED_BY(mu);
    bool finished RIGEL_GUARDED_BY(mu) = false;
  };
  struct Timer {
    Clock::time_point at;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Timer& o) const { return std::tie(at, seq) > std::tie(o.at, o.seq); }
  };
  struct Held {
    uint64_t generation = 0;
    std::function<void()> send;
  };

  // Calls the request's callback unless it already ran or was cancelled.
  void Finish(const std::shared_ptr<RequestState>& s, StatusOr<InMessage> result)
      RIGEL_EXCLUDES(mu_) {
    ResponseCallback done;
    {
      MutexLock lock(&s->mu);
      if (s->finished) return;
      s->finished = true;
      done = std::move(s->done);
    }
    {
      MutexLock lock(&mu_);
      live_.erase(s->id);
    }
    done(std::move(result));
  }

  // Marks the request finished without a callback; false if it already finished.
  bool Cancel(const std::shared_ptr<RequestState>& s) RIGEL_EXCLUDES(mu_) {
    {
      MutexLock lock(&s->mu);
      if (s->finished) return false;
      s->finished = true;
    }
    MutexLock lock(&mu_);
    live_.erase(s->id);
    return true;
  }

  Fault Decide(const PeerId& to, Millis* delay) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (cut_.count(to)) return Fault::kCut;
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if ((r -= opts_.drop) < 0) return Fault::kDrop;
    if ((r -= opts_.duplicate) < 0) return Fault::kDuplicate;
    if ((r -= opts_.reorder) < 0) return Fault::kReorder;
    if ((r -= opts_.delay) < 0) {
      *delay = Millis(std::uniform_int_distribution<int64_t>(opts_.delay_min.count(),
                                                             opts_.delay_max.count())(rng_));
      return Fault::kDelay;
    }
    return Fault::kNone;
  }

  Status Outgoing(const PeerId& to, OutMessage msg, const Transmit& send) RIGEL_EXCLUDES(mu_) {
    Millis delay{0};
    Fault fault = Decide(to, &delay);
    Status st;
    switch (fault) {
      case Fault::kCut:
        Count(&FaultCounts::cut);
        break;
      case Fault::kDrop:
        Count(&FaultCounts::dropped);
        break;
      case Fault::kNone:
        st = send(std::move(msg));
        break;
      case Fault::kDuplicate: {
        Count(&FaultCounts::duplicated);
        OutMessage copy = msg.Clone();
        st = send(std::move(msg));
        (void)send(std::move(copy));  // the copy's fate is the network's, not the caller's
        break;
      }
      case Fault::kDelay: {
        Count(&FaultCounts::delayed);
        auto m = std::make_shared<OutMessage>(std::move(msg));
        Schedule(Clock::now() + delay, [send, m] { (void)send(std::move(*m)); });
        break;
      }
      case Fault::kReorder: {
        auto m = std::make_shared<OutMessage>(std::move(msg));
        uint64_t generation = 0;
        Millis hold;
        {
          MutexLock lock(&mu_);
          Held& h = held_[to];
          if (!h.send) {
            ++counts_.reordered;
            generation = h.generation = ++hold_generation_;
            h.send = [send, m] { (void)send(std::move(*m)); };
            hold = opts_.reorder_hold;
          }
        }
        if (generation != 0) {
          Schedule(Clock::now() + hold, [this, to, generation] { FlushHeld(to, generation); });
          return Status::Ok();  // held: goes out after the next message to `to`
        }
        st = send(std::move(*m));  // one is held already: this one overtakes it
        break;
      }
    }
    FlushHeld(to, 0);
    return st;
  }

  // Sends the message held for `to`, if any (and, when generation != 0, only
  // if it is still the one that timer was set for).
  void FlushHeld(const PeerId& to, uint64_t generation) RIGEL_EXCLUDES(mu_) {
    std::function<void()> send;
    {
      MutexLock lock(&mu_);
      auto it = held_.find(to);
      if (it == held_.end() || !it->second.send) return;
      if (generation != 0 && it->second.generation != generation) return;
      send = std::move(it->second.send);
      held_.erase(it);
    }
    send();
  }

  void Count(uint64_t FaultCounts::*field) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++(counts_.*field);
  }

  void Schedule(Clock::time_point at, std::function<void()> fn) RIGEL_EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (stop_) return;
      timers_.push(Timer{at, next_timer_++, std::move(fn)});
    }
    cv_.NotifyAll();
  }

  // The timer thread: runs each timer once it falls due, without the lock.
  void RunTimers() RIGEL_EXCLUDES(mu_) {
    std::function<void()> fn;
    while (NextDue(&fn)) fn();
  }

  // Waits until the earliest timer falls due and moves its function to *fn;
  // false once Close stops the thread.
  bool NextDue(std::function<void()>* fn) RIGEL_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!stop_) {
      if (timers_.empty()) {
        cv_.Wait(&mu_);
        continue;
      }
      Clock::time_point at = timers_.top().at;
      if (Clock::now() < at) {
        cv_.WaitUntil(&mu_, at);
        continue;
      }
      *fn = std::move(const_cast<Timer&>(timers_.top()).fn);
      timers_.pop();
      return true;
    }
    return false;
  }

  std::unique_ptr<Transport> inner_;
  std::atomic<bool> closed_{false};

  std::thread timer_thread_;
  CondVar cv_;  // timers_ and stop_ changed

  mutable Mutex mu_;  // guards everything below
  FaultOptions opts_ RIGEL_GUARDED_BY(mu_);
  std::mt19937_64 rng_ RIGEL_GUARDED_BY(mu_);
  std::set<PeerId> cut_ RIGEL_GUARDED_BY(mu_);
  FaultCounts counts_ RIGEL_GUARDED_BY(mu_);
  std::map<PeerId, Held> held_ RIGEL_GUARDED_BY(mu_);
  uint64_t hold_generation_ RIGEL_GUARDED_BY(mu_) = 0;
  std::unordered_map<uint64_t, std::shared_ptr<RequestState>> live_ RIGEL_GUARDED_BY(mu_);
  uint64_t next_request_ RIGEL_GUARDED_BY(mu_) = 1;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_ RIGEL_GUARDED_BY(mu_);
  uint64_t next_timer_ RIGEL_GUARDED_BY(mu_) = 0;
  bool stop_ RIGEL_GUARDED_BY(mu_) = false;
};

StatusOr<std::unique_ptr<FaultInjectingTransport>> FaultInjectingTransport::Create(
    std::unique_ptr<Transport> inner, const FaultOptions& options) {
  if (inner == nullptr) return InvalidArgument("FaultInjectingTransport needs a transport");
  RIGEL_RETURN_IF_ERROR(CheckOptions(options));
  return std::unique_ptr<FaultInjectingTransport>(
      new FaultInjectingTransport(std::make_unique<Impl>(std::move(inner), options)));
}

FaultInjectingTransport::FaultInjectingTransport(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
FaultInjectingTransport::~FaultInjectingTransport() = default;

Status FaultInjectingTransport::SetOptions(const FaultOptions& o) { return impl_->SetOptions(o); }
void FaultInjectingTransport::Cut(const PeerId& peer) { impl_->Cut(peer); }
void FaultInjectingTransport::Heal(const PeerId& peer) { impl_->Heal(peer); }
FaultCounts FaultInjectingTransport::fault_counts() const { return impl_->counts(); }
Transport& FaultInjectingTransport::inner() { return impl_->inner(); }
const PeerId& FaultInjectingTransport::self() const { return impl_->inner().self(); }
const std::string& FaultInjectingTransport::address() const { return impl_->inner().address(); }
Status FaultInjectingTransport::Connect(const PeerId& peer, const std::string& address) {
  return impl_->inner().Connect(peer, address);
}
void FaultInjectingTransport::SetHandler(Handler handler) { impl_->SetHandler(std::move(handler)); }
Status FaultInjectingTransport::Send(const PeerId& to, OutMessage msg, const CallOptions& opts) {
  return impl_->Send(to, std::move(msg), opts);
}
Status FaultInjectingTransport::Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                                        const CallOptions& opts) {
  return impl_->Request(to, std::move(msg), std::move(done), opts);
}
Status FaultInjectingTransport::Respond(const InMessage& request, OutMessage response) {
  return impl_->Respond(request, std::move(response));
}
TransportStats FaultInjectingTransport::stats() const { return impl_->inner().stats(); }
bool FaultInjectingTransport::InReceiveThread() const { return impl_->InTimerOrReceiveThread(); }
void FaultInjectingTransport::Close() { impl_->Close(); }

}  // namespace rigel::transport
