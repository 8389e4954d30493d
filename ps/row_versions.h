// Per-row versions of one parameter's rows on one server, and per worker how
// many merges by other workers its cached copy of each row lacks (DSL.md
// version 3, "bounded staleness per row"; the worker side is ps/cache.h).
//
// A row's version counts the merges applied to it (a worker's summed deltas
// of the row, pushed at once, are one merge). A worker holds a row from the
// time the server sends it the row until it drops it; each merge by another
// worker adds one to what that holder lacks, and once a holder lacks more
// than N merges the row is due to it: TakeDue lists such rows, and the
// server sends them in its next answer to that worker, which then lacks none.
// A merge of rows replicated on every worker (hot rows, summed by a
// collective, which every replica already holds) is lacked by no holder.
//
// Memory: 8 + 2 x workers bytes per row ever held or merged, plus the index.
// Thread-compatible: the service calls it from its receive thread only.
#ifndef RIGEL_PS_ROW_VERSIONS_H_
#define RIGEL_PS_ROW_VERSIONS_H_

#include <cstdint>
#include <vector>

#include "common/flat_index.h"

namespace rigel::ps {

class RowVersions {
 public:
  explicit RowVersions(int workers);

  // One merge of `row` by worker `from` (replica: by every worker). Holders
  // other than `from` lack one merge more; with `staleness` N, a holder that
  // now lacks N + 1 becomes due.
  void Merge(int64_t row, int from, bool replica, uint32_t staleness);
  // Worker w now holds `row` as the server has it (it was just sent).
  void Hold(int64_t row, int w);
  // Worker w no longer holds `row`.
  void Drop(int64_t row, int w);
  // Drops every row worker w holds (its cache was emptied).
  void DropAll(int w);
  // The rows worker w holds that lack more than `staleness` merges, in no
  // particular order, each once; they count as held as the server has them
  // now (the caller sends them).
  std::vector<int64_t> TakeDue(int w, uint32_t staleness);

  uint64_t version(int64_t row) const;
  // Merges of `row` that worker w's copy lacks; -1 if w does not hold it.
  int lacks(int64_t row, int w) const;
  // Every row w holds, in no particular order.
  std::vector<int64_t> Held(int w) const;

 private:
  static constexpr uint16_t kNotHeld = UINT16_MAX;
  static constexpr uint16_t kMaxLag = UINT16_MAX - 1;  // saturates
  uint32_t Slot(int64_t row);
  uint16_t& Lag(uint32_t slot, int w) { return lag_[size_t{slot} * workers_ + w]; }
  uint16_t Lag(uint32_t slot, int w) const { return lag_[size_t{slot} * workers_ + w]; }

  int workers_;
  FlatIndex index_;
  std::vector<int64_t> rows_;      // by slot
  std::vector<uint64_t> version_;  // by slot
  std::vector<uint16_t> lag_;      // [slot][worker]: merges lacked, or kNotHeld
  // Per worker: rows that crossed the bound since its last TakeDue (may hold
  // rows since dropped or already sent: TakeDue checks), and the bound they
  // crossed, so a later call with another bound scans instead.
  std::vector<std::vector<uint32_t>> due_;
  std::vector<uint32_t> due_bound_;
};

}  // namespace rigel::ps

#endif  // RIGEL_PS_ROW_VERSIONS_H_
