// The NCCL backend: collectives on CUDA device memory (libnccl under
// /usr/local/cuda). Rank 0 makes the NCCL unique id and sets it in the Store
// under "<prefix>/nccl-id"; the others read it; each rank then joins with a
// non-blocking ncclCommInitRankConfig on its CUDA device (one device per
// rank: NCCL does not allow two ranks of a communicator on one device; how
// many a host has, and whether a job's workers fit them:
// collectives/devices.h), with one CUDA stream per communicator. Buffers
// passed to the collectives are device pointers on that device
// (collectives/device_buffer.h); plain host pointers are refused with
// InvalidArgument.
//
// Every collective runs on the communicator's stream, which is ordered after
// work already issued to the legacy default stream (work on other streams
// that writes the buffers must be synchronized by the caller), and returns
// once the result is in the buffer. Calls make the communicator's device the
// calling thread's current CUDA device.
//
// Errors: Unavailable, with the reason, when this build has no NCCL
// (RIGEL_HAVE_CUDA 0), when the machine has no CUDA device, or when NCCL
// fails; joining or a collective that does not finish within the timeout
// aborts the communicator (ncclCommAbort) and fails instead of hanging.
//
// Thread-safety: as collectives::Communicator.
#ifndef RIGEL_COLLECTIVES_NCCL_COMMUNICATOR_H_
#define RIGEL_COLLECTIVES_NCCL_COMMUNICATOR_H_

#include <memory>
#include <string>

#include "collectives/communicator.h"

namespace rigel::collectives::nccl_backend {

// OK when this build has NCCL (2.14 or later, for non-blocking
// communicators) and the machine at least one CUDA device; otherwise
// Unavailable saying which is missing.
Status Available();

// The CUDA device a rank of CommunicatorOptions `o` uses: o.device, or
// o.rank modulo the number of devices when it is -1. Errors: as Available().
StatusOr<int> DeviceFor(const CommunicatorOptions& o);

// Joins the ranks (blocks until all joined or o.timeout ran out). Device:
// o.device, or o.rank modulo the number of devices when it is -1. Errors: as
// collectives::Make; InvalidArgument for a device that does not exist.
StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(Store* store,
                                                            const CommunicatorOptions& o);

}  // namespace rigel::collectives::nccl_backend

#endif  // RIGEL_COLLECTIVES_NCCL_COMMUNICATOR_H_
