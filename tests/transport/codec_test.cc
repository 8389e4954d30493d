// The decoder against well-formed messages of every type and a corpus of
// malformed ones: truncated, lying counts, huge lengths, bad pointers,
// random bytes. Each bad input must come back as a reasoned error.
#include "transport/codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "cluster/wire/messages.h"
#include "ps/wire/messages.h"
#include "tests/transport/test_util.h"

namespace rigel::transport {
namespace {

using testing::AllTypes;
using testing::ExpectSample;
using testing::MakeSample;

const PeerId kFrom{Role::kWorker, 7};

struct Wire {
  std::vector<std::byte> header;
  std::vector<Buffer> frames;
};

// What a sender would put on the wire for `msg` as request #id.
Wire Encode(OutMessage msg, wire::Kind kind = wire::Kind::REQUEST, uint64_t id = 9) {
  msg.header().setKind(kind);
  msg.header().setRequestId(id);
  Wire w;
  w.header.resize(EncodedHeaderSize(msg));
  EncodeHeader(msg, w.header);
  w.frames = msg.TakeFrames();
  return w;
}

StatusOr<InMessage> Decode(const Wire& w, DropReason* reason, const Limits& limits = {}) {
  return DecodeMessage(kFrom, std::make_shared<const std::string>("tcp://127.0.0.1:1"), w.header,
                       w.frames, limits, reason);
}

DropReason ReasonOf(const Wire& w, const Limits& limits = {}) {
  DropReason reason;
  StatusOr<InMessage> m = Decode(w, &reason, limits);
  if (m.ok()) return DropReason::kNone;
  EXPECT_FALSE(m.status().message().empty());
  EXPECT_NE(reason, DropReason::kNone);
  return reason;
}

// Rewrites the header through a fresh builder so tests can edit decoded fields.
Wire Edited(OutMessage msg, const std::function<void(wire::Envelope::Builder)>& edit) {
  Wire w = Encode(std::move(msg));
  kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(w.header.data()),
                                        w.header.size() / 8);
  capnp::FlatArrayMessageReader reader(words);
  capnp::MallocMessageBuilder b;
  b.setRoot(reader.getRoot<wire::Envelope>());
  edit(b.getRoot<wire::Envelope>());
  auto flat = capnp::messageToFlatArray(b);
  w.header.assign(reinterpret_cast<const std::byte*>(flat.begin()),
                  reinterpret_cast<const std::byte*>(flat.end()));
  return w;
}

TEST(CodecTest, RoundTripsEveryMessageType) {
  for (uint64_t t : AllTypes()) {
    for (int seed : {0, 1, 6}) {
      SCOPED_TRACE(std::string(TypeName(t)) + " seed " + std::to_string(seed));
      OutMessage out = MakeSample(t, seed);
      ASSERT_TRUE(ValidateOutgoing(out, {}).ok());
      DropReason reason;
      StatusOr<InMessage> in = Decode(Encode(std::move(out)), &reason);
      ASSERT_TRUE(in.ok()) << in.status().ToString();
      EXPECT_EQ(reason, DropReason::kNone);
      EXPECT_EQ(in->from(), kFrom);
      EXPECT_EQ(in->request_id(), 9u);
      EXPECT_TRUE(in->is_request());
      EXPECT_EQ(in->reply_address(), "tcp://127.0.0.1:1");
      ExpectSample(*in, t, seed);
    }
  }
}

// What a transport puts on the wire: small leading frames packed into the
// first frame.
Wire EncodePacked(OutMessage msg, size_t* packed = nullptr, const Limits& limits = {}) {
  msg.header().setKind(wire::Kind::REQUEST);
  msg.header().setRequestId(9);
  Frame0 plan = PlanFrame0(msg, limits);
  Wire w;
  w.header.resize(plan.total_bytes);
  EncodeFrame0(msg, plan, w.header);
  w.frames = msg.TakeFrames();
  w.frames.erase(w.frames.begin(), w.frames.begin() + plan.packed);
  if (packed != nullptr) *packed = plan.packed;
  return w;
}

TEST(CodecTest, SmallFramesTravelPackedInTheHeaderFrame) {
  for (uint64_t t : AllTypes()) {
    SCOPED_TRACE(TypeName(t));
    size_t packed = 0;
    Wire w = EncodePacked(MakeSample(t, 3), &packed);
    EXPECT_TRUE(w.frames.empty());  // every sample frame is small
    DropReason reason;
    StatusOr<InMessage> in = Decode(w, &reason);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    EXPECT_EQ(in->num_frames(), packed);
    ExpectSample(*in, t, 3);
  }
}

TEST(CodecTest, OnlyALeadingRunOfSmallFramesIsPacked) {
  std::vector<Buffer> frames = {Buffer::FromVector(std::vector<uint8_t>(10, 1)),
                                Buffer::FromVector(std::vector<uint8_t>(kPackedFrameMaxBytes, 2)),
                                Buffer::FromVector(std::vector<uint8_t>(5000, 3)),
                                Buffer::FromVector(std::vector<uint8_t>(7, 4))};
  size_t packed = 0;
  Wire w = EncodePacked(MakeDataMessage(1, frames), &packed);
  EXPECT_EQ(packed, 2u);
  ASSERT_EQ(w.frames.size(), 2u);
  DropReason reason;
  StatusOr<InMessage> in = Decode(w, &reason);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ASSERT_EQ(in->num_frames(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(in->frame(i).size(), frames[i].size());
    EXPECT_EQ(std::memcmp(in->frame(i).data(), frames[i].data(), frames[i].size()), 0);
  }
  // Packing stops at kPackedMaxBytes in all, and within max_header_bytes.
  std::vector<Buffer> many(8, Buffer::FromVector(std::vector<uint8_t>(4000, 5)));
  EncodePacked(MakeDataMessage(2, many), &packed);
  EXPECT_EQ(packed, 4u);
  Limits tight;
  tight.max_header_bytes = 600;
  EncodePacked(MakeDataMessage(2, many), &packed, tight);
  EXPECT_EQ(packed, 0u);
}

TEST(CodecTest, PackedSizesMustFillTheHeaderFrame) {
  // A caller's own `packed` list is replaced by the transport's.
  OutMessage lying = MakeSample(TypeId<ps::wire::PushRequest>(), 2);
  lying.header().initPacked(3).set(0, 999);
  size_t packed = 0;
  Wire w = EncodePacked(std::move(lying), &packed);
  EXPECT_EQ(packed, 2u);
  DropReason reason;
  ASSERT_TRUE(Decode(w, &reason).ok());

  auto with_sizes = [&](std::vector<uint32_t> sizes, size_t area) {
    OutMessage m = MakeAckMessage();
    auto l = m.header().initPacked(static_cast<unsigned>(sizes.size()));
    for (size_t i = 0; i < sizes.size(); ++i) l.set(static_cast<unsigned>(i), sizes[i]);
    Wire x = Encode(std::move(m));
    x.header.resize(x.header.size() + area);
    return x;
  };
  EXPECT_EQ(ReasonOf(with_sizes({8}, 16)), DropReason::kMalformed);           // area too long
  EXPECT_EQ(ReasonOf(with_sizes({20}, 16)), DropReason::kMalformed);          // area too short
  EXPECT_EQ(ReasonOf(with_sizes({0xffffffffu}, 8)), DropReason::kMalformed);  // huge claim
  EXPECT_EQ(ReasonOf(with_sizes({8}, 8)),
            DropReason::kBadPayload);  // fits, but nobody refers to it
  Limits few;
  few.max_frames = 2;
  EXPECT_EQ(ReasonOf(with_sizes({8, 8, 8}, 24), few), DropReason::kOversized);
}

TEST(CodecTest, MisalignedFramesAreRealignedAndHeaderMayBeUnaligned) {
  Wire w = Encode(MakeSample(TypeId<ps::wire::PushRequest>(), 3));
  // Shift every frame (and the header) by one byte inside a bigger allocation.
  std::vector<Buffer> shifted;
  for (const Buffer& f : w.frames) {
    Buffer big = Buffer::Copy(std::vector<std::byte>(f.size() + 1).data(), f.size() + 1);
    std::memcpy(const_cast<std::byte*>(big.data()) + 1, f.data(), f.size());
    shifted.push_back(big.Slice(1, f.size()));
  }
  std::vector<std::byte> header(w.header.size() + 1);
  std::memcpy(header.data() + 1, w.header.data(), w.header.size());
  DropReason reason;
  StatusOr<InMessage> in =
      DecodeMessage(kFrom, nullptr, {header.data() + 1, w.header.size()}, shifted, {}, &reason);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ExpectSample(*in, TypeId<ps::wire::PushRequest>(), 3);
}

TEST(CodecTest, EnvelopeKindAndRequestIdMustAgree) {
  EXPECT_EQ(ReasonOf(Encode(MakeAckMessage(), wire::Kind::ONE_WAY, 5)), DropReason::kMalformed);
  EXPECT_EQ(ReasonOf(Encode(MakeAckMessage(), wire::Kind::REQUEST, 0)), DropReason::kMalformed);
  EXPECT_EQ(ReasonOf(Encode(MakeAckMessage(), wire::Kind::RESPONSE, 0)), DropReason::kMalformed);
  EXPECT_EQ(ReasonOf(Encode(MakeAckMessage(), wire::Kind::ONE_WAY, 0)), DropReason::kNone);
  EXPECT_EQ(
      ReasonOf(Edited(MakeAckMessage(), [](auto e) { e.setKind(static_cast<wire::Kind>(9)); })),
      DropReason::kMalformed);
}

TEST(CodecTest, OtherWireVersionIsDropped) {
  Wire w = Edited(MakeAckMessage(), [](auto e) { e.setVersion(wire::WIRE_VERSION + 1); });
  EXPECT_EQ(ReasonOf(w), DropReason::kVersion);
}

TEST(CodecTest, UnknownBodyIsDropped) {
  // A type id nobody registered (a newer sender's, or noise).
  Wire w = Edited(MakeAckMessage(), [](auto e) { e.setType(0x8badf00d8badf00dULL); });
  DropReason reason;
  auto in = Decode(w, &reason);
  EXPECT_EQ(reason, DropReason::kUnknownType);
  EXPECT_NE(in.status().message().find("unknown type 0x8badf00d8badf00d"), std::string::npos)
      << in.status().ToString();
}

TEST(CodecTest, ABodyOfAnotherTypeThanItsEnvelopeSaysIsRejected) {
  // A PullRequest's body read as a PushRequest: its KeysRef is where the
  // schema wants one, but the rows it names do not exist.
  Wire w = Edited(MakeSample(TypeId<ps::wire::PullRequest>(), 1),
                  [](auto e) { e.setType(TypeId<ps::wire::PushRequest>()); });
  EXPECT_EQ(ReasonOf(w), DropReason::kBadPayload);
}

TEST(CodecTest, TruncatedHeadersAreRejectedAtEveryLength) {
  for (uint64_t t : AllTypes()) {
    Wire w = Encode(MakeSample(t, 2));
    for (size_t len = 0; len < w.header.size(); ++len) {
      Wire cut = w;
      cut.header.resize(len);
      DropReason r = ReasonOf(cut);
      EXPECT_TRUE(r == DropReason::kMalformed)
          << TypeName(t) << " cut at " << len << ": " << DropReasonName(r);
    }
  }
}

TEST(CodecTest, TrailingBytesAfterTheMessageAreRejected) {
  Wire w = Encode(MakeAckMessage());
  w.header.resize(w.header.size() + 8);
  EXPECT_EQ(ReasonOf(w), DropReason::kMalformed);
}

TEST(CodecTest, LyingCountsAreRejected) {
  auto pull = [](std::function<void(wire::Envelope::Builder)> edit) {
    return Edited(MakeSample(TypeId<ps::wire::PullRequest>(), 1), edit);
  };
  auto keys = [](wire::Envelope::Builder e) {
    return e.getBody().getAs<ps::wire::PullRequest>().getKeys();
  };
  EXPECT_EQ(ReasonOf(pull([&](auto e) { keys(e).setCount(keys(e).getCount() + 1); })),
            DropReason::kBadPayload);
  EXPECT_EQ(ReasonOf(pull([&](auto e) { keys(e).setCount(uint64_t{1} << 61); })),
            DropReason::kBadPayload);  // count * 8 overflows
  EXPECT_EQ(ReasonOf(pull([&](auto e) { keys(e).setFrame(1); })), DropReason::kBadPayload);
  EXPECT_EQ(ReasonOf(pull([&](auto e) { keys(e).setFrame(0xffffffff); })), DropReason::kBadPayload);

  auto push = [](std::function<void(wire::Envelope::Builder)> edit) {
    return Edited(MakeSample(TypeId<ps::wire::PushRequest>(), 1), edit);
  };
  auto rows = [](wire::Envelope::Builder e) {
    return e.getBody().getAs<ps::wire::PushRequest>().getRows();
  };
  EXPECT_EQ(ReasonOf(push([&](auto e) { rows(e).setWidth(0); })), DropReason::kBadPayload);
  EXPECT_EQ(ReasonOf(push([&](auto e) { rows(e).setWidth(0xffffffff); })), DropReason::kBadPayload);
  EXPECT_EQ(ReasonOf(push([&](auto e) { rows(e).setRows(~uint64_t{0}); })),
            DropReason::kBadPayload);  // rows * width overflows
  EXPECT_EQ(ReasonOf(push([&](auto e) { rows(e).setFrame(0); })),
            DropReason::kBadPayload);  // frame named twice, frame 1 never
  // Rows and width swapped: same byte count, wrong row count for the keys.
  EXPECT_EQ(ReasonOf(push([&](auto e) {
              uint64_t r = rows(e).getRows();
              rows(e).setRows(rows(e).getWidth());
              rows(e).setWidth(static_cast<uint32_t>(r));
            })),
            DropReason::kBadPayload);
  EXPECT_EQ(ReasonOf(push([&](auto e) {
              e.getBody().template getAs<ps::wire::PushRequest>().setRule(
                  static_cast<ps::wire::UpdateRule>(7));
            })),
            DropReason::kBadPayload);

  Wire block = Edited(MakeSample(TypeId<worker::wire::BlockHandoff>(), 1), [](auto e) {
    e.getBody().template getAs<worker::wire::BlockHandoff>().setRowEnd(1);
  });
  EXPECT_EQ(ReasonOf(block), DropReason::kBadPayload);
  Wire data = Edited(MakeSample(TypeId<wire::Data>(), 1), [](auto e) {
    e.getBody().template getAs<transport::wire::Data>().getFrames()[0].setSize(1u << 30);
  });
  EXPECT_EQ(ReasonOf(data), DropReason::kBadPayload);
  Wire reg = Edited(MakeSample(TypeId<cluster::wire::Register>(), 1), [](auto e) {
    e.getBody().template getAs<cluster::wire::Register>().setRole(static_cast<wire::Role>(42));
  });
  EXPECT_EQ(ReasonOf(reg), DropReason::kBadPayload);
}

// The decoder knows no body: it checks them by their schemas, wherever an
// enum or a Ref sits (inside a list of structs too).
TEST(CodecTest, UnknownEnumValuesAnywhereInTheBodyAreRejected) {
  Wire peer = Edited(MakeSample(TypeId<cluster::wire::RegisterReply>(), 1), [](auto e) {
    e.getBody().template getAs<cluster::wire::RegisterReply>().getPeers()[1].setRole(
        static_cast<wire::Role>(9));
  });
  DropReason reason;
  auto in = Decode(peer, &reason);
  EXPECT_EQ(reason, DropReason::kBadPayload);
  EXPECT_NE(in.status().message().find("PeerInfo.role: unknown value 9"), std::string::npos)
      << in.status().ToString();
  Wire step = Edited(MakeSample(TypeId<cluster::wire::Step>(), 1), [](auto e) {
    e.getBody().template getAs<cluster::wire::Step>().setCommand(
        static_cast<cluster::wire::StepCommand>(3));
  });
  EXPECT_EQ(ReasonOf(step), DropReason::kBadPayload);
  // A Ref in a list of sections names a frame that does not exist.
  Wire sync = Edited(MakeSample(TypeId<ps::wire::RowSync>(), 1), [](auto e) {
    e.getBody().template getAs<ps::wire::RowSync>().getSections()[0].getDropKeys().setFrame(40);
  });
  in = Decode(sync, &reason);
  EXPECT_EQ(reason, DropReason::kBadPayload);
  EXPECT_NE(in.status().message().find("RowSyncSection.dropKeys: frame 40 does not exist"),
            std::string::npos)
      << in.status().ToString();
}

// A body pointer left null reads as a body of defaults; the sender's checks
// agree with the receiver's (transport_fuzz found them disagreeing).
TEST(CodecTest, ANullBodyIsABodyOfDefaultsOnBothSides) {
  Wire w =
      Edited(MakeSample(TypeId<cluster::wire::Step>(), 1), [](auto e) { e.getBody().clear(); });
  DropReason reason;
  auto in = Decode(w, &reason);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->Body<cluster::wire::Step>().getStep(), 0u);
  OutMessage again;
  ASSERT_TRUE(again.SetHeader(in->header()).ok());
  EXPECT_TRUE(ValidateOutgoing(again, Limits{}).ok());
  OutMessage none;  // never given a body
  EXPECT_FALSE(ValidateOutgoing(none, Limits{}).ok());
}

TEST(CodecTest, PayloadFramesMustMatchTheBody) {
  Wire extra = Encode(MakeSample(TypeId<ps::wire::PullRequest>(), 1));
  extra.frames.push_back(Buffer::FromVector(std::vector<uint8_t>(8)));
  EXPECT_EQ(ReasonOf(extra), DropReason::kBadPayload);  // a frame nobody refers to

  Wire missing = Encode(MakeSample(TypeId<ps::wire::PushRequest>(), 1));
  missing.frames.pop_back();
  EXPECT_EQ(ReasonOf(missing), DropReason::kBadPayload);

  Wire truncated = Encode(MakeSample(TypeId<ps::wire::PullReply>(), 1));
  truncated.frames[0] = truncated.frames[0].Slice(0, truncated.frames[0].size() - 4);
  EXPECT_EQ(ReasonOf(truncated), DropReason::kBadPayload);

  Wire unsorted = Encode(MakeSample(TypeId<ps::wire::PullRequest>(), 1));
  std::vector<uint64_t> keys = {5, 3, 9, 10, 11, 12};
  unsorted.frames[0] = Buffer::FromVector(keys);
  EXPECT_EQ(ReasonOf(unsorted), DropReason::kBadPayload);
}

TEST(CodecTest, SizeLimitsAreEnforced) {
  Limits small;
  small.max_message_bytes = 200;
  Wire w = Encode(MakeSample(TypeId<ps::wire::PullReply>(), 4));
  w.frames[0] = Buffer::FromVector(std::vector<float>(1000));
  EXPECT_EQ(ReasonOf(w, small), DropReason::kOversized);

  Limits few;
  few.max_frames = 1;
  EXPECT_EQ(ReasonOf(Encode(MakeSample(TypeId<ps::wire::PushRequest>(), 1)), few),
            DropReason::kOversized);

  Limits tiny_header;
  tiny_header.max_header_bytes = 32;
  EXPECT_EQ(ReasonOf(Encode(MakeSample(TypeId<cluster::wire::Plan>(), 1)), tiny_header),
            DropReason::kOversized);

  // A huge text in the header within the header limit but over the read budget.
  OutMessage plan;
  plan.InitBody<cluster::wire::Plan>().initJob().setProgram(std::string(1 << 16, 'x'));
  Limits budget;
  budget.traversal_limit_words = 100;
  EXPECT_EQ(ReasonOf(Encode(std::move(plan)), budget), DropReason::kMalformed);
}

TEST(CodecTest, DeepNestingIsRejected) {
  Limits shallow;
  shallow.nesting_limit = 2;  // Envelope -> RegisterReply -> peers list -> PeerInfo
  EXPECT_EQ(ReasonOf(Encode(MakeSample(TypeId<cluster::wire::RegisterReply>(), 1)), shallow),
            DropReason::kMalformed);
}

TEST(CodecTest, PointersOfTheWrongKindAreRejected) {
  // Replace each body's struct pointer (the Envelope's pointer slot 0) by a
  // List(UInt8): bounds are fine, the kind is not. Found by the fuzzer for
  // bodies without pointer fields of their own.
  for (uint64_t t : AllTypes()) {
    OutMessage m = MakeSample(t, 1);
    capnp::toAny(m.header()).getPointerSection()[0].initAsAnyList(capnp::ElementSize::BYTE, 40);
    DropReason reason = ReasonOf(Encode(std::move(m)));
    EXPECT_EQ(reason, DropReason::kMalformed) << TypeName(t);
  }
}

// Cap'n Proto's amplification attack: many pointers to the same big text make
// a small message very expensive to read. Bounds are fine; the read budget
// (twice the header's size during validation) is not.
TEST(CodecTest, AliasedPointersAreRejected) {
  capnp::MallocMessageBuilder b(1 << 16);  // one segment: relative pointers only
  auto root = b.initRoot<wire::Envelope>();
  root.setVersion(wire::WIRE_VERSION);
  root.setType(TypeId<cluster::wire::Metrics>());
  auto entries = root.getBody().initAs<cluster::wire::Metrics>().initEntries(100);
  entries[0].setName(std::string(4000, 'A'));
  for (unsigned i = 1; i < 100; ++i) entries[i].setName("b");
  auto flat = capnp::messageToFlatArray(b);
  std::vector<std::byte> header(reinterpret_cast<const std::byte*>(flat.begin()),
                                reinterpret_cast<const std::byte*>(flat.end()));
  DropReason reason;
  ASSERT_TRUE(DecodeMessage(kFrom, nullptr, header, {}, {}, &reason).ok());  // as built: fine
  // Re-point every short name (a byte list of 2) at the big one's text.
  int64_t target = -1;
  int aliased = 0;
  for (size_t i = 8; i + 8 <= header.size(); i += 8) {  // one segment: 8-byte table
    uint64_t word;
    std::memcpy(&word, header.data() + i, 8);
    if ((word & 3) != 1 || ((word >> 32) & 7) != 2) continue;  // not a byte list
    int64_t offset = static_cast<int32_t>(word & 0xffffffffu) >> 2;
    if ((word >> 35) == 4001 && target < 0) {
      target = int64_t(i) + 8 + offset * 8;
    } else if ((word >> 35) == 2 && target >= 0) {
      int64_t to = (target - int64_t(i) - 8) / 8;
      word = (uint64_t{4001} << 35) | (uint64_t{2} << 32) | (uint32_t(to << 2) | 1u);
      std::memcpy(header.data() + i, &word, 8);
      ++aliased;
    }
  }
  ASSERT_EQ(aliased, 99);
  StatusOr<InMessage> in = DecodeMessage(kFrom, nullptr, header, {}, {}, &reason);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(reason, DropReason::kMalformed);
  EXPECT_NE(in.status().message().find("traversal limit"), std::string::npos)
      << in.status().message();
}

TEST(CodecTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(42);
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    size_t n = 8 * (rng() % 40);
    std::vector<std::byte> header(n);
    for (auto& b : header) b = std::byte(rng() & 0xff);
    if (i % 3 == 0 && n >= 8) {
      // A plausible segment table: one segment of the remaining words.
      uint32_t t[2] = {0, static_cast<uint32_t>(n / 8 - 1)};
      std::memcpy(header.data(), t, 8);
    }
    std::vector<Buffer> frames;
    for (size_t f = rng() % 3; f > 0; --f) {
      frames.push_back(Buffer::FromVector(std::vector<uint8_t>(rng() % 64, 7)));
    }
    DropReason reason;
    auto in = DecodeMessage(kFrom, nullptr, header, frames, {}, &reason);
    if (in.ok()) {
      ++accepted;
      EXPECT_FALSE(Describe(*in).empty());
    } else {
      EXPECT_NE(reason, DropReason::kNone);
    }
  }
  EXPECT_LT(accepted, 300);  // random bytes are almost never a valid message
}

TEST(CodecTest, OutgoingValidationCatchesMistakes) {
  OutMessage pull;
  pull.InitBody<ps::wire::PullRequest>().setParam(1);  // keys never set: no frame 0
  EXPECT_EQ(ValidateOutgoing(pull, {}).code(), StatusCode::kInvalidArgument);

  OutMessage rows;
  auto r = rows.InitBody<ps::wire::PullReply>();
  rows.SetRows(r.initRows(), Buffer::FromVector(std::vector<float>(10)), 3);  // 10 % 3 != 0
  EXPECT_EQ(ValidateOutgoing(rows, {}).code(), StatusCode::kInvalidArgument);

  OutMessage unsorted;
  auto p = unsorted.InitBody<ps::wire::PullRequest>();
  unsorted.SetKeys(p.initKeys(), Buffer::FromVector(std::vector<uint64_t>{2, 2}));
  Status st = ValidateOutgoing(unsorted, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("ascending"), std::string::npos) << st.message();

  Limits small;
  small.max_message_bytes = 64;
  OutMessage big = MakeDataMessage(1, {Buffer::FromVector(std::vector<uint8_t>(100))});
  EXPECT_EQ(ValidateOutgoing(big, small).code(), StatusCode::kInvalidArgument);
}

TEST(CodecTest, ErrorBodiesBecomeStatuses) {
  Wire w = Encode(MakeErrorMessage(NotFound("row 3")), wire::Kind::RESPONSE, 4);
  DropReason reason;
  auto in = Decode(w, &reason);
  ASSERT_TRUE(in.ok());
  Status st = ErrorToStatus(*in);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "worker:7: row 3");

  Wire odd = Edited(MakeErrorMessage(NotFound("x")), [](auto e) {
    e.getBody().template getAs<transport::wire::Error>().setCode(999);
  });
  auto in2 = Decode(odd, &reason);
  ASSERT_TRUE(in2.ok());
  EXPECT_EQ(ErrorToStatus(*in2).code(), StatusCode::kInternal);
}

TEST(CodecTest, ReceivedFramesOutliveTheMessage) {
  Buffer kept;
  {
    DropReason reason;
    auto in = Decode(Encode(MakeSample(TypeId<ps::wire::PullReply>(), 2)), &reason);
    ASSERT_TRUE(in.ok());
    kept = in->frame(0);
  }
  auto want = testing::SampleRows(2, (5 + 2) * (3 + 2));
  ASSERT_EQ(kept.size(), want.size() * 4);
  EXPECT_EQ(std::memcmp(kept.data(), want.data(), kept.size()), 0);
}

// The committed fuzzer seeds (tests/fuzz/seeds/transport/, written by
// transport_fuzz_seeds) are of this build's wire format: a seed every message
// rejects at its version check only exercises the first few lines of the
// decoder. One plain, packed and request seed per body type, each decoding.
TEST(CodecTest, FuzzSeedsDecode) {
  const std::filesystem::path dir =
      std::filesystem::path(RIGEL_SOURCE_DIR) / "tests/fuzz/seeds/transport";
  for (uint64_t t : AllTypes()) {
    for (const char* suffix : {"", "-packed", "-request"}) {
      const std::string name = TypeName(t) + suffix;
      SCOPED_TRACE(name + ": regenerate with build/bin/transport_fuzz_seeds " + dir.string());
      std::ifstream f(dir / name, std::ios::binary);
      ASSERT_TRUE(f) << "no seed";
      std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      // The fuzzer's layout (tests/fuzz/transport_fuzz.cc), without its mutations.
      ASSERT_FALSE(bytes.empty());
      const size_t n = static_cast<uint8_t>(bytes[0]) & 7;
      size_t pos = 1 + 2 * n, total = 0;
      ASSERT_LE(pos, bytes.size());
      std::vector<size_t> lengths;
      for (size_t i = 0; i < n; ++i) {
        lengths.push_back(size_t{static_cast<uint8_t>(bytes[1 + 2 * i])} |
                          size_t{static_cast<uint8_t>(bytes[2 + 2 * i])} << 8);
        total += lengths.back();
      }
      ASSERT_LE(pos + total, bytes.size());
      Wire w;
      const size_t header_size = bytes.size() - pos - total;
      w.header.resize(header_size);
      std::memcpy(w.header.data(), bytes.data() + pos, header_size);
      size_t at = pos + header_size;
      for (size_t l : lengths) {
        w.frames.push_back(Buffer::Copy(bytes.data() + at, l));
        at += l;
      }
      DropReason reason;
      auto in = Decode(w, &reason);
      ASSERT_TRUE(in.ok()) << in.status().ToString();
      EXPECT_EQ(in->type(), t);
    }
  }
}

}  // namespace
}  // namespace rigel::transport
