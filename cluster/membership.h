// Cluster membership as the scheduler keeps it: who registered with which
// role, rank and address, when each was last heard from, and who is dead.
//
// Ranks: a registrant may ask for a rank (it is started with one by the
// launcher) or take the lowest free one of its role. A process that restarts
// registers again with a new incarnation: it keeps its rank if the rank was
// its own, and the old incarnation is forgotten. A peer silent for longer
// than `timeout` is declared dead once; Expire() returns it so the scheduler
// can tell every other peer. Credit() forgives a silence the scheduler
// caused itself (its own loop ran late, so it could not read heartbeats).
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

// `--heartbeat-timeout-s`'s default: a member (or the scheduler, for the
// members) silent this long is gone. Long enough for a healthy job on a
// machine loaded far beyond its cores; a killed process is noticed at once
// by its launcher anyway.
inline constexpr double kDefaultHeartbeatTimeoutS = 10.0;

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
  // `interval`: how often members beat; `timeout`: the silence after which
  // one is dead (zero: 3 intervals).
  Membership(std::map<transport::Role, int> expected, Clock::duration interval,
             Clock::duration timeout = Clock::duration::zero());

  // Registers a process; returns its rank. InvalidArgument for a rank outside
  // [0, expected) or a role not expected; FailedPrecondition when the rank is
  // held by another live process (a different address), or when no rank is
  // free.
  StatusOr<int32_t> Register(transport::Role role, int32_t rank, const std::string& address,
                             uint64_t incarnation, Clock::time_point now);

  // Records a sign of life (a heartbeat or any message). Unknown peers and
  // stale incarnations are ignored (returns false).
  bool Heard(const transport::PeerId& id, uint64_t incarnation, Clock::time_point now);

  // Declares dead every live member silent for longer than dead_after();
  // returns those newly declared dead.
  std::vector<MemberRecord> Expire(Clock::time_point now);
  // Moves every live member's last sign of life `late` later: the caller
  // was not running for that long and may not have read their heartbeats.
  void Credit(Clock::duration late);

  // The expected members that never registered, servers first, by rank.
  std::vector<transport::PeerId> Missing() const;
  // Every expected member registered and none dead.
  bool Complete() const;
  const std::map<transport::PeerId, MemberRecord>& members() const { return members_; }
  Clock::duration interval() const { return interval_; }
  Clock::duration dead_after() const { return timeout_; }

 private:
  std::map<transport::Role, int> expected_;
  Clock::duration interval_;
  Clock::duration timeout_;
  std::map<transport::PeerId, MemberRecord> members_;
};

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_MEMBERSHIP_H_
