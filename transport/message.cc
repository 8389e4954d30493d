#include "transport/message.h"

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

const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::ACK:
      return "ack";
    case MessageType::ERROR:
      return "error";
    case MessageType::REGISTER:
      return "register";
    case MessageType::REGISTER_REPLY:
      return "registerReply";
    case MessageType::HEARTBEAT:
      return "heartbeat";
    case MessageType::PLAN:
      return "plan";
    case MessageType::PULL_REQUEST:
      return "pullRequest";
    case MessageType::PULL_REPLY:
      return "pullReply";
    case MessageType::PUSH_REQUEST:
      return "pushRequest";
    case MessageType::PUSH_REPLY:
      return "pushReply";
    case MessageType::BARRIER:
      return "barrier";
    case MessageType::BARRIER_RELEASE:
      return "barrierRelease";
    case MessageType::STEP:
      return "step";
    case MessageType::BLOCK_HANDOFF:
      return "blockHandoff";
    case MessageType::METRICS:
      return "metrics";
    case MessageType::SHUTDOWN:
      return "shutdown";
    case MessageType::DATA:
      return "data";
    case MessageType::CLOCK_TICK:
      return "clockTick";
    case MessageType::PEER_DOWN:
      return "peerDown";
    case MessageType::TASK:
      return "task";
    case MessageType::TASK_DONE:
      return "taskDone";
    case MessageType::STORE_SET:
      return "storeSet";
    case MessageType::STORE_GET:
      return "storeGet";
    case MessageType::STORE_VALUE:
      return "storeValue";
    case MessageType::CHECKPOINT:
      return "checkpoint";
    case MessageType::CHECKPOINT_REPLY:
      return "checkpointReply";
    case MessageType::RESTORE:
      return "restore";
    case MessageType::ROW_SYNC:
      return "rowSync";
    case MessageType::ROW_SYNC_REPLY:
      return "rowSyncReply";
  }
  return "unknown";
}

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
MessageType InMessage::type() const { return state_->root.getBody().which(); }
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
  auto e = msg.header().getBody().initError();
  e.setCode(static_cast<uint16_t>(status.code()));
  e.setMessage(status.message());
  return msg;
}

OutMessage MakeAckMessage() {
  OutMessage msg;
  msg.header().getBody().setAck();
  return msg;
}

OutMessage MakeDataMessage(uint32_t tag, std::vector<Buffer> frames) {
  OutMessage msg;
  auto d = msg.header().getBody().initData();
  d.setTag(tag);
  auto refs = d.initFrames(static_cast<unsigned>(frames.size()));
  for (size_t i = 0; i < frames.size(); ++i) {
    msg.SetBytes(refs[static_cast<unsigned>(i)], std::move(frames[i]));
  }
  return msg;
}

Status ErrorToStatus(const InMessage& msg) {
  RIGEL_CHECK(msg.type() == MessageType::ERROR);
  auto e = msg.header().getBody().getError();
  uint16_t code = e.getCode();
  std::string text = fmt::format("{}: {}", msg.from().ToString(), e.getMessage().cStr());
  if (code == 0 || code > static_cast<uint16_t>(StatusCode::kIoError)) {
    return Internal(fmt::format("{} (error code {} unknown here)", text, code));
  }
  return Status(static_cast<StatusCode>(code), std::move(text));
}

namespace {

std::string KeysText(const InMessage& msg, wire::KeysRef::Reader ref) {
  auto k = msg.Keys(ref);
  return k.empty() ? std::string("keys=0")
                   : fmt::format("keys={}[{}..{}]", k.size(), k.front(), k.back());
}

std::string RowsText(const InMessage& msg, wire::RowsRef::Reader ref) {
  RowsView v = msg.Rows(ref);
  double sum = 0;
  for (float x : v.values) sum += x;
  return fmt::format("rows={}x{} sum={:g}", v.rows, v.width, sum);
}

// The fields of each kind of body, as Describe prints them.

std::string Fields(wire::Error::Reader e) {
  return fmt::format(" code={} message={}", e.getCode(), TextSummary(e.getMessage()));
}

std::string Fields(wire::Register::Reader r) {
  return fmt::format(" role={} rank={} address={} incarnation={} threads={}",
                     static_cast<int>(r.getRole()), r.getRank(), TextSummary(r.getAddress()),
                     r.getIncarnation(), r.getThreads());
}

std::string Fields(wire::RegisterReply::Reader r) {
  std::string out = fmt::format(" rank={} peers=[", r.getRank());
  for (auto p : r.getPeers()) {
    out += fmt::format(" {}:{}@{}", static_cast<int>(p.getRole()), p.getRank(),
                       TextSummary(p.getAddress()));
  }
  return out + " ]";
}

std::string Fields(wire::Heartbeat::Reader h) {
  return fmt::format(" seq={} incarnation={} sent={}", h.getSeq(), h.getIncarnation(),
                     h.getSentUnixMicros());
}

std::string Fields(wire::Plan::Reader p) {
  return fmt::format(" plan={} servers={} workers={} params={} job={}", p.getPlanId(),
                     p.getServers(), p.getWorkers(), p.getParams().size(),
                     p.getHasJob() ? TextSummary(p.getJob().getProgram()) : "none");
}

std::string Fields(const InMessage& msg, wire::PullRequest::Reader p) {
  return fmt::format(" param={} {} width={} clock={}", p.getParam(), KeysText(msg, p.getKeys()),
                     p.getWidth(), p.getClock());
}

std::string Fields(const InMessage& msg, wire::PullReply::Reader p) {
  return fmt::format(" param={} {} minClock={}", p.getParam(), RowsText(msg, p.getRows()),
                     p.getMinClock());
}

std::string Fields(const InMessage& msg, wire::PushRequest::Reader p) {
  return fmt::format(" param={} {} {} rule={} clock={} lr={:g}", p.getParam(),
                     KeysText(msg, p.getKeys()), RowsText(msg, p.getRows()),
                     static_cast<int>(p.getRule()), p.getClock(), p.getLr());
}

std::string Fields(wire::PushReply::Reader p) {
  return fmt::format(" param={} applied={}", p.getParam(), p.getApplied());
}

std::string Fields(wire::Barrier::Reader b) {
  return fmt::format(" id={} epoch={} step={}", b.getId(), b.getEpoch(), b.getStep());
}

std::string Fields(wire::Step::Reader s) {
  return fmt::format(" epoch={} step={} loop={} command={}", s.getEpoch(), s.getStep(), s.getLoop(),
                     static_cast<int>(s.getCommand()));
}

std::string Fields(const InMessage& msg, wire::BlockHandoff::Reader b) {
  return fmt::format(" param={} block={} rows=[{}, {}) epoch={} step={} {}", b.getParam(),
                     b.getBlock(), b.getRowBegin(), b.getRowEnd(), b.getEpoch(), b.getStep(),
                     RowsText(msg, b.getRows()));
}

std::string Fields(wire::Metrics::Reader m) {
  std::string out = fmt::format(" rank={} step={}", m.getRank(), m.getStep());
  for (auto e : m.getEntries()) {
    out += fmt::format(" {}={:g}", TextSummary(e.getName()), e.getValue());
  }
  return out;
}

std::string Fields(wire::Shutdown::Reader s) {
  return fmt::format(" reason={}", TextSummary(s.getReason()));
}

std::string Fields(const InMessage& msg, wire::Data::Reader d) {
  std::string out = fmt::format(" tag={} frames=[", d.getTag());
  for (auto ref : d.getFrames()) out += fmt::format(" {}", msg.Bytes(ref).size());
  return out + " ]";
}

std::string Fields(wire::ClockTick::Reader t) {
  return fmt::format(" clock={} pushes={}", t.getClock(), t.getPushes());
}

std::string Fields(wire::PeerDown::Reader p) {
  return fmt::format(" role={} rank={} reason={}", static_cast<int>(p.getRole()), p.getRank(),
                     TextSummary(p.getReason()));
}

std::string Fields(wire::Task::Reader t) {
  return fmt::format(" loop={} launch={} end={} axes={} outer={}", t.getLoop(), t.getLaunch(),
                     t.getEnd(), t.getRun().getCuts().getAxes().size(),
                     t.getRun().getOuter().size());
}

std::string Fields(wire::TaskDone::Reader t) {
  return fmt::format(" loop={} launch={} accums={} metrics={} error={}", t.getLoop(), t.getLaunch(),
                     t.getAccums().size(), t.getMetrics().size(), TextSummary(t.getError()));
}

std::string Fields(wire::StoreEntry::Reader e) {
  return fmt::format(" key={} bytes={} timeout_ms={}", TextSummary(e.getKey()), e.getValue().size(),
                     e.getTimeoutMillis());
}

std::string Fields(wire::CheckpointRequest::Reader c) {
  return fmt::format(" dir={} seq={}", TextSummary(c.getDir()), c.getSeq());
}

std::string Fields(wire::CheckpointReply::Reader c) {
  return fmt::format(" files={}", c.getFiles().size());
}

std::string Fields(wire::RestoreRequest::Reader r) {
  return fmt::format(" dir={} files={}", TextSummary(r.getDir()), r.getFiles().size());
}

std::string Fields(const InMessage& msg, wire::RowSync::Reader r) {
  std::string out = fmt::format(" staleness={} step={} replica={} audit={}", r.getStaleness(),
                                r.getStep(), r.getReplica(), r.getAudit());
  for (auto sec : r.getSections()) {
    out += fmt::format(" [param={} push {} {} fetch {} drop {}]", sec.getParam(),
                       KeysText(msg, sec.getPushKeys()), RowsText(msg, sec.getPushRows()),
                       KeysText(msg, sec.getFetchKeys()), KeysText(msg, sec.getDropKeys()));
  }
  return out;
}

std::string Fields(const InMessage& msg, wire::RowSyncReply::Reader r) {
  std::string out;
  for (auto sec : r.getSections()) {
    out += fmt::format(" [param={} {} {} audit {}]", sec.getParam(), KeysText(msg, sec.getKeys()),
                       RowsText(msg, sec.getRows()), KeysText(msg, sec.getAuditKeys()));
  }
  return out;
}

std::string BodyFields(const InMessage& msg) {
  auto body = msg.header().getBody();
  switch (body.which()) {
    case MessageType::ACK:
      return "";
    case MessageType::ERROR:
      return Fields(body.getError());
    case MessageType::REGISTER:
      return Fields(body.getRegister());
    case MessageType::REGISTER_REPLY:
      return Fields(body.getRegisterReply());
    case MessageType::HEARTBEAT:
      return Fields(body.getHeartbeat());
    case MessageType::PLAN:
      return Fields(body.getPlan());
    case MessageType::PULL_REQUEST:
      return Fields(msg, body.getPullRequest());
    case MessageType::PULL_REPLY:
      return Fields(msg, body.getPullReply());
    case MessageType::PUSH_REQUEST:
      return Fields(msg, body.getPushRequest());
    case MessageType::PUSH_REPLY:
      return Fields(body.getPushReply());
    case MessageType::BARRIER:
      return Fields(body.getBarrier());
    case MessageType::BARRIER_RELEASE:
      return Fields(body.getBarrierRelease());
    case MessageType::STEP:
      return Fields(body.getStep());
    case MessageType::BLOCK_HANDOFF:
      return Fields(msg, body.getBlockHandoff());
    case MessageType::METRICS:
      return Fields(body.getMetrics());
    case MessageType::SHUTDOWN:
      return Fields(body.getShutdown());
    case MessageType::DATA:
      return Fields(msg, body.getData());
    case MessageType::CLOCK_TICK:
      return Fields(body.getClockTick());
    case MessageType::PEER_DOWN:
      return Fields(body.getPeerDown());
    case MessageType::TASK:
      return Fields(body.getTask());
    case MessageType::TASK_DONE:
      return Fields(body.getTaskDone());
    case MessageType::STORE_SET:
      return Fields(body.getStoreSet());
    case MessageType::STORE_GET:
      return Fields(body.getStoreGet());
    case MessageType::STORE_VALUE:
      return Fields(body.getStoreValue());
    case MessageType::CHECKPOINT:
      return Fields(body.getCheckpoint());
    case MessageType::CHECKPOINT_REPLY:
      return Fields(body.getCheckpointReply());
    case MessageType::RESTORE:
      return Fields(body.getRestore());
    case MessageType::ROW_SYNC:
      return Fields(msg, body.getRowSync());
    case MessageType::ROW_SYNC_REPLY:
      return Fields(msg, body.getRowSyncReply());
  }
  return "";
}

}  // namespace

std::string Describe(const InMessage& msg) {
  auto root = msg.header();
  return fmt::format("{} #{} {} from {}:", KindName(root.getKind()), root.getRequestId(),
                     MessageTypeName(root.getBody().which()), msg.from().ToString()) +
         BodyFields(msg);
}

}  // namespace rigel::transport
