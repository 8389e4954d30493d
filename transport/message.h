// Messages as the transport's callers see them: an OutMessage is built by the
// sender (a Cap'n Proto Envelope header whose body is a struct of some
// layer's schema, plus payload Buffers); an InMessage is what a receiver gets
// after the decoder (transport/codec.h) has validated it.
//
// Building (sender):
//   OutMessage msg;
//   auto pull = msg.InitBody<ps::wire::PullRequest>();
//   pull.setParam(3);
//   msg.SetKeys(pull.initKeys(), Buffer::FromVector(std::move(sorted_keys)));
//   transport.Request(server, std::move(msg), callback);
// Reading (receiver, after validation):
//   if (in.Is<ps::wire::PullRequest>()) {
//     auto pull = in.Body<ps::wire::PullRequest>();
//     std::span<const uint64_t> keys = in.Keys(pull.getKeys());
//   }
//
// The body's type must be registered (transport/message_types.h) in the
// receiving process. The transport fills in the Envelope's version, kind and
// requestId; callers set only the body. Payload frames are referred to from
// the body by KeysRef/RowsRef/BytesRef (transport/wire/envelope.capnp); the
// Set* helpers append the frame and fill the Ref in one step.
#ifndef RIGEL_TRANSPORT_MESSAGE_H_
#define RIGEL_TRANSPORT_MESSAGE_H_

#include <capnp/message.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/status.h"
#include "transport/buffer.h"
#include "transport/message_types.h"
#include "transport/wire/envelope.capnp.h"

namespace rigel::transport {

// The role of a process; values equal wire::Role's.
enum class Role : uint8_t { kUnknown = 0, kScheduler = 1, kServer = 2, kWorker = 3, kClient = 4 };

// "scheduler", "server", "worker", "client" or "unknown".
const char* RoleName(Role role);

// An endpoint of the cluster: a role and a rank within it (worker 0..M-1, ...).
struct PeerId {
  Role role = Role::kUnknown;
  int32_t rank = -1;

  friend auto operator<=>(const PeerId&, const PeerId&) = default;
  // "worker:3".
  std::string ToString() const;
};

struct PeerIdHash {
  size_t operator()(const PeerId& p) const {
    return std::hash<uint64_t>()((uint64_t{static_cast<uint8_t>(p.role)} << 32) |
                                 static_cast<uint32_t>(p.rank));
  }
};

// A message to send. Move-only. Not thread-safe: build it on one thread, then
// give it to the transport (Send/Request/Respond take it by value).
class OutMessage {
 public:
  OutMessage();
  OutMessage(OutMessage&&) noexcept;
  OutMessage& operator=(OutMessage&&) noexcept;
  ~OutMessage();

  // A copy of the header sharing the payload Buffers (no payload copy).
  OutMessage Clone();
  // Replaces the header with a copy of `header` (e.g. to forward a received
  // message); payload frames are unchanged. Returns InvalidArgument (and
  // leaves the header as it was) if the copy fails: validation does not look
  // inside fields this build does not know, and a received header may carry
  // unknown fields too costly to copy within Cap'n Proto's read budget.
  Status SetHeader(wire::Envelope::Reader header);

  // Sets the body to a new T (any struct of a layer's schema; see
  // message_types.h) and returns it to fill in.
  template <class T>
  typename T::Builder InitBody() {
    RegisterBuilt<T>();
    root_.setType(TypeId<T>());
    return root_.getBody().initAs<T>();
  }
  // The body's type id (0: no body set yet).
  uint64_t type() const { return root_.asReader().getType(); }

  // The Envelope (the transport's; callers set the body with InitBody).
  wire::Envelope::Builder header() { return root_; }
  capnp::MessageBuilder& builder() { return *builder_; }
  // Moved-from messages may only be assigned to or destroyed.

  // Appends a payload frame and returns its index (for a Ref built by hand).
  uint32_t AddFrame(Buffer frame);
  // Appends `keys` (uint64 values, strictly ascending) and points `ref` at it.
  void SetKeys(wire::KeysRef::Builder ref, Buffer keys);
  // Appends `rows` (row-major float32, `width` per row) and points `ref` at it.
  // A size that is not a whole number of rows is caught when the message is
  // sent (InvalidArgument), not here.
  void SetRows(wire::RowsRef::Builder ref, Buffer rows, uint32_t width);
  // Appends opaque `bytes` and points `ref` at it.
  void SetBytes(wire::BytesRef::Builder ref, Buffer bytes);

  const std::vector<Buffer>& frames() const { return frames_; }
  // Moves the payload frames out (backends, after encoding the header).
  std::vector<Buffer> TakeFrames() { return std::move(frames_); }
  // Sum of the payload frames' sizes.
  size_t payload_bytes() const;

 private:
  struct BuilderBox;  // the builder and its first segment, one allocation
  std::unique_ptr<BuilderBox> box_;
  capnp::MessageBuilder* builder_ = nullptr;
  wire::Envelope::Builder root_{nullptr};
  std::vector<Buffer> frames_;
};

// `rows` rows of `width` floats, row-major, viewing a received payload frame.
struct RowsView {
  std::span<const float> values;
  uint64_t rows = 0;
  uint32_t width = 0;

  std::span<const float> row(uint64_t i) const { return values.subspan(i * width, width); }
};

namespace internal {
struct InMessageState;
}

// A received, validated message. A cheap handle: copies share the same
// immutable state, which lives until the last copy (and every Buffer taken from
// its frames) is gone.
//
// Validation guarantees (codec.h): the header is a well-formed Envelope of the
// current wire version whose body is of a registered type; every pointer field
// of the body has the schema's type (so getters do not throw), every enum
// value is known; every Ref names an existing frame whose size matches its
// counts, and keys are ascending; the type's own check passed.
//
// Thread-safety: reading the Cap'n Proto header charges a read limiter that is
// not synchronised, so read one InMessage's header from one thread at a time
// (hand it over, or copy what you need). Frames/Buffers may be read anywhere.
// Readers are also budgeted (Limits::traversal_limit_words, dozens of full
// reads of the largest header): read each list once rather than calling its
// getter per element, or a long list can exhaust the budget and make getters
// throw kj::Exception.
class InMessage {
 public:
  // An invalid (empty) message; only assignment and valid() may be used.
  InMessage() = default;
  explicit InMessage(std::shared_ptr<const internal::InMessageState> state);

  bool valid() const { return state_ != nullptr; }
  // The authenticated connection's claimed identity of the sender.
  const PeerId& from() const;
  wire::Envelope::Reader header() const;
  // The body's type id (registered: validation guarantees it) and name.
  uint64_t type() const;
  std::string type_name() const { return TypeName(type()); }
  template <class T>
  bool Is() const {
    return type() == TypeId<T>();
  }
  // The body as a T. Precondition (checked): Is<T>().
  template <class T>
  typename T::Reader Body() const {
    RIGEL_CHECK_MSG(Is<T>(), "InMessage::Body: the message has another type");
    return header().getBody().template getAs<T>();
  }
  wire::Kind kind() const;
  uint64_t request_id() const;
  bool is_request() const { return kind() == wire::Kind::REQUEST; }

  size_t num_frames() const;
  // Payload frame `i` (0-based, after the header). Precondition: i < num_frames().
  const Buffer& frame(size_t i) const;
  // Header plus payload bytes as received.
  size_t wire_bytes() const;
  // Where the sender can be reached, as the backend learnt it with the message
  // (ZeroMQ: from the connection's identity); empty when it has none.
  const std::string& reply_address() const;

  // Typed views of frames named by this message's Refs. Preconditions
  // (checked): `ref` belongs to this message's header (validation then
  // guarantees the rest).
  std::span<const uint64_t> Keys(wire::KeysRef::Reader ref) const;
  RowsView Rows(wire::RowsRef::Reader ref) const;
  Buffer Bytes(wire::BytesRef::Reader ref) const;

 private:
  std::shared_ptr<const internal::InMessageState> state_;
};

// An `Error` body carrying `status` (code and message).
OutMessage MakeErrorMessage(const Status& status);
// An `Ack` body.
OutMessage MakeAckMessage();
// A `Data` body with tag `tag` and one frame per buffer.
OutMessage MakeDataMessage(uint32_t tag, std::vector<Buffer> frames);

// The Status an `Error` body stands for: its code (unknown codes become
// kInternal) and "FROM: message". Precondition: msg.Is<wire::Error>().
Status ErrorToStatus(const InMessage& msg);

// One line describing `msg`: type, kind, request id, sender and every field of
// the body (long lists and texts are summarised). Reads every field, so the
// fuzzer uses it to prove that a validated message can be read in full.
std::string Describe(const InMessage& msg);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_MESSAGE_H_
