// The wire codec: encodes headers, and decodes untrusted bytes into a
// validated InMessage or a counted, explained rejection (the checks, in
// order, are in docs/transport.md, "Wire format and validation").
//
// Every backend uses these functions, so every backend validates the same
// way. Decoding never throws, never aborts and never reads outside the given
// bytes (tests/fuzz/transport_fuzz.cc); rejections are a DropReason
// (kOversized, kMalformed, kVersion, kUnknownType, kBadPayload) with a
// message. Misaligned small frames are copied once into aligned memory.
//
// Thread-safety: all functions are thread-safe (no shared state).
#ifndef RIGEL_TRANSPORT_CODEC_H_
#define RIGEL_TRANSPORT_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/buffer.h"
#include "transport/message.h"

namespace rigel::transport {

// Bounds on what a receiver accepts (and a sender sends). Defaults suit a
// cluster moving parameter blocks of up to a few hundred MiB per message.
struct Limits {
  // Header plus all payload frames. ZeroMQ also gets this as ZMQ_MAXMSGSIZE, so
  // a single larger frame makes libzmq close the connection before buffering it.
  uint64_t max_message_bytes = uint64_t{256} << 20;
  uint64_t max_header_bytes = uint64_t{1} << 20;
  uint32_t max_frames = 64;  // payload frames, header not included
  // Cap'n Proto read budget per received message for its readers, in 8-byte
  // words. Validation proves one full read costs about the header's size, so
  // the default allows dozens of full reads of the largest header.
  uint64_t traversal_limit_words = uint64_t{8} << 20;
  int nesting_limit = 16;
  uint32_t max_row_width = uint32_t{1} << 24;
};

// Why a received message was dropped. Values index TransportStats::dropped.
enum class DropReason : uint8_t {
  kNone = 0,
  kOversized,    // over a Limits size bound
  kMalformed,    // not a well-formed Envelope (truncated, bad pointers, bad kind/id)
  kVersion,      // another wire version
  kUnknownType,  // a body member this build does not know
  kBadPayload,   // Refs/counts/widths/order disagree with the payload frames
  kBadSender,    // the connection's identity could not be parsed
  kCount,
};

// "oversized", "malformed", ...
const char* DropReasonName(DropReason reason);

// Size in bytes of the encoded header of `msg` (segment table + segments).
size_t EncodedHeaderSize(OutMessage& msg);
// Writes the encoded header of `msg` into `dst`, which must be exactly
// EncodedHeaderSize(msg) bytes (any alignment).
void EncodeHeader(OutMessage& msg, std::span<std::byte> dst);

// Payload frames smaller than kPackedFrameMaxBytes + 1 travel inside the
// header frame (copied, which costs less than a frame of their own), up to
// kPackedMaxBytes in all; larger ones get their own frame, zero-copy.
inline constexpr size_t kPackedFrameMaxBytes = 4095;
inline constexpr size_t kPackedMaxBytes = 16384;

// The layout of the first wire frame of an outgoing message: the encoded
// header, then payload frames 0..packed-1, each padded to 8 bytes.
struct Frame0 {
  size_t header_bytes = 0;
  size_t packed = 0;
  size_t total_bytes = 0;
};

// Chooses which leading payload frames travel inside the header frame (small
// ones, within kPackedMaxBytes and limits.max_header_bytes), records their
// sizes in the header's `packed` list (dropping one a caller may have set)
// and returns the layout. Call last, after ValidateOutgoing and after setting
// kind and requestId.
Frame0 PlanFrame0(OutMessage& msg, const Limits& limits);
// Writes the first frame as `plan` says into `dst` (exactly plan.total_bytes).
void EncodeFrame0(OutMessage& msg, const Frame0& plan, std::span<std::byte> dst);
// The first frame in a new 8-byte aligned Buffer.
Buffer EncodeFrame0ToBuffer(OutMessage& msg, const Frame0& plan);

// Checks an outgoing message before it is sent: a body member is set, its
// Refs agree with the payload frames (step 4 above) and the sizes fit
// `limits`. Returns InvalidArgument naming the problem. Does not check the
// envelope's kind/requestId (the transport sets those). Sets *header_size (if
// given) to EncodedHeaderSize(msg), which it computes anyway.
Status ValidateOutgoing(OutMessage& msg, const Limits& limits, size_t* header_size = nullptr);

// Decodes and validates a received message. `header` is the first wire frame
// (the Envelope, then any packed payload frames), copied (it is small);
// `frames` are the other payload frames, kept as given unless misaligned. `from` and
// `reply_address` are what the backend knows of the sender (the address is shared, not copied, by
// every message from that sender; null: none). On failure returns the reason's Status
// (InvalidArgument with a short explanation) and sets *reason; on success
// *reason is kNone.
StatusOr<InMessage> DecodeMessage(const PeerId& from,
                                  std::shared_ptr<const std::string> reply_address,
                                  std::span<const std::byte> header, std::vector<Buffer> frames,
                                  const Limits& limits, DropReason* reason);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_CODEC_H_
