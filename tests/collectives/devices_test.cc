// Counting CUDA devices and placing workers on them
// (collectives/devices.h), on any machine: the test hook
// RIGEL_FAKE_CUDA_DEVICES stands in for a GPU.
#include "collectives/devices.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "common/config.h"

namespace rigel::collectives {
namespace {

// Sets (or, for nullopt, unsets) the hook for one test and puts back what
// was there.
class ScopedFake {
 public:
  explicit ScopedFake(std::optional<std::string> value) {
    if (const char* old = getenv(kFakeCudaDevicesEnv)) old_ = old;
    if (value) {
      setenv(kFakeCudaDevicesEnv, value->c_str(), 1);
    } else {
      unsetenv(kFakeCudaDevicesEnv);
    }
  }
  ~ScopedFake() {
    if (old_) {
      setenv(kFakeCudaDevicesEnv, old_->c_str(), 1);
    } else {
      unsetenv(kFakeCudaDevicesEnv);
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(CudaDevices, ABuildWithoutCudaSaysSoWhateverTheHookSays) {
  if (RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has CUDA";
  ScopedFake fake("2");
  auto d = CountCudaDevices();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("this build of Rigel has no NCCL"), std::string::npos);
  EXPECT_NE(d.status().message().find("--device cpu"), std::string::npos);
}

TEST(CudaDevices, TheHookReplacesTheCount) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA: the hook is not read";
  for (const char* n : {"0", "1", "3", "1024"}) {
    ScopedFake fake(n);
    auto d = CountCudaDevices();
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->count, std::stoi(n));
    EXPECT_EQ(d->note, std::string("RIGEL_FAKE_CUDA_DEVICES=") + n);
  }
}

TEST(CudaDevices, ABadHookValueIsRefusedNamingTheVariable) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA: the hook is not read";
  for (const char* v : {"two", "-1", "1x", " 1", "1.0", "1025", "99999999999"}) {
    ScopedFake fake(v);
    auto d = CountCudaDevices();
    ASSERT_FALSE(d.ok()) << v;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(),
              std::string("RIGEL_FAKE_CUDA_DEVICES=") + v +
                  ": expected a whole number of CUDA devices from 0 to 1024 (a test hook; unset "
                  "it to count the real devices)");
  }
}

// Unset or empty: the CUDA runtime counts; none found comes with the reason.
TEST(CudaDevices, WithoutTheHookTheRuntimeCounts) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA";
  for (std::optional<std::string> v :
       {std::optional<std::string>(), std::optional<std::string>("")}) {
    ScopedFake fake(v);
    auto d = CountCudaDevices();
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_GE(d->count, 0);
    if (d->count == 0) {
      EXPECT_NE(d->note.find("cudaGetDeviceCount"), std::string::npos) << d->note;
    } else {
      EXPECT_EQ(d->note, "");
    }
  }
}

TEST(CudaPlacement, WorkersThatFitAreAccepted) {
  EXPECT_TRUE(CheckCudaPlacement("localhost", 1, {1, ""}).ok());
  EXPECT_TRUE(CheckCudaPlacement("localhost", 2, {2, ""}).ok());
  EXPECT_TRUE(CheckCudaPlacement("node7", 3, {8, "RIGEL_FAKE_CUDA_DEVICES=8"}).ok());
  EXPECT_TRUE(CheckCudaPlacement("node7", 0, {0, "none"}).ok());
}

TEST(CudaPlacement, MoreWorkersThanDevicesNamesTheHostTheWorkersAndTheDevices) {
  Status s = CheckCudaPlacement("localhost", 2, {1, ""});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "--device cuda puts 2 workers on localhost, which has 1 CUDA device, and NCCL needs a "
            "device of its own for each worker");
  s = CheckCudaPlacement("gpu3", 5, {4, "RIGEL_FAKE_CUDA_DEVICES=4"});
  EXPECT_EQ(s.message(),
            "--device cuda puts 5 workers on gpu3, which has 4 CUDA devices "
            "(RIGEL_FAKE_CUDA_DEVICES=4), and NCCL needs a device of its own for each worker");
}

TEST(CudaPlacement, NoDeviceSaysWhy) {
  Status s = CheckCudaPlacement(
      "localhost", 1,
      {0, "cudaGetDeviceCount says no CUDA-capable device is detected (cudaErrorNoDevice)"});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "--device cuda puts 1 worker on localhost, which has no usable CUDA device "
            "(cudaGetDeviceCount says no CUDA-capable device is detected (cudaErrorNoDevice))");
}

}  // namespace
}  // namespace rigel::collectives
