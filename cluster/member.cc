#include "cluster/member.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "cluster/wire/messages.h"
#include "common/cpu_time.h"
#include "common/hash.h"
#include "common/memory.h"

namespace rigel::cluster {

using transport::InMessage;
using transport::OutMessage;
using transport::PeerId;
using transport::Role;

namespace {
const PeerId kScheduler{Role::kScheduler, 0};
}

Member::Member(transport::Transport* t, MemberOptions o)
    : transport_(t),
      opts_(std::move(o)),
      // Differs between two runs of the same process (restart detection).
      incarnation_(Mix64(
          static_cast<uint64_t>(getpid()) ^
          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()))) {}

Status Member::Join() {
  wire::RegisterMessages();
  RIGEL_RETURN_IF_ERROR(transport_->Connect(kScheduler, opts_.scheduler));
  auto deadline = std::chrono::steady_clock::now() + opts_.join_timeout;
  while (true) {
    OutMessage msg;
    auto r = msg.InitBody<cluster::wire::Register>();
    r.setRole(static_cast<transport::wire::Role>(transport_->self().role));
    r.setRank(transport_->self().rank);
    r.setAddress(transport_->address());
    r.setIncarnation(incarnation_);
    r.setVersion(opts_.identity.version);
    r.setJobKey(opts_.identity.key);
    r.setJobName(opts_.identity.name);
    transport::CallOptions co;
    // No attempt outlives the deadline by much: a member that cannot reach
    // the scheduler gives up when the scheduler would give up on it.
    auto left =
        std::chrono::duration_cast<transport::Millis>(deadline - std::chrono::steady_clock::now());
    co.timeout = std::clamp(left, transport::Millis(200), transport::Millis(2000));
    auto reply = transport_->Call(kScheduler, std::move(msg), co);
    if (reply.ok()) break;
    Status last = reply.status();
    // A refusal is final; an unreachable scheduler may still be starting.
    if (last.code() != StatusCode::kUnavailable || std::chrono::steady_clock::now() > deadline) {
      if (last.code() == StatusCode::kUnavailable) {
        return Unavailable(fmt::format(
            "could not reach the scheduler at {} within {:.3g} s (--register-timeout-s): {}; "
            "check the address and that the scheduler runs",
            opts_.scheduler, std::chrono::duration<double>(opts_.join_timeout).count(),
            last.message()));
      }
      return Status(last.code(), "the scheduler at " + opts_.scheduler +
                                     " refused this process: " + last.message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  {
    MutexLock l(&mu_);
    heard_ = std::chrono::steady_clock::now();
  }
  heartbeat_ = std::thread([this] { Beat(); });
  return Status::Ok();
}

Member::~Member() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (heartbeat_.joinable()) heartbeat_.join();
}

void Member::Beat() {
  using Clock = std::chrono::steady_clock;
  uint64_t seq = 0;
  auto last_wake = Clock::now();
  for (;;) {
    std::optional<double> silent_s;  // set once the scheduler has been silent too long
    {
      MutexLock l(&mu_);
      if (stop_ || end_) return;
      // Woken far later than asked: this process did not run, and the
      // scheduler's messages of that time may still be unread.
      const auto now = Clock::now();
      const auto late = now - last_wake - opts_.heartbeat;
      last_wake = now;
      if (late > opts_.heartbeat) heard_ += late;
      if (now - heard_ > opts_.heartbeat_timeout) {
        silent_s = std::chrono::duration<double>(now - heard_).count();
        scheduler_gone_ = !end_.has_value();
      }
    }
    if (silent_s) {
      End(Unavailable(fmt::format(
          "the scheduler at {} is gone: nothing from it for {:.3g} s (--heartbeat-timeout-s)",
          opts_.scheduler, *silent_s)));
      return;
    }
    SendHeartbeat(++seq);
    MutexLock l(&mu_);
    const auto deadline = Clock::now() + opts_.heartbeat;
    while (!stop_ && !end_) {
      if (cv_.WaitUntil(&mu_, deadline) == std::cv_status::timeout) break;
    }
  }
}

void Member::SendHeartbeat(uint64_t seq) {
  OutMessage msg;
  auto h = msg.InitBody<cluster::wire::Heartbeat>();
  h.setSeq(seq);
  h.setIncarnation(incarnation_);
  h.setCpuMicros(static_cast<uint64_t>(ProcessCpuSeconds() * 1e6));
  h.setPeakBytes(PeakResidentBytes());
  h.setSentUnixMicros(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()));
  transport::CallOptions co;
  co.send_timeout = transport::Millis(0);
  (void)transport_->Send(kScheduler, std::move(msg), co);
}

void Member::End(const Status& end) {
  bool first;
  {
    MutexLock l(&mu_);
    first = !end_.has_value();
    if (first) end_ = end;
  }
  cv_.NotifyAll();
  if (first && opts_.on_end) opts_.on_end(end);
}

bool Member::Handle(const InMessage& msg) {
  if (msg.from().role == Role::kScheduler) {
    MutexLock l(&mu_);
    heard_ = std::chrono::steady_clock::now();
  }
  switch (msg.type()) {
    case transport::TypeId<cluster::wire::Heartbeat>():
      return msg.from().role == Role::kScheduler;
    case transport::TypeId<cluster::wire::Plan>(): {
      MutexLock l(&mu_);
      setup_ = cluster::SetupFromWire(msg.Body<cluster::wire::Plan>(), "the scheduler's setup");
      if (msg.is_request()) plan_request_ = msg;
      break;
    }
    case transport::TypeId<cluster::wire::RegisterReply>(): {
      std::vector<PeerAddress> peers;
      for (auto p : msg.Body<cluster::wire::RegisterReply>().getPeers()) {
        peers.push_back({PeerId{static_cast<Role>(p.getRole()), p.getRank()}, p.getAddress()});
      }
      MutexLock l(&mu_);
      peers_ = std::move(peers);
      break;
    }
    case transport::TypeId<cluster::wire::PeerDown>():
    case transport::TypeId<cluster::wire::Shutdown>(): {
      Status end;
      if (msg.Is<cluster::wire::PeerDown>()) {
        end = Unavailable(std::string(msg.Body<cluster::wire::PeerDown>().getReason().cStr()));
      } else {
        std::string reason = msg.Body<cluster::wire::Shutdown>().getReason().cStr();
        end = reason == "job finished" ? Status::Ok() : Unavailable(reason);
      }
      End(end);
      return true;
    }
    default:
      return false;
  }
  cv_.NotifyAll();
  return true;
}

StatusOr<cluster::ClusterSetup> Member::WaitForSetup(std::chrono::milliseconds timeout) {
  std::optional<StatusOr<cluster::ClusterSetup>> setup;
  std::vector<PeerAddress> peers;
  {
    MutexLock l(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!end_ && !SetupReady()) {
      if (cv_.WaitUntil(&mu_, deadline) == std::cv_status::timeout) break;
    }
    if (end_) return *end_;
    if (!SetupReady()) return Unavailable("no cluster setup from the scheduler within the timeout");
    setup = setup_;
    peers = peers_;
  }
  for (const PeerAddress& p : peers) {
    if (p.id != transport_->self()) RIGEL_RETURN_IF_ERROR(transport_->Connect(p.id, p.address));
  }
  return *setup;
}

bool Member::SetupReady() const { return setup_.has_value() && !peers_.empty(); }

Status Member::WaitForEnd() {
  MutexLock l(&mu_);
  while (!end_) cv_.Wait(&mu_);
  return *end_;
}

void Member::SetupDone() {
  transport::InMessage req;
  {
    MutexLock l(&mu_);
    req = plan_request_;
  }
  if (req.valid()) (void)transport_->Respond(req, transport::MakeAckMessage());
}

std::optional<Status> Member::ended() const {
  MutexLock l(&mu_);
  return end_;
}

bool Member::scheduler_gone() const {
  MutexLock l(&mu_);
  return scheduler_gone_;
}

std::vector<PeerAddress> Member::peers() const {
  MutexLock l(&mu_);
  return peers_;
}

}  // namespace rigel::cluster
