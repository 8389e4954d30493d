// Cluster membership as the scheduler keeps it: who registered with which
// role, rank and address, when each was last heard from, and who is dead.
//
// Ranks: a registrant may ask for a rank (it is started with one by the
// launcher) or take the lowest free one of its role. A process that restarts
// registers again with a new incarnation: it keeps its rank if the rank was
// its own, and the old incarnation is forgotten. A peer silent for
// `dead_after` heartbeat intervals is declared dead once; Expire() returns it
// so the scheduler can tell every other peer.
//
// Time is passed in by the caller (tests drive it by hand). Not thread-safe:
// the scheduler owns one and uses it from one thread.
#ifndef RIGEL_CLUSTER_MEMBERSHIP_H_
#define RIGEL_CLUSTER_MEMBERSHIP_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/message.h"

namespace rigel::cluster {

using Clock = std::chrono::steady_clock;

struct MemberRecord {
  transport::PeerId id;
  std::string address;
  uint64_t incarnation = 0;
  Clock::time_point last_seen;
  bool dead = false;
};

class Membership {
 public:
  // `expected[role]` members of each role make the cluster complete.
  Membership(std::map<transport::Role, int> expected, Clock::duration interval, int dead_after = 3);

  // Registers a process; returns its rank. InvalidArgument for a rank outside
  // [0, expected) or a role not expected; FailedPrecondition when the rank is
  // held by another live process (a different address), or when no rank is
  // free.
  StatusOr<int32_t> Register(transport::Role role, int32_t rank, const std::string& address,
                             uint64_t incarnation, Clock::time_point now);

  // Records a sign of life (a heartbeat or any message). Unknown peers and
  // stale incarnations are ignored (returns false).
  bool Heard(const transport::PeerId& id, uint64_t incarnation, Clock::time_point now);

  // Declares dead every live member silent for longer than dead_after
  // intervals; returns those newly declared dead.
  std::vector<MemberRecord> Expire(Clock::time_point now);

  // The expected members that never registered, servers first, by rank.
  std::vector<transport::PeerId> Missing() const;
  // Every expected member registered and none dead.
  bool Complete() const;
  const std::map<transport::PeerId, MemberRecord>& members() const { return members_; }
  Clock::duration interval() const { return interval_; }
  Clock::duration dead_after() const { return interval_ * dead_after_; }

 private:
  std::map<transport::Role, int> expected_;
  Clock::duration interval_;
  int dead_after_;
  std::map<transport::PeerId, MemberRecord> members_;
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_MEMBERSHIP_H_
