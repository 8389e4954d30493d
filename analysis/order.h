// The serial order equivalent to running a loop's schedule on P workers.
//
// A schedule runs blocks of iterations step by step; on one step the blocks
// of different workers touch disjoint parameter rows (that is what the
// analysis proved), so running the steps one after another, and each block's
// iterations in the order the worker would, gives exactly what the
// distributed run gives (up to float summation order of merged deltas). Tests
// compare distributed runs with the serial executor run in this order, and
// the wavefront's tests check that this order keeps every dependence.
//
// Where the blocks begin and end is given by the cuts of analysis/partition.h:
// the functions taking a `Cuts` place elements with those (balanced cuts from
// MakeCuts, or cuts a scheduler sent to its workers), so a distributed run and
// this order agree block for block; those without cuts use EqualCuts (equal
// ranges of a dimension, or of the element count for data_parallel).
//
// Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_ORDER_H_
#define RIGEL_ANALYSIS_ORDER_H_

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

#include "analysis/partition.h"
#include "analysis/plan.h"
#include "common/status.h"
#include "data/dataset.h"

namespace rigel::analysis {

// Where one element runs: its step, its worker, and its block.
struct Placement {
  int64_t step = 0;
  int worker = 0;
  std::vector<int64_t> block;  // block coordinates (one per blocked dimension)
};

// Coordinates of element `e` of `data` in its space (i, j) / (n) / (t).
std::vector<int64_t> ElementCoords(const data::Dataset& data, int64_t e);

// Where the schedule of `loop` runs element `e` with coordinates `coords`
// when its blocks are cut by `cuts`: worker and block from the part of each
// axis (for conflict_free_2d, block (a, b) runs at step (b - a) mod P; for
// wavefront, block q at step sum(q) on worker q[0]). Requires cuts that fit
// the loop and the space (CheckCuts is OK; only the number of axes and the
// schedule kind are checked here, aborting when they differ). O(axes *
// log parts).
Placement Place(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& coords,
                int64_t e);

// Place(...).worker alone, with no allocation: for code that only asks
// which worker runs an element (exec/hold_plan.h HeldFilter).
int PlaceWorker(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& coords,
                int64_t e);

// The same with equal-range cuts (EqualCuts) of a space of `extent` (see
// SpaceExtent) holding `count` elements, for P = `workers`. Builds the cuts on
// every call (O(P) allocation): in a loop over elements, make them once and
// use the overload above. Requires CheckScheduleFits(loop, workers,
// extent.size()) to be OK.
Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& coords, int64_t e, int64_t count);

// The extent of each dimension of `data`'s space: (rows, cols) for triples and
// grid, (count) otherwise.
std::vector<int64_t> SpaceExtent(const data::Dataset& data);

// Every element of `data` (0 .. count-1) once, in the order a run of the
// schedule completes them: by step, then worker, then (within a block) in
// lexicographic order of the coordinates for ordered and wavefront loops or
// in element order otherwise; blocks cut into equal ranges (EqualCuts).
// InvalidArgument if workers < 1 or the data set does not fit the loop's
// space (a 2-D schedule over 1-D data; see CheckScheduleFits).
StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const data::Dataset& data);

// The same with the blocks cut by `cuts` (P = cuts.workers), e.g. the
// balanced cuts of MakeCuts(loop, P, data): the order a distributed run with
// these cuts is compared with. InvalidArgument if the cuts do not fit the
// loop and the data set (CheckCuts).
StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, const Cuts& cuts,
                                             const data::Dataset& data);

// The elements of one block, in run order. Consecutive element numbers are
// held as a range (first, count), which is what a data-parallel or serial
// loop's blocks are (each worker's block of a cut by count): every worker
// keeps every worker's blocks, so a list would cost 8 bytes per element of
// the data set on each (word2vec over 5.3M words: 42 MB). A number that does
// not follow turns the block into a list. Value type; copies share a list
// until one is changed.
class ElementList {
 public:
  ElementList() = default;
  ElementList(std::vector<int64_t> list);  // NOLINT: a list is an element list
  ElementList(std::initializer_list<int64_t> list) : ElementList(std::vector<int64_t>(list)) {}
  static ElementList Range(int64_t first, int64_t count);

  void push_back(int64_t e);
  size_t size() const { return listed_ ? list_->size() : static_cast<size_t>(count_); }
  bool empty() const { return size() == 0; }
  int64_t operator[](size_t k) const {
    return listed_ ? (*list_)[k] : first_ + static_cast<int64_t>(k);
  }
  bool is_range() const { return !listed_; }

  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int64_t;
    Iterator() = default;
    Iterator(const ElementList* l, std::ptrdiff_t k) : l_(l), k_(k) {}
    int64_t operator*() const { return (*l_)[static_cast<size_t>(k_)]; }
    int64_t operator[](std::ptrdiff_t n) const { return (*l_)[static_cast<size_t>(k_ + n)]; }
    Iterator& operator++() {
      ++k_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator t = *this;
      ++k_;
      return t;
    }
    Iterator& operator--() {
      --k_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator t = *this;
      --k_;
      return t;
    }
    Iterator& operator+=(std::ptrdiff_t n) {
      k_ += n;
      return *this;
    }
    Iterator& operator-=(std::ptrdiff_t n) {
      k_ -= n;
      return *this;
    }
    friend Iterator operator+(Iterator a, std::ptrdiff_t n) { return a += n; }
    friend Iterator operator+(std::ptrdiff_t n, Iterator a) { return a += n; }
    friend Iterator operator-(Iterator a, std::ptrdiff_t n) { return a -= n; }
    friend std::ptrdiff_t operator-(const Iterator& a, const Iterator& b) { return a.k_ - b.k_; }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.k_ == b.k_; }
    friend auto operator<=>(const Iterator& a, const Iterator& b) { return a.k_ <=> b.k_; }

   private:
    const ElementList* l_ = nullptr;
    std::ptrdiff_t k_ = 0;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, static_cast<std::ptrdiff_t>(size())); }

  std::vector<int64_t> ToVector() const { return std::vector<int64_t>(begin(), end()); }
  // The elements as contiguous numbers: the list itself, or the range
  // written into `*scratch`.
  std::span<const int64_t> Span(std::vector<int64_t>* scratch) const;

  friend bool operator==(const ElementList& a, const ElementList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  int64_t first_ = 0;
  int64_t count_ = 0;
  bool listed_ = false;
  // Shared by copies (a worker's steps copy its blocks), copied on the
  // first push_back to a shared one.
  std::shared_ptr<std::vector<int64_t>> list_;
};

// The elements each worker runs on each step of a schedule with the blocks
// cut by `cuts`: blocks[step][worker], each in the order ScheduleOrder gives
// (their concatenation, step by step and worker by worker, is ScheduleOrder).
// Every step up to the last non-empty one is present (some blocks empty).
struct StepBlocks {
  int workers = 1;
  std::vector<std::vector<ElementList>> blocks;
  int64_t steps() const { return static_cast<int64_t>(blocks.size()); }
};
// InvalidArgument if the cuts do not fit the loop and the data (CheckCuts).
StatusOr<StepBlocks> MakeStepBlocks(const LoopPlan& loop, const Cuts& cuts,
                                    const data::Dataset& data);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_ORDER_H_
