// The elements one worker runs at each step of a loop's run (what
// analysis/step_plan.h PlanStepLists gives). A data-parallel loop cut into
// mini-batches over a block of consecutive elements has steps that are
// consecutive elements too, found by arithmetic: a list of them would cost 8
// bytes per element of the worker's block (word2vec over 5.3M words on 4
// workers: 10.5 MB a worker). Other steps are element lists (analysis/order.h
// ElementList), themselves ranges where their elements are consecutive.
//
// Value type; const methods are thread-safe.
#ifndef RIGEL_ANALYSIS_STEP_LISTS_H_
#define RIGEL_ANALYSIS_STEP_LISTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/order.h"

namespace rigel::analysis {

class StepLists {
 public:
  StepLists() = default;
  explicit StepLists(std::vector<ElementList> steps) : lists_(std::move(steps)) {}
  explicit StepLists(const std::vector<std::vector<int64_t>>& steps);

  // `count` steps over elements [first, end): step k is the elements from
  // first + offset + k * stride, `batch` of them, none at or past `end`.
  // Requires first <= end and offset, batch, stride, count >= 0.
  static StepLists Strided(int64_t first, int64_t end, int64_t offset, int64_t batch,
                           int64_t stride, int64_t count);

  size_t size() const { return strided_ ? static_cast<size_t>(count_) : lists_.size(); }
  // Elements of step k (k < size()).
  size_t StepSize(size_t k) const;
  // Step k's elements in run order: a list's own, or written into `*scratch`.
  std::span<const int64_t> Step(size_t k, std::vector<int64_t>* scratch) const;
  // Elements of every step.
  int64_t Elements() const;
  // Every step's elements, one after the other.
  std::vector<int64_t> Concatenated() const;
  std::vector<std::vector<int64_t>> ToVectors() const;

 private:
  // Step k of a strided plan: [lo, hi).
  void Bounds(size_t k, int64_t* lo, int64_t* hi) const;

  std::vector<ElementList> lists_;
  bool strided_ = false;
  int64_t first_ = 0, end_ = 0, offset_ = 0, batch_ = 0, stride_ = 0, count_ = 0;
};

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_STEP_LISTS_H_
