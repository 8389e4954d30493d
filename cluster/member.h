// The member side of the control plane, used by rigel-server and
// rigel-worker: register with the scheduler, send heartbeats, receive the
// cluster setup and member list, and learn when the job ends or a peer dies.
//
// Thread-safety: Handle() runs on the transport's receive thread; the other
// methods may be called from any thread.
#ifndef RIGEL_CLUSTER_MEMBER_H_
#define RIGEL_CLUSTER_MEMBER_H_

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/job_identity.h"
#include "cluster/setup.h"
#include "common/mutex.h"
#include "transport/transport.h"

namespace rigel::cluster {

struct MemberOptions {
  std::string scheduler;  // the scheduler's address
  std::chrono::milliseconds heartbeat{500};
  // The scheduler beats too: with nothing from it for this long it is gone,
  // and the job ends here with Unavailable (a member never outlives its
  // job's scheduler by more than this).
  std::chrono::milliseconds heartbeat_timeout{10000};
  // Keep trying to register this long (the scheduler's registration
  // deadline, `--register-timeout-s`, is the same by default).
  std::chrono::milliseconds join_timeout{30000};
  // Sent with the registration; the scheduler refuses a member whose build
  // or job differs from its own (cluster/job_identity.h).
  JobIdentity identity{BinaryVersion(), "", ""};
  // Called once, on the receive thread, when the job ends (OK) or fails (a
  // peer died, the scheduler gave up); null: nothing.
  std::function<void(const Status&)> on_end;
};

// A member's exit status when its job ended because the scheduler fell
// silent (MemberOptions::heartbeat_timeout): the launchers take it for a
// scheduler that hangs, while its process still runs, and restart the job
// as for any lost process (scripts/rigel-launch, scripts/rigel-ssh).
inline constexpr int kExitSchedulerGone = 4;

struct PeerAddress {
  transport::PeerId id;
  std::string address;
};

class Member {
 public:
  // A member of `transport`'s identity (its rank must be set). The caller
  // routes incoming messages to Handle() from now on, then calls Join().
  Member(transport::Transport* transport, MemberOptions options);

  // Registers with the scheduler, retrying until join_timeout; then sends
  // heartbeats every interval. Unavailable if the scheduler cannot be
  // reached; the scheduler's refusal (FailedPrecondition, InvalidArgument)
  // as it says. Call once.
  Status Join() RIGEL_EXCLUDES(mu_);
  ~Member();

  // Control messages (plan, registerReply, peerDown, shutdown, the
  // scheduler's heartbeat): returns true when `msg` was one of them.
  bool Handle(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);

  // Waits for the setup; connects the transport to every member listed.
  StatusOr<cluster::ClusterSetup> WaitForSetup(std::chrono::milliseconds timeout)
      RIGEL_EXCLUDES(mu_);
  // Tells the scheduler this member is ready to serve its setup (servers
  // call it once their shards exist; the scheduler starts the workers after).
  void SetupDone() RIGEL_EXCLUDES(mu_);
  // Blocks until the scheduler says shutdown (OK, or the failure it gives)
  // or a peer dies (Unavailable with the scheduler's reason).
  Status WaitForEnd() RIGEL_EXCLUDES(mu_);
  // Whether the job ended (non-blocking) and how.
  std::optional<Status> ended() const RIGEL_EXCLUDES(mu_);
  // Whether it ended because the scheduler was silent too long (set before
  // on_end runs): the process then exits kExitSchedulerGone.
  bool scheduler_gone() const RIGEL_EXCLUDES(mu_);
  std::vector<PeerAddress> peers() const RIGEL_EXCLUDES(mu_);

 private:
  // The heartbeat thread: beats until stopped, the job ends or the
  // scheduler falls silent.
  void Beat() RIGEL_EXCLUDES(mu_);
  void SendHeartbeat(uint64_t seq);
  // Whether the setup and the member list have both arrived.
  bool SetupReady() const RIGEL_REQUIRES(mu_);
  // Ends the job (once): records `end`, wakes waiters, calls on_end.
  void End(const Status& end) RIGEL_EXCLUDES(mu_);

  transport::Transport* transport_;
  MemberOptions opts_;
  uint64_t incarnation_;
  mutable Mutex mu_;
  CondVar cv_;  // setup_, peers_, end_ or stop_ changed
  // Decoded when it arrives.
  std::optional<StatusOr<cluster::ClusterSetup>> setup_ RIGEL_GUARDED_BY(mu_);
  // The setup, when it came as a request.
  transport::InMessage plan_request_ RIGEL_GUARDED_BY(mu_);
  std::vector<PeerAddress> peers_ RIGEL_GUARDED_BY(mu_);
  std::optional<Status> end_ RIGEL_GUARDED_BY(mu_);
  bool stop_ RIGEL_GUARDED_BY(mu_) = false;
  bool scheduler_gone_ RIGEL_GUARDED_BY(mu_) = false;
  // The scheduler's last message.
  std::chrono::steady_clock::time_point heard_ RIGEL_GUARDED_BY(mu_);
  std::thread heartbeat_;
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_MEMBER_H_
