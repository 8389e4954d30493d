#include "worker/dense_sync.h"

#include <algorithm>
#include <cstring>

#include "common/hash.h"

namespace rigel::worker {

namespace coll = collectives;

DenseSync::DenseSync(std::unique_ptr<coll::Communicator> comm, size_t fusion_bytes, int cuda_device)
    : comm_(std::move(comm)),
      fusion_bytes_(fusion_bytes),
      cuda_device_(cuda_device),
      fused_(comm_.get(), fusion_bytes) {}

uint64_t DenseSync::calls() const { return fused_.calls() + device_calls_; }

Status DenseSync::Sync(std::span<const Replica> replicas) {
  if (comm_->memory() == coll::Memory::kCuda) return SyncDevice(replicas);
  deltas_.resize(replicas.size());
  std::vector<coll::Tensor> tensors;
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Replica& r = replicas[i];
    deltas_[i].resize(r.count);
    for (size_t k = 0; k < r.count; ++k) deltas_[i][k] = r.local[k] - r.base[k];
    tensors.push_back(coll::Tensor{deltas_[i].data(), r.count});
    bytes_ += r.count * sizeof(float);
  }
  RIGEL_RETURN_IF_ERROR(fused_.Run(tensors, coll::ReduceOp::kSum));
  for (size_t i = 0; i < replicas.size(); ++i) {
    const Replica& r = replicas[i];
    for (size_t k = 0; k < r.count; ++k) r.base[k] += deltas_[i][k];
    std::copy_n(r.base, r.count, r.local);
  }
  return Status::Ok();
}

Status DenseSync::SyncDevice(std::span<const Replica> replicas) {
  std::vector<size_t> counts;
  for (const Replica& r : replicas) counts.push_back(r.count);
  const std::vector<coll::Bucket> buckets = coll::MakeBuckets(counts, fusion_bytes_);
  // Loops sync different sets of parameters: a bucket whose size changed
  // gets a buffer of its new size.
  device_.resize(buckets.size());
  for (size_t j = 0; j < buckets.size(); ++j) {
    if (device_[j].count() == buckets[j].floats) continue;
    RIGEL_ASSIGN_OR_RETURN(device_[j],
                           coll::DeviceBuffer::Allocate(buckets[j].floats, cuda_device_));
  }
  const bool first = comm_->rank() == 0;
  for (size_t j = 0; j < buckets.size(); ++j) {
    const coll::Bucket& b = buckets[j];
    if (b.floats == 0) continue;
    // Worker 0 contributes base + delta (its local copy), the others their
    // deltas: the sum is the new value, reduced straight into the replica.
    staging_.resize(b.floats);
    float* at = staging_.data();
    for (size_t i = b.begin; i < b.end; ++i) {
      const Replica& r = replicas[i];
      for (size_t k = 0; k < r.count; ++k) at[k] = first ? r.local[k] : r.local[k] - r.base[k];
      at += r.count;
    }
    RIGEL_RETURN_IF_ERROR(device_[j].CopyFromHost(staging_.data(), b.floats));
    ++device_calls_;
    bytes_ += b.floats * sizeof(float);
    RIGEL_RETURN_IF_ERROR(comm_->AllReduce(device_[j].data(), b.floats, coll::ReduceOp::kSum));
    RIGEL_RETURN_IF_ERROR(device_[j].CopyToHost(staging_.data(), b.floats));
    const float* from = staging_.data();
    for (size_t i = b.begin; i < b.end; ++i) {
      const Replica& r = replicas[i];
      std::copy_n(from, r.count, r.base);
      std::copy_n(from, r.count, r.local);
      from += r.count;
    }
  }
  return Status::Ok();
}

Status DenseSync::Broadcast(std::span<const Replica> replicas) {
  for (const Replica& r : replicas) {
    if (comm_->memory() == coll::Memory::kCuda) {
      RIGEL_ASSIGN_OR_RETURN(auto buf, coll::DeviceBuffer::Allocate(r.count, cuda_device_));
      RIGEL_RETURN_IF_ERROR(buf.CopyFromHost(r.local, r.count));
      RIGEL_RETURN_IF_ERROR(comm_->Broadcast(buf.data(), r.count, 0));
      RIGEL_RETURN_IF_ERROR(buf.CopyToHost(r.local, r.count));
    } else {
      RIGEL_RETURN_IF_ERROR(comm_->Broadcast(r.local, r.count, 0));
    }
    std::copy_n(r.local, r.count, r.base);
  }
  return Status::Ok();
}

uint64_t ReplicaHash(const float* data, size_t count) {
  uint64_t h = Mix64(count);
  for (size_t k = 0; k < count; ++k) {
    uint32_t bits;
    std::memcpy(&bits, &data[k], sizeof bits);
    h = Mix64(h ^ bits);
  }
  return h >> 12;
}

}  // namespace rigel::worker
