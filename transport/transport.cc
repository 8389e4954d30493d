#include "transport/transport.h"

#include <memory>
#include <utility>

namespace rigel::transport {

uint64_t TransportStats::dropped_total() const {
  uint64_t n = 0;
  for (uint64_t d : dropped) n += d;
  return n;
}

std::future<StatusOr<InMessage>> Transport::RequestAsync(const PeerId& to, OutMessage msg,
                                                         const CallOptions& opts) {
  auto promise = std::make_shared<std::promise<StatusOr<InMessage>>>();
  std::future<StatusOr<InMessage>> future = promise->get_future();
  Status st = Request(
      to, std::move(msg),
      [promise](StatusOr<InMessage> result) { promise->set_value(std::move(result)); }, opts);
  if (!st.ok()) promise->set_value(st);
  return future;
}

StatusOr<InMessage> Transport::Call(const PeerId& to, OutMessage msg, const CallOptions& opts) {
  if (InReceiveThread()) {
    return FailedPrecondition(self().ToString() +
                              ": Call from a handler or callback would wait for itself; use "
                              "Request with a callback");
  }
  return RequestAsync(to, std::move(msg), opts).get();
}

Status Transport::RespondError(const InMessage& request, const Status& error) {
  return Respond(request, MakeErrorMessage(error));
}

}  // namespace rigel::transport
