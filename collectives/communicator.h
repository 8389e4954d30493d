// Collectives for dense parameters: the Communicator interface every backend
// implements (gloo/ on CPU over TCP, nccl/ on CUDA devices, mpi/ on CPU
// through the job's MPI), and how one is made. Code outside collectives/
// includes only the folder's root headers (this one, device_buffer.h,
// devices.h, world.h, fusion.h, store.h), never a backend's. See
// docs/collectives.md.
//
// A communicator joins `size` ranks once, through a rendezvous Store
// (store.h), and then runs collectives over f32 buffers. Every rank must call
// the same collectives in the same order with the same counts.
//
// Errors: a rank that dies or stops answering makes every collective still
// waiting on it fail with Unavailable within `timeout` (naming the backend,
// the collective and what the library said); a communicator that failed
// stays failed and returns that error from every later call.
//
// Thread-safety: a communicator is used by one thread at a time.
#ifndef RIGEL_COLLECTIVES_COMMUNICATOR_H_
#define RIGEL_COLLECTIVES_COMMUNICATOR_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "collectives/store.h"
#include "common/status.h"

namespace rigel::collectives {

enum class ReduceOp { kSum, kMean };

// Where a communicator's buffers live: host memory (Gloo) or device memory
// of the communicator's CUDA device (NCCL).
enum class Memory { kHost, kCuda };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* backend() const = 0;  // "gloo", "nccl", "mpi"
  virtual Memory memory() const = 0;

  // Replaces data[0, count) on every rank by the element-wise sum (or mean)
  // over all ranks. Every rank gets the same bits.
  virtual Status AllReduce(float* data, size_t count, ReduceOp op) = 0;
  // Copies root's data[0, count) to every rank.
  virtual Status Broadcast(float* data, size_t count, int root) = 0;
  // out[r * count, (r + 1) * count) = rank r's in[0, count); `out` holds
  // size() * count floats and must not overlap `in`.
  virtual Status AllGather(const float* in, size_t count, float* out) = 0;
  // Returns once every rank has called it.
  virtual Status Barrier() = 0;
};

struct CommunicatorOptions {
  int rank = 0;
  int size = 1;
  // Namespace of this communicator's keys in the store: several
  // communicators (or jobs) may share one store.
  std::string prefix = "rigel";
  // How long joining and any one collective may wait for the other ranks.
  std::chrono::milliseconds timeout{30000};
  // Gloo: the host name or IP address this rank listens on, reachable by
  // the other ranks. NCCL: unused (NCCL picks its own interfaces).
  std::string host = "127.0.0.1";
  // NCCL: the CUDA device ordinal; -1: rank modulo the number of devices.
  int device = -1;
};

// Which backends this build has and this machine can run; see Make. kMpi
// runs on the MPI library of the job's mpirun (mpi/communicator.h).
enum class Backend { kGloo, kNccl, kMpi };
const char* BackendName(Backend b);

// OK when this build has `backend` and this process can run it: always for
// kGloo; kNccl needs NCCL 2.14 or later and a CUDA device; kMpi needs an
// MPI build and a process started by an MPI launcher (world.h). Otherwise
// Unavailable saying which is missing.
Status Available(Backend backend);

// The CUDA device that rank o.rank of a kNccl communicator made with `o`
// uses: o.device, or o.rank modulo the number of devices when it is -1.
// Errors: as Available(Backend::kNccl).
StatusOr<int> CudaDeviceFor(const CommunicatorOptions& o);

// Joins `o.size` ranks through `store` (which must outlive the call only)
// and returns the communicator. Errors: InvalidArgument for a bad rank or
// size; Unavailable when the other ranks do not join within o.timeout, or
// (NCCL) when there is no CUDA device or the build has no NCCL, with the
// reason. Blocks until every rank has joined.
StatusOr<std::unique_ptr<Communicator>> Make(Backend backend, Store* store,
                                             const CommunicatorOptions& o);

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_COMMUNICATOR_H_
