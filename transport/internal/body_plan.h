// A body's schema compiled into the checks the decoder runs on it (codec.cc):
// which pointer fields to read with which type, which enum values the schema
// knows, where the KeysRef/RowsRef/BytesRef fields sit (in lists of sections
// too). Compiled once per struct type, then walked per message without schema
// introspection: walking through Cap'n Proto's dynamic API spent most of a
// decode in Field::getType and Schema::getProto (perf), 2.5-5x a decode's
// cost before bodies were the layers' (docs/transport.md has the figures).
// Internal to the transport library.
#ifndef RIGEL_TRANSPORT_INTERNAL_BODY_PLAN_H_
#define RIGEL_TRANSPORT_INTERNAL_BODY_PLAN_H_

#include <capnp/any.h>
#include <capnp/schema.h>

#include <string>

#include "transport/wire/envelope.capnp.h"

namespace rigel::transport::internal {

// Where a field sits ("RowSyncSection.pushKeys"): two names owned by the
// schema (which outlives every plan), formatted only for a message.
struct Where {
  const char* owner = "";
  const char* field = "";
};
std::string Name(const Where& w);

// What a walk reports: each Ref it finds and each problem.
class RefVisitor {
 public:
  virtual void Keys(wire::KeysRef::Reader ref, const Where& where) = 0;
  virtual void Rows(wire::RowsRef::Reader ref, const Where& where) = 0;
  virtual void Bytes(wire::BytesRef::Reader ref, const Where& where) = 0;
  virtual void Fail(std::string why) = 0;

 protected:
  ~RefVisitor() = default;
};

struct StructPlan;

// The plan of `schema`, compiled on first use and kept for the process's
// lifetime. Thread-safe.
const StructPlan* PlanOf(capnp::StructSchema schema);

// Walks `body` by `plan`: reads every pointer field with its schema's type
// (so later getters cannot throw), checks enum values, reports Refs. Throws
// kj::Exception on a malformed pointer. Thread-safe (plans are immutable).
void Walk(capnp::AnyStruct::Reader body, const StructPlan& plan, RefVisitor& v);

}  // namespace rigel::transport::internal

#endif  // RIGEL_TRANSPORT_INTERNAL_BODY_PLAN_H_
