// The scheduler's control plane: membership (registration, ranks, the
// cluster setup handed to every member), heartbeats and dead-peer detection,
// and the end of the job.
//
//  - register (request) -> registerReply with the rank and every member known
//    so far; once every expected server and worker has registered, each gets
//    the full member list (a registerReply sent one-way), then the `plan`
//    message carrying the typed ClusterSetup (cluster/setup.h): as a request
//    to each server, answered once its shards exist, and only then one-way to
//    the workers, so no worker reaches a server that is not ready. The
//    answers are awaited asynchronously: a failure meanwhile ends the job at
//    once.
//    A member of another build or job (cluster/job_identity.h) is refused
//    and ends the job; so does the registration deadline passing with
//    members missing (named in the error).
//  - heartbeat (one-way) from members keeps them alive; one silent for
//    `heartbeat_timeout` is declared dead: every other member gets
//    `PeerDown`, and the job fails ("server:1 died: no heartbeat for 10 s").
//    A silence the coordinator caused itself (its timer ran late: a starved
//    process) is forgiven by as much as it was late.
//  - heartbeat (one-way) to every registered member each interval, so that
//    members notice when the scheduler is gone (cluster/member.h).
//  - step{finished} (one-way) from a worker: when all workers finished, every
//    member gets `shutdown` and the job ends successfully.
//  - storeSet/storeGet (requests) from workers: the rendezvous store their
//    collectives bootstrap through (cluster/rendezvous.h).
//  - Stop(reason): `shutdown` to every member (SIGINT/SIGTERM); Fail(status)
//    the same for a failed job.
//  - anything else goes to `on_message` (the program driver's messages).
//
// Thread-safety: Handle() runs on the transport's receive thread; Wait() and
// Stop() may be called from any thread.
#ifndef RIGEL_SCHEDULER_COORDINATOR_H_
#define RIGEL_SCHEDULER_COORDINATOR_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "cluster/job_identity.h"
#include "cluster/membership.h"
#include "cluster/rendezvous.h"
#include "cluster/setup.h"
#include "common/mutex.h"
#include "scheduler/server_figures.h"
#include "transport/transport.h"

namespace rigel::scheduler {

struct CoordinatorOptions {
  cluster::ClusterSetup setup;
  std::chrono::milliseconds heartbeat{500};
  // Silence after which a member is dead; zero: 3 heartbeat intervals.
  std::chrono::milliseconds heartbeat_timeout{0};
  std::ostream* log = nullptr;  // one line per event; null: none
  // Every expected member must have registered this long after Start, or
  // the job fails naming those missing (`--register-timeout-s`).
  std::chrono::milliseconds register_timeout{30000};
  // What members must match to join (cluster/job_identity.h); a member that
  // does not is refused and the job fails at once, naming both values.
  cluster::JobIdentity identity{cluster::BinaryVersion(), "", ""};
  // Messages the coordinator does not handle itself (a driver's taskDone,
  // a worker's step{start}); called on the receive thread. Null: dropped.
  std::function<void(const transport::InMessage&)> on_message;
};

class Coordinator {
 public:
  // Installs itself as `transport`'s handler and starts the dead-peer timer.
  static std::unique_ptr<Coordinator> Start(transport::Transport* transport, CoordinatorOptions o);
  ~Coordinator();

  // Blocks until the job ends: OK when every worker finished (or Stop was
  // called), Unavailable naming the dead member otherwise.
  Status Wait() RIGEL_EXCLUDES(mu_);
  void Stop(const std::string& reason) RIGEL_EXCLUDES(mu_);
  // Ends the job with `why` (a driver error): every member is told to shut
  // down with that reason and Wait() returns it.
  void Fail(const Status& why) RIGEL_EXCLUDES(mu_);
  // What the servers' latest heartbeats said (up to one heartbeat interval
  // old): the CPU seconds their processes have used so far, summed, and the
  // most resident memory one of them has held (-1: none said).
  ServerFigures Servers() RIGEL_EXCLUDES(mu_);

 private:
  Coordinator(transport::Transport* t, CoordinatorOptions o);
  void Handle(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  // OK when a member listening at `address` speaks this scheduler's
  // transport; FailedPrecondition naming both otherwise.
  Status SameTransport(transport::Role role, int32_t rank, const std::string& address) const;
  void Timer() RIGEL_EXCLUDES(mu_);
  // Queues a send for the sender thread: sends can wait (a peer's queue, a
  // connection still being made), and the receive thread must keep reading
  // heartbeats meanwhile.
  void Post(std::function<void()> send) RIGEL_EXCLUDES(mu_);
  // The sender thread: runs what Post queued, in order, without the lock.
  void Sender() RIGEL_EXCLUDES(mu_);
  // Waits for the next queued send and moves it to *send; false once the
  // coordinator is being destroyed and the queue is drained.
  bool NextSend(std::function<void()>* send) RIGEL_EXCLUDES(mu_);
  // Sends make()'s message to every live member on the sender thread, each
  // send waiting at most `send_timeout` for a full queue.
  void Broadcast(std::function<transport::OutMessage()> make,
                 transport::Millis send_timeout = transport::Millis(1000)) RIGEL_EXCLUDES(mu_);
  // Sends every live member a heartbeat, never waiting for a full queue.
  void BeatToMembers() RIGEL_EXCLUDES(mu_);
  // Sends the member lists, then the setup to each server as a request and,
  // once every server answered, to the workers (on the sender thread).
  void SendSetup(
      std::shared_ptr<std::vector<std::pair<transport::PeerId, transport::OutMessage>>> lists)
      RIGEL_EXCLUDES(mu_);
  // Ends the job with `result` and tells every member why: `reason`, or
  // when empty "job finished" for OK and the error otherwise. Members take
  // any reason but "job finished" for a failure and stop at once.
  void End(Status result, const std::string& reason = "") RIGEL_EXCLUDES(mu_);
  // Ends the job when the registration deadline passed with members missing.
  void CheckRegistrationDeadline() RIGEL_EXCLUDES(mu_);
  void Log(const std::string& line);
  transport::OutMessage MemberList(int32_t rank) const RIGEL_REQUIRES(mu_);

  transport::Transport* transport_;
  CoordinatorOptions opts_;
  struct Guard {
    Mutex mu;
    Coordinator* coordinator RIGEL_GUARDED_BY(mu) = nullptr;
  };
  std::shared_ptr<Guard> guard_ = std::make_shared<Guard>();
  Mutex mu_;
  CondVar cv_;  // ended_, outbox_ or sender_done_ changed
  cluster::Membership members_ RIGEL_GUARDED_BY(mu_);
  cluster::Rendezvous rendezvous_;
  bool plan_sent_ RIGEL_GUARDED_BY(mu_) = false;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::set<int32_t> finished_workers_ RIGEL_GUARDED_BY(mu_);
  // By server rank, from heartbeats.
  std::map<int32_t, ServerFigures> servers_ RIGEL_GUARDED_BY(mu_);
  bool ended_ RIGEL_GUARDED_BY(mu_) = false;
  Status result_ RIGEL_GUARDED_BY(mu_);
  uint64_t beats_ = 0;  // heartbeats sent to the members (timer thread)
  std::thread timer_;
  std::deque<std::function<void()>> outbox_ RIGEL_GUARDED_BY(mu_);
  bool sender_done_ RIGEL_GUARDED_BY(mu_) = false;
  std::thread sender_;
};

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_COORDINATOR_H_
