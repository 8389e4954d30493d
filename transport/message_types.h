// Message types: which bodies an Envelope may carry. The transport knows no
// application message. A layer owns its schema (a Cap'n Proto file of its
// own, e.g. ps/wire/ps.capnp) and registers each body struct here, with an
// optional check of what the schema cannot say (counts that must agree, a
// range that must be ordered). A message is typed by its body struct's Cap'n
// Proto type id (Envelope.type), which is unique without coordination.
//
// The decoder (codec.h) drops a message whose type is not registered in the
// receiving process as "unknown type", so a layer registers its types before
// its transport can receive them: each layer's wire/messages.h has a
// Register...Messages() that the layer's constructors call (idempotent).
// Given a type's schema, the decoder checks every body the same way: every
// pointer field has its schema's type, every enum value is one the schema
// knows, every KeysRef/RowsRef/BytesRef names a frame of the right size, and
// then the layer's check runs.
//
// Thread-safety: registration and lookup may run on any thread at any time.
#ifndef RIGEL_TRANSPORT_MESSAGE_TYPES_H_
#define RIGEL_TRANSPORT_MESSAGE_TYPES_H_

#include <capnp/any.h>
#include <capnp/schema.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace rigel::transport {

namespace internal {
struct StructPlan;
}

// The type id of body struct T (constexpr: usable as a case label).
template <class T>
constexpr uint64_t TypeId() {
  return capnp::typeId<T>();
}

// A check of one body beyond its schema: OK, or InvalidArgument saying what
// is wrong ("PushRequest: 3 rows for 4 keys"); the message is then dropped
// as a bad payload. It runs after the generic checks, on the receive thread.
using BodyCheck = Status (*)(capnp::AnyPointer::Reader body);

struct MessageType {
  uint64_t id = 0;
  capnp::StructSchema schema;
  BodyCheck check = nullptr;  // may be null
  // The schema compiled into the decoder's checks (transport/internal/).
  const internal::StructPlan* plan = nullptr;
  // The struct's name ("PullRequest"), for logs.
  std::string name;
};

// Registers `schema` (whose id is the type id) with `check`. Registering a
// type again adds a check it had none of and is otherwise a no-op; with
// another check it is a programming error (RIGEL_CHECK). Building a message
// (OutMessage::InitBody) registers its type without a check, so a process can
// always send what it builds; receiving needs the type registered before the
// message arrives, which the owning layer's registration does (above).
void RegisterMessageType(capnp::StructSchema schema, BodyCheck check);

// Registers body struct T; `check` as above.
template <class T>
void RegisterMessage(BodyCheck check = nullptr) {
  RegisterMessageType(capnp::Schema::from<T>(), check);
}

// The registered type `id`, or null. The pointer stays valid for the
// process's lifetime.
const MessageType* FindMessageType(uint64_t id);

// The registered type's name, or "unknown type 0x..." for another id.
std::string TypeName(uint64_t id);

// Registers T without a check, once per process (cheap after the first call).
template <class T>
void RegisterBuilt() {
  static const bool once = (RegisterMessageType(capnp::Schema::from<T>(), nullptr), true);
  (void)once;
}

// A typed BodyCheck from `Status F(typename T::Reader)`:
// RegisterMessage<T>(&CheckAs<T, F>).
template <class T, Status (*F)(typename T::Reader)>
Status CheckAs(capnp::AnyPointer::Reader body) {
  return F(body.getAs<T>());
}

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_MESSAGE_TYPES_H_
