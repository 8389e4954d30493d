#include "transport/message_types.h"

#include <fmt/format.h>

#include <memory>
#include <unordered_map>

#include "common/check.h"
#include "common/mutex.h"
#include "transport/internal/body_plan.h"
#include "transport/wire/envelope.capnp.h"

namespace rigel::transport {
namespace {

struct Registry {
  Mutex mu;
  // Entries are never removed: FindMessageType hands out stable pointers.
  std::unordered_map<uint64_t, std::unique_ptr<MessageType>> types RIGEL_GUARDED_BY(mu);
};

void Add(Registry& r, capnp::StructSchema schema, BodyCheck check) RIGEL_REQUIRES(r.mu) {
  const uint64_t id = schema.getProto().getId();
  auto it = r.types.find(id);
  if (it != r.types.end()) {
    // Building a message registers its type without a check (OutMessage::
    // InitBody); the owning layer's registration adds the check.
    BodyCheck& have = it->second->check;
    RIGEL_CHECK_MSG(have == nullptr || check == nullptr || have == check,
                    "a message type registered with two different checks");
    if (have == nullptr) have = check;
    return;
  }
  auto t = std::make_unique<MessageType>();
  t->id = id;
  t->schema = schema;
  t->check = check;
  t->plan = internal::PlanOf(schema);
  t->name = schema.getShortDisplayName().cStr();
  r.types.emplace(id, std::move(t));
}

// The transport's own bodies are always known.
Registry& Types() {
  static Registry* r = [] {
    auto* reg = new Registry;
    MutexLock lock(&reg->mu);
    Add(*reg, capnp::Schema::from<wire::Ack>(), nullptr);
    Add(*reg, capnp::Schema::from<wire::Error>(), nullptr);
    Add(*reg, capnp::Schema::from<wire::Data>(), nullptr);
    return reg;
  }();
  return *r;
}

}  // namespace

void RegisterMessageType(capnp::StructSchema schema, BodyCheck check) {
  Registry& r = Types();
  MutexLock lock(&r.mu);
  Add(r, schema, check);
}

const MessageType* FindMessageType(uint64_t id) {
  Registry& r = Types();
  MutexLock lock(&r.mu);
  auto it = r.types.find(id);
  return it == r.types.end() ? nullptr : it->second.get();
}

std::string TypeName(uint64_t id) {
  const MessageType* t = FindMessageType(id);
  return t != nullptr ? t->name : fmt::format("unknown type {:#x}", id);
}

}  // namespace rigel::transport
