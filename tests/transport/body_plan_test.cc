// The decoder's generic checks (transport/internal/body_plan.h) on shapes
// the layers' schemas do not use yet: a Ref in the active union member is
// checked and one in an inactive member is not read, fields of a group are
// checked, Refs in a list of lists are found, enum values in a list and an
// enum with a non-zero default are checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/transport/wire/shapes.capnp.h"
#include "transport/codec.h"
#include "transport/message.h"

namespace rigel::transport {
namespace {

using test_wire::Color;
using test_wire::Shapes;

const PeerId kFrom{Role::kWorker, 3};

// Encodes `m` as a one-way message and decodes it.
StatusOr<InMessage> RoundTrip(OutMessage m, DropReason* reason) {
  m.header().setKind(wire::Kind::ONE_WAY);
  std::vector<std::byte> header(EncodedHeaderSize(m));
  EncodeHeader(m, header);
  return DecodeMessage(kFrom, nullptr, header, m.frames(), Limits{}, reason);
}

Buffer Keys(std::vector<uint64_t> k) { return Buffer::FromVector(std::move(k)); }

// A body whose group carries its one payload frame (bytes), nothing else.
OutMessage Plain() {
  OutMessage m;
  auto s = m.InitBody<Shapes>();
  m.SetBytes(s.getGroup().initBytes(), Buffer::FromVector(std::vector<uint8_t>{1, 2, 3}));
  return m;
}

TEST(BodyPlanTest, TheActiveUnionMembersRefIsCheckedAndAnInactiveOneIsNot) {
  DropReason reason;
  {
    OutMessage m = Plain();
    auto s = m.header().getBody().getAs<Shapes>();
    m.SetKeys(s.getChoice().initKeys(), Keys({1, 5, 9}));
    auto in = RoundTrip(std::move(m), &reason);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    EXPECT_EQ(in->Keys(in->Body<Shapes>().getChoice().getKeys()).size(), 3u);
  }
  {
    OutMessage m = Plain();
    auto s = m.header().getBody().getAs<Shapes>();
    m.SetKeys(s.getChoice().initKeys(), Keys({9, 5}));  // not ascending
    EXPECT_FALSE(RoundTrip(std::move(m), &reason).ok());
    EXPECT_EQ(reason, DropReason::kBadPayload);
  }
  {
    // The union's `none` is active: the pointer the `keys` member left
    // behind is not read (its Ref names frame 7, which does not exist).
    OutMessage m = Plain();
    auto s = m.header().getBody().getAs<Shapes>();
    s.getChoice().initKeys().setFrame(7);
    s.getChoice().setNone();
    auto in = RoundTrip(std::move(m), &reason);
    EXPECT_TRUE(in.ok()) << in.status().ToString();
  }
}

TEST(BodyPlanTest, AGroupsFieldsAreChecked) {
  DropReason reason;
  OutMessage m = Plain();
  m.header().getBody().getAs<Shapes>().getGroup().setColor(static_cast<Color>(5));
  auto in = RoundTrip(std::move(m), &reason);
  EXPECT_EQ(reason, DropReason::kBadPayload);
  EXPECT_NE(in.status().message().find("color: unknown value 5"), std::string::npos)
      << in.status().ToString();
  // A Ref left unset is still checked: it names frame 0 with 0 bytes, and
  // frame 0 has 1.
  OutMessage bare;
  bare.InitBody<Shapes>();
  bare.AddFrame(Buffer::FromVector(std::vector<uint8_t>{1}));
  EXPECT_FALSE(RoundTrip(std::move(bare), &reason).ok());
  EXPECT_EQ(reason, DropReason::kBadPayload);
}

TEST(BodyPlanTest, RefsInAListOfListsAreFoundAndChecked) {
  DropReason reason;
  OutMessage m = Plain();
  auto outer = m.header().getBody().getAs<Shapes>().initNested(2);
  auto second = outer.init(1, 2);
  m.SetKeys(second[0], Keys({2, 4}));
  m.SetKeys(second[1], Keys({3}));
  auto in = RoundTrip(m.Clone(), &reason);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  // The same Ref twice: a frame named twice.
  second[1].setFrame(second[0].getFrame());
  EXPECT_FALSE(RoundTrip(std::move(m), &reason).ok());
  EXPECT_EQ(reason, DropReason::kBadPayload);
}

TEST(BodyPlanTest, EnumsInAListAndEnumsWithADefaultAreChecked) {
  DropReason reason;
  {
    OutMessage m = Plain();
    auto colors = m.header().getBody().getAs<Shapes>().initColors(3);
    colors.set(2, static_cast<Color>(2));
    EXPECT_FALSE(RoundTrip(std::move(m), &reason).ok());
    EXPECT_EQ(reason, DropReason::kBadPayload);
  }
  {
    // Stored XOR the default: red (0) is stored as 1, and 2 would be 3.
    OutMessage m = Plain();
    m.header().getBody().getAs<Shapes>().setDefaultGreen(Color::RED);
    auto in = RoundTrip(m.Clone(), &reason);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    EXPECT_EQ(in->Body<Shapes>().getDefaultGreen(), Color::RED);
    m.header().getBody().getAs<Shapes>().setDefaultGreen(static_cast<Color>(2));
    EXPECT_FALSE(RoundTrip(std::move(m), &reason).ok());
    EXPECT_EQ(reason, DropReason::kBadPayload);
  }
}

}  // namespace
}  // namespace rigel::transport
