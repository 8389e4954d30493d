// The folder-root names that roles use instead of the backends' headers
// (communicator.h's Available and CudaDeviceFor, world.h): each says what
// its backend says, on any machine.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "collectives/communicator.h"
#include "collectives/mpi/world.h"
#include "collectives/nccl/communicator.h"
#include "collectives/world.h"

namespace rigel::collectives {
namespace {

void ExpectSame(const Status& root, const Status& backend) {
  EXPECT_EQ(root.code(), backend.code());
  EXPECT_EQ(root.message(), backend.message());
}

TEST(RootNames, AvailableIsTheBackendsAnswer) {
  EXPECT_TRUE(Available(Backend::kGloo).ok());
  ExpectSame(Available(Backend::kNccl), nccl_backend::Available());
  ExpectSame(Available(Backend::kMpi), mpi_backend::Available());
}

TEST(RootNames, CudaDeviceForIsTheNcclBackendsAnswer) {
  CommunicatorOptions o;
  o.rank = 3;
  o.size = 4;
  StatusOr<int> root = CudaDeviceFor(o);
  StatusOr<int> backend = nccl_backend::DeviceFor(o);
  ExpectSame(root.status(), backend.status());
  if (root.ok() && backend.ok()) {
    EXPECT_EQ(*root, *backend);
  }
}

// Outside mpirun (the test's own process) the world cannot be joined, with
// or without MPI in the build, and the root says so as the backend does.
TEST(RootNames, TheMpiWorldOutsideMpirunIsUnavailable) {
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK")) {
    GTEST_SKIP() << "this test runs under an MPI launcher";
  }
  const Status available = MpiWorldAvailable();
  EXPECT_EQ(available.code(), StatusCode::kUnavailable) << available.ToString();
  ExpectSame(available, mpi_backend::Available());
  // Join fails without initialising MPI, so Finalize has nothing to do.
  ExpectSame(JoinMpiWorld(/*participate=*/true, 0), available);
  FinalizeMpiWorld();
}

}  // namespace
}  // namespace rigel::collectives
