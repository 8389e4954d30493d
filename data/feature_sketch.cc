#include "data/feature_sketch.h"

#include <algorithm>
#include <cmath>

#include "common/hash.h"
#include "data/dataset.h"

namespace rigel::data {

void DistinctSketch::Insert(uint64_t hash) {
  // Once full, almost every id is rejected by this one comparison.
  if (smallest_.size() == kSketchValues && hash >= smallest_.back()) return;
  auto at = std::lower_bound(smallest_.begin(), smallest_.end(), hash);
  if (at != smallest_.end() && *at == hash) return;
  smallest_.insert(at, hash);
  if (smallest_.size() > kSketchValues) smallest_.pop_back();
}

void DistinctSketch::Add(int64_t id) { Insert(Mix64(static_cast<uint64_t>(id))); }

void DistinctSketch::AddAll(std::span<const int32_t> ids) {
  for (int32_t id : ids) Add(id);
}

void DistinctSketch::Merge(const DistinctSketch& other) {
  for (uint64_t h : other.smallest_) Insert(h);
}

int64_t DistinctSketch::Estimate() const {
  if (smallest_.size() < kSketchValues) return static_cast<int64_t>(smallest_.size());
  // The k-th smallest of n uniform hashes lies near k / n of the range.
  const double kth = (static_cast<double>(smallest_.back()) + 1.0) / 18446744073709551616.0;
  return std::llround((kSketchValues - 1) / kth);
}

DistinctCounts DistinctFeatures(const Dataset& d) {
  if (d.shape_only) return d.distinct_features;
  if (d.feat_offset.size() < 2) return {};
  const int64_t elements = static_cast<int64_t>(d.feat_offset.size()) - 1;
  const auto ids = [&](int64_t from, int64_t to) {
    return std::span<const int32_t>(d.feat_index.data() + d.feat_offset[static_cast<size_t>(from)],
                                    static_cast<size_t>(d.feat_offset[static_cast<size_t>(to)] -
                                                        d.feat_offset[static_cast<size_t>(from)]));
  };
  DistinctSketch half, all;
  half.AddAll(ids(0, elements / 2));
  all = half;
  all.AddAll(ids(elements / 2, elements));
  return {all.Estimate(), half.Estimate()};
}

int64_t DistinctInShare(const DistinctCounts& counts, double share) {
  if (counts.distinct < 0) return -1;
  if (share >= 1.0) return counts.distinct;
  if (counts.first_half < 0) return counts.distinct;  // unknown: at most all of them
  if (counts.first_half == 0) {
    return static_cast<int64_t>(std::ceil(static_cast<double>(counts.distinct) * share));
  }
  const double b = std::clamp(
      std::log2(static_cast<double>(counts.distinct) / static_cast<double>(counts.first_half)), 0.0,
      1.0);
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(counts.distinct) * std::pow(std::max(share, 0.0), b)));
}

}  // namespace rigel::data
