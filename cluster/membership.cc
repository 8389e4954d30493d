#include "cluster/membership.h"

namespace rigel::cluster {

using transport::PeerId;
using transport::Role;

Membership::Membership(std::map<Role, int> expected, Clock::duration interval,
                       Clock::duration timeout)
    : expected_(std::move(expected)),
      interval_(interval),
      timeout_(timeout > Clock::duration::zero() ? timeout : 3 * interval) {}

void Membership::Credit(Clock::duration late) {
  for (auto& [id, m] : members_) {
    if (!m.dead) m.last_seen += late;
  }
}

StatusOr<int32_t> Membership::Register(Role role, int32_t rank, const std::string& address,
                                       uint64_t incarnation, Clock::time_point now) {
  auto exp = expected_.find(role);
  if (exp == expected_.end() || exp->second == 0) {
    return InvalidArgument(std::string("this cluster has no ") + transport::RoleName(role) + "s");
  }
  if (rank >= exp->second || rank < -1) {
    return InvalidArgument(std::string(transport::RoleName(role)) + " rank " +
                           std::to_string(rank) + " is outside 0.." +
                           std::to_string(exp->second - 1));
  }
  if (rank < 0) {
    // A restarted process that lost its rank finds it again by address.
    for (const auto& [id, m] : members_) {
      if (id.role == role && m.address == address) rank = id.rank;
    }
  }
  if (rank < 0) {
    for (int32_t r = 0; r < exp->second && rank < 0; ++r) {
      if (!members_.count(PeerId{role, r})) rank = r;
    }
    if (rank < 0) {
      return FailedPrecondition(std::string("every ") + transport::RoleName(role) +
                                " rank is taken");
    }
  }
  PeerId id{role, rank};
  auto it = members_.find(id);
  if (it != members_.end() && !it->second.dead && it->second.address != address &&
      it->second.incarnation != incarnation) {
    return FailedPrecondition(id.ToString() + " is already held by the process at " +
                              it->second.address);
  }
  MemberRecord& m = members_[id];
  m.id = id;
  m.address = address;
  m.incarnation = incarnation;
  m.last_seen = now;
  m.dead = false;
  return rank;
}

bool Membership::Heard(const PeerId& id, uint64_t incarnation, Clock::time_point now) {
  auto it = members_.find(id);
  if (it == members_.end() || it->second.dead || it->second.incarnation != incarnation)
    return false;
  it->second.last_seen = now;
  return true;
}

std::vector<MemberRecord> Membership::Expire(Clock::time_point now) {
  std::vector<MemberRecord> out;
  for (auto& [id, m] : members_) {
    if (!m.dead && now - m.last_seen > dead_after()) {
      m.dead = true;
      out.push_back(m);
    }
  }
  return out;
}

std::vector<transport::PeerId> Membership::Missing() const {
  std::vector<transport::PeerId> out;
  for (const auto& [role, n] : expected_) {
    for (int32_t r = 0; r < n; ++r) {
      if (!members_.contains(PeerId{role, r})) out.push_back(PeerId{role, r});
    }
  }
  return out;
}

bool Membership::Complete() const {
  for (const auto& [role, n] : expected_) {
    for (int32_t r = 0; r < n; ++r) {
      auto it = members_.find(PeerId{role, r});
      if (it == members_.end() || it->second.dead) return false;
    }
  }
  return true;
}

}  // namespace rigel::cluster
