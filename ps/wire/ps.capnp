# The parameter servers' messages (ps/service.h, ps/client.h, ps/cache.h,
# ps/snapshot.h): rows pulled, pushed and synchronised, clocks, checkpoints.
# Each is an Envelope body (transport/wire/envelope.capnp); ps/wire/messages.h
# registers them with the transport and checks what the schema cannot say.
@0xf3d86e47ed8d6847;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::ps::wire");

using T = import "/transport/wire/envelope.capnp";

# worker -> server: read rows `keys` of parameter `param`.
struct PullRequest {
  param @0 :UInt32;
  keys @1 :T.KeysRef;
  width @2 :UInt32;    # row width the worker expects (0: whatever the server holds)
  clock @3 :UInt64;    # the worker's clock: answered once every worker finished clock - staleness
}

# server -> worker: rows in the order of the request's keys (rows == its key count).
struct PullReply {
  param @0 :UInt32;
  rows @1 :T.RowsRef;
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
  keys @1 :T.KeysRef;
  rows @2 :T.RowsRef;  # rows == keys.count
  rule @3 :UpdateRule;
  clock @4 :UInt64;    # the sender's step, for bounded staleness
  lr @5 :Float32;      # sgd/adagrad learning rate
}

struct PushReply {
  param @0 :UInt32;
  applied @1 :UInt64;  # rows applied
}

# worker -> every server (one-way): "I finished clock `clock`; before this I
# sent you `pushes` push requests" (the server counts a clock finished once
# those pushes are applied).
struct ClockTick {
  clock @0 :UInt64;
  pushes @1 :UInt64;
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
# `CheckpointReply` (the files a reader needs for this server's rows, oldest
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
  pushKeys @1 :T.KeysRef;
  pushRows @2 :T.RowsRef;  # rows == pushKeys.count
  fetchKeys @3 :T.KeysRef;
  dropKeys @4 :T.KeysRef;
  reset @5 :Bool;          # the worker held no row of it before this message's fetches
  pushScaled @6 :T.BytesRef;  # pushKeys.count bytes (or none), 0 or 1: scale the push (above)
}

# server -> worker: the answer to `RowSync`, one section per section asked.
# `keys`/`rows`: the rows fetched and every row the worker holds that lacked
# more than `staleness` merges by other workers, ascending, and the server's
# version of each (`versions`: keys.count uint64). With `audit`: every row the
# worker holds on this server (`auditKeys`) and its version (`auditVersions`).
struct RowSyncReply {
  sections @0 :List(RowSyncReplySection);
}

struct RowSyncReplySection {
  param @0 :UInt32;
  keys @1 :T.KeysRef;
  rows @2 :T.RowsRef;
  versions @3 :T.BytesRef;
  auditKeys @4 :T.KeysRef;
  auditVersions @5 :T.BytesRef;
}
