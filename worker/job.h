// A worker's part of a program run, between its process's main and the
// runner: the queue tasks wait in, running them in order and reporting each
// to the scheduler, and saying the worker finished. Used by rigel-worker and
// by the in-process cluster tests.
//
// Thread-safety: TaskQueue is thread-safe (Push on the receive thread, Pop on
// the worker's main thread); RunJob and FinishJob run on one thread.
#ifndef RIGEL_WORKER_JOB_H_
#define RIGEL_WORKER_JOB_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <ostream>

#include "cluster/member.h"
#include "cluster/setup.h"
#include "collectives/store.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "transport/transport.h"
#include "worker/runner.h"

namespace rigel::worker {

// Tasks wait here for the worker's main thread: the receive thread must go on
// taking hand-offs and replies while a task runs.
class TaskQueue {
 public:
  void Push(transport::InMessage m);
  // The next task; false once the job ended with none left.
  bool Pop(const cluster::Member& member, transport::InMessage* out);

 private:
  Mutex mu_;
  CondVar cv_;  // tasks_ changed
  std::deque<transport::InMessage> tasks_ RIGEL_GUARDED_BY(mu_);
};

// Loads the job of `setup` (which must have one), says it is ready and runs
// the scheduler's tasks from `tasks` until the `end` task or the job's end,
// reporting each (taskDone) to the scheduler. `*owned` receives the runner,
// which must outlive the transport's receive thread; `runner` is what that
// thread sees. Errors go to `log` with `rank` and are returned: the runner's
// Create errors (program, plan, data) or a task's failure. `handoff_pause`
// and `audit_staleness` are RunnerOptions' testing hooks.
Status RunJob(const cluster::ClusterSetup& setup, int rank, transport::Transport* t,
              const cluster::Member& member, TaskQueue& tasks, collectives::Store* store,
              std::atomic<Runner*>& runner, std::unique_ptr<Runner>* owned, std::ostream& log,
              std::chrono::milliseconds handoff_pause = std::chrono::milliseconds(0),
              bool audit_staleness = false);

// Tells the scheduler this worker finished (step{finished}) and waits for the
// job's end: OK, or why it failed.
Status FinishJob(transport::Transport* t, cluster::Member& member);

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_JOB_H_
