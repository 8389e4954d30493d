#include "cluster/rendezvous.h"

#include <fmt/format.h>

#include "cluster/wire/messages.h"

namespace rigel::cluster {

using transport::InMessage;
using transport::MessageType;
using transport::OutMessage;

OutMessage Rendezvous::Value(const std::string& key, const std::string& value) const {
  OutMessage m;
  auto e = m.InitBody<cluster::wire::StoreValue>();
  e.setKey(key);
  auto bytes = e.initValue(static_cast<unsigned>(value.size()));
  for (size_t i = 0; i < value.size(); ++i) bytes.set(i, static_cast<uint8_t>(value[i]));
  return m;
}

bool Rendezvous::Handle(const InMessage& msg) {
  if (msg.Is<cluster::wire::StoreSet>()) {
    auto e = msg.Body<cluster::wire::StoreSet>();
    std::string key = e.getKey();
    auto bytes = e.getValue();
    if (bytes.size() > kMaxValueBytes) {
      (void)transport_->RespondError(
          msg, InvalidArgument(fmt::format("rendezvous: value of '{}' is {} bytes; at most {}", key,
                                           bytes.size(), kMaxValueBytes)));
      return true;
    }
    std::string value(bytes.size(), '\0');
    for (unsigned i = 0; i < bytes.size(); ++i) value[i] = static_cast<char>(bytes[i]);
    std::vector<Waiter> woken;
    {
      MutexLock l(&mu_);
      values_[key] = value;
      auto it = waiting_.find(key);
      if (it != waiting_.end()) {
        woken = std::move(it->second);
        waiting_.erase(it);
      }
    }
    OutMessage ack;
    ack.InitBody<transport::wire::Ack>();
    (void)transport_->Respond(msg, std::move(ack));
    for (Waiter& w : woken) (void)transport_->Respond(w.request, Value(key, value));
    return true;
  }
  if (msg.Is<cluster::wire::StoreGet>()) {
    auto e = msg.Body<cluster::wire::StoreGet>();
    std::string key = e.getKey();
    std::string value;
    {
      MutexLock l(&mu_);
      auto it = values_.find(key);
      if (it == values_.end()) {
        waiting_[key].push_back(
            Waiter{msg, Clock::now() + std::chrono::milliseconds(e.getTimeoutMillis())});
        return true;
      }
      value = it->second;
    }
    (void)transport_->Respond(msg, Value(key, value));
    return true;
  }
  return false;
}

void Rendezvous::Expire(Clock::time_point now) {
  std::vector<std::pair<std::string, Waiter>> late;
  {
    MutexLock l(&mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      auto& ws = it->second;
      for (auto w = ws.begin(); w != ws.end();) {
        if (w->deadline <= now) {
          late.emplace_back(it->first, std::move(*w));
          w = ws.erase(w);
        } else {
          ++w;
        }
      }
      it = ws.empty() ? waiting_.erase(it) : std::next(it);
    }
  }
  for (auto& [key, w] : late) {
    (void)transport_->RespondError(
        w.request, Unavailable(fmt::format("rendezvous: no member set '{}' in time (a worker did "
                                           "not reach the same collective)",
                                           key)));
  }
}

}  // namespace rigel::cluster
