// Tensor fusion (as in Horovod): many small dense tensors are packed into one
// buffer and reduced with one collective call instead of one call each, since
// each call pays the ranks' round-trip latency however small it is.
//
// Tensors are packed in the order given; a bucket is closed before it would
// exceed `threshold_bytes`. A tensor larger than the threshold is reduced on
// its own, in place, with no copy. Threshold 0 turns fusion off (one call per
// tensor). Every rank must pass the same tensor sizes in the same order.
#ifndef RIGEL_COLLECTIVES_FUSION_H_
#define RIGEL_COLLECTIVES_FUSION_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/communicator.h"

namespace rigel::collectives {

// Horovod's default fusion threshold.
inline constexpr size_t kDefaultFusionThreshold = size_t{64} << 20;

struct Tensor {
  float* data = nullptr;
  size_t count = 0;
};

// Consecutive tensors [begin, end) reduced by one collective call.
struct Bucket {
  size_t begin = 0, end = 0;
  size_t floats = 0;  // their total size
};

// How `counts` (floats per tensor) are grouped under `threshold_bytes`.
std::vector<Bucket> MakeBuckets(std::span<const size_t> counts, size_t threshold_bytes);

// Thread-safety: one Run at a time (as the communicator).
class FusedAllReduce {
 public:
  // `comm` (host memory) must outlive this object.
  explicit FusedAllReduce(Communicator* comm, size_t threshold_bytes = kDefaultFusionThreshold);

  // Reduces every tensor across ranks (sum or mean). Errors: the
  // communicator's; FailedPrecondition if its buffers are not host memory.
  Status Run(std::span<const Tensor> tensors, ReduceOp op);

  // Collective calls made so far.
  uint64_t calls() const { return calls_; }

 private:
  Communicator* comm_;
  size_t threshold_;
  std::vector<float> pack_;
  uint64_t calls_ = 0;
};

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_FUSION_H_
