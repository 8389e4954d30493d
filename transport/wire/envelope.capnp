# The transport's wire schema: every message between Rigel processes is an
# Envelope (this file, encoded as a standard Cap'n Proto flat array with its
# segment table) in the first wire frame, followed by zero or more raw payload
# frames. The transport knows no application: an Envelope's body is a struct
# of a schema some layer owns (ps/wire/ps.capnp, cluster/wire/*.capnp,
# worker/wire/handoff.capnp), named by its Cap'n Proto type id in `type`, and
# the layer registers it (transport/message_types.h) so that the decoder can
# check it generically. Bulk data (keys, parameter rows, opaque bytes) lives in
# the payload frames, never in the header, so it can be sent and received
# without copying; a body only refers to it with the *Ref structs below, and
# the decoder (transport/codec.h) checks every Ref against the frames it names
# before a message is handed to anyone.
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
# Compatibility: fields are only ever appended (Cap'n Proto's rules), so an
# older reader ignores what it does not know and drops a message whose body
# type it does not know ("unknown type"). `wireVersion` changes only when an
# existing field changes meaning; a reader drops messages of any other
# version. docs/architecture.md ("Wire messages") lists the messages.
@0x94eb5c4b44e57e32;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("rigel::transport::wire");

const wireVersion :UInt16 = 3;  # 3: bodies are typed by schema id, owned by their layers

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

# The transport's own bodies.

# A generic success response.
struct Ack {}

# A failed request's response (or a one-way error report). `code` is a
# rigel::StatusCode value; the requester sees it as a Status.
struct Error {
  code @0 :UInt16;
  message @1 :Text;
}

# Opaque payload for tests, benchmarks and collectives bootstrap.
struct Data {
  tag @0 :UInt32;
  frames @1 :List(BytesRef);
}

struct Envelope {
  version @0 :UInt16;      # wireVersion
  kind @1 :Kind;
  requestId @2 :UInt64;
  type @3 :UInt64;         # the Cap'n Proto type id of the body's struct
  body @4 :AnyPointer;     # a struct of that type
  # Set by the transport, never by callers: the sizes of payload frames
  # 0..n-1 when they travel inside the header frame, right after this message,
  # each padded to a multiple of 8 bytes. Small frames go this way: one
  # wire frame (and one CURVE box) fewer per message.
  packed @5 :List(UInt32);
}
