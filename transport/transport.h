// Transport: how Rigel processes exchange messages (design and rationale:
// docs/transport.md). Backends: transport/zmq/transport.h (which roles get
// through transport::Create, transport/create.h), LoopbackTransport
// (in-process) and FaultInjectingTransport (a wrapper).
//
// Each process owns one Transport, named by its PeerId. Send is one-way;
// Request's callback gets the response or an error exactly once (Call and
// RequestAsync wrap it); Respond answers a received request. Incoming
// messages and responses run on the transport's receive thread: a handler
// must return quickly and never wait for a response.
// Ownership: payload Buffers travel without copying; the bytes of a Buffer
// given to Send must stay unmodified while its owner lives (transport/buffer.h).
// Errors: kUnavailable (unreachable, queue full after send_timeout, timed out
// with "deadline exceeded", refused, closed; the message says which),
// kInvalidArgument (malformed message, bad address), kFailedPrecondition (use
// after Close), or the Status a peer's `error` response carries. Nothing is
// dropped silently: invalid received messages and dropped responses are
// counted in stats() and logged once per peer.
// Thread-safety: every method may be called from any thread, except Close()
// and the destructor, which must not run on the receive thread.
#ifndef RIGEL_TRANSPORT_TRANSPORT_H_
#define RIGEL_TRANSPORT_TRANSPORT_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <string>

#include "common/status.h"
#include "transport/codec.h"
#include "transport/message.h"

namespace rigel::transport {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// Payload frames at least this large are sent zero-copy; smaller ones are
// copied (an allocation and a free callback cost more than copying a few
// KiB), packed into the header's frame when they come first (codec.h).
inline constexpr size_t kZeroCopyMinBytes = kPackedFrameMaxBytes + 1;

struct CallOptions {
  // How long Send/Request may wait for room in the peer's send queue.
  // Negative: the transport's default; 0: fail at once if full.
  Millis send_timeout{-1};
  // Request only: how long to wait for the response, from the call.
  // Negative: the transport's default.
  Millis timeout{-1};
};

// Called on the receive thread for each incoming request or one-way message.
using Handler = std::function<void(InMessage)>;
// Called exactly once per accepted Request: with the response, or with the
// error (timeout, peer error, transport closed). Runs on the receive thread
// (or a wrapper's timer thread); same rules as a Handler.
using ResponseCallback = std::function<void(StatusOr<InMessage>)>;

// Counters since creation. A snapshot; each field is read atomically.
struct TransportStats {
  uint64_t messages_sent = 0;  // includes requests and responses
  uint64_t bytes_sent = 0;     // header + payload
  uint64_t messages_received = 0;
  uint64_t bytes_received = 0;
  uint64_t requests_sent = 0;
  uint64_t requests_timed_out = 0;
  uint64_t late_responses = 0;     // no matching request (timed out, duplicate, wrong sender)
  uint64_t responses_dropped = 0;  // requester's queue full, or requester unknown
  uint64_t send_queue_full = 0;    // Send/Request that gave up waiting for room
  uint64_t handler_errors = 0;     // exceptions thrown by the handler or a callback
  uint64_t auth_refused = 0;       // peers refused by authentication (ZAP or handshake)
  std::array<uint64_t, static_cast<size_t>(DropReason::kCount)> dropped{};  // by DropReason

  uint64_t dropped_total() const;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // This endpoint's identity.
  virtual const PeerId& self() const = 0;
  // The address other processes use to reach this one ("tcp://127.0.0.1:5555").
  virtual const std::string& address() const = 0;

  // Records that `peer` listens at `address` and starts connecting (without
  // waiting). Idempotent; a new address for a known peer replaces the old
  // connection. A backend learns the address of a peer that sends to it by
  // itself, so this is needed only to reach a peer first. Returns
  // InvalidArgument for an address this backend cannot use.
  virtual Status Connect(const PeerId& peer, const std::string& address) = 0;

  // Installs the handler for requests and one-way messages (replacing any
  // previous one; messages that arrive with none installed are dropped and
  // counted as handler_errors).
  virtual void SetHandler(Handler handler) = 0;

  // Sends a one-way message. OK means queued for sending, not delivered.
  virtual Status Send(const PeerId& to, OutMessage msg, const CallOptions& opts = {}) = 0;

  // Sends a request. If the return is OK, `done` will be called exactly once;
  // if not, it is never called. Many requests may be in flight per peer.
  virtual Status Request(const PeerId& to, OutMessage msg, ResponseCallback done,
                         const CallOptions& opts = {}) = 0;

  // Answers `request` (which must be a request this transport received) with
  // `response`. Never waits (see back-pressure above): returns kUnavailable if
  // the response had to be dropped, InvalidArgument if `request` is not a request.
  virtual Status Respond(const InMessage& request, OutMessage response) = 0;

  virtual TransportStats stats() const = 0;

  // Whether the calling thread is one this transport delivers on (its receive
  // thread, or a wrapper's timer thread): code in a handler or callback.
  virtual bool InReceiveThread() const { return false; }

  // Stops receiving, fails every pending request with kUnavailable and closes
  // the connections (unsent messages get the backend's linger time). Later
  // calls return kFailedPrecondition. Idempotent.
  virtual void Close() = 0;

  // Request() as a future. The future holds the error if the request could not be sent.
  std::future<StatusOr<InMessage>> RequestAsync(const PeerId& to, OutMessage msg,
                                                const CallOptions& opts = {});
  // Request() that blocks the calling thread until the response or an error.
  // From a handler or callback it would wait for itself, so there it returns
  // FailedPrecondition at once (use Request with a callback instead).
  StatusOr<InMessage> Call(const PeerId& to, OutMessage msg, const CallOptions& opts = {});
  // Respond() with an `error` body carrying `error`.
  Status RespondError(const InMessage& request, const Status& error);
};

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_TRANSPORT_H_
