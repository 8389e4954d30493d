# The scheduler's control of workers (scheduler/driver.h, worker/job.h,
# worker/task.h): loop runs, barriers, steps and metrics. Envelope bodies
# (transport/wire/envelope.capnp), registered by cluster/wire/messages.h.
@0xdb68ebe4d3aaa5ed;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::cluster::wire");

# worker -> scheduler `Barrier` (request) at the end of a step; the scheduler
# answers each with `BarrierRelease` once every member has arrived.
struct Barrier {
  id @0 :UInt64;
  epoch @1 :UInt32;
  step @2 :UInt64;
}

struct BarrierRelease {
  id @0 :UInt64;
  epoch @1 :UInt32;
  step @2 :UInt64;
}

enum StepCommand {
  start @0;
  finished @1;
  abort @2;
}

# scheduler <-> worker: step control of a distributed loop.
struct Step {
  epoch @0 :UInt32;
  step @1 :UInt64;
  loop @2 :UInt32;       # index of the `parallel for` in the program
  command @3 :StepCommand;
}

struct Metric {
  name @0 :Text;
  value @1 :Float64;
}

struct Metrics {
  rank @0 :Int32;
  step @1 :UInt64;
  entries @2 :List(Metric);
}

# scheduler -> worker (one-way): run `loop` once (its `launch`-th run), or,
# with `end` set, write everything back and finish, or, with `flush` set,
# push the rows held between runs (analysis/held_rows.h) and answer with
# TaskDone (worker::Runner::Flush). `run` carries what the run needs besides
# the program (TaskRun; read by worker/task.h).
struct Task {
  loop @0 :UInt32;
  launch @1 :UInt64;
  end @2 :Bool;
  run @3 :TaskRun;
  flush @4 :Bool;
}

# worker -> scheduler (one-way): the task is done. `accums` are the worker's
# partial sums of the program's accumulators (by index); `metrics` its
# counters for the run; a non-empty `error` says why the task failed.
struct TaskDone {
  loop @0 :UInt32;
  launch @1 :UInt64;
  accums @2 :List(Float64);
  metrics @3 :List(Metric);
  error @4 :Text;
}

# What one run of a loop needs besides the program (Task.run): the partition
# cuts (analysis/partition.h), the driver values the loop body reads, and the
# size of a space sized at launch (`sized` set: grid(spaceN, spaceM)).
struct TaskRun {
  cuts @0 :TaskCuts;
  outer @1 :List(DriverValue);
  sized @2 :Bool;
  spaceN @3 :Int64;
  spaceM @4 :Int64;
  epoch @5 :Int64 = -1;  # the top-level driver loop's iteration (-1: outside one), for messages
}

# analysis::Cuts: a schedule's blocks on `workers` workers, one CutAxis per
# cut axis (which axes each schedule has: analysis/partition.h).
struct TaskCuts {
  schedule @0 :ScheduleKind;
  workers @1 :UInt32;
  axes @2 :List(CutAxis);
}

# Values match analysis::ScheduleKind.
enum ScheduleKind {
  dataParallel @0;
  modelParallel1d @1;
  conflictFree2d @2;
  wavefront @3;
  serial @4;
}

# One axis: part p holds the x with bounds[p] <= x < bounds[p + 1]; `dim` is
# the space dimension (the skewed coordinate for wavefront, -1 for
# data_parallel's element index).
struct CutAxis {
  dim @0 :Int32;
  bounds @1 :List(Int64);
}

# The value of driver expression `id` (kernel::OuterValue): `i` when `isInt`,
# else `f`.
struct DriverValue {
  id @0 :UInt32;
  isInt @1 :Bool;
  i @2 :Int64;
  f @3 :Float64;
}
