#include "cluster/scheduler_store.h"

#include "cluster/wire/messages.h"
#include "transport/message.h"

namespace rigel::cluster {

namespace {
const transport::PeerId kScheduler{transport::Role::kScheduler, 0};
}

Status SchedulerStore::Set(const std::string& key, const std::string& value) {
  transport::OutMessage m;
  auto e = m.InitBody<cluster::wire::StoreSet>();
  e.setKey(key);
  auto bytes = e.initValue(static_cast<unsigned>(value.size()));
  for (size_t i = 0; i < value.size(); ++i) bytes.set(i, static_cast<uint8_t>(value[i]));
  transport::CallOptions co;
  co.timeout = transport::Millis(30000);
  auto r = transport_->Call(kScheduler, std::move(m), co);
  if (!r.ok()) {
    return Status(r.status().code(), "rendezvous: setting '" + key +
                                         "' at the scheduler failed: " + r.status().message());
  }
  return Status::Ok();
}

StatusOr<std::string> SchedulerStore::Get(const std::string& key,
                                          std::chrono::milliseconds timeout) {
  transport::OutMessage m;
  auto e = m.InitBody<cluster::wire::StoreGet>();
  e.setKey(key);
  e.setTimeoutMillis(static_cast<uint32_t>(timeout.count()));
  transport::CallOptions co;
  // The scheduler answers by itself when the wait runs out; this is the
  // fallback for a scheduler that is gone.
  co.timeout = transport::Millis(timeout.count() + 5000);
  auto r = transport_->Call(kScheduler, std::move(m), co);
  if (!r.ok()) return r.status();
  if (!r->Is<cluster::wire::StoreValue>()) {
    return Internal("rendezvous: the scheduler answered '" + key + "' with a " + r->type_name());
  }
  auto bytes = r->Body<cluster::wire::StoreValue>().getValue();
  std::string value(bytes.size(), '\0');
  for (unsigned i = 0; i < bytes.size(); ++i) value[i] = static_cast<char>(bytes[i]);
  return value;
}

}  // namespace rigel::cluster
