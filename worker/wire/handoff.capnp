# Worker-to-worker messages (worker/sync/handoff.h): an Envelope body
# (transport/wire/envelope.capnp), registered by worker/wire/messages.h.
@0xc8357f3ba5781c03;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::worker::wire");

using T = import "/transport/wire/envelope.capnp";

# worker -> worker: a whole block of a rotating parameter (rows rowBegin..rowEnd).
struct BlockHandoff {
  param @0 :UInt32;
  block @1 :UInt32;
  rowBegin @2 :UInt64;
  rowEnd @3 :UInt64;     # exclusive; rows.rows == rowEnd - rowBegin
  epoch @4 :UInt32;
  step @5 :UInt64;
  rows @6 :T.RowsRef;
  loop @7 :UInt32;       # the `parallel for` whose run the block belongs to
}
