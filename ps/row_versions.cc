#include "ps/row_versions.h"

namespace rigel::ps {

namespace {
// A bound no Merge uses: the next TakeDue scans every row.
constexpr uint32_t kRescan = UINT32_MAX;
}  // namespace

RowVersions::RowVersions(int workers)
    : workers_(workers), due_(static_cast<size_t>(workers)), due_bound_(workers, kRescan) {}

uint32_t RowVersions::Slot(int64_t row) {
  bool inserted;
  uint32_t s = index_.FindOrInsert(row, static_cast<uint32_t>(rows_.size()), &inserted);
  if (inserted) {
    rows_.push_back(row);
    version_.push_back(0);
    lag_.resize(lag_.size() + static_cast<size_t>(workers_), kNotHeld);
  }
  return s;
}

void RowVersions::Merge(int64_t row, int from, bool replica, uint32_t staleness) {
  const uint32_t s = Slot(row);
  ++version_[s];
  if (replica) return;
  for (int w = 0; w < workers_; ++w) {
    uint16_t& lag = Lag(s, w);
    if (w == from || lag == kNotHeld) continue;
    if (lag < kMaxLag) ++lag;
    if (due_bound_[w] != staleness) {
      // Rows listed so far crossed another bound: the next TakeDue scans.
      due_bound_[w] = kRescan;
    } else if (lag == staleness + 1) {
      due_[w].push_back(s);
    }
  }
}

void RowVersions::Hold(int64_t row, int w) { Lag(Slot(row), w) = 0; }

void RowVersions::Drop(int64_t row, int w) {
  uint32_t s = index_.Find(row);
  if (s != FlatIndex::kNone) Lag(s, w) = kNotHeld;
}

void RowVersions::DropAll(int w) {
  for (uint32_t s = 0; s < rows_.size(); ++s) Lag(s, w) = kNotHeld;
  due_[w].clear();
}

std::vector<int64_t> RowVersions::TakeDue(int w, uint32_t staleness) {
  std::vector<int64_t> out;
  auto take = [&](uint32_t s) {
    uint16_t& lag = Lag(s, w);
    if (lag == kNotHeld || lag <= staleness) return;  // dropped, or sent already
    lag = 0;
    out.push_back(rows_[s]);
  };
  if (due_bound_[w] != staleness) {
    for (uint32_t s = 0; s < rows_.size(); ++s) take(s);
    due_bound_[w] = staleness;
  } else {
    for (uint32_t s : due_[w]) take(s);
  }
  due_[w].clear();
  return out;
}

uint64_t RowVersions::version(int64_t row) const {
  uint32_t s = index_.Find(row);
  return s == FlatIndex::kNone ? 0 : version_[s];
}

int RowVersions::lacks(int64_t row, int w) const {
  uint32_t s = index_.Find(row);
  if (s == FlatIndex::kNone || Lag(s, w) == kNotHeld) return -1;
  return Lag(s, w);
}

std::vector<int64_t> RowVersions::Held(int w) const {
  std::vector<int64_t> out;
  for (uint32_t s = 0; s < rows_.size(); ++s) {
    if (Lag(s, w) != kNotHeld) out.push_back(rows_[s]);
  }
  return out;
}

}  // namespace rigel::ps
