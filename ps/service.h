// A parameter server's request handling: the stores of the shards this
// server holds (ps/row_store.h), batched pulls and pushes, and bounded
// staleness (docs/parameter_servers.md).
//
// pullRequest is answered with the rows in key order and the server's minimum
// worker clock; pushRequest after the rows are applied; clockTick (one-way)
// records that a worker finished a clock. With staleness s, a pull from a
// worker at clock c waits (without blocking anything else) until every worker
// finished clock c - s. A key this server does not hold, an unknown parameter
// or a width mismatch is answered with an error and never applied.
//
// Thread-safety: Handle() is called from the transport's receive thread;
// stats() from anywhere.
#ifndef RIGEL_PS_SERVICE_H_
#define RIGEL_PS_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cluster/setup.h"
#include "cluster/shard_map.h"
#include "ps/row_store.h"
#include "transport/transport.h"

namespace rigel::ps {

struct PsStats {
  uint64_t pulls = 0, pushes = 0;  // requests served
  uint64_t rows_pulled = 0, rows_pushed = 0;
  uint64_t deferred_pulls = 0;  // pulls that waited for slower workers
  uint64_t errors = 0;          // requests answered with an error
};

class PsService {
 public:
  // Creates the stores of server `rank` for `setup` (range shards are
  // allocated and initialised now; hash shards start empty).
  static StatusOr<std::unique_ptr<PsService>> Create(transport::Transport* transport, int rank,
                                                     const cluster::ClusterSetup& setup);

  // Serves one message (pull, push or clock tick); returns false for other
  // types, which the caller handles.
  bool Handle(const transport::InMessage& msg);

  PsStats stats() const;
  // Bytes held by the stores, and rows stored.
  size_t bytes() const;
  int64_t rows() const;
  // The smallest clock every worker has finished.
  uint64_t min_clock() const;

 private:
  PsService(transport::Transport* t, int rank, cluster::ClusterSetup setup, cluster::ShardMap map);
  void ServePull(const transport::InMessage& msg);
  void ServePush(const transport::InMessage& msg);
  void Tick(const transport::InMessage& msg);
  // Applies ticks whose pushes are in, then answers pulls that may now go.
  void Advance();
  Status CheckKeys(int param, std::span<const uint64_t> keys) const;

  transport::Transport* transport_;
  int rank_;
  cluster::ClusterSetup setup_;
  cluster::ShardMap map_;
  std::vector<std::unique_ptr<RowStore>> stores_;  // by param; null if none here

  struct WorkerClock {
    uint64_t clock = 0;  // clocks finished
    uint64_t pushes_applied = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ticks;  // (clock, pushes before it), waiting
  };
  std::vector<WorkerClock> workers_;
  std::vector<transport::InMessage> waiting_pulls_;
  mutable std::mutex mu_;  // stats_ and min_clock_ for readers on other threads
  PsStats stats_;
  uint64_t min_clock_ = 0;
};

}  // namespace rigel::ps

#endif  // RIGEL_PS_SERVICE_H_
