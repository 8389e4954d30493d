#include "worker/wire/messages.h"

#include <fmt/format.h>

#include <mutex>

#include "transport/message_types.h"

namespace rigel::worker::wire {
namespace {

Status CheckHandoff(BlockHandoff::Reader b) {
  if (b.getRowEnd() < b.getRowBegin() || b.getRows().getRows() != b.getRowEnd() - b.getRowBegin()) {
    return InvalidArgument(fmt::format("BlockHandoff: rows [{}, {}) but {} rows sent",
                                       b.getRowBegin(), b.getRowEnd(), b.getRows().getRows()));
  }
  return Status::Ok();
}

}  // namespace

void RegisterMessages() {
  static std::once_flag once;
  std::call_once(once, [] {
    transport::RegisterMessage<BlockHandoff>(&transport::CheckAs<BlockHandoff, &CheckHandoff>);
  });
}

namespace {
// Registered before main in every program that links this file, which every
// program using these messages does (the constructors that send or handle
// them call RegisterMessages): a message can arrive before the object that
// handles it exists, and must not be dropped as of an unknown type then.
const bool kRegisteredAtStart = (RegisterMessages(), true);
}  // namespace

}  // namespace rigel::worker::wire
