# The cluster setup (cluster/setup.h): what every member must agree on before
# parameters move. An Envelope body (`Plan`), registered by
# cluster/wire/messages.h.
@0xcf108c5a76e0d831;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::cluster::wire");

# scheduler -> workers/servers: the cluster setup. `job` is set (hasJob) for
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
  jit @11 :Text;              # --jit: auto, on or off ("" from an older sender: auto)
}
