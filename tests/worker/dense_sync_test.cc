// DenseSync over Gloo with the workers as threads: after each sync every
// replica holds base + the sum of all workers' deltas, with the same bits on
// every worker.
#include "worker/dense_sync.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace rigel::worker {
namespace {

namespace coll = collectives;

// Runs `body(rank, sync)` on `n` threads, each with its own DenseSync.
template <typename F>
void OnRanks(int n, size_t fusion_bytes, F body) {
  coll::MemoryStore store;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      coll::CommunicatorOptions o;
      o.rank = r;
      o.size = n;
      o.timeout = std::chrono::milliseconds(10000);
      auto comm = coll::Make(coll::Backend::kGloo, &store, o);
      ASSERT_TRUE(comm.ok()) << comm.status().message();
      DenseSync sync(std::move(comm).value(), fusion_bytes);
      body(r, sync);
    });
  }
  for (auto& t : threads) t.join();
}

TEST(DenseSync, ReplicasEqualBaseAndSummedDeltasBitForBit) {
  constexpr int kRanks = 3;
  const std::vector<size_t> sizes = {1, 33, 1000, 5};  // several params, fused
  std::vector<std::vector<std::vector<float>>> finals(kRanks);
  std::vector<uint64_t> calls(kRanks);
  OnRanks(kRanks, 4096, [&](int rank, DenseSync& sync) {
    std::vector<std::vector<float>> local, base;
    for (size_t n : sizes) {
      local.emplace_back(n, 0.5f);
      base.emplace_back(n, 0.5f);
    }
    std::mt19937 gen(100 + rank);
    std::normal_distribution<float> noise(0.0f, 1e-3f);
    for (int round = 0; round < 20; ++round) {
      for (auto& v : local) {
        for (float& x : v) x += noise(gen);  // this worker's updates
      }
      std::vector<Replica> rs;
      for (size_t i = 0; i < sizes.size(); ++i) {
        rs.push_back(Replica{local[i].data(), base[i].data(), sizes[i]});
      }
      ASSERT_TRUE(sync.Sync(rs).ok());
      for (size_t i = 0; i < sizes.size(); ++i) {
        ASSERT_EQ(0, std::memcmp(local[i].data(), base[i].data(), sizes[i] * sizeof(float)));
      }
    }
    finals[rank] = local;
    calls[rank] = sync.calls();
  });
  for (int r = 1; r < kRanks; ++r) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(finals[r][i].data(), finals[0][i].data(), sizes[i] * sizeof(float)))
          << "rank " << r << " param " << i;
      EXPECT_EQ(ReplicaHash(finals[r][i].data(), sizes[i]),
                ReplicaHash(finals[0][i].data(), sizes[i]));
    }
  }
  // The values moved: 20 rounds of 3 workers' noise (std 1e-3 each).
  double moved = 0;
  for (float x : finals[0][2]) moved += std::fabs(x - 0.5f);
  EXPECT_GT(moved / 1000, 1e-3);
  // 4096 bytes = 1024 floats: {1, 33} fused, 1000 fits after them? 34 + 1000
  // > 1024, so {1, 33}, {1000, 5}: two calls per sync.
  EXPECT_EQ(calls[0], 40u);
}

TEST(DenseSync, SyncAddsEveryWorkersDelta) {
  OnRanks(2, coll::kDefaultFusionThreshold, [](int rank, DenseSync& sync) {
    std::vector<float> local = {1.0f, 2.0f}, base = {1.0f, 2.0f};
    local[0] += rank == 0 ? 0.25f : 0.5f;  // deltas 0.25 and 0.5
    local[1] -= 1.0f;                      // both workers: -1
    Replica r{local.data(), base.data(), 2};
    ASSERT_TRUE(sync.Sync({&r, 1}).ok());
    EXPECT_FLOAT_EQ(local[0], 1.75f);
    EXPECT_FLOAT_EQ(local[1], 0.0f);
    EXPECT_EQ(local, base);
    EXPECT_EQ(sync.bytes_reduced(), 8u);
  });
}

TEST(DenseSync, BroadcastStartsEveryReplicaFromWorkerZero) {
  OnRanks(3, coll::kDefaultFusionThreshold, [](int rank, DenseSync& sync) {
    std::vector<float> local(4, static_cast<float>(rank)), base(4, -1.0f);
    Replica r{local.data(), base.data(), 4};
    ASSERT_TRUE(sync.Broadcast({&r, 1}).ok());
    EXPECT_EQ(local, std::vector<float>(4, 0.0f));
    EXPECT_EQ(base, local);
  });
}

TEST(DenseSync, ReplicaHashSeesOneBit) {
  std::vector<float> a = {1.0f, 2.0f, 3.0f}, b = a;
  EXPECT_EQ(ReplicaHash(a.data(), 3), ReplicaHash(b.data(), 3));
  b[1] = std::nextafter(b[1], 3.0f);
  EXPECT_NE(ReplicaHash(a.data(), 3), ReplicaHash(b.data(), 3));
  EXPECT_LT(ReplicaHash(a.data(), 3), uint64_t{1} << 52);  // exact in a double
}

}  // namespace
}  // namespace rigel::worker
