// One `task` message as the worker runs it: a typed TaskSpec read from the
// wire's Task (cluster/wire/control.capnp: Task.run, filled by the
// scheduler's driver, scheduler/driver.cc).
//
// ReadTask never throws: a malformed task is InvalidArgument naming the
// field ("task.run.cuts.schedule: unknown schedule 9"). It checks each field
// on its own; whether the cuts fit the loop and its data is checked when the
// task runs (analysis::CheckCuts, through Runner::Run).
//
// Thread-safety: ReadTask reads one message's header (see InMessage: one
// thread at a time per message).
#ifndef RIGEL_WORKER_TASK_H_
#define RIGEL_WORKER_TASK_H_

#include <cstdint>
#include <map>

#include "analysis/partition.h"
#include "cluster/wire/control.capnp.h"
#include "common/status.h"
#include "kernel/kernel.h"

namespace rigel::worker {

// Run loop `loop` (its `launch`-th run) with the blocks `cuts` makes.
struct TaskSpec {
  int loop = 0;
  uint64_t launch = 0;
  int64_t epoch = -1;  // the driver's top-level loop iteration (-1: none), for messages
  analysis::Cuts cuts;
  std::map<int, kernel::OuterValue> outer;  // the driver values the body reads, by id
  bool sized = false;                       // the space is sized at launch: grid(space_n, space_m)
  int64_t space_n = 0;
  int64_t space_m = 0;
};

// The task carried by `task` (its `end` flag is the caller's to check).
StatusOr<TaskSpec> ReadTask(cluster::wire::Task::Reader task);

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_TASK_H_
