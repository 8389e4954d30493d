// The worker's parameter-server client: batched, asynchronous pulls and
// pushes of rows, merged deltas and bounded staleness (server side:
// ps/service.h; design: docs/parameter_servers.md). It keeps no rows: the
// worker's local parameter copies and its relaxed-row caches (ps/cache.h)
// hold them.
//
// Pull fetches every key it is given, one request per server (chunked at
// kChunkKeys), and adds this worker's unsent deltas to the rows; Push merges
// deltas locally and sends nothing until Flush, which sends one request per
// server and completes when every server applied them; AdvanceClock flushes
// and ends the worker's clock. With staleness s a worker at clock c sees
// every update of clocks < c - s. Errors are the transport's (kUnavailable
// naming the server). Futures complete on the transport's receive thread.
// Thread-safety: one client may be used from several threads (an internal
// mutex guards the pending deltas and the counters); a Pull overlapping a
// Flush of the same rows may see them without the flushed deltas.
#ifndef RIGEL_PS_CLIENT_H_
#define RIGEL_PS_CLIENT_H_

#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <vector>

#include "cluster/shard_map.h"
#include "common/mutex.h"
#include "transport/transport.h"

namespace rigel::ps {

struct PsClientOptions {
  int staleness = 0;
  transport::CallOptions call;  // timeouts of each request
};

struct PsClientStats {
  uint64_t pull_requests = 0, push_requests = 0;
  uint64_t rows_pulled = 0, rows_pushed = 0;
  uint64_t merged = 0;  // deltas added to a row that already had one pending
};

class PsClient {
 public:
  // Requests carry at most this many keys: a larger batch goes as several
  // requests back to back, so a server works on one while the next arrive.
  static constexpr size_t kChunkKeys = 16384;

  // `transport` must outlive the client; servers are PeerId{kServer, s}.
  PsClient(transport::Transport* transport, cluster::ShardMap map, PsClientOptions options);
  ~PsClient();

  // keys.size() * width floats, row k at k * width; InvalidArgument for an
  // unknown parameter or a key outside its rows.
  std::future<StatusOr<std::vector<float>>> Pull(int param, std::span<const int64_t> keys)
      RIGEL_EXCLUDES(mu_);
  // As Pull, but answered only once every worker has finished clock() - 1
  // whatever the staleness bound: the rows hold every update of the clocks
  // before this worker's. For conflict-free schedules, whose steps must see
  // each other exactly even in a relaxed job.
  std::future<StatusOr<std::vector<float>>> PullSynchronous(int param,
                                                            std::span<const int64_t> keys)
      RIGEL_EXCLUDES(mu_);
  // As Pull, for rows to be used `clocks` clocks after the current one (a
  // mini-batch's rows fetched while the previous batch computes): answered
  // once every worker finished clock() + clocks - s, so the rows keep the
  // staleness bound at that later clock. The rows are the servers' (this
  // worker's unsent deltas are not added: those pushed after the request may
  // already be in them). InvalidArgument if clocks > s: the answer would wait
  // for this worker's own later clocks.
  std::future<StatusOr<std::vector<float>>> PullAhead(int param, std::span<const int64_t> keys,
                                                      uint64_t clocks) RIGEL_EXCLUDES(mu_);
  // `deltas`: keys.size() * width floats. InvalidArgument for an unknown
  // parameter or a key outside its rows (nothing is buffered then).
  Status Push(int param, std::span<const int64_t> keys, const float* deltas) RIGEL_EXCLUDES(mu_);
  std::future<Status> Flush() RIGEL_EXCLUDES(mu_);
  // Flushes and ends this worker's clock. With staleness 0 it returns once
  // the pushes are sent, not applied (the servers order them before the
  // tick); their errors come from the next AdvanceClock or WaitForPushes.
  Status AdvanceClock() RIGEL_EXCLUDES(mu_);
  // Flushes, then waits until the servers applied every push this client
  // sent, AdvanceClock's included; the first error of any of them.
  Status WaitForPushes() RIGEL_EXCLUDES(mu_);

  uint64_t clock() const RIGEL_EXCLUDES(mu_);
  PsClientStats stats() const RIGEL_EXCLUDES(mu_);
  const cluster::ShardMap& map() const { return map_; }

 private:
  struct Pending;
  // Deltas for one server: distinct keys ascending, row k at values[k * width].
  struct Run {
    std::vector<uint64_t> keys;
    std::vector<float> values;
  };
  Status CheckKeys(int param, std::span<const int64_t> keys) const;
  // One run per server of a pushed batch; *merged counts repeated keys.
  std::vector<Run> MakeRuns(int param, std::span<const int64_t> keys, const float* rows,
                            uint64_t* merged) const;
  // `runs` (non-empty, oldest first) as one run; equal keys summed in order.
  static Run MergeRuns(std::vector<Run> runs, int64_t width, uint64_t* merged);
  // `lead`: clocks added to this worker's in the request (see PullSynchronous);
  // `own_writes`: add this worker's unsent deltas to the reply rows.
  void PullDirect(int param, std::span<const int64_t> keys, uint64_t lead, bool own_writes,
                  std::shared_ptr<std::promise<StatusOr<std::vector<float>>>> promise)
      RIGEL_EXCLUDES(mu_);

  transport::Transport* transport_;
  cluster::ShardMap map_;
  PsClientOptions opts_;
  mutable Mutex mu_;
  uint64_t clock_ RIGEL_GUARDED_BY(mu_) = 0;
  std::vector<uint64_t> pushes_sent_ RIGEL_GUARDED_BY(mu_);  // per server, for clock ticks
  std::future<Status> unacked_ RIGEL_GUARDED_BY(mu_);        // AdvanceClock's flush, not waited for
  // By parameter; the vector and the Pending it owns.
  std::vector<std::unique_ptr<Pending>> pending_ RIGEL_GUARDED_BY(mu_);
  PsClientStats stats_ RIGEL_GUARDED_BY(mu_);
};

}  // namespace rigel::ps

#endif  // RIGEL_PS_CLIENT_H_
