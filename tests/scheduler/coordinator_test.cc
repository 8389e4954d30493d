// The coordinator with its members as threads over LoopbackTransport: the
// typed setup reaches every member (servers before workers), the job ends when
// every worker finished, a silent member fails the job naming it, and Stop and
// Fail reach everyone.
#include "scheduler/coordinator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cluster/member.h"
#include "cluster/wire/messages.h"
#include "common/cpu_time.h"
#include "common/memory.h"
#include "transport/loopback_transport.h"

namespace rigel::scheduler {
namespace {

using namespace std::chrono_literals;
using transport::PeerId;
using transport::Role;

cluster::ClusterSetup MakeSetup(int servers, int workers) {
  cluster::ClusterSetup s;
  s.servers = servers;
  s.workers = workers;
  s.options.staleness = 1;
  s.options.sync_every = 3;
  cluster::ParamSpec w;
  w.decl.name = "W";
  w.decl.width = 4;
  w.rows = 100;
  s.params.push_back(w);
  return s;
}

// One member process, in a thread's clothing: its transport on the shared
// network and the cluster::Member that handles its control messages.
struct FakeMember {
  std::unique_ptr<transport::Transport> transport;
  std::unique_ptr<cluster::Member> member;
  std::atomic<bool> peer_down{false};

  FakeMember(transport::LoopbackNetwork* net, PeerId id, std::chrono::milliseconds heartbeat) {
    transport = std::move(net->Join(id)).value();
    cluster::MemberOptions o;
    o.scheduler = "loopback://scheduler:0";
    o.heartbeat = heartbeat;
    o.join_timeout = 5000ms;
    member = std::make_unique<cluster::Member>(transport.get(), o);
    transport->SetHandler([this](transport::InMessage m) {
      if (m.Is<cluster::wire::PeerDown>()) peer_down = true;
      member->Handle(m);
    });
  }
  ~FakeMember() {
    transport->Close();
    member.reset();
  }
  void Finish() {
    transport::OutMessage done;
    done.InitBody<cluster::wire::Step>().setCommand(cluster::wire::StepCommand::FINISHED);
    ASSERT_TRUE(transport->Send(PeerId{Role::kScheduler, 0}, std::move(done)).ok());
  }
};

class CoordinatorTest : public ::testing::Test {
 protected:
  void Start(const cluster::ClusterSetup& setup, std::chrono::milliseconds heartbeat) {
    net_ = transport::LoopbackNetwork::Create();
    sched_ = std::move(net_->Join(PeerId{Role::kScheduler, 0})).value();
    CoordinatorOptions o;
    o.setup = setup;
    o.heartbeat = heartbeat;
    coordinator_ = Coordinator::Start(sched_.get(), o);
    for (int s = 0; s < setup.servers; ++s) {
      members_.push_back(
          std::make_unique<FakeMember>(net_.get(), PeerId{Role::kServer, s}, heartbeat));
    }
    for (int w = 0; w < setup.workers; ++w) {
      members_.push_back(
          std::make_unique<FakeMember>(net_.get(), PeerId{Role::kWorker, w}, heartbeat));
    }
  }
  void TearDown() override {
    members_.clear();
    if (coordinator_) coordinator_->Stop("test over");
    coordinator_.reset();
    if (sched_) sched_->Close();
  }
  // Joins every member in parallel (registration waits for the others).
  void JoinAll() {
    std::vector<std::thread> t;
    for (auto& m : members_) t.emplace_back([&m] { ASSERT_TRUE(m->member->Join().ok()); });
    for (auto& x : t) x.join();
  }

  std::shared_ptr<transport::LoopbackNetwork> net_;
  std::unique_ptr<transport::Transport> sched_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<std::unique_ptr<FakeMember>> members_;  // servers, then workers
};

TEST_F(CoordinatorTest, EveryMemberGetsTheSetupServersBeforeWorkersAndTheJobEnds) {
  cluster::ClusterSetup setup = MakeSetup(2, 3);
  Start(setup, 50ms);
  JoinAll();
  // No worker gets the setup before every server said its shards are ready.
  std::atomic<int> servers_done{0};
  std::vector<std::thread> t;
  std::vector<StatusOr<cluster::ClusterSetup>> got(members_.size(), Internal("none"));
  std::vector<int> done_when_got(members_.size(), -1);
  for (size_t i = 0; i < members_.size(); ++i) {
    t.emplace_back([&, i] {
      got[i] = members_[i]->member->WaitForSetup(5000ms);
      done_when_got[i] = servers_done.load();
      if (i < 2 && got[i].ok()) {
        std::this_thread::sleep_for(50ms);  // a server making its shards
        ++servers_done;
        members_[i]->member->SetupDone();
      }
    });
  }
  for (auto& x : t) x.join();
  for (size_t i = 0; i < members_.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().message();
    EXPECT_EQ(got[i]->servers, 2);
    EXPECT_EQ(got[i]->workers, 3);
    EXPECT_EQ(got[i]->options.staleness, 1);
    EXPECT_EQ(got[i]->options.sync_every, 3);
    ASSERT_EQ(got[i]->params.size(), 1u);
    EXPECT_EQ(got[i]->params[0].decl.name, "W");
    EXPECT_FALSE(got[i]->job.has_value());
    if (i >= 2) {
      EXPECT_EQ(done_when_got[i], 2) << "worker " << i - 2 << " got the setup early";
    }
  }
  for (size_t i = 2; i < members_.size(); ++i) members_[i]->Finish();
  EXPECT_TRUE(coordinator_->Wait().ok());
  for (auto& m : members_) EXPECT_TRUE(m->member->WaitForEnd().ok());
}

// Servers report their process's CPU time in every heartbeat; here both
// fake servers are threads of this process, so each reports its CPU time.
// and its peak memory, which here is this process's.
TEST_F(CoordinatorTest, ServersSumsTheirLatestHeartbeatsCpuAndTakesTheMostMemory) {
  Start(MakeSetup(2, 1), 20ms);
  EXPECT_EQ(coordinator_->Servers().cpu_s, 0.0);
  EXPECT_EQ(coordinator_->Servers().peak_bytes, -1);
  JoinAll();
  const double before = ProcessCpuSeconds();
  const int64_t peak_before = PeakResidentBytes();
  ASSERT_GT(peak_before, 0);
  ServerFigures got;
  for (int i = 0; i < 200 && (got.cpu_s < 2 * before || got.peak_bytes < peak_before); ++i) {
    std::this_thread::sleep_for(10ms);
    got = coordinator_->Servers();
  }
  EXPECT_GE(got.cpu_s, 2 * before);
  EXPECT_LE(got.cpu_s, 2 * ProcessCpuSeconds());
  EXPECT_GE(got.peak_bytes, peak_before);
  EXPECT_LE(got.peak_bytes, PeakResidentBytes());
}

TEST_F(CoordinatorTest, ASilentMemberFailsTheJobNamingIt) {
  Start(MakeSetup(1, 2), 20ms);
  JoinAll();
  ASSERT_TRUE(members_[0]->member->WaitForSetup(5000ms).ok());
  members_[0]->member->SetupDone();  // the server is ready: the workers get the setup
  for (size_t i = 1; i < members_.size(); ++i) {
    ASSERT_TRUE(members_[i]->member->WaitForSetup(5000ms).ok());
  }
  // Worker 1 goes silent: its process is gone, heartbeats and all.
  members_[2].reset();
  Status st = coordinator_->Wait();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("worker:1 died"), std::string::npos) << st.message();
  Status end = members_[1]->member->WaitForEnd();
  EXPECT_FALSE(end.ok());
  EXPECT_NE(end.message().find("worker:1"), std::string::npos) << end.message();
  EXPECT_TRUE(members_[1]->peer_down.load());
}

TEST_F(CoordinatorTest, AServerThatDiesMakingItsShardsEndsTheJobForEveryoneAtOnce) {
  Start(MakeSetup(1, 1), 20ms);
  JoinAll();
  ASSERT_TRUE(members_[0]->member->WaitForSetup(5000ms).ok());
  auto start = std::chrono::steady_clock::now();
  members_[0].reset();  // dies before SetupDone: the scheduler's request is never answered
  Status end = members_[1]->member->WaitForEnd();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(end.message().find("server:0"), std::string::npos) << end.message();
  // Dead after 3 silent heartbeats (60 ms), not after the setup's 120 s timeout.
  EXPECT_LT(secs, 5.0);
  EXPECT_EQ(coordinator_->Wait().code(), StatusCode::kUnavailable);
}

TEST_F(CoordinatorTest, FailReachesEveryMemberWithItsReason) {
  Start(MakeSetup(1, 1), 50ms);
  JoinAll();
  coordinator_->Fail(InvalidArgument("prog.rgl:3:1: error: bad"));
  EXPECT_EQ(coordinator_->Wait().message(), "prog.rgl:3:1: error: bad");
  for (auto& m : members_) {
    Status end = m->member->WaitForEnd();
    EXPECT_FALSE(end.ok());
    EXPECT_NE(end.message().find("prog.rgl:3:1: error: bad"), std::string::npos) << end.message();
  }
}

TEST_F(CoordinatorTest, ASecondProcessCannotTakeALiveRank) {
  Start(MakeSetup(1, 1), 50ms);
  JoinAll();
  // Another endpoint claiming worker 0 is refused while the first is alive.
  auto other = std::move(net_->Join(PeerId{Role::kWorker, 1})).value();
  transport::OutMessage reg;
  auto r = reg.InitBody<cluster::wire::Register>();
  r.setRole(transport::wire::Role::WORKER);
  r.setRank(0);
  r.setAddress("loopback://worker:1");
  r.setIncarnation(99);
  auto reply = other->Call(PeerId{Role::kScheduler, 0}, std::move(reg));
  EXPECT_FALSE(reply.ok());
  other->Close();
}

}  // namespace
}  // namespace rigel::scheduler
