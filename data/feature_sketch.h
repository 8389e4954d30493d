// How many distinct feature ids a data set's libsvm or Criteo elements
// name: what the servers create of a table indexed by them (row.features)
// and what a worker's row cache fetches of its share (analysis/memory.h).
//
// DistinctSketch counts distinct ids in bounded memory, so that a scan of a
// file in chunks (data/held_load.h) can merge its chunks' counts: it keeps
// the kSketchValues smallest distinct 64-bit hashes of the ids it saw (a
// "k minimum values" sketch). Below kSketchValues distinct ids the count is
// exact; above, its relative standard error is about 1 / sqrt(kSketchValues),
// about 3%. DistinctInShare extrapolates the count of a share of the
// elements from the counts of all of them and of their first half (Heaps'
// law: distinct ids grow as a power of the elements read).
//
// Thread-compatible: a sketch is a value; the functions are pure.
#ifndef RIGEL_DATA_FEATURE_SKETCH_H_
#define RIGEL_DATA_FEATURE_SKETCH_H_

#include <cstdint>
#include <span>
#include <vector>

namespace rigel::data {

struct Dataset;

inline constexpr int kSketchValues = 1024;

class DistinctSketch {
 public:
  void Add(int64_t id);
  void AddAll(std::span<const int32_t> ids);
  void Merge(const DistinctSketch& other);
  // The estimated number of distinct ids added (exact below kSketchValues).
  int64_t Estimate() const;

 private:
  void Insert(uint64_t hash);
  std::vector<uint64_t> smallest_;  // sorted, distinct, at most kSketchValues
};

// Distinct feature ids of all elements and of their first half (by position
// in the columns), both -1 when unknown (not libsvm or Criteo data, or facts
// from an index written before they were counted).
struct DistinctCounts {
  int64_t distinct = -1;
  int64_t first_half = -1;
};

// Of a loaded data set, counted over its columns; of one known by its facts
// only (Dataset::shape_only), the counts its scan or index recorded.
DistinctCounts DistinctFeatures(const Dataset& d);

// The distinct ids expected in `share` (0..1] of the elements, given the
// counts of all of them and of their first half: all * share^b, where
// 2^b = all / first_half (b in [0, 1]). -1 when `counts.distinct` is unknown;
// `counts.distinct` when the half is unknown.
int64_t DistinctInShare(const DistinctCounts& counts, double share);

}  // namespace rigel::data

#endif  // RIGEL_DATA_FEATURE_SKETCH_H_
