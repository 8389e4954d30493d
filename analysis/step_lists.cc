#include "analysis/step_lists.h"

#include <algorithm>

namespace rigel::analysis {

StepLists::StepLists(const std::vector<std::vector<int64_t>>& steps) {
  lists_.reserve(steps.size());
  for (const std::vector<int64_t>& s : steps) lists_.emplace_back(s);
}

StepLists StepLists::Strided(int64_t first, int64_t end, int64_t offset, int64_t batch,
                             int64_t stride, int64_t count) {
  StepLists out;
  out.strided_ = true;
  out.first_ = first;
  out.end_ = std::max(first, end);
  out.offset_ = offset;
  out.batch_ = batch;
  out.stride_ = stride;
  out.count_ = count;
  return out;
}

void StepLists::Bounds(size_t k, int64_t* lo, int64_t* hi) const {
  *lo = std::min(end_, first_ + offset_ + static_cast<int64_t>(k) * stride_);
  *hi = std::min(end_, *lo + batch_);
}

size_t StepLists::StepSize(size_t k) const {
  if (!strided_) return lists_[k].size();
  int64_t lo, hi;
  Bounds(k, &lo, &hi);
  return static_cast<size_t>(hi - lo);
}

std::span<const int64_t> StepLists::Step(size_t k, std::vector<int64_t>* scratch) const {
  if (!strided_) return lists_[k].Span(scratch);
  int64_t lo, hi;
  Bounds(k, &lo, &hi);
  scratch->resize(static_cast<size_t>(hi - lo));
  for (int64_t e = lo; e < hi; ++e) (*scratch)[static_cast<size_t>(e - lo)] = e;
  return *scratch;
}

int64_t StepLists::Elements() const {
  int64_t n = 0;
  for (size_t k = 0; k < size(); ++k) n += static_cast<int64_t>(StepSize(k));
  return n;
}

std::vector<int64_t> StepLists::Concatenated() const {
  std::vector<int64_t> out, scratch;
  out.reserve(static_cast<size_t>(Elements()));
  for (size_t k = 0; k < size(); ++k) {
    const std::span<const int64_t> s = Step(k, &scratch);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> StepLists::ToVectors() const {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> scratch;
  for (size_t k = 0; k < size(); ++k) {
    const std::span<const int64_t> s = Step(k, &scratch);
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

}  // namespace rigel::analysis
