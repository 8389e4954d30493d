// FaultInjectingTransport: wraps a real Transport and misbehaves on purpose —
// drops, delays, duplicates and reorders outgoing messages (requests, one-way
// messages and responses alike), and cuts links to chosen peers — so tests can
// show that upper layers (and the transport's own request machinery) turn
// every such fault into a timeout or an error, never into wrong data.
//
// Faults act on whole messages; bytes are never altered (malformed bytes are
// the decoder's tests' business). Each outgoing message gets at most one
// fault, chosen by a seeded random generator (deterministic for a
// single-threaded caller):
//   drop       the message is not sent (Send/Respond still return OK);
//   duplicate  it is sent twice (a duplicated request reaches the peer twice
//              and still yields one callback, for the first response; a
//              duplicated response is dropped as late by the requester);
//   reorder    it is held until the next message to the same peer has been
//              sent (or reorder_hold passes), then sent;
//   delay      it is sent after a uniform random delay in [delay_min, delay_max].
// Cut(peer) drops everything to and from `peer` (including responses to our
// requests, which then time out) until Heal(peer).
//
// A Request whose request or response is lost completes with kUnavailable
// ("timed out") at its deadline: CallOptions::timeout, or
// FaultOptions::request_timeout when that is negative (the wrapper cannot see
// the inner transport's default).
//
// Thread-safety: thread-safe, like every Transport. Delayed and held messages
// are sent from the wrapper's timer thread.
#ifndef RIGEL_TRANSPORT_FAULT_INJECTING_TRANSPORT_H_
#define RIGEL_TRANSPORT_FAULT_INJECTING_TRANSPORT_H_

#include <memory>

#include "transport/transport.h"

namespace rigel::transport {

struct FaultOptions {
  uint64_t seed = 1;
  // Probabilities per outgoing message; their sum must be <= 1.
  double drop = 0;
  double duplicate = 0;
  double reorder = 0;
  double delay = 0;
  Millis delay_min{1};
  Millis delay_max{20};
  Millis reorder_hold{20};
  Millis request_timeout{10000};
};

struct FaultCounts {
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  uint64_t delayed = 0;
  uint64_t cut = 0;  // messages dropped, either direction, because of a cut link
};

class FaultInjectingTransport final : public Transport {
 public:
  // Takes ownership of `inner`. Returns InvalidArgument for probabilities
  // outside [0, 1], summing above 1, or delay_min > delay_max.
  static StatusOr<std::unique_ptr<FaultInjectingTransport>> Create(std::unique_ptr<Transport> inner,
                                                                   const FaultOptions& options);

  ~FaultInjectingTransport() override;

  // Replaces the fault plan (same checks as Create).
  Status SetOptions(const FaultOptions& options);
  // Drops all traffic to and from `peer` until Heal(peer).
  void Cut(const PeerId& peer);
  void Heal(const PeerId& peer);
  FaultCounts fault_counts() const;
  Transport& inner();

  const PeerId& self() const override;
  const std::string& address() const override;
  Status Connect(const PeerId& peer, const std::string& address) override;
  void SetHandler(Handler handler) override;
  Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts = {}) override;
  Status Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                 const CallOptions& opts = {}) override;
  Status Respond(const InMessage& request, OutMessage response) override;
  TransportStats stats() const override;
  bool InReceiveThread() const override;
  void Close() override;

  class Impl;

 private:
  explicit FaultInjectingTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_FAULT_INJECTING_TRANSPORT_H_
