// Data sets held in part (issue 32: data that outgrows one worker). A worker
// whose loops over a data set are all data-parallel runs only its block of
// them, so it holds only the elements its blocks and the windows around
// them read (exec/hold_plan.h says which). Such a data
// set keeps the whole one's count, shape attributes and element numbers;
// Dataset::Local maps an element to its column position (dataset.h).
//
// Errors: Internal when a source does not hold an element asked for (a bug
// in whoever chose the ranges, never the user's data).
//
// Thread-safe: pure functions of their arguments.
#ifndef RIGEL_DATA_HELD_H_
#define RIGEL_DATA_HELD_H_

#include <bit>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"

namespace rigel::data {

// Elements [first, end) of a data set.
struct ElementRange {
  int64_t first = 0;
  int64_t end = 0;
  bool operator==(const ElementRange&) const = default;
};

// `ranges` clipped to [0, count), sorted, without empty ones, and with
// overlapping or adjacent ones merged.
std::vector<ElementRange> NormalizeRanges(std::vector<ElementRange> ranges, int64_t count);

// Copies the element at column position `l` of `d` (Dataset::Local) to the
// end of `p`'s columns (grid and range: nothing); p->count is the caller's.
void AppendColumnsAt(const Dataset& d, int64_t l, Dataset* p);

// Sets the fast path Dataset::Local checks first (held_first, held_span,
// held_local) to `d`'s largest held range; after `d->held` changed. Of a
// data set held by a mask: counts its held_rank (no fast range).
void SetFastRange(Dataset* d);

// A data set of `d`'s kind, file, count and shape attributes held in part
// with no element: what is left of one whose elements are no longer needed.
Dataset HoldingNothing(const Dataset& d);
// The same from a data set with no element columns (a shape-only one),
// whose vocabulary is moved, not copied; its warnings are dropped.
Dataset HoldingNothing(Dataset&& d);

// Makes `d` (held in part, nothing held yet) one held by a mask
// (Dataset::held_masked).
void UseMask(Dataset* d);

// Marks element `e` of `d`, held by a mask, as held; its columns are the
// caller's to append (AppendColumnsAt), in the same order. Elements are
// marked in increasing order; SetFastRange after the last.
void MarkHeld(int64_t e, Dataset* d);

// Calls f(e, local) for every element `d` holds (every one of a whole data
// set), in increasing e: its global number and its column position.
template <typename F>
void ForEachHeld(const Dataset& d, F f) {
  if (!d.in_part) {
    for (int64_t e = 0; e < d.count; ++e) f(e, e);
  } else if (d.held_masked) {
    for (size_t w = 0; w < d.held_mask.size(); ++w) {
      int64_t local = d.held_rank[w];
      for (uint64_t bits = d.held_mask[w]; bits != 0; bits &= bits - 1) {
        f(static_cast<int64_t>(w * 64) + std::countr_zero(bits), local++);
      }
    }
  } else {
    for (const Dataset::HeldRange& r : d.held) {
      for (int64_t k = 0; k < r.count; ++k) f(r.first + k, r.local + k);
    }
  }
}

// Elements in `ranges` (NormalizeRanges applies) and their count.
int64_t RangesCount(const std::vector<ElementRange>& ranges);

// The elements of `ranges` (normalized here) taken from `sources` (whole data
// sets or ones held in part, of the same kind, file and shape; the first
// holding an element gives it), as a data set held in part with the first
// source's count and shape attributes. `count` overrides the count when
// >= 0 (sources that are finished parts of a file hold their part's count).
StatusOr<Dataset> HoldOnly(std::span<const Dataset* const> sources,
                           std::vector<ElementRange> ranges, int64_t count = -1);

// Appends the elements of `ranges` (normalized, all after what `out` holds)
// from `sources` (as HoldOnly) to `out`, a data set held in part.
Status AppendHeld(std::span<const Dataset* const> sources, const std::vector<ElementRange>& ranges,
                  Dataset* out);

// SplitDataset of a data set held in part: the parts hold the elements of
// `d`'s that fall in them, numbered as a whole split numbers them, with the
// whole parts' counts. O(d.count) hashes for triples, libsvm and dense_csv.
StatusOr<std::pair<Dataset, Dataset>> SplitHeld(const Dataset& d, double test_fraction,
                                                uint64_t seed);

// For each range of `ranges` (elements of split part `part`, 0 train or 1
// test, of a data set of `parent_count` elements split as
// SplitDataset(parent, test_fraction, seed) splits it): the smallest range
// of the parent holding its elements (empty for an empty one), in the same
// order. One pass over the parent's elements.
std::vector<ElementRange> ParentRanges(DataKind kind, int64_t parent_count, double test_fraction,
                                       uint64_t seed, int part,
                                       const std::vector<ElementRange>& ranges);

}  // namespace rigel::data

#endif  // RIGEL_DATA_HELD_H_
