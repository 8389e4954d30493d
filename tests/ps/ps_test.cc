// Parameter servers and the worker client in one process, over loopback
// endpoints (tests/harness/ps_cluster.h): lazy initial values that do not
// depend on the number of servers, pushes from several workers that sum
// exactly, and the staleness bound under an adversarially slow worker.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "ir/param_init.h"
#include "ps/client.h"
#include "ps/service.h"
#include "ps/wire/messages.h"
#include "tests/harness/ps_cluster.h"
#include "transport/fault_injecting_transport.h"

namespace rigel::ps {

using cluster::ClusterSetup;
using cluster::ParamSpec;
namespace {

using testing::PsCluster;
using testing::PsClusterOptions;
using testing::TestSetup;
using transport::PeerId;
using transport::Role;

TEST(ParameterServer, LazyInitialValuesDoNotDependOnTheNumberOfServers) {
  std::vector<int64_t> emb_keys, bias_keys;
  for (int64_t k = 0; k < 3000; ++k) emb_keys.push_back((k * 7919) % 100000);
  for (int64_t k = 0; k < 1001; k += 3) bias_keys.push_back(k);
  std::vector<std::vector<float>> emb_by_s, bias_by_s;
  for (int servers : {1, 2, 3}) {
    auto started = PsCluster::Start(TestSetup(servers, 1, 0));
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    auto emb = c.client(0).Pull(0, emb_keys).get();
    ASSERT_TRUE(emb.ok()) << emb.status().message();
    auto bias = c.client(0).Pull(1, bias_keys).get();
    ASSERT_TRUE(bias.ok()) << bias.status().message();
    emb_by_s.push_back(*emb);
    bias_by_s.push_back(*bias);
    // Only the rows touched exist on the hash shards.
    int64_t stored = 0;
    for (int s = 0; s < c.servers(); ++s) stored += c.service(s).rows();
    EXPECT_LT(stored, 3000 + 1001 + 1);
  }
  EXPECT_EQ(emb_by_s[0], emb_by_s[1]);
  EXPECT_EQ(emb_by_s[0], emb_by_s[2]);
  EXPECT_EQ(bias_by_s[0], bias_by_s[1]);
  EXPECT_EQ(bias_by_s[0], bias_by_s[2]);
  // And they are the program's initial values.
  cluster::ClusterSetup s = TestSetup(1, 1, 0);
  float row[8];
  ir::InitialRow(s.params[0].decl, emb_keys[5], row);
  for (int c = 0; c < 8; ++c) EXPECT_EQ(emb_by_s[0][5 * 8 + c], row[c]);
  EXPECT_EQ(bias_by_s[0][2], ir::InitialValue(s.params[1].decl, bias_keys[2], 0));
}

TEST(ParameterServer, PushesFromSeveralWorkersSumExactly) {
  auto started = PsCluster::Start(TestSetup(2, 3, 0));
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 1000; k += 7) keys.push_back(k);
  std::vector<float> ones(keys.size(), 1.0f);
  auto before = c.client(0).Pull(1, keys).get();
  ASSERT_TRUE(before.ok());
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 20; ++round) {
        // Each row twice per round: merged into one delta of 2.
        ASSERT_TRUE(c.client(w).Push(1, keys, ones.data()).ok());
        ASSERT_TRUE(c.client(w).Push(1, keys, ones.data()).ok());
        ASSERT_TRUE(c.client(w).AdvanceClock().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto after = c.client(0).Pull(1, keys).get();
  ASSERT_TRUE(after.ok()) << after.status().message();
  for (size_t k = 0; k < keys.size(); ++k) {
    EXPECT_FLOAT_EQ((*after)[k], (*before)[k] + 3 * 20 * 2) << "row " << keys[k];
  }
  auto st = c.client(1).stats();
  EXPECT_EQ(st.merged, 20 * keys.size());
  EXPECT_EQ(st.push_requests, 20u * 2);  // one per server per clock
}

// Worker 1 is slow twice over: it sleeps between clocks and every message it
// sends is delayed. Worker 0 must still never read a value missing an update
// of a clock older than c - s.
void StalenessBoundHolds(int staleness) {
  transport::FaultOptions slow;
  slow.delay = 1.0;
  slow.delay_min = transport::Millis(5);
  slow.delay_max = transport::Millis(30);
  cluster::ClusterSetup setup = TestSetup(2, 2, staleness);
  setup.params[1].decl.init = ir::ParamDecl::kZeros;
  PsClusterOptions opts;
  opts.cluster.faults[PeerId{Role::kWorker, 0}] = transport::FaultOptions{};
  opts.cluster.faults[PeerId{Role::kWorker, 1}] = slow;
  auto started = PsCluster::Start(setup, opts);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  constexpr int kClocks = 12;
  std::vector<int64_t> key = {500};
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int clock = 0; clock < kClocks; ++clock) {
        auto v = c.client(w).Pull(1, key).get();
        ASSERT_TRUE(v.ok()) << v.status().message();
        // Every update of clocks < clock - s: one per worker per clock.
        int64_t must = 2 * std::max(0, clock - staleness);
        if ((*v)[0] < must) ++violations;
        float one = 1.0f;
        ASSERT_TRUE(c.client(w).Push(1, key, &one).ok());
        if (w == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_TRUE(c.client(w).AdvanceClock().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  uint64_t deferred = 0;
  for (int s = 0; s < c.servers(); ++s) deferred += c.service(s).stats().deferred_pulls;
  EXPECT_GT(deferred, 0u) << "the fast worker never had to wait: the test did not test anything";
  auto final_value = c.client(0).Pull(1, key).get();
  ASSERT_TRUE(final_value.ok());
  EXPECT_EQ((*final_value)[0], 2 * kClocks);
}

TEST(ParameterServer, StalenessBoundHoldsUnderASlowWorker) {
  StalenessBoundHolds(0);
  StalenessBoundHolds(2);
}

TEST(ParameterServer, RefusesKeysItDoesNotHoldAndBadWidths) {
  auto started = PsCluster::Start(TestSetup(2, 1, 0));
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  std::vector<int64_t> bad = {5000};
  auto r = c.client(0).Pull(1, bad).get();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  // A request built by hand for a row on the other server is refused by the server.
  transport::OutMessage m;
  auto req = m.InitBody<ps::wire::PullRequest>();
  req.setParam(1);
  auto keys = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{900});
  m.SetKeys(req.initKeys(), transport::Buffer(keys, keys->data(), 8));
  auto reply = c.worker(0)->Call(PeerId{Role::kServer, 0}, std::move(m));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("not held by server 0"), std::string::npos)
      << reply.status().message();
}

// The keys of a Pull come back in the order asked, repeats included, with
// the cache on or off and on any number of servers; batches of more than
// PsClient::kChunkKeys keys go in several requests and still come back whole,
// and so do pushes.
// With staleness 0 AdvanceClock does not wait for the pushes' answers; a lost
// push still fails, at WaitForPushes (or the next AdvanceClock). With
// staleness 1 AdvanceClock waits and fails itself.
TEST(PsClient, PushErrorsSurfaceEvenWhenTheTickDoesNotWait) {
  transport::FaultOptions lossy;
  lossy.drop = 1.0;  // every message this worker sends is lost
  for (int staleness : {0, 1}) {
    PsClusterOptions opts;
    opts.cluster.faults[PeerId{Role::kWorker, 0}] = lossy;
    opts.call_timeout = transport::Millis(200);
    auto started = PsCluster::Start(TestSetup(1, 1, staleness), opts);
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    std::vector<int64_t> key = {5};
    float one = 1.0f;
    ASSERT_TRUE(c.client(0).Push(1, key, &one).ok());
    Status tick = c.client(0).AdvanceClock();
    if (staleness == 0) {
      EXPECT_TRUE(tick.ok()) << tick.message();
      Status waited = c.client(0).WaitForPushes();
      EXPECT_EQ(waited.code(), StatusCode::kUnavailable) << waited.message();
    } else {
      EXPECT_EQ(tick.code(), StatusCode::kUnavailable) << tick.message();
    }
  }
}

TEST(PsClient, PullAnswersInRequestOrderWithRepeats) {
  std::vector<int64_t> keys;
  constexpr int64_t kKeys = 40000;  // more than two chunks
  static_assert(kKeys > 2 * ps::PsClient::kChunkKeys);
  for (int64_t k = 0; k < kKeys; ++k) keys.push_back((k * 7919 + 13) % 100000);
  keys.push_back(keys[10]);
  keys.push_back(keys[0]);
  cluster::ClusterSetup setup = TestSetup(1, 1, 0);
  for (int servers : {1, 2, 3}) {
    setup.servers = servers;
    auto started = PsCluster::Start(setup);
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    ps::PsClient client(c.worker(0), setup.MakeShardMap().value(), ps::PsClientOptions{});
    auto rows = client.Pull(0, keys).get();
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    ASSERT_EQ(rows->size(), keys.size() * 8);
    float want[8];
    for (size_t k = 0; k < keys.size(); ++k) {
      ir::InitialRow(setup.params[0].decl, keys[k], want);
      for (int c = 0; c < 8; ++c) {
        ASSERT_EQ((*rows)[k * 8 + c], want[c]) << servers << " servers";
      }
    }
    EXPECT_EQ(client.stats().rows_pulled, static_cast<uint64_t>(kKeys));  // each once
    // +1 on every distinct key (the two repeats are at the end).
    std::vector<float> ones(kKeys * 8, 1.0f);
    ASSERT_TRUE(client.Push(0, std::span(keys).first(kKeys), ones.data()).ok());
    ASSERT_TRUE(client.Flush().get().ok());
    std::vector<uint64_t> per_server(servers, 0);
    for (int64_t k = 0; k < kKeys; ++k) ++per_server[client.map().ServerOf(0, keys[k])];
    uint64_t chunks = 0;
    for (uint64_t n : per_server)
      chunks += (n + ps::PsClient::kChunkKeys - 1) / ps::PsClient::kChunkKeys;
    EXPECT_EQ(client.stats().push_requests, chunks);
    auto after = client.Pull(0, keys).get();
    ASSERT_TRUE(after.ok()) << after.status().message();
    for (size_t k = 0; k < keys.size(); ++k) {
      ir::InitialRow(setup.params[0].decl, keys[k], want);
      for (int c = 0; c < 8; ++c) {
        ASSERT_EQ((*after)[k * 8 + c], want[c] + 1.0f) << servers << " servers, key " << k;
      }
    }
  }
}

// Deltas pushed but not flushed are seen by the pushing worker's pulls, and
// flushing does not count them twice.
TEST(PsClient, ReadsItsOwnUnflushedWrites) {
  cluster::ClusterSetup setup = TestSetup(2, 1, 0);
  setup.params[1].decl.init = ir::ParamDecl::kZeros;
  auto started = PsCluster::Start(setup);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  ps::PsClient client(c.worker(0), setup.MakeShardMap().value(), {});
  std::vector<int64_t> keys = {900, 3, 500, 3, 1000};
  std::vector<float> d = {1, 2, 4, 8, 16};
  ASSERT_TRUE(client.Push(1, keys, d.data()).ok());
  ASSERT_TRUE(client.Push(1, std::vector<int64_t>{3}, std::vector<float>{32}.data()).ok());
  std::vector<int64_t> ask = {3, 900, 7, 1000, 500};
  std::vector<float> want = {42, 1, 0, 16, 4};
  auto before = client.Pull(1, ask).get();
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(*before, want);
  ASSERT_TRUE(client.Flush().get().ok());
  ps::PsClient other(c.worker(0), setup.MakeShardMap().value(), {});
  auto after = other.Pull(1, ask).get();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, want);
  EXPECT_EQ(client.stats().merged, 2u);  // 3 within the first push, then across pushes
}

// Many small pushes pile up as runs, are merged, and still sum exactly, in
// one request per server.
TEST(PsClient, ManySmallPushesSumExactlyInOneRequestPerServer) {
  cluster::ClusterSetup setup = TestSetup(3, 1, 0);
  setup.params[0].decl.init = ir::ParamDecl::kZeros;
  auto started = PsCluster::Start(setup);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  ps::PsClient& client = c.client(0);
  std::vector<float> expect(100 * 8, 0.0f);
  std::set<int64_t> distinct;
  for (int push = 0; push < 40; ++push) {
    std::vector<int64_t> keys;
    std::vector<float> d;
    for (int k = 0; k < 10; ++k) {
      int64_t key = (push * 7 + k * 13) % 100;
      keys.push_back(key);
      distinct.insert(key);
      for (int c = 0; c < 8; ++c) {
        float v = static_cast<float>(push + k + c);  // small integers: sums are exact
        d.push_back(v);
        expect[key * 8 + c] += v;
      }
    }
    ASSERT_TRUE(client.Push(0, keys, d.data()).ok());
  }
  ASSERT_TRUE(client.Flush().get().ok());
  EXPECT_EQ(client.stats().push_requests, 3u);
  EXPECT_EQ(client.stats().rows_pushed, distinct.size());
  EXPECT_EQ(client.stats().merged, 400u - distinct.size());
  std::vector<int64_t> all(100);
  for (int k = 0; k < 100; ++k) all[k] = k;
  ps::PsClient reader(c.worker(0), setup.MakeShardMap().value(), {});
  auto rows = reader.Pull(0, all).get();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, expect);
}

}  // namespace
}  // namespace rigel::ps
