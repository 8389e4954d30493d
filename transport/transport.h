// Transport: how Rigel processes exchange messages. Backends: ZeroMQ
// (transport/zmq/transport.h: tcp, ipc, inproc), LoopbackTransport (in-process,
// for tests of upper layers) and FaultInjectingTransport (a wrapper). RDMA
// verbs will implement the same interface. docs/transport.md has the design.
//
// Model. Every process owns one Transport, identified by its PeerId (role and
// rank). A message is an OutMessage (Cap'n Proto header + payload Buffers):
//  - Send(to, msg): one-way;
//  - Request(to, msg, callback): the callback gets the response (or an error)
//    exactly once; Call/RequestAsync wrap it as blocking call / future;
//  - Respond(request, msg): answers a received request.
// Incoming requests and one-way messages go to the Handler; responses complete
// their request's callback. Both run on the transport's own receive thread, so
// callers' compute threads never block on the network: a handler must return
// quickly (hand heavy work to another thread and Respond from there: Respond
// is thread-safe) and must never wait for a response itself (that thread is
// the one that would deliver it).
//
// Zero copy. Payload Buffers are sent without copying (frames of at least
// kZeroCopyMinBytes; smaller ones are copied, which is cheaper) and received
// without copying; see transport/buffer.h for the ownership rule: the bytes of
// a Buffer given to Send must stay unmodified while the Buffer's owner is
// alive, and the transport drops its reference once the bytes are on the wire.
//
// Back-pressure. Each peer has a bounded send queue (ZeroMQ's high-water mark,
// a message count), and each requester a bounded window of requests pending
// per peer (max_in_flight). Send waits for room in the queue, Request for a
// window slot and then for room, both up to CallOptions::send_timeout, then
// fail with kUnavailable ("send queue to X full" / "N requests already in
// flight to X"); nothing is dropped silently and nothing blocks forever. A
// Request made on the receive thread (from a handler or callback) never waits
// for a window slot, since only that thread can free one. Respond never waits:
// the requester's window keeps what a peer owes it within the responder's
// queue, so a response is dropped (counted, and logged once per requester)
// only when that queue is full anyway: the requester stopped reading (one-way
// messages to it share the queue), is gone, or has a window larger than half
// our queue. Its request then times out. On the receive side the receive
// thread runs the handler inline, so a slow handler stops reading; the kernel
// and ZeroMQ buffers fill and the senders' Sends start to time out: the
// slowness is pushed back to the senders.
//
// Errors. Every call returns a Status. kUnavailable: peer unreachable, queue
// full, request timed out ("... to X timed out after N ms (deadline exceeded
// ...)"), connection refused or transport closed; the message says which. A
// response that comes after its request timed out is counted in
// late_responses (logged once per peer) and never delivered.
// kInvalidArgument: a malformed outgoing message or a bad address.
// kFailedPrecondition: use after Close(). A peer's `error` response arrives as
// the Status it carries. A connection whose authentication was refused stays
// failed and keeps returning its error.
//
// Received messages that fail validation (codec.h) are dropped, counted in
// stats().dropped and logged once per peer; they never reach the handler.
//
// Thread-safety: every method may be called from any thread concurrently,
// except that Close() and the destructor must not run on the receive thread.
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
