// Dense synchronisation: the `allreduce` parameters' replicas, one on every
// worker, kept identical by summing the workers' deltas with a collective
// (collectives/), never through the parameter servers.
//
// Each replica has a base: its value after the last sync, the same bits on
// every worker. Between syncs the kernel writes the worker's local copy; a
// sync replaces every local copy by base + (sum over workers of local -
// base) and makes that the new base, so all replicas end bit for bit equal.
//
//  - host (Gloo): the deltas are packed into buckets of at most the fusion
//    threshold (collectives::FusedAllReduce), summed in place, and added to
//    the bases.
//  - cuda (NCCL): each bucket's replica lives in device memory and is the
//    authoritative copy. Worker 0 uploads its new value (base + delta), the
//    others their deltas; NCCL sums them into the device replica, which is
//    then copied back to the host copies the interpreter computes with.
//
// Thread-safety: one thread at a time. Every worker must call Sync with the
// same replicas (sizes, order) the same number of times.
#ifndef RIGEL_WORKER_DENSE_SYNC_H_
#define RIGEL_WORKER_DENSE_SYNC_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/device_buffer.h"
#include "collectives/fusion.h"
#include "common/status.h"

namespace rigel::worker {

// One parameter's replica: its local copy (written by the kernel) and its
// base, `count` floats each, owned by the caller.
struct Replica {
  float* local = nullptr;
  float* base = nullptr;
  size_t count = 0;
};

class DenseSync {
 public:
  // `comm` is the job's communicator (host memory for Gloo, device memory for
  // NCCL, on CUDA device `cuda_device`); `fusion_bytes` the fusion threshold.
  DenseSync(std::unique_ptr<collectives::Communicator> comm, size_t fusion_bytes,
            int cuda_device = -1);

  // Sums the deltas of `replicas` over every worker (see above). Errors: the
  // communicator's (a worker died or hung: Unavailable naming the backend).
  Status Sync(std::span<const Replica> replicas);

  // Copies worker 0's local copies to every worker (and to the bases): used
  // when replicas start from values that could differ.
  Status Broadcast(std::span<const Replica> replicas);

  const collectives::Communicator& comm() const { return *comm_; }
  uint64_t calls() const;                            // collective calls made so far
  uint64_t bytes_reduced() const { return bytes_; }  // floats summed * 4, this worker

 private:
  Status SyncDevice(std::span<const Replica> replicas);

  std::unique_ptr<collectives::Communicator> comm_;
  size_t fusion_bytes_;
  int cuda_device_;
  collectives::FusedAllReduce fused_;
  std::vector<std::vector<float>> deltas_;  // host: one per replica
  // cuda: per bucket, the device replica and the host staging buffer.
  std::vector<collectives::DeviceBuffer> device_;
  std::vector<float> staging_;
  uint64_t device_calls_ = 0;
  uint64_t bytes_ = 0;
};

// A 52-bit hash of the bits of `count` floats (exact in a double, so it can
// travel as a metric); equal replicas have equal hashes.
uint64_t ReplicaHash(const float* data, size_t count);

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_DENSE_SYNC_H_
