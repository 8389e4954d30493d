#include "cluster/wire/messages.h"

#include <mutex>

#include "transport/message_types.h"

namespace rigel::cluster::wire {
namespace {

Status CheckRegister(Register::Reader r) {
  if (r.getRank() < -1) return InvalidArgument("Register.rank must be >= -1");
  return Status::Ok();
}

}  // namespace

void RegisterMessages() {
  static std::once_flag once;
  std::call_once(once, [] {
    using transport::RegisterMessage;
    RegisterMessage<Register>(&transport::CheckAs<Register, &CheckRegister>);
    RegisterMessage<RegisterReply>();
    RegisterMessage<Heartbeat>();
    RegisterMessage<PeerDown>();
    RegisterMessage<Shutdown>();
    RegisterMessage<Plan>();
    RegisterMessage<Barrier>();
    RegisterMessage<BarrierRelease>();
    RegisterMessage<Step>();
    RegisterMessage<Metrics>();
    RegisterMessage<Task>();
    RegisterMessage<TaskDone>();
    RegisterMessage<StoreSet>();
    RegisterMessage<StoreGet>();
    RegisterMessage<StoreValue>();
  });
}

namespace {
// Registered before main in every program that links this file, which every
// program using these messages does (the constructors that send or handle
// them call RegisterMessages): a message can arrive before the object that
// handles it exists, and must not be dropped as of an unknown type then.
const bool kRegisteredAtStart = (RegisterMessages(), true);
}  // namespace

}  // namespace rigel::cluster::wire
