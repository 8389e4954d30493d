#include "transport/message.h"

#include <capnp/dynamic.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/check.h"
#include "transport/internal/in_message_state.h"

namespace rigel::transport {
namespace {

// Most headers are a few dozen words: they are built in a first segment that
// lives in the same allocation as the builder; bigger ones grow on the heap.
constexpr unsigned kFirstSegmentWords = 32;

const char* KindName(wire::Kind k) {
  switch (k) {
    case wire::Kind::ONE_WAY:
      return "one-way";
    case wire::Kind::REQUEST:
      return "request";
    case wire::Kind::RESPONSE:
      return "response";
  }
  return "?";
}

std::string TextSummary(capnp::Text::Reader t) {
  constexpr size_t kMax = 60;
  std::string s(t.cStr(), t.size());
  if (s.size() > kMax) s = s.substr(0, kMax) + fmt::format("...({} bytes)", t.size());
  return fmt::format("\"{}\"", s);
}

}  // namespace

Buffer Buffer::Copy(const void* data, size_t size) {
  // 64-byte alignment: any element type, and whole cache lines for SIMD readers.
  constexpr size_t kAlign = 64;
  size_t alloc = (size + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, alloc == 0 ? kAlign : alloc);
  if (p == nullptr) throw std::bad_alloc();
  if (size > 0) std::memcpy(p, data, size);
  std::shared_ptr<const void> owner(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  return Buffer(std::move(owner), p, size);
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kScheduler:
      return "scheduler";
    case Role::kServer:
      return "server";
    case Role::kWorker:
      return "worker";
    case Role::kClient:
      return "client";
    case Role::kUnknown:
      break;
  }
  return "unknown";
}

std::string PeerId::ToString() const { return fmt::format("{}:{}", RoleName(role), rank); }

// --- OutMessage ---

struct OutMessage::BuilderBox {
  // Cap'n Proto requires a zeroed first segment; value-initialised here.
  capnp::word first[kFirstSegmentWords]{};
  capnp::MallocMessageBuilder builder{kj::arrayPtr(first, kFirstSegmentWords)};
};

OutMessage::OutMessage() : box_(std::make_unique<BuilderBox>()), builder_(&box_->builder) {
  root_ = builder_->initRoot<wire::Envelope>();
  root_.setVersion(wire::WIRE_VERSION);
}

OutMessage::OutMessage(OutMessage&&) noexcept = default;
OutMessage& OutMessage::operator=(OutMessage&&) noexcept = default;
OutMessage::~OutMessage() = default;

OutMessage OutMessage::Clone() {
  OutMessage copy;
  Status st = copy.SetHeader(root_.asReader());
  RIGEL_CHECK_MSG(st.ok(), "copying a built header cannot fail");
  copy.frames_ = frames_;
  return copy;
}

Status OutMessage::SetHeader(wire::Envelope::Reader header) {
  // Into a fresh builder, swapped in only on success.
  auto box = std::make_unique<BuilderBox>();
  try {
    box->builder.setRoot(header);
  } catch (const kj::Exception& e) {
    return InvalidArgument(std::string("cannot copy the header: ") + e.getDescription().cStr());
  }
  box_ = std::move(box);
  builder_ = &box_->builder;
  root_ = builder_->getRoot<wire::Envelope>();
  return Status::Ok();
}

uint32_t OutMessage::AddFrame(Buffer frame) {
  frames_.push_back(std::move(frame));
  return static_cast<uint32_t>(frames_.size() - 1);
}

void OutMessage::SetKeys(wire::KeysRef::Builder ref, Buffer keys) {
  ref.setCount(keys.size() / 8);
  ref.setFrame(AddFrame(std::move(keys)));
}

void OutMessage::SetRows(wire::RowsRef::Builder ref, Buffer rows, uint32_t width) {
  ref.setWidth(width);
  ref.setRows(width == 0 ? 0 : rows.size() / (uint64_t{width} * 4));
  ref.setFrame(AddFrame(std::move(rows)));
}

void OutMessage::SetBytes(wire::BytesRef::Builder ref, Buffer bytes) {
  ref.setSize(bytes.size());
  ref.setFrame(AddFrame(std::move(bytes)));
}

size_t OutMessage::payload_bytes() const {
  size_t n = 0;
  for (const Buffer& f : frames_) n += f.size();
  return n;
}

// --- InMessage ---

InMessage::InMessage(std::shared_ptr<const internal::InMessageState> state)
    : state_(std::move(state)) {}

const PeerId& InMessage::from() const { return state_->from; }
wire::Envelope::Reader InMessage::header() const { return state_->root; }
uint64_t InMessage::type() const { return state_->root.getType(); }
wire::Kind InMessage::kind() const { return state_->root.getKind(); }
uint64_t InMessage::request_id() const { return state_->root.getRequestId(); }
size_t InMessage::num_frames() const { return state_->frames.size(); }
size_t InMessage::wire_bytes() const { return state_->wire_bytes; }
const std::string& InMessage::reply_address() const {
  static const std::string kNone;
  return state_->reply_address ? *state_->reply_address : kNone;
}

const Buffer& InMessage::frame(size_t i) const {
  RIGEL_CHECK(i < state_->frames.size());
  return state_->frames[i];
}

std::span<const uint64_t> InMessage::Keys(wire::KeysRef::Reader ref) const {
  const Buffer& f = frame(ref.getFrame());
  RIGEL_CHECK_MSG(f.size() == ref.getCount() * 8, "KeysRef from another message");
  return f.As<uint64_t>();
}

RowsView InMessage::Rows(wire::RowsRef::Reader ref) const {
  const Buffer& f = frame(ref.getFrame());
  RIGEL_CHECK_MSG(ref.getWidth() > 0 && f.size() == ref.getRows() * ref.getWidth() * 4,
                  "RowsRef from another message");
  return RowsView{f.As<float>(), ref.getRows(), ref.getWidth()};
}

Buffer InMessage::Bytes(wire::BytesRef::Reader ref) const {
  const Buffer& f = frame(ref.getFrame());
  RIGEL_CHECK_MSG(f.size() == ref.getSize(), "BytesRef from another message");
  return f;
}

// --- helpers ---

OutMessage MakeErrorMessage(const Status& status) {
  OutMessage msg;
  auto e = msg.InitBody<wire::Error>();
  e.setCode(static_cast<uint16_t>(status.code()));
  e.setMessage(status.message());
  return msg;
}

OutMessage MakeAckMessage() {
  OutMessage msg;
  msg.InitBody<wire::Ack>();
  return msg;
}

OutMessage MakeDataMessage(uint32_t tag, std::vector<Buffer> frames) {
  OutMessage msg;
  auto d = msg.InitBody<wire::Data>();
  d.setTag(tag);
  auto refs = d.initFrames(static_cast<unsigned>(frames.size()));
  for (size_t i = 0; i < frames.size(); ++i) {
    msg.SetBytes(refs[static_cast<unsigned>(i)], std::move(frames[i]));
  }
  return msg;
}

Status ErrorToStatus(const InMessage& msg) {
  auto e = msg.Body<wire::Error>();
  uint16_t code = e.getCode();
  std::string text = fmt::format("{}: {}", msg.from().ToString(), e.getMessage().cStr());
  if (code == 0 || code > static_cast<uint16_t>(StatusCode::kIoError)) {
    return Internal(fmt::format("{} (error code {} unknown here)", text, code));
  }
  return Status(static_cast<StatusCode>(code), std::move(text));
}

namespace {

// Describe's generic printer: every field of the body by its schema, Refs
// as what they name, long texts and lists summarised.
class Printer {
 public:
  explicit Printer(const InMessage& msg) : msg_(msg) {}

  void Struct(capnp::DynamicStruct::Reader s) {
    auto schema = s.getSchema();
    for (capnp::StructSchema::Field f : schema.getNonUnionFields()) Field(s, f);
    KJ_IF_MAYBE (f, s.which()) {
      Field(s, *f);
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  void Field(capnp::DynamicStruct::Reader s, capnp::StructSchema::Field f) {
    out_ += fmt::format(" {}=", f.getProto().getName().cStr());
    Value(s.get(f));
  }

  void Value(capnp::DynamicValue::Reader v) {
    switch (v.getType()) {
      case capnp::DynamicValue::VOID:
        out_ += "void";
        break;
      case capnp::DynamicValue::BOOL:
        out_ += v.as<bool>() ? "true" : "false";
        break;
      case capnp::DynamicValue::INT:
        out_ += fmt::format("{}", v.as<int64_t>());
        break;
      case capnp::DynamicValue::UINT:
        out_ += fmt::format("{}", v.as<uint64_t>());
        break;
      case capnp::DynamicValue::FLOAT:
        out_ += fmt::format("{:g}", v.as<double>());
        break;
      case capnp::DynamicValue::TEXT:
        out_ += TextSummary(v.as<capnp::Text>());
        break;
      case capnp::DynamicValue::DATA:
        out_ += fmt::format("{} bytes", v.as<capnp::Data>().size());
        break;
      case capnp::DynamicValue::ENUM: {
        auto e = v.as<capnp::DynamicEnum>();
        KJ_IF_MAYBE (en, e.getEnumerant()) {
          out_ += en->getProto().getName().cStr();
        } else {
          out_ += fmt::format("{}", e.getRaw());
        }
        break;
      }
      case capnp::DynamicValue::STRUCT:
        StructValue(v.as<capnp::DynamicStruct>());
        break;
      case capnp::DynamicValue::LIST: {
        auto l = v.as<capnp::DynamicList>();
        constexpr unsigned kShown = 8;
        out_ += "[";
        for (unsigned i = 0; i < l.size() && i < kShown; ++i) {
          if (i > 0) out_ += ",";
          Value(l[i]);
        }
        if (l.size() > kShown) out_ += fmt::format(",...({} in all)", l.size());
        out_ += "]";
        break;
      }
      default:
        out_ += "?";
        break;
    }
  }

  void StructValue(capnp::DynamicStruct::Reader s) {
    const uint64_t id = s.getSchema().getProto().getId();
    if (id == TypeId<wire::KeysRef>()) {
      auto k = msg_.Keys(s.as<wire::KeysRef>());
      out_ += k.empty() ? std::string("keys(0)")
                        : fmt::format("keys({}:{}..{})", k.size(), k.front(), k.back());
    } else if (id == TypeId<wire::RowsRef>()) {
      RowsView r = msg_.Rows(s.as<wire::RowsRef>());
      double sum = 0;
      for (float x : r.values) sum += x;
      out_ += fmt::format("rows({}x{} sum={:g})", r.rows, r.width, sum);
    } else if (id == TypeId<wire::BytesRef>()) {
      out_ += fmt::format("bytes({})", msg_.Bytes(s.as<wire::BytesRef>()).size());
    } else {
      out_ += "(";
      Struct(s);
      out_ += " )";
    }
  }

  const InMessage& msg_;
  std::string out_;
};

}  // namespace

std::string Describe(const InMessage& msg) {
  auto root = msg.header();
  std::string out = fmt::format("{} #{} {} from {}:", KindName(root.getKind()), root.getRequestId(),
                                msg.type_name(), msg.from().ToString());
  const MessageType* type = FindMessageType(msg.type());
  if (type == nullptr) return out;  // validation makes this unreachable
  Printer p(msg);
  p.Struct(root.getBody().getAs<capnp::DynamicStruct>(type->schema));
  return out + p.Take();
}

}  // namespace rigel::transport
