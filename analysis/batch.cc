#include "analysis/batch.h"

#include <algorithm>

namespace rigel::analysis {

int64_t SparseBatch(int workers, double hot_share) {
  const double updates = static_cast<double>(std::max(workers, 1)) * hot_share;
  if (updates * kMaxBatch <= kRowUpdatesPerStep) return kMaxBatch;
  int64_t batch = kMaxBatch;
  while (batch > kMinBatch && updates * static_cast<double>(batch) > kRowUpdatesPerStep) {
    batch /= 2;
  }
  return batch;
}

std::string BatchRule(const std::string& params) {
  return "mini-batches: the largest power of two <= " +
         std::to_string(static_cast<int>(kRowUpdatesPerStep)) + " / (workers x s), between " +
         std::to_string(kMinBatch) + " and " + std::to_string(kMaxBatch) +
         " elements per worker, where s is the largest share of " +
         "elements that write one row of " + params + " (measured on " +
         std::to_string(kBatchSample) + " elements when the data are loaded); --batch N sets it";
}

}  // namespace rigel::analysis
