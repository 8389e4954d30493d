# The one wire schema of Rigel: every message between Rigel processes is an
# Envelope (this file, encoded as a standard Cap'n Proto flat array with its
# segment table) in the first ZeroMQ frame, followed by zero or more raw payload
# frames. Bulk data (keys, parameter rows, opaque bytes) lives in the payload
# frames, never in the header, so it can be sent and received without copying;
# the header only refers to it with *Ref structs, and the decoder
# (transport/codec.h) checks every Ref against the frames it names before a
# message is handed to anyone.
#
# Payload encodings (little-endian, which is also the byte order of every
# machine Rigel builds on; transport/buffer.h asserts it):
#   KeysRef  -> `count` uint64 keys, strictly ascending.
#   RowsRef  -> `rows` x `width` float32 values, row-major.
#   BytesRef -> `size` opaque bytes.
# Every payload frame must be referred to by exactly one Ref of the body.
# Payload frames smaller than 4 KiB may travel inside the header frame after
# the Envelope (Envelope.packed); the decoder turns them back into frames.
#
# Compatibility: fields and union members are only ever appended (Cap'n Proto's
# rules), so an older reader ignores what it does not know and drops a message
# whose body member it does not know ("unknown type"). `wireVersion` changes
# only when an existing field changes meaning; a reader drops messages of any
# other version. docs/architecture.md ("Wire messages") lists the messages.
@0x94eb5c4b44e57e32;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::wire");

const wireVersion :UInt16 = 2;  # 2: Plan carries the typed cluster setup

# Who a process is in the cluster; together with its rank it names an
# endpoint (transport::PeerId). Values match transport::Role.
enum Role {
  unknown @0;
  scheduler @1;
  server @2;
  worker @3;
  client @4;   # tools and benchmarks that only make requests
}

# Envelope.kind: a one-way message has requestId 0; a request has a non-zero
# requestId chosen by the sender; its response carries the same requestId.
enum Kind {
  oneWay @0;
  request @1;
  response @2;
}

struct KeysRef {
  frame @0 :UInt32;    # index of the payload frame (0 = first frame after the header)
  count @1 :UInt64;    # number of uint64 keys; the frame holds exactly count * 8 bytes
}

struct RowsRef {
  frame @0 :UInt32;
  rows @1 :UInt64;     # the frame holds exactly rows * width * 4 bytes
  width @2 :UInt32;    # floats per row, 1 .. 2^24
}

struct BytesRef {
  frame @0 :UInt32;
  size @1 :UInt64;     # the frame holds exactly `size` bytes
}

struct PeerInfo {
  role @0 :Role;
  rank @1 :Int32;
  address @2 :Text;    # a transport address: tcp://host:port, ipc://path or inproc://name
}

# worker/server -> scheduler (request); answered by RegisterReply.
struct Register {
  role @0 :Role;
  rank @1 :Int32;          # -1: let the scheduler assign one
  address @2 :Text;        # where the registering process listens
  incarnation @3 :UInt64;  # changes each time the process starts (restart detection)
  threads @4 :UInt32;      # compute threads the process offers
  version @5 :Text;        # the binary's version (common/version.h); empty: not checked
  jobKey @6 :Text;         # cluster/job_key.h of the program it was started on; empty: none
  jobName @7 :Text;        # that program's path, for messages
}

struct RegisterReply {
  rank @0 :Int32;              # the rank the registrant now holds
  peers @1 :List(PeerInfo);    # every member known so far
}

# Liveness, both directions; also usable as a request (answered with `ack`).
struct Heartbeat {
  seq @0 :UInt64;
  incarnation @1 :UInt64;
  sentUnixMicros @2 :UInt64;
  cpuMicros @3 :UInt64;  # CPU time the member's process has used so far
  peakBytes @4 :Int64;   # the most resident memory it has held so far (-1: unknown)
}

# scheduler -> workers/servers: the cluster setup (cluster/setup.h), what
# every member must agree on before parameters move. `job` is set (hasJob) for
# a program run and absent for a cluster started for a self-test.
struct Plan {
  planId @0 :UInt64;
  servers @1 :UInt32;
  workers @2 :UInt32;
  options @3 :JobOptions;
  params @4 :List(ParamSpec);
  hasJob @5 :Bool;
  job @6 :Job;
}

# cluster/job_options.h.
struct JobOptions {
  staleness @0 :UInt32;
  batch @1 :Int64;
  syncEvery @2 :Int64;
  device @3 :Text;          # "cpu" or "cuda"
  collectives @4 :Text;     # "gloo" or "mpi" (empty from an older sender: gloo)
  stalenessAuto @5 :Bool;   # Rigel chooses the staleness bound (`staleness` unused)
  pushBound @6 :Int64;
  mergeEvery @7 :Int64;
  cacheMb @8 :Int64;        # 0 from an older sender: 1024
  noHotRows @9 :Bool;
  noDataParts @10 :Bool;    # every worker loads every data set whole
  noScaledMerges @11 :Bool; # relaxed merges are added whole (--scaled-merges off)
  pushAge @12 :Int64;       # mini-batches a cached row's update may wait; 0: Rigel chooses
  exchangeTimeoutMs @13 :Int64;  # 0 from an older sender: 30000
}

# A parameter the servers hold: its rows, width (0: 1-D), sharding and
# initialiser (ir/ir.h ParamDecl: fill a; normal mean a, std b; uniform a..b;
# randint n in a).
struct ParamSpec {
  name @0 :Text;
  rows @1 :Int64;
  width @2 :Int64;
  hash @3 :Bool;            # hash shards (else row ranges)
  init @4 :Init;
  a @5 :Float64;
  b @6 :Float64;
  seed @7 :UInt64;
  # file (--init-params): rows initFileRows x width values of 4 bytes at
  # initFileOffset in initFile (initFileBytes long), i32 when initFileInt.
  initFile @8 :Text;
  initFileOffset @9 :UInt64;
  initFileBytes @10 :UInt64;
  initFileRows @11 :Int64;
  initFileInt @12 :Bool;
  enum Init {
    zeros @0;
    fill @1;
    normal @2;
    uniform @3;
    randint @4;             # i32 parameters: n in a
    file @5;
  }
}

struct NamedText {
  name @0 :Text;
  value @1 :Text;
}

# The program a cluster runs: every worker compiles it itself from the same
# file and overrides. `plan` is the text of a plan file (the same format as
# `rigel plan` writes and `--plan` reads), which every worker validates
# against the program; `data` is (data set, frontend digest) per data file.
# `restored`: the servers start from a checkpoint's rows (--resume, or a
# recovery), not from the parameters' initialisers.
struct Job {
  program @0 :Text;
  sets @1 :List(NamedText);
  seed @2 :UInt64;
  plan @3 :Text;
  data @4 :List(NamedText);
  restored @5 :Bool;
  files @6 :List(NamedText);  # (data set, file fingerprint) per data file
  scans @7 :List(NamedText);  # (data set, index entry JSON) per data set held in part
  cuts @8 :List(NamedText);   # (loop id, cuts JSON) per loop whose cuts decide what is held
  initParams @9 :Text;        # --init-params: the file every worker reads too ("" none)
  initParamsFingerprint @10 :Text;  # its data::FingerprintText at the scheduler
}

# worker -> server: read rows `keys` of parameter `param`.
struct PullRequest {
  param @0 :UInt32;
  keys @1 :KeysRef;
  width @2 :UInt32;    # row width the worker expects (0: whatever the server holds)
  clock @3 :UInt64;    # the worker's clock: answered once every worker finished clock - staleness
}

# server -> worker: rows in the order of the request's keys (rows == its key count).
struct PullReply {
  param @0 :UInt32;
  rows @1 :RowsRef;
  minClock @2 :UInt64; # every worker had finished this clock: the rows hold all their updates before it
}

enum UpdateRule {
  add @0;      # row += value  (deltas)
  assign @1;   # row  = value
  sgd @2;      # row -= lr * value           (value: a gradient)
  adagrad @3;  # h += value^2; row -= lr * value / (sqrt(h) + 1e-8)
}

# worker -> server: apply `rows` (one per key) to parameter `param`.
struct PushRequest {
  param @0 :UInt32;
  keys @1 :KeysRef;
  rows @2 :RowsRef;    # rows == keys.count
  rule @3 :UpdateRule;
  clock @4 :UInt64;    # the sender's step, for bounded staleness
  lr @5 :Float32;      # sgd/adagrad learning rate
}

struct PushReply {
  param @0 :UInt32;
  applied @1 :UInt64;  # rows applied
}

# worker -> scheduler `barrier` (request) at the end of a step; the scheduler
# answers each with `barrierRelease` once every member has arrived.
struct Barrier {
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

# worker -> worker: a whole block of a rotating parameter (rows rowBegin..rowEnd).
struct BlockHandoff {
  param @0 :UInt32;
  block @1 :UInt32;
  rowBegin @2 :UInt64;
  rowEnd @3 :UInt64;     # exclusive; rows.rows == rowEnd - rowBegin
  epoch @4 :UInt32;
  step @5 :UInt64;
  rows @6 :RowsRef;
  loop @7 :UInt32;       # the `parallel for` whose run the block belongs to
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

# A failed request's response (or a one-way error report). `code` is a
# rigel::StatusCode value; the requester sees it as a Status.
struct Error {
  code @0 :UInt16;
  message @1 :Text;
}

# worker -> every server (one-way): "I finished clock `clock`; before this I
# sent you `pushes` push requests" (the server counts a clock finished once
# those pushes are applied).
struct ClockTick {
  clock @0 :UInt64;
  pushes @1 :UInt64;
}

# scheduler -> every member: a member died (silent for 3 heartbeat intervals,
# or its process exited).
struct PeerDown {
  role @0 :Role;
  rank @1 :Int32;
  reason @2 :Text;
}

struct Shutdown {
  reason @0 :Text;
}

# Opaque payload for tests, benchmarks and collectives bootstrap.
struct Data {
  tag @0 :UInt32;
  frames @1 :List(BytesRef);
}

# scheduler -> worker (one-way): run `loop` once (its `launch`-th run), or,
# with `end` set, write everything back and finish, or, with `flush` set,
# push the rows held between runs (analysis/held_rows.h) and answer with
# taskDone (worker::Runner::Flush). `run` carries what the run needs besides
# the program (TaskRun; read by worker/task.h). `json` is no longer sent (it
# held the same as JSON text).
struct Task {
  loop @0 :UInt32;
  launch @1 :UInt64;
  json @2 :Text;
  end @3 :Bool;
  run @4 :TaskRun;
  flush @5 :Bool;
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

# worker -> scheduler (requests): the rendezvous store collectives bootstrap
# through (collectives/store.h): Gloo's pair addresses, NCCL's
# unique id. `storeSet` is answered with `ack`; `storeGet` with `storeValue`
# once some member has set the key, or an error after `timeoutMillis`.
struct StoreEntry {
  key @0 :Text;
  value @1 :List(UInt8);
  timeoutMillis @2 :UInt32;
}

# One file of a checkpoint (ps/snapshot.h): its name within the checkpoint
# directory, size, xxh64 checksum of its bytes and the rows it holds.
struct CheckpointFile {
  name @0 :Text;
  bytes @1 :UInt64;
  checksum @2 :UInt64;
  rows @3 :UInt64;
}

# scheduler -> server (request), between two loop runs: copy the rows this
# server changed since its last checkpoint (all it ever changed, the first
# time) and answer `ack` once copied; write them to `dir` as checkpoint `seq`
# afterwards, while the job goes on. With `confirm` set, nothing is copied:
# the answer comes once checkpoint `seq`'s file is written, as
# `checkpointReply` (the files a reader needs for this server's rows, oldest
# first) or an error.
struct CheckpointRequest {
  dir @0 :Text;
  seq @1 :UInt64;
  confirm @2 :Bool;
}

struct CheckpointReply {
  files @0 :List(CheckpointFile);
}

# scheduler -> server (request), before any worker runs: load the rows this
# server holds from `files` (in `dir`, every server's of one checkpoint, each
# server's oldest first). Answered with `ack` once loaded, or an error naming
# the damaged file (nothing is loaded then).
struct RestoreRequest {
  dir @0 :Text;
  files @1 :List(CheckpointFile);
}

# worker -> server (request): one mini-batch's exchange of relaxed rows
# between a worker's write-back row cache (ps/cache.h) and one server (DSL.md
# version 3, "bounded staleness per row"). Each section is one parameter:
#   push*   rows whose summed local deltas the worker merges now; each row is
#           one merge, which adds 1 to the row's version on the server;
#   fetch*  rows the worker does not hold: sent back whatever their version,
#           and from then on held (the server counts what they lack);
#   drop*   rows the worker no longer holds (evicted);
#   reset   the worker holds none of its rows (a new or emptied cache).
# Pushes are applied first, so the answer holds them. With `replica` set the
# pushes are of rows replicated on every worker and already merged into each
# replica (hot rows, merged by a collective): they count as a merge no holder
# lacks. A push with a non-finite value is refused (an error naming the
# parameter and row) and nothing of the message is applied. A push whose
# `pushScaled` byte is 1 is multiplied by 1 / (1 + L) before it is added, L
# being the merges by other workers that the pusher's copy of the row lacks
# (its delta was taken without them: docs/parameter_servers.md, "Scaled
# merges of hot rows"); a row so scaled comes back in the answer.
struct RowSync {
  sections @0 :List(RowSyncSection);
  staleness @1 :UInt32;  # N: rows lacking more merges by other workers come back
  step @2 :UInt64;       # the worker's mini-batch, for logs
  replica @3 :Bool;
  audit @4 :Bool;        # testing: also answer every held row's version (auditKeys)
}

struct RowSyncSection {
  param @0 :UInt32;
  pushKeys @1 :KeysRef;
  pushRows @2 :RowsRef;  # rows == pushKeys.count
  fetchKeys @3 :KeysRef;
  dropKeys @4 :KeysRef;
  reset @5 :Bool;        # the worker held no row of it before this message's fetches
  pushScaled @6 :BytesRef;  # pushKeys.count bytes (or none), 0 or 1: scale the push (above)
}

# server -> worker: the answer to `rowSync`, one section per section asked.
# `keys`/`rows`: the rows fetched and every row the worker holds that lacked
# more than `staleness` merges by other workers, ascending, and the server's
# version of each (`versions`: keys.count uint64). With `audit`: every row the
# worker holds on this server (`auditKeys`) and its version (`auditVersions`).
struct RowSyncReply {
  sections @0 :List(RowSyncReplySection);
}

struct RowSyncReplySection {
  param @0 :UInt32;
  keys @1 :KeysRef;
  rows @2 :RowsRef;
  versions @3 :BytesRef;
  auditKeys @4 :KeysRef;
  auditVersions @5 :BytesRef;
}

struct Envelope {
  version @0 :UInt16;      # wireVersion
  kind @1 :Kind;
  requestId @2 :UInt64;
  body :union {
    ack @3 :Void;          # generic success response
    error @4 :Error;
    register @5 :Register;
    registerReply @6 :RegisterReply;
    heartbeat @7 :Heartbeat;
    plan @8 :Plan;
    pullRequest @9 :PullRequest;
    pullReply @10 :PullReply;
    pushRequest @11 :PushRequest;
    pushReply @12 :PushReply;
    barrier @13 :Barrier;
    barrierRelease @14 :Barrier;
    step @15 :Step;
    blockHandoff @16 :BlockHandoff;
    metrics @17 :Metrics;
    shutdown @18 :Shutdown;
    data @19 :Data;
    clockTick @20 :ClockTick;
    peerDown @21 :PeerDown;
    task @23 :Task;
    taskDone @24 :TaskDone;
    storeSet @25 :StoreEntry;
    storeGet @26 :StoreEntry;
    storeValue @27 :StoreEntry;
    checkpoint @28 :CheckpointRequest;
    checkpointReply @29 :CheckpointReply;
    restore @30 :RestoreRequest;
    rowSync @31 :RowSync;
    rowSyncReply @32 :RowSyncReply;
  }
  # Set by the transport, never by callers: the sizes of payload frames
  # 0..n-1 when they travel inside the header frame, right after this message,
  # each padded to a multiple of 8 bytes. Small frames go this way: one
  # ZeroMQ frame (and one CURVE box) fewer per message. (Body members added
  # after this field take ordinals from @23 on.)
  packed @22 :List(UInt32);
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
