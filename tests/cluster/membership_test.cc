// Membership: ranks, restarts, and dead peers declared after 3 silent intervals.
#include "cluster/membership.h"

#include <gtest/gtest.h>

namespace rigel::cluster {
namespace {

using transport::PeerId;
using transport::Role;
using namespace std::chrono_literals;

TEST(Membership, AssignsRanksAndKnowsWhenComplete) {
  Membership m({{Role::kServer, 2}, {Role::kWorker, 1}}, 100ms);
  auto t = Clock::now();
  EXPECT_EQ(m.Missing(),
            std::vector<PeerId>({{Role::kServer, 0}, {Role::kServer, 1}, {Role::kWorker, 0}}));
  EXPECT_EQ(*m.Register(Role::kServer, -1, "tcp://a", 1, t), 0);
  EXPECT_EQ(*m.Register(Role::kServer, -1, "tcp://b", 2, t), 1);
  EXPECT_FALSE(m.Complete());
  EXPECT_EQ(m.Missing(), std::vector<PeerId>({{Role::kWorker, 0}}));
  EXPECT_EQ(*m.Register(Role::kWorker, 0, "tcp://c", 3, t), 0);
  EXPECT_TRUE(m.Complete());
  EXPECT_TRUE(m.Missing().empty());
  EXPECT_EQ(m.Register(Role::kServer, -1, "tcp://d", 4, t).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(m.Register(Role::kWorker, 5, "tcp://d", 4, t).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(m.Register(Role::kScheduler, 0, "tcp://d", 4, t).status().code(),
            StatusCode::kInvalidArgument);
  // Another process cannot take a live rank.
  EXPECT_EQ(m.Register(Role::kWorker, 0, "tcp://e", 9, t).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(Membership, SilentPeersDieAfterThreeIntervalsOnce) {
  Membership m({{Role::kServer, 1}, {Role::kWorker, 1}}, 100ms);
  auto t = Clock::now();
  ASSERT_TRUE(m.Register(Role::kServer, 0, "tcp://s", 1, t).ok());
  ASSERT_TRUE(m.Register(Role::kWorker, 0, "tcp://w", 2, t).ok());
  EXPECT_TRUE(m.Heard(PeerId{Role::kWorker, 0}, 2, t + 250ms));
  EXPECT_FALSE(m.Heard(PeerId{Role::kWorker, 0}, 7, t + 250ms));  // a stale incarnation
  EXPECT_TRUE(m.Expire(t + 300ms).empty());
  auto dead = m.Expire(t + 301ms);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].id, (PeerId{Role::kServer, 0}));
  EXPECT_TRUE(m.Expire(t + 400ms).empty());  // declared once
  EXPECT_FALSE(m.Complete());
  EXPECT_FALSE(m.Heard(PeerId{Role::kServer, 0}, 1, t + 400ms));  // the dead stay dead
  // A restarted server registers again and gets its rank back.
  EXPECT_EQ(*m.Register(Role::kServer, -1, "tcp://s", 5, t + 500ms), 0);
  EXPECT_TRUE(m.Heard(PeerId{Role::kWorker, 0}, 2, t + 500ms));
  EXPECT_TRUE(m.Complete());
}

TEST(Membership, ATimeoutReplacesThreeIntervalsAndTimeTheSchedulerLostIsCredited) {
  Membership m({{Role::kServer, 1}, {Role::kWorker, 1}}, 100ms, 2000ms);
  EXPECT_EQ(m.dead_after(), 2000ms);
  auto t = Clock::now();
  ASSERT_TRUE(m.Register(Role::kServer, 0, "tcp://s", 1, t).ok());
  ASSERT_TRUE(m.Register(Role::kWorker, 0, "tcp://w", 2, t).ok());
  EXPECT_TRUE(m.Expire(t + 1900ms).empty());
  // The caller did not run for 1.5 s: it could not have read heartbeats.
  m.Credit(1500ms);
  EXPECT_TRUE(m.Expire(t + 3400ms).empty());
  EXPECT_EQ(m.Expire(t + 3501ms).size(), 2u);
  // The dead are not revived by a later credit.
  m.Credit(10000ms);
  EXPECT_FALSE(m.Complete());
}

}  // namespace
}  // namespace rigel::cluster
