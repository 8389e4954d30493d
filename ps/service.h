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
// rowSync (ps/service_rows.cc) serves the workers' write-back row caches of
// relaxed parameters (ps/cache.h): it merges the deltas pushed (one merge per
// row, counted in the row's version, ps/row_versions.h), refuses a
// non-finite one (FailedPrecondition naming the parameter and row; nothing of
// that message is applied), and answers the rows fetched plus every row the
// worker holds that lacks more than the message's staleness bound of merges
// by other workers.
//
// Checkpoints (ps/snapshot.h): the service notes every row a push changed.
// `checkpoint` copies them — every row changed since the process started
// the first time, and again whenever the delta files since the last full one
// would hold more rows than it or number 8; only those changed since the
// previous copy otherwise — on the receive thread, answers once copied, and
// writes the copy to a rows file after (no file when no row changed). `checkpoint` with
// `confirm` answers once that file is written, with the files a reader
// needs, oldest first, or the write's error (its rows then stay noted for
// the next checkpoint). `restore` reads every file given (every server's
// files of one checkpoint, so the number of servers may differ), checks them
// all, and only then assigns the rows this server holds. These run in order
// on a thread of the service's own. A copy must be asked for when no loop
// run that writes parameters is under way (the scheduler's job: loops that
// only read may run meanwhile): rows pushed while it is taken may or may not
// be in it.
//
// Thread-safety: Handle() is called from the transport's receive thread;
// stats() and min_clock() from anywhere.
#ifndef RIGEL_PS_SERVICE_H_
#define RIGEL_PS_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/setup.h"
#include "cluster/shard_map.h"
#include "common/mutex.h"
#include "ps/row_store.h"
#include "ps/row_versions.h"
#include "ps/snapshot.h"
#include "transport/transport.h"

namespace rigel::ps {

struct PsStats {
  uint64_t pulls = 0, pushes = 0;  // requests served
  uint64_t rows_pulled = 0, rows_pushed = 0;
  uint64_t deferred_pulls = 0;  // pulls that waited for slower workers
  uint64_t row_syncs = 0;       // rowSync exchanges served
  uint64_t errors = 0;          // requests answered with an error
};

class PsService {
 public:
  // Creates the stores of server `rank` for `setup` (range shards are
  // allocated and initialised now; hash shards start empty).
  static StatusOr<std::unique_ptr<PsService>> Create(transport::Transport* transport, int rank,
                                                     const cluster::ClusterSetup& setup);
  // Waits for a checkpoint or restore in progress.
  ~PsService();

  // Serves one message (pull, push, clock tick, checkpoint, restore);
  // returns false for other types, which the caller handles.
  bool Handle(const transport::InMessage& msg);

  // Testing: how long a checkpoint waits after writing its rows file, so a
  // test can kill the server in the middle of one. Set before the first
  // message is handled.
  void set_checkpoint_pause(std::chrono::milliseconds pause) { checkpoint_pause_ = pause; }

  PsStats stats() const RIGEL_EXCLUDES(mu_);
  // Bytes held by the stores, and rows stored.
  size_t bytes() const;
  int64_t rows() const;
  // The smallest clock every worker has finished.
  uint64_t min_clock() const RIGEL_EXCLUDES(mu_);

 private:
  PsService(transport::Transport* t, int rank, cluster::ClusterSetup setup, cluster::ShardMap map);
  void ServePull(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  void ServePush(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  void Tick(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  // rowSync (ps/service_rows.cc): a worker's row cache exchange.
  void ServeRowSync(const transport::InMessage& msg) RIGEL_EXCLUDES(mu_);
  Status CheckRowSync(const transport::InMessage& msg, int* worker) const;
  RowVersions& Versions(int param);
  // Applies ticks whose pushes are in, then answers pulls that may now go.
  void Advance() RIGEL_EXCLUDES(mu_);
  Status CheckKeys(int param, std::span<const uint64_t> keys) const;
  // Checkpoints and restores (ps/service_checkpoint.cc).
  // A copy of the rows a checkpoint writes, taken while no loop that writes
  // parameters runs, and written while the job goes on.
  struct Copy {
    std::string dir;
    uint64_t seq = 0;
    bool full = false;
    uint64_t rows = 0;
    std::vector<SnapshotSection> sections;
    std::vector<std::vector<uint64_t>> taken;  // the dirty marks it cleared, by parameter
  };
  // A checkpoint or restore for the background thread; a checkpoint's copy
  // is taken before it is queued.
  struct Task {
    transport::InMessage msg;
    std::unique_ptr<Copy> copy;
  };
  void MarkChanged(int param, std::span<const uint64_t> keys) RIGEL_EXCLUDES(marks_mu_);
  void Enqueue(const transport::InMessage& msg) RIGEL_EXCLUDES(ckpt_mu_, marks_mu_);
  void Background() RIGEL_EXCLUDES(ckpt_mu_, marks_mu_);
  void Serve(Task& task) RIGEL_EXCLUDES(ckpt_mu_, marks_mu_);
  // Copies the rows to write; null when none changed since the last file.
  std::unique_ptr<Copy> TakeCopy(const std::string& dir, uint64_t seq)
      RIGEL_EXCLUDES(ckpt_mu_, marks_mu_);
  Status WriteCopy(Copy& copy) RIGEL_EXCLUDES(ckpt_mu_, marks_mu_);
  Status Restore(const std::string& dir, const std::vector<SnapshotFile>& files)
      RIGEL_EXCLUDES(marks_mu_);

  transport::Transport* transport_;
  int rank_;
  cluster::ClusterSetup setup_;
  cluster::ShardMap map_;
  std::vector<std::unique_ptr<RowStore>> stores_;  // by param; null if none here

  // Receive thread only: the workers' clocks, the pulls deferred until they
  // advance, and the smallest finished clock (which min_clock() reads from
  // its copy under mu_).
  struct WorkerClock {
    uint64_t clock = 0;  // clocks finished
    uint64_t pushes_applied = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ticks;  // (clock, pushes before it), waiting
  };
  std::vector<WorkerClock> workers_;
  std::vector<transport::InMessage> waiting_pulls_;
  uint64_t min_clock_ = 0;
  // Per parameter (made on first use), the row versions and what each
  // worker's cache lacks; receive thread only.
  std::vector<std::unique_ptr<RowVersions>> versions_;
  // For readers on other threads.
  mutable Mutex mu_;
  PsStats stats_ RIGEL_GUARDED_BY(mu_);
  uint64_t shared_min_clock_ RIGEL_GUARDED_BY(mu_) = 0;  // min_clock_, as last published

  // Per parameter held here, a bit per row: changed since the process
  // started, and since its last copy (empty vectors: none held). Their own
  // lock: pushes mark rows on the receive thread, which must never wait for
  // the background thread (it runs at idle priority).
  Mutex marks_mu_;
  std::vector<std::vector<uint64_t>> changed_ RIGEL_GUARDED_BY(marks_mu_);
  std::vector<std::vector<uint64_t>> dirty_ RIGEL_GUARDED_BY(marks_mu_);
  Mutex ckpt_mu_;
  // The last full rows file and the deltas since.
  std::vector<SnapshotFile> chain_ RIGEL_GUARDED_BY(ckpt_mu_);
  uint64_t delta_rows_ RIGEL_GUARDED_BY(ckpt_mu_) = 0;  // rows in the chain's delta files
  Status last_write_ RIGEL_GUARDED_BY(ckpt_mu_);        // of the last copy
  // The last written copy's buffers, which the next copy fills again: a
  // shard-sized allocation on the receive thread, and its freeing on the
  // background thread, cost the job time at every checkpoint.
  std::vector<SnapshotSection> spare_ RIGEL_GUARDED_BY(ckpt_mu_);
  // Checkpoints and restores to serve, in order.
  std::deque<Task> queue_ RIGEL_GUARDED_BY(ckpt_mu_);
  bool stopping_ RIGEL_GUARDED_BY(ckpt_mu_) = false;
  CondVar queued_;                                     // queue_ or stopping_ changed
  std::thread background_ RIGEL_GUARDED_BY(ckpt_mu_);  // serves queue_
  std::chrono::milliseconds checkpoint_pause_{0};
};

}  // namespace rigel::ps

#endif  // RIGEL_PS_SERVICE_H_
