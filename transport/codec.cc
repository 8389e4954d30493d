#include "transport/codec.h"

#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "transport/internal/body_plan.h"
#include "transport/internal/in_message_state.h"

namespace rigel::transport {
namespace {

using internal::InMessageState;
using internal::Name;
using internal::Where;

// Element sizes recorded per frame so misaligned frames can be re-aligned.
constexpr uint8_t kElemBytes = 1, kElemF32 = 4, kElemU64 = 8;

// Overflow-checked a * b.
bool MulOk(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Checks one body against its payload frames (step 4 of codec.h). Collects the
// first problem; later checks still run but their messages are ignored.
class BodyChecker final : public internal::RefVisitor {
 public:
  BodyChecker(std::span<const Buffer> frames, const Limits& limits)
      : frames_(frames), limits_(limits) {
    // The common case needs no allocation: a few frames per message.
    if (frames.size() > kInlineFrames) heap_.resize(frames.size());
    elem_ = {frames.size() > kInlineFrames ? heap_.data() : inline_, frames.size()};
    std::fill(elem_.begin(), elem_.end(), 0);
  }

  void Fail(std::string why) override {
    if (error_.empty()) error_ = std::move(why);
  }

  void Keys(wire::KeysRef::Reader ref, const Where& field) override {
    const Buffer* f = Claim(ref.getFrame(), field, kElemU64);
    if (f == nullptr) return;
    uint64_t bytes;
    if (!MulOk(ref.getCount(), 8, &bytes) || bytes != f->size()) {
      return Fail(fmt::format("{}: {} keys need {} bytes but frame {} has {}", Name(field),
                              ref.getCount(), bytes, ref.getFrame(), f->size()));
    }
    // memcpy loads: the frame may still be misaligned at this point.
    const std::byte* p = f->data();
    uint64_t prev = 0;
    for (uint64_t i = 0; i < ref.getCount(); ++i) {
      uint64_t k;
      std::memcpy(&k, p + i * 8, 8);
      if (i > 0 && k <= prev) {
        return Fail(fmt::format("{}: keys not strictly ascending at index {}", Name(field), i));
      }
      prev = k;
    }
  }

  void Rows(wire::RowsRef::Reader ref, const Where& field) override {
    const Buffer* f = Claim(ref.getFrame(), field, kElemF32);
    if (f == nullptr) return;
    uint32_t width = ref.getWidth();
    if (width == 0 || width > limits_.max_row_width) {
      return Fail(
          fmt::format("{}: row width {} outside 1..{}", Name(field), width, limits_.max_row_width));
    }
    uint64_t values, bytes;
    if (!MulOk(ref.getRows(), width, &values) || !MulOk(values, 4, &bytes) || bytes != f->size()) {
      return Fail(fmt::format("{}: {} rows of width {} do not match frame {} of {} bytes",
                              Name(field), ref.getRows(), width, ref.getFrame(), f->size()));
    }
  }

  void Bytes(wire::BytesRef::Reader ref, const Where& field) override {
    const Buffer* f = Claim(ref.getFrame(), field, kElemBytes);
    if (f != nullptr && ref.getSize() != f->size()) {
      Fail(fmt::format("{}: says {} bytes but frame {} has {}", Name(field), ref.getSize(),
                       ref.getFrame(), f->size()));
    }
  }

  // Every frame must be named exactly once.
  void Finish() {
    for (size_t i = 0; i < elem_.size(); ++i) {
      if (elem_[i] == 0) Fail(fmt::format("payload frame {} is not referred to by the body", i));
    }
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::span<const uint8_t> elem_sizes() const { return elem_; }

 private:
  const Buffer* Claim(uint32_t index, const Where& field, uint8_t elem) {
    if (index >= frames_.size()) {
      Fail(fmt::format("{}: frame {} does not exist ({} payload frames)", Name(field), index,
                       frames_.size()));
      return nullptr;
    }
    if (elem_[index] != 0) {
      Fail(fmt::format("{}: frame {} is referred to twice", Name(field), index));
      return nullptr;
    }
    elem_[index] = elem;
    return &frames_[index];
  }

  static constexpr size_t kInlineFrames = 16;
  std::span<const Buffer> frames_;
  const Limits& limits_;
  uint8_t inline_[kInlineFrames];
  std::vector<uint8_t> heap_;
  std::span<uint8_t> elem_;
  std::string error_;
};

// Checks a body of registered `type` against its payload frames (step 4 of
// codec.h): the generic walk, then the type's own check. May throw
// kj::Exception on a malformed pointer.
void CheckBody(wire::Envelope::Reader root, const MessageType& type, BodyChecker& c) {
  internal::Walk(root.getBody().getAs<capnp::AnyStruct>(), *type.plan, c);
  c.Finish();
  if (c.ok() && type.check != nullptr) {
    Status st = type.check(root.getBody());
    if (!st.ok()) c.Fail(std::string(st.message()));
  }
}

std::string Shorten(std::string s) {
  constexpr size_t kMax = 240;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

// Sets *reason and returns the error of a message dropped for `why`.
Status Drop(DropReason* reason, DropReason r, std::string why) {
  *reason = r;
  return InvalidArgument(Shorten(std::move(why)));
}

// The sizes, checked before anything is read: `total` is the header's and
// every frame's.
Status CheckSizes(size_t header_bytes, uint64_t total, size_t frames, const Limits& limits,
                  DropReason* reason) {
  if (header_bytes > limits.max_header_bytes) {
    return Drop(reason, DropReason::kOversized,
                fmt::format("header of {} bytes over the limit of {}", header_bytes,
                            limits.max_header_bytes));
  }
  if (total > limits.max_message_bytes) {
    return Drop(
        reason, DropReason::kOversized,
        fmt::format("message of {} bytes over the limit of {}", total, limits.max_message_bytes));
  }
  if (frames > limits.max_frames) {
    return Drop(reason, DropReason::kOversized,
                fmt::format("{} payload frames over the limit of {}", frames, limits.max_frames));
  }
  if (header_bytes < 8 || header_bytes % 8 != 0) {
    return Drop(reason, DropReason::kMalformed,
                fmt::format("header of {} bytes is not whole 8-byte words", header_bytes));
  }
  return Status::Ok();
}

// Copies the header into `state` (in the state itself when it is small) and
// returns where the copy starts.
std::byte* CopyHeader(std::span<const std::byte> header, InMessageState* state) {
  std::byte* words = state->header_inline;
  if (header.size() > InMessageState::kInlineHeaderBytes) {
    state->header_heap = std::make_shared_for_overwrite<uint64_t[]>(header.size() / 8);
    words = reinterpret_cast<std::byte*>(state->header_heap.get());
  }
  std::memcpy(words, header.data(), header.size());
  return words;
}

// The envelope's own fields; sets *type to the body's registered type. May
// throw kj::Exception.
Status CheckEnvelope(wire::Envelope::Reader root, DropReason* reason, const MessageType** type) {
  if (root.totalSize().capCount != 0) {
    // No Rigel message holds capabilities; copying one would throw.
    return Drop(reason, DropReason::kMalformed, "header contains capability pointers");
  }
  if (root.getVersion() != wire::WIRE_VERSION) {
    return Drop(reason, DropReason::kVersion,
                fmt::format("wire version {}, expected {}", root.getVersion(), wire::WIRE_VERSION));
  }
  bool one_way = root.getKind() == wire::Kind::ONE_WAY;
  if (static_cast<uint16_t>(root.getKind()) > static_cast<uint16_t>(wire::Kind::RESPONSE)) {
    return Drop(reason, DropReason::kMalformed,
                fmt::format("unknown envelope kind {}", static_cast<int>(root.getKind())));
  }
  if (one_way != (root.getRequestId() == 0)) {
    return Drop(reason, DropReason::kMalformed, "request id does not match the envelope kind");
  }
  *type = FindMessageType(root.getType());
  if (*type == nullptr) {
    return Drop(reason, DropReason::kUnknownType,
                fmt::format("body of {}", TypeName(root.getType())));
  }
  return Status::Ok();
}

// The payload frames in order into *all: those packed into `area` (the rest
// of the first frame, after the header's message), then `frames`.
Status CollectFrames(capnp::List<uint32_t>::Reader packed, const InMessageState& state,
                     std::span<const std::byte> area, std::vector<Buffer>* frames,
                     const Limits& limits, std::vector<Buffer>* all, DropReason* reason) {
  if (packed.size() + frames->size() > limits.max_frames) {
    return Drop(reason, DropReason::kOversized,
                fmt::format("{} payload frames over the limit of {}",
                            packed.size() + frames->size(), limits.max_frames));
  }
  // Their padded sizes must fill the area exactly (sizes are 32-bit and at
  // most max_frames: no overflow).
  size_t padded = 0;
  for (uint32_t size : packed) padded += (size_t{size} + 7) / 8 * 8;
  if (padded != area.size()) {
    return Drop(reason, DropReason::kMalformed,
                fmt::format("{} bytes after the header's message, its packed frames need {}",
                            area.size(), padded));
  }
  all->reserve(packed.size() + frames->size());
  if (packed.size() > 0) {
    // Large first frames live in shared storage the packed Buffers can
    // alias; small ones inline in the state, so copy (a few bytes) out.
    const std::byte* at = area.data();
    Buffer area_buffer =
        state.header_heap
            ? Buffer(std::shared_ptr<const void>(state.header_heap, at), at, area.size())
            : Buffer::Copy(at, area.size());
    size_t offset = 0;
    for (uint32_t size : packed) {
      all->push_back(area_buffer.Slice(offset, size));
      offset += (size_t{size} + 7) / 8 * 8;
    }
  }
  for (Buffer& f : *frames) all->push_back(std::move(f));
  return Status::Ok();
}

// Re-aligns typed frames that arrived misaligned; only small frames can be.
void RealignFrames(std::span<const uint8_t> elem, std::vector<Buffer>* all) {
  for (size_t i = 0; i < all->size(); ++i) {
    Buffer& f = (*all)[i];
    if (elem[i] > 1 && reinterpret_cast<uintptr_t>(f.data()) % elem[i] != 0) {
      f = Buffer::Copy(f.data(), f.size());
    }
  }
}

}  // namespace

const char* DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kNone:
      return "none";
    case DropReason::kOversized:
      return "oversized";
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kVersion:
      return "wrong version";
    case DropReason::kUnknownType:
      return "unknown type";
    case DropReason::kBadPayload:
      return "bad payload";
    case DropReason::kBadSender:
      return "bad sender identity";
    case DropReason::kCount:
      break;
  }
  return "?";
}

size_t EncodedHeaderSize(OutMessage& msg) {
  return capnp::computeSerializedSizeInWords(msg.builder()) * sizeof(capnp::word);
}

void EncodeHeader(OutMessage& msg, std::span<std::byte> dst) {
  // The standard Cap'n Proto stream framing, written straight into the
  // destination (a zmq_msg_t's data) instead of through an intermediate array.
  auto segments = msg.builder().getSegmentsForOutput();
  RIGEL_CHECK(segments.size() > 0);
  size_t table_words = segments.size() / 2 + 1;
  size_t total = table_words * 8;
  for (auto& s : segments) total += s.size() * 8;
  RIGEL_CHECK(dst.size() == total);
  std::byte* out = dst.data();
  std::memset(out, 0, table_words * 8);
  uint32_t v = static_cast<uint32_t>(segments.size() - 1);
  std::memcpy(out, &v, 4);
  for (size_t i = 0; i < segments.size(); ++i) {
    v = static_cast<uint32_t>(segments[i].size());
    std::memcpy(out + 4 + 4 * i, &v, 4);
  }
  out += table_words * 8;
  for (auto& s : segments) {
    std::memcpy(out, s.begin(), s.size() * 8);
    out += s.size() * 8;
  }
}

Frame0 PlanFrame0(OutMessage& msg, const Limits& limits) {
  const std::vector<Buffer>& frames = msg.frames();
  wire::Envelope::Builder header = msg.header();
  if (header.hasPacked()) header.disownPacked();  // ours to set, nobody else's
  Frame0 plan;
  const size_t bare = EncodedHeaderSize(msg);
  // Each packed size costs 4 bytes in the header (+8 for the list pointer,
  // +8 of padding at most); the header stays within the limit.
  size_t packed_bytes = 0;
  while (plan.packed < frames.size() && frames[plan.packed].size() <= kPackedFrameMaxBytes) {
    size_t padded = (frames[plan.packed].size() + 7) / 8 * 8;
    size_t header_growth = 16 + 4 * (plan.packed + 1);
    if (packed_bytes + padded > kPackedMaxBytes ||
        bare + header_growth + packed_bytes + padded > limits.max_header_bytes) {
      break;
    }
    packed_bytes += padded;
    ++plan.packed;
  }
  if (plan.packed > 0) {
    auto sizes = header.initPacked(static_cast<unsigned>(plan.packed));
    for (size_t i = 0; i < plan.packed; ++i) {
      sizes.set(static_cast<unsigned>(i), static_cast<uint32_t>(frames[i].size()));
    }
  }
  plan.header_bytes = plan.packed > 0 ? EncodedHeaderSize(msg) : bare;
  plan.total_bytes = plan.header_bytes + packed_bytes;
  return plan;
}

void EncodeFrame0(OutMessage& msg, const Frame0& plan, std::span<std::byte> dst) {
  RIGEL_CHECK(dst.size() == plan.total_bytes);
  EncodeHeader(msg, dst.first(plan.header_bytes));
  std::byte* out = dst.data() + plan.header_bytes;
  for (size_t i = 0; i < plan.packed; ++i) {
    const Buffer& f = msg.frames()[i];
    size_t padded = (f.size() + 7) / 8 * 8;
    if (f.size() > 0) std::memcpy(out, f.data(), f.size());
    std::memset(out + f.size(), 0, padded - f.size());
    out += padded;
  }
}

Buffer EncodeFrame0ToBuffer(OutMessage& msg, const Frame0& plan) {
  size_t n = plan.total_bytes;
  auto storage = std::shared_ptr<uint64_t[]>(new uint64_t[n / 8]);
  EncodeFrame0(msg, plan, {reinterpret_cast<std::byte*>(storage.get()), n});
  return Buffer(std::shared_ptr<const void>(storage, storage.get()), storage.get(), n);
}

Status ValidateOutgoing(OutMessage& msg, const Limits& limits, size_t* header_size) {
  if (msg.frames().size() > limits.max_frames) {
    return InvalidArgument(fmt::format("message has {} payload frames; the limit is {}",
                                       msg.frames().size(), limits.max_frames));
  }
  size_t header = EncodedHeaderSize(msg);
  if (header_size != nullptr) *header_size = header;
  if (header > limits.max_header_bytes) {
    return InvalidArgument(fmt::format("message header is {} bytes; the limit is {}", header,
                                       limits.max_header_bytes));
  }
  if (header + msg.payload_bytes() > limits.max_message_bytes) {
    return InvalidArgument(fmt::format("message is {} bytes; the limit is {}",
                                       header + msg.payload_bytes(), limits.max_message_bytes));
  }
  wire::Envelope::Reader root = msg.header().asReader();
  // A null body is a body with every field at its default, as a receiver
  // reads it; only a message never given a body (type 0) is refused.
  if (root.getType() == 0) return InvalidArgument("message body is not set");
  const MessageType* type = FindMessageType(root.getType());
  if (type == nullptr) {
    return InvalidArgument(fmt::format(
        "message body of {}: register it (transport/message_types.h)", TypeName(root.getType())));
  }
  BodyChecker checker(msg.frames(), limits);
  try {
    CheckBody(root, *type,
              checker);  // a builder's pointers are well-formed; this is belt and braces
  } catch (const kj::Exception& e) {
    return InvalidArgument(std::string("invalid message: ") + e.getDescription().cStr());
  }
  if (!checker.ok()) return InvalidArgument("invalid message: " + checker.error());
  return Status::Ok();
}

StatusOr<InMessage> DecodeMessage(const PeerId& from,
                                  std::shared_ptr<const std::string> reply_address,
                                  std::span<const std::byte> header, std::vector<Buffer> frames,
                                  const Limits& limits, DropReason* reason) {
  *reason = DropReason::kNone;
  uint64_t total = header.size();
  for (const Buffer& f : frames) total += f.size();  // sizes of real memory: no overflow
  RIGEL_RETURN_IF_ERROR(CheckSizes(header.size(), total, frames.size(), limits, reason));

  auto state = std::make_shared<InMessageState>();
  state->from = from;
  state->reply_address = std::move(reply_address);
  state->wire_bytes = total;
  std::byte* words = CopyHeader(header, state.get());
  const auto* begin = reinterpret_cast<const capnp::word*>(words);
  const size_t num_words = header.size() / 8;

  std::vector<Buffer> all;
  std::optional<BodyChecker> checker;
  size_t message_words = num_words;
  try {
    {
      // Validate through a reader whose read budget is twice the first
      // frame's size: one schema-less pass over every reachable object
      // (totalSize, which bounds-checks unknown fields too) and one typed pass
      // over the body each cost at most the size unless pointers alias (Cap'n
      // Proto's amplification attack). Passing proves a full read is cheap;
      // the reader handed on below then has traversal_limit_words for its users.
      capnp::ReaderOptions probe;
      probe.traversalLimitInWords =
          std::min<uint64_t>(2 * num_words + 16, limits.traversal_limit_words);
      probe.nestingLimit = limits.nesting_limit;
      capnp::FlatArrayMessageReader reader(kj::arrayPtr(begin, num_words), probe);
      message_words = static_cast<size_t>(reader.getEnd() - begin);
      wire::Envelope::Reader root = reader.getRoot<wire::Envelope>();
      const MessageType* type = nullptr;
      RIGEL_RETURN_IF_ERROR(CheckEnvelope(root, reason, &type));
      std::span<const std::byte> area(words + message_words * 8, (num_words - message_words) * 8);
      RIGEL_RETURN_IF_ERROR(
          CollectFrames(root.getPacked(), *state, area, &frames, limits, &all, reason));
      checker.emplace(all, limits);
      CheckBody(root, *type, *checker);
    }
    capnp::ReaderOptions options;
    options.traversalLimitInWords = limits.traversal_limit_words;
    options.nestingLimit = limits.nesting_limit;
    state->reader.emplace(kj::arrayPtr(begin, message_words), options);
    state->root = state->reader->getRoot<wire::Envelope>();
  } catch (const kj::Exception& e) {
    return Drop(reason, DropReason::kMalformed, std::string(e.getDescription().cStr()));
  } catch (const std::exception& e) {
    return Drop(reason, DropReason::kMalformed, e.what());
  }
  if (!checker->ok()) return Drop(reason, DropReason::kBadPayload, checker->error());
  RealignFrames(checker->elem_sizes(), &all);
  state->frames = std::move(all);
  return InMessage(std::move(state));
}

}  // namespace rigel::transport
