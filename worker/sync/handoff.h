// The 2-D rotation's hand-offs between workers (blockHandoff messages): a
// worker sends the rows of a block column straight to worker rank - 1 and
// takes the next column from worker rank + 1 (worker/sync/rotation.cc). Both
// workers list a column's rows in the same order (the step plan's,
// analysis/step_plan.h), so a message carries only the rows.
//
// Errors: Send returns the transport's; Take returns Abort's reason, or
// Internal when the message does not match the column expected.
// Thread-safety: Put and Abort from any thread (the transport's receive
// thread); Send and Take from one thread at a time.
#ifndef RIGEL_WORKER_SYNC_HANDOFF_H_
#define RIGEL_WORKER_SYNC_HANDOFF_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <ostream>
#include <tuple>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "transport/transport.h"
#include "worker/sync/row_io.h"
#include "worker/wire/messages.h"

namespace rigel::worker::sync {

// Which block column a hand-off carries: the loop, its run (`launch`), the
// step the receiver takes it at, the parameter, and the column.
struct ColumnId {
  int loop = 0;
  uint64_t launch = 0;
  int64_t step = 0;
  int param = 0;
  int64_t column = 0;
};

class Handoffs {
 public:
  // `transport` and `io` must outlive the object; this is worker `rank` of
  // `workers`.
  Handoffs(transport::Transport* transport, const RowIo* io, int rank, int workers)
      : transport_(transport), io_(io), rank_(rank), workers_(workers) {
    wire::RegisterMessages();
  }

  // Keeps a received blockHandoff for Take; false for any other message.
  bool Put(const transport::InMessage& msg);
  // Makes a waiting (and every later) Take return `why` (the job failed).
  void Abort(const Status& why);
  // A testing hook (tests/e2e/recovery_test.cc kills a worker in the middle
  // of a hand-off): after each Send, write a line naming the column to `log`,
  // wait `pause`, and write "pause over" before going on. `log` must outlive
  // the object; call before the first Send.
  void set_test_pause(std::chrono::milliseconds pause, std::ostream* log) {
    pause_ = pause;
    pause_log_ = log;
  }

  // Sends rows `keys` of the column's parameter to worker rank - 1.
  Status Send(const ColumnId& id, const std::vector<int64_t>& keys, SyncMetrics* m);
  // Waits for the column from worker rank + 1 and writes it into rows `keys`
  // of the local copy.
  Status Take(const ColumnId& id, const std::vector<int64_t>& keys, SyncMetrics* m);

 private:
  transport::Transport* transport_;
  const RowIo* io_;
  int rank_, workers_;
  Mutex mu_;
  CondVar cv_;  // mailbox_ or aborted_ changed
  // Received and not yet taken: (loop, launch, step, param).
  std::map<std::tuple<int, uint64_t, int64_t, int>, transport::InMessage> mailbox_
      RIGEL_GUARDED_BY(mu_);
  Status aborted_ RIGEL_GUARDED_BY(mu_);
  std::chrono::milliseconds pause_{0};
  std::ostream* pause_log_ = nullptr;
};

}  // namespace rigel::worker::sync

#endif  // RIGEL_WORKER_SYNC_HANDOFF_H_
