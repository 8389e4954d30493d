// The NCCL backend (collectives/nccl). Tests that need a CUDA
// device skip, saying why, when nccl_backend::Available() is not OK; the
// no-device tests check that a machine without CUDA (or a build without
// NCCL) gets a clean Unavailable, and skip where there is a device.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/device_buffer.h"
#include "collectives/nccl/communicator.h"
#include "collectives/store.h"

namespace rigel::collectives {
namespace {

using std::chrono::milliseconds;

// Skips the calling test, saying why, unless NCCL and a CUDA device are here.
#define SKIP_WITHOUT_NCCL()                                                           \
  do {                                                                                \
    const Status avail = nccl_backend::Available();                                   \
    if (!avail.ok()) GTEST_SKIP() << "NCCL backend unavailable: " << avail.message(); \
  } while (0)

// Skips the calling test where NCCL and a CUDA device are present.
#define SKIP_WITH_NCCL()                                                                \
  do {                                                                                  \
    if (nccl_backend::Available().ok()) {                                               \
      GTEST_SKIP() << "this machine has NCCL and a CUDA device; the no-device path is " \
                      "not reachable here";                                             \
    }                                                                                   \
  } while (0)

CommunicatorOptions Options(int rank, int size, milliseconds timeout = milliseconds(30000)) {
  CommunicatorOptions o;
  o.rank = rank;
  o.size = size;
  o.prefix = "nccl-test";
  o.timeout = timeout;
  return o;
}

// A device buffer on `device` holding `v` (empty on failure, which is
// reported as a test failure).
DeviceBuffer Upload(const std::vector<float>& v, int device) {
  StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(v.size(), device);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  if (!b.ok()) return DeviceBuffer();
  EXPECT_TRUE(b->CopyFromHost(v.data(), v.size()).ok());
  return std::move(b).value();
}

std::vector<float> Download(const DeviceBuffer& b) {
  std::vector<float> v(b.count());
  Status s = b.CopyToHost(v.data(), v.size());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return v;
}

// Rank r's test values: small integers, so sums and halves are exact.
std::vector<float> RankValues(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((rank + 1) * int(i % 7) + rank);
  return v;
}

// ---- Without a device (these run on machines without CUDA) ----

TEST(NcclNoDeviceTest, MakeSaysWhyItIsUnavailable) {
  SKIP_WITH_NCCL();
  const Status avail = nccl_backend::Available();
  EXPECT_EQ(avail.code(), StatusCode::kUnavailable);
  EXPECT_NE(avail.message().find("CUDA"), std::string::npos) << avail.message();
  MemoryStore store;
  auto comm = Make(Backend::kNccl, &store, Options(0, 1));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), StatusCode::kUnavailable);
  // The reason Available() gives is in Make's error.
  EXPECT_NE(comm.status().message().find(avail.message()), std::string::npos)
      << comm.status().message();
  // Also for a rank of several, which must not wait for the others first.
  auto start = std::chrono::steady_clock::now();
  auto comm2 = Make(Backend::kNccl, &store, Options(1, 2, milliseconds(20000)));
  EXPECT_EQ(comm2.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(NcclNoDeviceTest, DeviceBufferAllocateFailsCleanly) {
  SKIP_WITH_NCCL();
  StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(16, 0);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(b.status().message().find("CUDA"), std::string::npos) << b.status().message();
  // An empty buffer is harmless: moves, refuses copies, destroys.
  DeviceBuffer empty;
  DeviceBuffer moved(std::move(empty));
  EXPECT_EQ(moved.data(), nullptr);
  EXPECT_EQ(moved.count(), 0u);
  float x = 1;
  EXPECT_FALSE(moved.CopyFromHost(&x, 1).ok());
  EXPECT_FALSE(moved.CopyToHost(&x, 1).ok());
}

// ---- One rank ----

TEST(NcclDeviceBufferTest, RoundTripsAndMoves) {
  SKIP_WITHOUT_NCCL();
  DeviceBuffer a = Upload({1, 2, 3}, 0);
  float* p = a.data();
  ASSERT_NE(p, nullptr);
  DeviceBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.count(), 3u);
  EXPECT_EQ(Download(b), (std::vector<float>{1, 2, 3}));
  DeviceBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  float big[4] = {};
  EXPECT_EQ(c.CopyFromHost(big, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.CopyToHost(big, 4).code(), StatusCode::kInvalidArgument);
}

TEST(NcclSingleRankTest, RejectsBadRankAndDevice) {
  SKIP_WITHOUT_NCCL();
  MemoryStore store;
  EXPECT_EQ(Make(Backend::kNccl, &store, Options(1, 1)).status().code(),
            StatusCode::kInvalidArgument);
  CommunicatorOptions o = Options(0, 1);
  o.device = 1 << 20;
  EXPECT_EQ(Make(Backend::kNccl, &store, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(NcclSingleRankTest, CollectivesKeepOrCopyTheValues) {
  SKIP_WITHOUT_NCCL();
  MemoryStore store;
  auto made = Make(Backend::kNccl, &store, Options(0, 1));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Communicator& comm = **made;
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 1);
  EXPECT_STREQ(comm.backend(), "nccl");
  EXPECT_EQ(comm.memory(), Memory::kCuda);

  const std::vector<float> values = RankValues(0, 1000);
  DeviceBuffer buf = Upload(values, 0);
  ASSERT_TRUE(comm.AllReduce(buf.data(), buf.count(), ReduceOp::kSum).ok());
  EXPECT_EQ(Download(buf), values);
  ASSERT_TRUE(comm.AllReduce(buf.data(), buf.count(), ReduceOp::kMean).ok());
  EXPECT_EQ(Download(buf), values);
  ASSERT_TRUE(comm.Broadcast(buf.data(), buf.count(), 0).ok());
  EXPECT_EQ(Download(buf), values);
  DeviceBuffer out = Upload(std::vector<float>(values.size(), -1), 0);
  ASSERT_TRUE(comm.AllGather(buf.data(), buf.count(), out.data()).ok());
  EXPECT_EQ(Download(out), values);
  EXPECT_TRUE(comm.Barrier().ok());
  EXPECT_TRUE(comm.AllReduce(buf.data(), 0, ReduceOp::kSum).ok());
}

TEST(NcclSingleRankTest, BadArgumentsAreRefusedAndNotSticky) {
  SKIP_WITHOUT_NCCL();
  MemoryStore store;
  auto made = Make(Backend::kNccl, &store, Options(0, 1));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Communicator& comm = **made;
  std::vector<float> host(8, 1.0f);
  Status s = comm.AllReduce(host.data(), host.size(), ReduceOp::kSum);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("host memory"), std::string::npos) << s.message();
  DeviceBuffer buf = Upload(host, 0);
  EXPECT_EQ(comm.Broadcast(buf.data(), buf.count(), 1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(comm.AllReduce(buf.data(), buf.count(), ReduceOp::kSum).ok());
  EXPECT_TRUE(comm.Barrier().ok());
}

// ---- Several ranks ----

TEST(NcclMultiRankTest, MissingRankFailsJoinWithinTimeout) {
  SKIP_WITHOUT_NCCL();
  MemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  auto made = Make(Backend::kNccl, &store, Options(0, 2, milliseconds(1500)));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(made.status().message().find("rank 0 of 2"), std::string::npos)
      << made.status().message();
  EXPECT_GE(took, milliseconds(1400));
  EXPECT_LT(took, std::chrono::seconds(30));
}

TEST(NcclMultiRankTest, RankWithoutIdTimesOut) {
  SKIP_WITHOUT_NCCL();
  MemoryStore store;
  auto made = Make(Backend::kNccl, &store, Options(1, 2, milliseconds(300)));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(made.status().message().find("nccl-id"), std::string::npos) << made.status().message();
}

// NCCL refuses two ranks of one communicator on one device, so the tests
// below need two devices; ranks are threads sharing a MemoryStore.
#define SKIP_WITHOUT_TWO_DEVICES()                                                         \
  do {                                                                                     \
    SKIP_WITHOUT_NCCL();                                                                   \
    StatusOr<DeviceBuffer> second = DeviceBuffer::Allocate(1, 1);                          \
    if (!second.ok()) {                                                                    \
      GTEST_SKIP() << "needs 2 CUDA devices (NCCL allows one rank per device): device 1: " \
                   << second.status().message();                                           \
    }                                                                                      \
  } while (0)

TEST(NcclMultiRankTest, CollectivesOverTwoDevices) {
  SKIP_WITHOUT_TWO_DEVICES();
  constexpr size_t kCount = 1000;
  MemoryStore store;
  auto rank_main = [&](int rank) {
    auto made = Make(Backend::kNccl, &store, Options(rank, 2));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Communicator& comm = **made;
    const int device = rank;  // device -1: rank modulo the device count
    DeviceBuffer buf = Upload(RankValues(rank, kCount), device);
    ASSERT_TRUE(comm.AllReduce(buf.data(), kCount, ReduceOp::kSum).ok());
    std::vector<float> got = Download(buf);
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], float(3 * int(i % 7) + 1)) << i;
    ASSERT_TRUE(comm.AllReduce(buf.data(), kCount, ReduceOp::kMean).ok());
    got = Download(buf);
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], float(3 * int(i % 7) + 1) / 2) << i;

    ASSERT_TRUE(buf.CopyFromHost(RankValues(rank, kCount).data(), kCount).ok());
    ASSERT_TRUE(comm.Broadcast(buf.data(), kCount, 1).ok());
    EXPECT_EQ(Download(buf), RankValues(1, kCount));

    DeviceBuffer in = Upload(RankValues(rank, kCount), device);
    DeviceBuffer out = Upload(std::vector<float>(2 * kCount, -1), device);
    ASSERT_TRUE(comm.AllGather(in.data(), kCount, out.data()).ok());
    std::vector<float> want = RankValues(0, kCount);
    const std::vector<float> second = RankValues(1, kCount);
    want.insert(want.end(), second.begin(), second.end());
    EXPECT_EQ(Download(out), want);
    EXPECT_TRUE(comm.Barrier().ok());
  };
  std::thread other(rank_main, 1);
  rank_main(0);
  other.join();
}

TEST(NcclMultiRankTest, DeadPeerFailsCollectiveAndStaysFailed) {
  SKIP_WITHOUT_TWO_DEVICES();
  MemoryStore store;
  std::unique_ptr<Communicator> peer;
  std::thread other([&] {
    auto made = Make(Backend::kNccl, &store, Options(1, 2, milliseconds(2000)));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    peer = std::move(made).value();  // joins, then never calls a collective
  });
  auto made = Make(Backend::kNccl, &store, Options(0, 2, milliseconds(2000)));
  other.join();
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  DeviceBuffer buf = Upload(RankValues(0, 64), 0);
  const auto start = std::chrono::steady_clock::now();
  Status s = (*made)->AllReduce(buf.data(), buf.count(), ReduceOp::kSum);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("allreduce"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("rank 0 of 2"), std::string::npos) << s.message();
  const Status again = (*made)->Barrier();
  EXPECT_EQ(again.code(), StatusCode::kUnavailable);
  EXPECT_EQ(again.message(), s.message());
}

}  // namespace
}  // namespace rigel::collectives
