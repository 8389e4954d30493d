// libFuzzer target for the transport's message decoder (transport/codec.h):
// any bytes, split into a header and payload frames, must come back as a
// validated message or a reasoned error, never a crash, hang, leak, sanitizer
// report or an exception. A message that passes must then be readable in full
// (Describe reads every field, key and row) and, copied into an OutMessage,
// must pass the sender-side validation too, so the two never disagree about
// what is valid. Every layer's message types are registered, as in a
// program that uses them all.
//
// Input layout: byte 0 holds the number of payload frames (bits 0-2) and
// whether to misalign them (bit 3); then one little-endian uint16 length per
// frame; then the header; then the frames' bytes, in order (a length running
// past the end is cut short).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cluster/wire/messages.h"
#include "ps/wire/messages.h"
#include "transport/codec.h"
#include "transport/message.h"
#include "worker/wire/messages.h"

namespace {

constexpr size_t kMaxInputBytes = 256 * 1024;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rigel::cluster::wire::RegisterMessages();
  rigel::ps::wire::RegisterMessages();
  rigel::worker::wire::RegisterMessages();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rigel::transport;
  if (size < 1 || size > kMaxInputBytes) return 0;
  const size_t nframes = data[0] & 7;
  const bool misalign = (data[0] & 8) != 0;
  size_t pos = 1;
  std::vector<size_t> lengths;
  for (size_t i = 0; i < nframes && pos + 2 <= size; ++i, pos += 2) {
    lengths.push_back(size_t{data[pos]} | size_t{data[pos + 1]} << 8);
  }
  size_t total = 0;
  for (size_t& l : lengths) {
    l = std::min(l, size - pos - total);
    total += l;
  }
  const size_t header_size = size - pos - total;
  const auto* header = reinterpret_cast<const std::byte*>(data + pos);
  size_t at = pos + header_size;
  std::vector<Buffer> frames;
  for (size_t l : lengths) {
    // One spare byte so a misaligned view is possible.
    Buffer copy = Buffer::Copy(std::vector<std::byte>(l + 1).data(), l + 1);
    std::byte* dst = const_cast<std::byte*>(copy.data()) + (misalign ? 1 : 0);
    if (l > 0) std::memcpy(dst, data + at, l);
    frames.push_back(copy.Slice(misalign ? 1 : 0, l));
    at += l;
  }
  Limits limits;
  limits.max_message_bytes = 1 << 20;
  DropReason reason;
  rigel::StatusOr<InMessage> msg = DecodeMessage(PeerId{Role::kWorker, 1}, nullptr,
                                                 {header, header_size}, frames, limits, &reason);
  if (!msg.ok()) {
    // A rejection must say why.
    if (reason == DropReason::kNone || msg.status().message().empty()) __builtin_trap();
    return 0;
  }
  // Readable in full, without exceptions.
  if (Describe(*msg).empty()) __builtin_trap();
  // The sender-side validation agrees (when the header can be copied at all:
  // unknown fields are never validated, see OutMessage::SetHeader).
  OutMessage again;
  if (!again.SetHeader(msg->header()).ok()) return 0;
  for (size_t i = 0; i < msg->num_frames(); ++i) again.AddFrame(msg->frame(i));
  Limits generous;
  generous.max_message_bytes = generous.max_header_bytes = uint64_t{1} << 30;
  if (!ValidateOutgoing(again, generous).ok()) __builtin_trap();
  return 0;
}
