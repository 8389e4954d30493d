// The hot rows of one relaxed parameter (DSL.md version 3): rows most
// mini-batches touch (a word2vec corpus' frequent words, a9a's common
// features), replicated on every worker and merged by the collectives
// (worker/dense_sync.h: Gloo, MPI or NCCL) every few mini-batches instead of
// going through the servers row by row (pWord2Vec and HugeCTR's hybrid
// embeddings do the same). Which rows are hot comes from the workers'
// measurement (analysis::ChooseHotRows).
//
// Per run: Load takes the servers' values (every worker the same: the
// servers are quiet between runs); a merge (Gather, DenseSync::Sync,
// Scatter), made by every worker at the same steps, replaces each replica by
// base + the sum of every worker's delta since the last merge, so the
// replicas stay bit for bit equal and no merge is lacked by anyone. Averaged
// (set_averaged: staleness-scaled merges, docs/parameter_servers.md), each
// of the k workers that wrote a row since the last merge took its delta
// without the other k - 1, so each counts 1 / k: the replica becomes base +
// the mean of the writers' deltas (the collective also sums a count of
// writers per row, 4 bytes a row); Commit (worker 0) merges the run's summed delta into
// the servers, so prints, other loops and --save-params see it. A merged
// value that is not finite is an error naming the parameter and row.
//
// Thread-compatible: the runner's thread.
#ifndef RIGEL_WORKER_SYNC_HOT_ROWS_H_
#define RIGEL_WORKER_SYNC_HOT_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernel/kernel.h"
#include "ps/cache.h"
#include "worker/dense_sync.h"
#include "worker/sync/row_io.h"

namespace rigel::worker::sync {

class HotRows {
 public:
  bool chosen() const { return chosen_; }
  const std::vector<int64_t>& rows() const { return rows_; }
  void Choose(std::vector<int64_t> rows) {
    rows_ = std::move(rows);
    chosen_ = true;
  }
  void set_averaged(bool on) { averaged_ = on; }

  // Pulls the rows into b, the run's binding of p (whose slot map, when it
  // has one, holds them: ps::RowCache::Exclude gives them cells), and makes
  // that the base.
  Status Load(RowIo& io, int p, const kernel::ParamBinding& b, SyncMetrics* m);
  // A merge, which every worker makes at the same steps: Gather gives the
  // replica of the rows (gathered from the run's binding b) for DenseSync::Sync
  // to sum the deltas since the last merge; Scatter puts the result back,
  // after checking it is finite (FailedPrecondition naming `name` and the
  // row, else).
  Replica Gather(const kernel::ParamBinding& b);
  Status Scatter(const kernel::ParamBinding& b, const std::string& name);
  // Worker 0, after the last Merge of a run: the run's delta to the servers.
  Status Commit(ps::RowExchange& exchange, const cluster::ShardMap& map, int p,
                const kernel::ParamBinding& b, SyncMetrics* m);

 private:
  bool chosen_ = false;
  bool averaged_ = false;
  std::vector<int64_t> rows_;
  std::vector<float> base_;        // the replica after the last merge (equal on every worker)
  std::vector<float> start_;       // what the servers held at Load
  std::vector<float> local_;       // gathered for a merge (averaged: then a writer flag per row)
  std::vector<float> merge_base_;  // averaged: base_ and a zero per row, summed into by the merge
};

}  // namespace rigel::worker::sync

#endif  // RIGEL_WORKER_SYNC_HOT_ROWS_H_
