#include "scheduler/coordinator.h"

#include <fmt/format.h>

#include <atomic>
#include <ostream>

#include "cluster/wire/messages.h"
#include "transport/endpoint.h"

namespace rigel::scheduler {

using transport::InMessage;
using transport::OutMessage;
using transport::PeerId;
using transport::Role;

Coordinator::Coordinator(transport::Transport* t, CoordinatorOptions o)
    : transport_(t),
      opts_(std::move(o)),
      members_({{Role::kServer, opts_.setup.servers}, {Role::kWorker, opts_.setup.workers}},
               opts_.heartbeat, opts_.heartbeat_timeout),
      rendezvous_(t) {
  cluster::wire::RegisterMessages();
  guard_->coordinator = this;
}

std::unique_ptr<Coordinator> Coordinator::Start(transport::Transport* transport,
                                                CoordinatorOptions o) {
  std::unique_ptr<Coordinator> c(new Coordinator(transport, std::move(o)));
  Coordinator* raw = c.get();
  // The receive thread may be in the handler (or about to enter it) while
  // the coordinator is destroyed: it reaches the coordinator only through
  // the guard, which the destructor clears after any call in progress.
  auto guard = c->guard_;
  transport->SetHandler([guard](InMessage m) {
    MutexLock l(&guard->mu);
    if (guard->coordinator) guard->coordinator->Handle(m);
  });
  c->timer_ = std::thread([raw] { raw->Timer(); });
  c->sender_ = std::thread([raw] { raw->Sender(); });
  return c;
}

Coordinator::~Coordinator() {
  {
    MutexLock l(&guard_->mu);
    guard_->coordinator = nullptr;
  }
  {
    MutexLock l(&mu_);
    if (!ended_) {
      ended_ = true;
      result_ = Status::Ok();
    }
  }
  cv_.NotifyAll();
  if (timer_.joinable()) timer_.join();
  {
    MutexLock l(&mu_);
    sender_done_ = true;
  }
  cv_.NotifyAll();
  if (sender_.joinable()) sender_.join();
}

void Coordinator::Post(std::function<void()> send) {
  {
    MutexLock l(&mu_);
    outbox_.push_back(std::move(send));
  }
  cv_.NotifyAll();
}

void Coordinator::Sender() {
  std::function<void()> send;
  while (NextSend(&send)) send();
}

bool Coordinator::NextSend(std::function<void()>* send) {
  MutexLock l(&mu_);
  while (!sender_done_ && outbox_.empty()) cv_.Wait(&mu_);
  if (outbox_.empty()) return false;  // done and drained
  *send = std::move(outbox_.front());
  outbox_.pop_front();
  return true;
}

void Coordinator::Log(const std::string& line) {
  if (opts_.log) *opts_.log << "scheduler: " << line << std::endl;
}

OutMessage Coordinator::MemberList(int32_t rank) const {
  OutMessage m;
  auto r = m.InitBody<cluster::wire::RegisterReply>();
  r.setRank(rank);
  const auto& all = members_.members();
  auto peers = r.initPeers(static_cast<unsigned>(all.size()));
  unsigned k = 0;
  for (const auto& [id, member] : all) {
    peers[k].setRole(static_cast<transport::wire::Role>(id.role));
    peers[k].setRank(id.rank);
    peers[k].setAddress(member.address);
    ++k;
  }
  return m;
}

void Coordinator::SendSetup(std::shared_ptr<std::vector<std::pair<PeerId, OutMessage>>> lists) {
  auto plan = [this] {
    OutMessage m;
    auto p = m.InitBody<cluster::wire::Plan>();
    p.setPlanId(1);
    cluster::SetupToWire(opts_.setup, p);
    return m;
  };
  for (auto& [id, m] : *lists) (void)transport_->Send(id, std::move(m));
  // The servers' answers come as callbacks, so the sender thread stays free:
  // a job that fails while a server makes its shards (a member died, Fail)
  // tells everyone at once, not after the setup's timeout.
  auto waiting = std::make_shared<std::atomic<int>>(opts_.setup.servers);
  auto guard = guard_;
  auto workers = std::make_shared<std::vector<PeerId>>();
  for (auto& [id, m] : *lists) {
    if (id.role != Role::kServer) workers->push_back(id);
  }
  for (auto& [id, m] : *lists) {
    if (id.role != Role::kServer) continue;
    transport::CallOptions co;
    co.timeout = transport::Millis(120000);
    PeerId server = id;
    Status st = transport_->Request(
        server, plan(),
        [guard, server, waiting, workers, plan](StatusOr<transport::InMessage> r) {
          MutexLock l(&guard->mu);
          Coordinator* c = guard->coordinator;
          if (!c) return;
          if (!r.ok()) {
            c->End(Unavailable(server.ToString() +
                               " did not take the setup: " + r.status().message()));
            return;
          }
          if (--*waiting > 0) return;
          c->Post([c, workers, plan] {
            for (const PeerId& w : *workers) (void)c->transport_->Send(w, plan());
          });
        },
        co);
    if (!st.ok()) {
      End(Unavailable(server.ToString() + " did not take the setup: " + st.message()));
      return;
    }
  }
}

void Coordinator::Broadcast(std::function<OutMessage()> make, transport::Millis send_timeout) {
  std::vector<PeerId> to;
  {
    MutexLock l(&mu_);
    for (const auto& [id, m] : members_.members()) {
      if (!m.dead) to.push_back(id);
    }
  }
  Post([this, to, make = std::move(make), send_timeout] {
    for (const PeerId& p : to) {
      transport::CallOptions o;
      o.send_timeout = send_timeout;
      (void)transport_->Send(p, make(), o);
    }
  });
}

void Coordinator::BeatToMembers() {
  // A member whose queue is full is too busy to need this one: no waiting.
  Broadcast(
      [seq = ++beats_] {
        OutMessage m;
        m.InitBody<cluster::wire::Heartbeat>().setSeq(seq);
        return m;
      },
      transport::Millis(0));
}

void Coordinator::End(Status result, const std::string& why) {
  {
    MutexLock l(&mu_);
    if (ended_) return;
    ended_ = true;
    result_ = result;
  }
  std::string reason = !why.empty() ? why : result.ok() ? "job finished" : result.message();
  Log("shutting down: " + reason);
  Broadcast([reason] {
    OutMessage m;
    m.InitBody<cluster::wire::Shutdown>().setReason(reason);
    return m;
  });
  cv_.NotifyAll();
}

Status Coordinator::SameTransport(Role role, int32_t rank, const std::string& address) const {
  auto ours = transport::ParseEndpoint(transport_->address());
  if (!ours.ok()) return Status::Ok();  // the loopback transport of tests: nothing to compare
  auto theirs = transport::ParseEndpoint(address);
  if (theirs.ok() && theirs->backend() == ours->backend()) return Status::Ok();
  return FailedPrecondition(fmt::format(
      "{}:{} listens at {}, {}; this job runs on the {} transport (give every process the same "
      "--transport)",
      transport::RoleName(role), rank, address,
      theirs.ok() ? "an address of the " + theirs->backend() + " transport"
                  : "which is no transport's address",
      ours->backend()));
}

void Coordinator::Handle(const InMessage& msg) {
  auto now = cluster::Clock::now();
  if (rendezvous_.Handle(msg)) return;
  switch (msg.type()) {
    case transport::TypeId<cluster::wire::Register>(): {
      auto r = msg.Body<cluster::wire::Register>();
      Role role = static_cast<Role>(r.getRole());
      std::string address = r.getAddress();
      const cluster::JobIdentity theirs{r.getVersion(), r.getJobKey(), r.getJobName()};
      Status may_join = cluster::CheckJoin(
          opts_.identity, theirs,
          fmt::format("{}:{} at {}", transport::RoleName(role), r.getRank(), address));
      if (!may_join.ok()) {
        // The launcher started this rank on something else and it will not
        // come back as it should: waiting for the deadline would only hide
        // the cause.
        Log("refused: " + may_join.message());
        (void)transport_->RespondError(msg, may_join);
        End(may_join);
        return;
      }
      // Every process of a job speaks one transport; a member listening on
      // another could not be reached by its peers.
      if (Status same = SameTransport(role, r.getRank(), address); !same.ok()) {
        Log("refused: " + same.message());
        (void)transport_->RespondError(msg, same);
        End(same);
        return;
      }
      OutMessage reply;
      bool complete = false;
      {
        MutexLock l(&mu_);
        if (ended_) {
          // Without an answer it would wait for a setup that never comes.
          (void)transport_->RespondError(
              msg,
              FailedPrecondition("the job already ended: " +
                                 (result_.ok() ? std::string("finished") : result_.message())));
          return;
        }
        auto rank = members_.Register(role, r.getRank(), address, r.getIncarnation(), now);
        if (!rank.ok()) {
          Log("refused " + std::string(transport::RoleName(role)) + " at " + address + ": " +
              rank.status().message());
          (void)transport_->RespondError(msg, rank.status());
          return;
        }
        (void)transport_->Connect(PeerId{role, *rank}, address);
        Log(fmt::format("{}:{} registered from {}", transport::RoleName(role), *rank, address));
        reply = MemberList(*rank);
        complete = members_.Complete() && !plan_sent_;
        if (complete) plan_sent_ = true;
      }
      (void)transport_->Respond(msg, std::move(reply));  // Respond never waits
      if (complete) {
        Log("every member registered; sending the setup");
        std::vector<std::pair<PeerId, OutMessage>> lists;
        {
          MutexLock l(&mu_);
          for (const auto& [id, m] : members_.members())
            lists.emplace_back(id, MemberList(id.rank));
        }
        auto shared = std::make_shared<decltype(lists)>(std::move(lists));
        // Member lists first; then the setup to the servers, waiting until
        // each has its shards ready; only then to the workers, so no worker
        // can reach a server that is not serving yet.
        Post([this, shared] { SendSetup(shared); });
      }
      return;
    }
    case transport::TypeId<cluster::wire::Heartbeat>(): {
      auto h = msg.Body<cluster::wire::Heartbeat>();
      MutexLock l(&mu_);
      members_.Heard(msg.from(), h.getIncarnation(), now);
      if (msg.from().role == Role::kServer) {
        ServerFigures& s = servers_[msg.from().rank];
        s.cpu_s = static_cast<double>(h.getCpuMicros()) * 1e-6;
        s.peak_bytes = h.getPeakBytes();
      }
      return;
    }
    case transport::TypeId<cluster::wire::Step>(): {
      auto s = msg.Body<cluster::wire::Step>();
      if (s.getCommand() != cluster::wire::StepCommand::FINISHED ||
          msg.from().role != Role::kWorker)
        break;
      bool all;
      {
        MutexLock l(&mu_);
        finished_workers_.insert(msg.from().rank);
        all = static_cast<int>(finished_workers_.size()) == opts_.setup.workers;
      }
      Log(msg.from().ToString() + " finished");
      if (all) End(Status::Ok());
      return;
    }
    default:
      break;
  }
  if (opts_.on_message) opts_.on_message(msg);
}

void Coordinator::Timer() {
  const auto tick = opts_.heartbeat / 10;
  auto last_tick = cluster::Clock::now(), last_beat = last_tick;
  while (true) {
    {
      MutexLock l(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + tick;
      while (!ended_) {
        if (cv_.WaitUntil(&mu_, deadline) == std::cv_status::timeout) break;
      }
      if (ended_) return;
    }
    const auto now = cluster::Clock::now();
    // A timer that woke far later than asked means this process did not run
    // (a loaded machine, a stopped process): the heartbeats that came
    // meanwhile may still be unread, so that time does not count against
    // any member.
    const auto late = now - last_tick - tick;
    last_tick = now;
    if (late > opts_.heartbeat) {
      MutexLock l(&mu_);
      members_.Credit(late);
    }
    if (late > opts_.heartbeat) {
      Log(
          fmt::format("this scheduler ran {:.3g} s late (a loaded machine?); members' silence "
                      "during that time is not held against them",
                      std::chrono::duration<double>(late).count()));
    }
    if (now - last_beat >= opts_.heartbeat) {
      last_beat = now;
      BeatToMembers();
    }
    CheckRegistrationDeadline();
    std::vector<cluster::MemberRecord> dead;
    double secs = 0;  // the silence that makes a member dead
    {
      MutexLock l(&mu_);
      dead = members_.Expire(cluster::Clock::now());
      secs = std::chrono::duration<double>(members_.dead_after()).count();
    }
    rendezvous_.Expire(cluster::Clock::now());
    for (const cluster::MemberRecord& d : dead) {
      std::string why = fmt::format("{} died: no heartbeat for {:.3g} s (from {})", d.id.ToString(),
                                    secs, d.address);
      Log(why);
      Broadcast([d, why] {
        OutMessage m;
        auto p = m.InitBody<cluster::wire::PeerDown>();
        p.setRole(static_cast<transport::wire::Role>(d.id.role));
        p.setRank(d.id.rank);
        p.setReason(why);
        return m;
      });
      End(Unavailable(why));
    }
  }
}

void Coordinator::CheckRegistrationDeadline() {
  std::string missing, present;
  int registered = 0, expected = opts_.setup.servers + opts_.setup.workers;
  {
    MutexLock l(&mu_);
    if (plan_sent_ || ended_ ||
        std::chrono::steady_clock::now() - started_ < opts_.register_timeout) {
      return;
    }
    for (const PeerId& id : members_.Missing()) {
      missing += (missing.empty() ? "" : ", ") + id.ToString();
    }
    for (const auto& [id, m] : members_.members()) {
      present += (present.empty() ? "" : ", ") + id.ToString() + " from " + m.address;
      ++registered;
    }
  }
  if (missing.empty()) return;  // a dead member: Expire says so
  End(Unavailable(fmt::format(
      "registration deadline passed: {} of {} member(s) registered within {:.3g} s "
      "(--register-timeout-s); missing {}{}{}. Check that every process was started, with "
      "--scheduler {}",
      registered, expected, std::chrono::duration<double>(opts_.register_timeout).count(), missing,
      present.empty() ? "" : "; registered: ", present, transport_->address())));
}

Status Coordinator::Wait() {
  MutexLock l(&mu_);
  while (!ended_) cv_.Wait(&mu_);
  return result_;
}

ServerFigures Coordinator::Servers() {
  MutexLock l(&mu_);
  ServerFigures all;
  for (const auto& [rank, s] : servers_) {
    all.cpu_s += s.cpu_s;
    all.peak_bytes = std::max(all.peak_bytes, s.peak_bytes);
  }
  return all;
}

void Coordinator::Fail(const Status& why) {
  Log("job failed: " + why.message());
  End(why.ok() ? Internal("job failed") : why);
}

void Coordinator::Stop(const std::string& reason) {
  Log("stop requested: " + reason);
  // The scheduler's own result is OK (it was asked to stop), but a member
  // must not take this for a finished job: one waiting for a peer that
  // already stopped would wait for ever.
  End(Status::Ok(), "stopped: " + reason);
}

}  // namespace rigel::scheduler
