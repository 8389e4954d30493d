# Membership (cluster/member.h, cluster/membership.h): registration,
# liveness and ends. Envelope bodies (transport/wire/envelope.capnp),
# registered by cluster/wire/messages.h.
@0x878ca0d8ae309e44;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::cluster::wire");

using T = import "/transport/wire/envelope.capnp";

struct PeerInfo {
  role @0 :T.Role;
  rank @1 :Int32;
  address @2 :Text;    # a transport address (transport/endpoint.h)
}

# worker/server -> scheduler (request); answered by RegisterReply.
struct Register {
  role @0 :T.Role;
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

# Liveness, both directions; also usable as a request (answered with `Ack`).
struct Heartbeat {
  seq @0 :UInt64;
  incarnation @1 :UInt64;
  sentUnixMicros @2 :UInt64;
  cpuMicros @3 :UInt64;  # CPU time the member's process has used so far
  peakBytes @4 :Int64;   # the most resident memory it has held so far (-1: unknown)
}

# scheduler -> every member: a member died (silent for 3 heartbeat intervals,
# or its process exited).
struct PeerDown {
  role @0 :T.Role;
  rank @1 :Int32;
  reason @2 :Text;
}

struct Shutdown {
  reason @0 :Text;
}
