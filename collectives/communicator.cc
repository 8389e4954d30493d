#include "collectives/communicator.h"

#include "collectives/gloo/communicator.h"
#include "collectives/mpi/communicator.h"
#include "collectives/mpi/world.h"
#include "collectives/nccl/communicator.h"

namespace rigel::collectives {

const char* BackendName(Backend b) {
  switch (b) {
    case Backend::kGloo:
      return "gloo";
    case Backend::kNccl:
      return "nccl";
    case Backend::kMpi:
      return "mpi";
  }
  return "unknown";
}

Status Available(Backend backend) {
  switch (backend) {
    case Backend::kGloo:
      return Status::Ok();  // Gloo is a required dependency: every build has it.
    case Backend::kNccl:
      return nccl_backend::Available();
    case Backend::kMpi:
      return mpi_backend::Available();
  }
  return InvalidArgument("unknown collectives backend");
}

StatusOr<int> CudaDeviceFor(const CommunicatorOptions& o) { return nccl_backend::DeviceFor(o); }

StatusOr<std::unique_ptr<Communicator>> Make(Backend backend, Store* store,
                                             const CommunicatorOptions& o) {
  switch (backend) {
    case Backend::kGloo:
      return gloo_backend::NewGlooCommunicator(store, o);
    case Backend::kNccl:
      return nccl_backend::NewNcclCommunicator(store, o);
    case Backend::kMpi:
      return mpi_backend::NewMpiCommunicator(store, o);
  }
  return InvalidArgument("unknown collectives backend");
}

}  // namespace rigel::collectives
