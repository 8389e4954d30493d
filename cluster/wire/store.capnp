# The rendezvous store collectives bootstrap through (collectives/store.h,
# cluster/rendezvous.h, cluster/scheduler_store.h): Gloo's pair addresses,
# NCCL's unique id. worker -> scheduler requests: `StoreSet` is answered with
# `Ack`; `StoreGet` with `StoreValue` once some member has set the key, or an
# error after `timeoutMillis`. Envelope bodies, registered by
# cluster/wire/messages.h.
@0xd27708ea7ed757e0;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::cluster::wire");

struct StoreSet {
  key @0 :Text;
  value @1 :List(UInt8);
}

struct StoreGet {
  key @0 :Text;
  timeoutMillis @1 :UInt32;
}

struct StoreValue {
  key @0 :Text;
  value @1 :List(UInt8);
}
