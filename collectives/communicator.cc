#include "collectives/communicator.h"

#include "collectives/gloo/communicator.h"
#include "collectives/mpi/communicator.h"
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
