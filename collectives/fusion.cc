#include "collectives/fusion.h"

#include <algorithm>

namespace rigel::collectives {

std::vector<Bucket> MakeBuckets(std::span<const size_t> counts, size_t threshold_bytes) {
  std::vector<Bucket> out;
  const size_t limit = threshold_bytes / sizeof(float);
  bool open = false;  // whether the last bucket may take more tensors
  for (size_t i = 0; i < counts.size(); ++i) {
    if (open && out.back().floats + counts[i] <= limit) {
      out.back().end = i + 1;
      out.back().floats += counts[i];
      continue;
    }
    out.push_back(Bucket{i, i + 1, counts[i]});
    // An oversized tensor goes alone; with a limit of 0 (fusion off) every
    // tensor does, even an empty one.
    open = limit > 0 && counts[i] <= limit;
  }
  return out;
}

FusedAllReduce::FusedAllReduce(Communicator* comm, size_t threshold_bytes)
    : comm_(comm), threshold_(threshold_bytes) {}

Status FusedAllReduce::Run(std::span<const Tensor> tensors, ReduceOp op) {
  if (comm_->memory() != Memory::kHost) {
    return FailedPrecondition(std::string("tensor fusion packs host memory; the ") +
                              comm_->backend() + " communicator's buffers are on the device");
  }
  std::vector<size_t> counts;
  counts.reserve(tensors.size());
  for (const Tensor& t : tensors) counts.push_back(t.count);
  for (const Bucket& b : MakeBuckets(counts, threshold_)) {
    if (b.floats == 0) continue;
    ++calls_;
    if (b.end - b.begin == 1) {
      RIGEL_RETURN_IF_ERROR(comm_->AllReduce(tensors[b.begin].data, b.floats, op));
      continue;
    }
    pack_.resize(b.floats);
    float* at = pack_.data();
    for (size_t i = b.begin; i < b.end; ++i)
      at = std::copy_n(tensors[i].data, tensors[i].count, at);
    RIGEL_RETURN_IF_ERROR(comm_->AllReduce(pack_.data(), b.floats, op));
    const float* from = pack_.data();
    for (size_t i = b.begin; i < b.end; ++i) {
      std::copy_n(from, tensors[i].count, tensors[i].data);
      from += tensors[i].count;
    }
  }
  return Status::Ok();
}

}  // namespace rigel::collectives
