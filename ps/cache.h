// A worker's write-back cache of relaxed parameters' rows (DSL.md version 3,
// "bounded staleness per row"; the servers' side is ps/row_versions.h, the
// exchange `RowSync` in ps/wire/ps.capnp, the design in
// docs/parameter_servers.md).
//
// RowCache is one parameter. Its values live either in the caller's array
// (the worker's whole local copy, which the kernel reads and writes in place)
// or, held in part, in the cache's own cells: the kernel then reaches a row
// through the cache's slot map (data() and cells()), so
// a worker holds only the rows it caches, never the whole table. Per row it
// holds, the cache keeps the base the next delta is taken against (the
// servers' value when the row came, plus this worker's deltas merged since),
// the server version it came at and the merges this worker made since (to
// audit the bound), and counts each row's writes: the caller's kernel adds 1
// to updates()[cells()[r]] per write of row r and appends r to *due() when
// that count reaches push_bound() (kernel::RowTracker with `cells` does
// exactly this).
//
// RowExchange sends, per mini-batch, one rowSync per server for a set of
// caches and applies the answers:
//  - rows whose counted updates reached the push bound are pushed (one merge
//    each: delta = local - base, then base += delta), as is every row with
//    updates at the end of a loop (flush) and every row evicted;
//  - rows the coming mini-batch touches that the cache does not hold are
//    fetched (a miss always fetches);
//  - the servers answer those, and every held row that lacks more than N
//    merges by other workers; such a row becomes server value + this
//    worker's pending delta (a worker reads its own writes), its base the
//    server value.
// So what a worker reads of a cached row lacks at most N merges by other
// workers that the servers had applied when they answered the exchange
// before the mini-batch (the audit, RowExchange::set_audit, checks this
// against the servers' versions of every held row).
//
// A push age (set_push_age) bounds how long an update waits: a held row is
// pushed once `age` exchanges have passed since its first update after its
// last push, even short of the push bound (a row a few elements of each
// mini-batch touch would otherwise wait many mini-batches, and the other
// workers' copies drift from it).
//
// Memory bound: at most `capacity` rows are held (a base of width floats, its
// values too when held in part, and 30 bytes each; 4 bytes per row of the
// parameter besides: the slot map). A parameter with
// no more rows than that is held whole (`whole()`: every row fetched at the
// first exchange, none evicted, so the caller need not list the rows each
// mini-batch touches), unless FetchTouchedRowsOnly says otherwise.
// Otherwise, when fetches would exceed the capacity, held rows that neither
// the last nor the coming mini-batch touches are evicted in clock order (a
// row used since the hand last passed is spared once); an evicted row with
// updates is pushed in the same exchange.
//
// Scaled merges (SetScaledRows): a scaled row's delta pushed while the
// worker's copy lacked L merges by other workers is added times 1 / (1 + L),
// and the row comes back in the answer, so the copy is the servers' value
// again.
//
// Rows can be excluded (hot rows, replicated and merged by a collective):
// the cache keeps a cell for each (the hot rows' values, when held in part)
// but never fetches, pushes, refreshes or evicts them, and ignores their
// counts.
//
// Errors: the transport's, and the servers' (FailedPrecondition for a
// non-finite merged delta, naming the parameter and row). Thread-compatible:
// one thread (the worker's runner) at a time; the transport's callbacks only
// fill promises.
#ifndef RIGEL_PS_CACHE_H_
#define RIGEL_PS_CACHE_H_

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cluster/shard_map.h"
#include "common/status.h"
#include "ps/wire/ps.capnp.h"
#include "transport/transport.h"

namespace rigel::ps {

struct RowCacheStats {
  uint64_t pushed = 0;     // rows merged (one merge each)
  uint64_t fetched = 0;    // rows received that were not held (misses)
  uint64_t refreshed = 0;  // held rows received because they lacked > N merges
  uint64_t evicted = 0;
  uint64_t bytes_out = 0, bytes_in = 0;  // keys and rows sent and received
  // Audit (RowExchange::set_audit): held rows checked, and the most merges
  // by other workers any of them lacked when an answer came.
  uint64_t audited = 0;
  int64_t max_lag = 0;
  // Drift: over the held rows received again (refreshed), the summed
  // squares of (servers' value - this worker's base), what its copy lacked,
  // and of the servers' values.
  double drift_sq = 0, norm_sq = 0;
};

class RowCache {
 public:
  // Parameter `param` of `map` (its rows and width), whose local copy is
  // `values` (rows x width floats, owned by the caller and outliving the
  // cache), or null: held in part, in the cache's own cells. `capacity`
  // rows at most are held; `push_bound` updates of a row make it due for a
  // push (at least 1).
  RowCache(int param, const cluster::ShardMap& map, float* values, int64_t capacity,
           uint32_t push_bound);

  int param() const { return param_; }
  bool whole() const { return whole_; }
  // The values are the cache's own (constructed with null `values`).
  bool in_part() const { return values_ == nullptr; }
  // Where the kernel finds the parameter: the caller's array, or (in part)
  // the cells, row r in cell cells()[r] (kernel::ParamBinding::slots). The
  // cells move as the cache makes new ones: take data() again after every
  // exchange.
  float* data() { return values_ != nullptr ? values_ : cells_.data(); }
  // The slot map: per row, its cell or -1 (kernel::RowTracker::cells).
  const int32_t* cells() const { return slot_.data(); }
  // Makes a cache that could hold every row fetch only the rows each
  // exchange names (not whole()), as a partial one does: for a large table
  // most of whose rows no element touches. Call before the first exchange.
  void FetchTouchedRowsOnly() { whole_ = false; }
  int64_t capacity() const { return capacity_; }
  uint32_t push_bound() const { return push_bound_; }
  // Rows counted from now on are due at `bound` updates (at least 1).
  void set_push_bound(uint32_t bound) { push_bound_ = bound < 1 ? 1 : bound; }
  // The rows (sorted) whose pushes the servers scale by the merges they
  // lacked (rowSync's `pushScaled`; rows most elements write, whose deltas
  // read their own stale values). Replaces the earlier set.
  void SetScaledRows(std::span<const int64_t> rows);
  // Cells in use: rows held, rows asked for and not yet received, excluded
  // rows.
  int64_t held() const { return static_cast<int64_t>(row_.size() - free_.size()); }
  // Cells made so far, free or not: the most rows the cache has held at once.
  int64_t cells_made() const { return static_cast<int64_t>(row_.size()); }
  // Whether `row`'s values are here and exchanged by the cache (received,
  // not excluded).
  bool holds(int64_t row) const {
    const int32_t s = slot_[static_cast<size_t>(row)];
    return s >= 0 && state_[static_cast<size_t>(s)] == kHeld;
  }
  // The write counts, one per cell (see above), and the rows whose count
  // reached the push bound since the last exchange.
  uint32_t* updates() { return updates_.data(); }
  std::vector<int64_t>* due() { return &due_; }
  // The rows whose first update since their last push the caller's kernel
  // made since the last exchange (kernel::RowTracker::started); used when a
  // push age is set.
  std::vector<int64_t>* started() { return &started_; }
  // A held row's update waits at most `steps` exchanges before the row is
  // pushed, however far its count is from the push bound (0: no age bound).
  void set_push_age(int64_t steps) { push_age_ = steps < 0 ? 0 : steps; }
  int64_t push_age() const { return push_age_; }
  // Makes `rows` (sorted, distinct) excluded: the servers are told to forget
  // that this worker holds them, each keeps (or gets) a cell whose values
  // are the caller's (its pending deltas, if held, are left there), and
  // their counts are ignored from now on.
  void Exclude(std::span<const int64_t> rows);
  bool excluded(int64_t row) const {
    const int32_t s = slot_[static_cast<size_t>(row)];
    return s >= 0 && state_[static_cast<size_t>(s)] == kExcluded;
  }
  // Rows only this worker writes in the coming run (`rows` sorted): no other
  // worker needs their updates before the run's end, so they are pushed only
  // by the flush (or when evicted). Replaces the earlier set.
  void SetSingleWriter(std::span<const int64_t> rows);
  // Forgets every row but the excluded ones (the servers' values changed
  // behind the cache: another loop wrote the parameter). The next exchange
  // fetches afresh.
  void Reset();
  // Puts every held row's base back into the caller's array (a no-op in
  // part). After a flush a held row has no pending delta, so its local value
  // is its base; another loop's strategy may have written the local copy
  // since (a replicated read pulls the servers' newer rows into it), which
  // would otherwise be taken for this worker's own updates and merged a
  // second time.
  void RestoreLocal();
  const RowCacheStats& stats() const { return stats_; }

 private:
  friend class RowExchange;
  struct Out;  // one exchange's section for one server
  enum CellState : uint8_t { kFree, kAsked, kHeld, kExcluded };

  // Adds this cache's pushes, fetches and drops to out[server].
  // `step` numbers the exchanges of a run (for the push age).
  void Prepare(std::span<const int64_t> next, bool flush, int64_t step, std::vector<Out>* out);
  void PushAged(int64_t step, std::vector<Out>* out);
  void PushRow(int64_t row, std::vector<Out>* out);
  void Fetch(std::span<const int64_t> next, std::vector<Out>* out);
  void Evict(int64_t need, std::span<const int64_t> next, std::vector<Out>* out);
  // One server's answer: rows received (fetched or refreshed) and the audit.
  Status Apply(const transport::InMessage& msg, wire::RowSyncReplySection::Reader sec);
  // A cell for `row` in `state`; FreeCell gives it back.
  int32_t NewSlot(int64_t row, CellState state);
  void FreeCell(int32_t s);
  // Row `row`'s values (in cell `s`).
  float* Local(int64_t row, int32_t s) {
    return values_ != nullptr ? values_ + row * width_
                              : cells_.data() + static_cast<size_t>(s) * width_;
  }

  int param_;
  const cluster::ShardMap& map_;
  float* values_;  // the caller's array, or null: cells_
  int64_t rows_, width_, capacity_;
  bool whole_;
  bool loaded_ = false;           // whole: every row fetched once
  bool reset_ = true;             // the servers must forget what they think this worker holds
  std::vector<int32_t> slot_;     // per row: its cell, or -1
  int64_t asked_count_ = 0;       // cells kAsked
  std::vector<int64_t> single_;   // rows with one writer (SetSingleWriter), sorted
  std::vector<int64_t> due_;      // rows whose count reached the bound
  std::vector<int64_t> started_;  // rows whose count left 0 since the last exchange
  // Push age: (row, exchange) of each first update, oldest first; an entry
  // is current while the row's slot started at that exchange.
  std::deque<std::pair<int64_t, int64_t>> aging_;
  int64_t push_age_ = 0;
  uint32_t push_bound_;
  std::vector<int64_t> scaled_;  // SetScaledRows', sorted (few: the rows most elements write)
  // Per cell.
  std::vector<int64_t> row_;  // -1: free
  std::vector<CellState> state_;
  std::vector<float> cells_;  // in part: the values
  std::vector<float> base_;
  std::vector<uint64_t> version_;    // the server's version when the row came
  std::vector<uint32_t> own_;        // merges this worker made since
  std::vector<uint32_t> updates_;    // writes not yet pushed (the tracker's)
  std::vector<int64_t> started_at_;  // the exchange its unpushed updates started at
  std::vector<uint8_t> used_;        // clock bit
  std::vector<uint8_t> single_bit_;  // a row with one writer
  std::vector<int32_t> free_;
  std::vector<int64_t> drops_;      // held rows excluded since the last exchange
  size_t hand_ = 0;                 // clock hand, over cells
  std::vector<int64_t> last_next_;  // the rows the mini-batch under way touches
  RowCacheStats stats_;
};

// One exchange per mini-batch between a set of caches (one per relaxed
// parameter of a loop) and every server, pipelined: Send while the previous
// mini-batch computes, Receive once it is done.
class RowExchange {
 public:
  // `transport` (servers are PeerId{kServer, s}) must outlive the exchange.
  RowExchange(transport::Transport* transport, int servers, transport::CallOptions call);

  // Sends one rowSync to every server: per cache (caches[i]), the pushes due
  // (every row with updates when `flush`), and when next[i] is given (the
  // sorted, distinct rows the coming mini-batch touches; ignored for a whole
  // cache) the fetches it needs. Requires no exchange in flight.
  Status Send(std::span<RowCache* const> caches, const std::vector<std::span<const int64_t>>& next,
              bool flush, uint32_t staleness, uint64_t step);
  // Waits for the answers of the last Send and applies them. The kernel may
  // have written the rows since the Send: a received row becomes the server's
  // value plus the pending delta (local - base) it has now.
  Status Receive();
  bool in_flight() const { return !replies_.empty(); }
  // Merges the rows `keys` (sorted, distinct) of parameter `param` by
  // `deltas` (keys.size() x width floats): rows replicated on every worker
  // and already summed into each replica by a collective, so no holder lacks
  // the merge (rowSync's `replica`). Waits for the servers' answers; requires
  // no exchange in flight.
  Status PushReplicated(int param, int64_t width, const cluster::ShardMap& map,
                        std::span<const int64_t> keys, std::span<const float> deltas);
  void set_audit(bool on) { audit_ = on; }

 private:
  transport::Transport* transport_;
  int servers_;
  transport::CallOptions call_;
  bool audit_ = false;
  std::vector<RowCache*> caches_;  // of the exchange in flight
  std::vector<std::future<StatusOr<transport::InMessage>>> replies_;
};

}  // namespace rigel::ps

#endif  // RIGEL_PS_CACHE_H_
