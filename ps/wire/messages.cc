#include "ps/wire/messages.h"

#include <fmt/format.h>

#include <mutex>

#include "transport/message_types.h"

namespace rigel::ps::wire {
namespace {

using transport::CheckAs;
using transport::RegisterMessage;

Status CheckPush(PushRequest::Reader p) {
  if (p.getRows().getRows() != p.getKeys().getCount()) {
    return InvalidArgument(fmt::format("PushRequest: {} rows for {} keys", p.getRows().getRows(),
                                       p.getKeys().getCount()));
  }
  return Status::Ok();
}

Status CheckRowSync(RowSync::Reader r) {
  for (auto sec : r.getSections()) {
    if (sec.getPushRows().getRows() != sec.getPushKeys().getCount()) {
      return InvalidArgument(fmt::format("RowSync.sections: {} rows pushed for {} keys",
                                         sec.getPushRows().getRows(),
                                         sec.getPushKeys().getCount()));
    }
  }
  return Status::Ok();
}

Status CheckRowSyncReply(RowSyncReply::Reader r) {
  for (auto sec : r.getSections()) {
    const uint64_t keys = sec.getKeys().getCount();
    if (sec.getRows().getRows() != keys || sec.getVersions().getSize() != keys * 8) {
      return InvalidArgument(
          fmt::format("RowSyncReply.sections: {} rows and {} version bytes for {} keys",
                      sec.getRows().getRows(), sec.getVersions().getSize(), keys));
    }
    if (sec.getAuditVersions().getSize() != sec.getAuditKeys().getCount() * 8) {
      return InvalidArgument(
          fmt::format("RowSyncReply.sections: {} audit version bytes for {} keys",
                      sec.getAuditVersions().getSize(), sec.getAuditKeys().getCount()));
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterMessages() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterMessage<PullRequest>();
    RegisterMessage<PullReply>();
    RegisterMessage<PushRequest>(&CheckAs<PushRequest, &CheckPush>);
    RegisterMessage<PushReply>();
    RegisterMessage<ClockTick>();
    RegisterMessage<CheckpointRequest>();
    RegisterMessage<CheckpointReply>();
    RegisterMessage<RestoreRequest>();
    RegisterMessage<RowSync>(&CheckAs<RowSync, &CheckRowSync>);
    RegisterMessage<RowSyncReply>(&CheckAs<RowSyncReply, &CheckRowSyncReply>);
  });
}

namespace {
// Registered before main in every program that links this file, which every
// program using these messages does (the constructors that send or handle
// them call RegisterMessages): a message can arrive before the object that
// handles it exists, and must not be dropped as of an unknown type then.
const bool kRegisteredAtStart = (RegisterMessages(), true);
}  // namespace

}  // namespace rigel::ps::wire
