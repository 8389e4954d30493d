// The typed task (worker/task.h): what the scheduler fills in
// (cluster/wire/control.capnp's Task.run) reads back field for field, and a
// malformed task is InvalidArgument naming the field, never an exception.
#include "worker/task.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

namespace rigel::worker {
namespace {

// A well-formed task: loop 1, run 3 of a 2-D schedule on 2 workers over a
// space sized at launch, reading driver values 4 (int) and 7 (float).
void Fill(cluster::wire::Task::Builder t) {
  t.setLoop(1);
  t.setLaunch(3);
  auto run = t.initRun();
  auto cuts = run.initCuts();
  cuts.setSchedule(cluster::wire::ScheduleKind::CONFLICT_FREE2D);
  cuts.setWorkers(2);
  auto axes = cuts.initAxes(2);
  axes[0].setDim(0);
  auto b0 = axes[0].initBounds(3);
  b0.set(0, 0);
  b0.set(1, 5);
  b0.set(2, 10);
  axes[1].setDim(1);
  auto b1 = axes[1].initBounds(3);
  b1.set(0, 0);
  b1.set(1, 2);
  b1.set(2, 4);
  auto outer = run.initOuter(2);
  outer[0].setId(4);
  outer[0].setIsInt(true);
  outer[0].setI(-9);
  outer[1].setId(7);
  outer[1].setF(0.25);
  run.setSized(true);
  run.setSpaceN(10);
  run.setSpaceM(4);
}

// ReadTask of a task filled by Fill, then changed by `edit`.
StatusOr<TaskSpec> ReadEdited(const std::function<void(cluster::wire::Task::Builder)>& edit) {
  capnp::MallocMessageBuilder m;
  auto t = m.initRoot<cluster::wire::Task>();
  Fill(t);
  edit(t);
  return ReadTask(t.asReader());
}

void ExpectRefused(const StatusOr<TaskSpec>& s, const std::string& field) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().rfind(field, 0), 0u) << s.status().message();
}

TEST(ReadTask, ReadsEveryField) {
  auto s = ReadEdited([](cluster::wire::Task::Builder) {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->loop, 1);
  EXPECT_EQ(s->launch, 3u);
  EXPECT_EQ(s->cuts.kind, analysis::ScheduleKind::kConflictFree2D);
  EXPECT_EQ(s->cuts.workers, 2);
  ASSERT_EQ(s->cuts.axes.size(), 2u);
  EXPECT_EQ(s->cuts.axes[0].dim, 0);
  EXPECT_EQ(s->cuts.axes[0].bounds, (std::vector<int64_t>{0, 5, 10}));
  EXPECT_EQ(s->cuts.axes[1].dim, 1);
  EXPECT_EQ(s->cuts.axes[1].bounds, (std::vector<int64_t>{0, 2, 4}));
  ASSERT_EQ(s->outer.size(), 2u);
  EXPECT_TRUE(s->outer.at(4).is_int);
  EXPECT_EQ(s->outer.at(4).i, -9);
  EXPECT_FALSE(s->outer.at(7).is_int);
  EXPECT_EQ(s->outer.at(7).f, 0.25);
  EXPECT_TRUE(s->sized);
  EXPECT_EQ(s->space_n, 10);
  EXPECT_EQ(s->space_m, 4);
}

TEST(ReadTask, AnUnsizedSpaceIgnoresTheSizeFields) {
  auto s = ReadEdited([](cluster::wire::Task::Builder t) {
    t.getRun().setSized(false);
    t.getRun().setSpaceN(-1);
  });
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->sized);
}

TEST(ReadTask, MalformedFieldsAreNamed) {
  ExpectRefused(ReadEdited([](cluster::wire::Task::Builder t) { t.disownRun(); }),
                "task.run: missing");
  ExpectRefused(ReadEdited([](cluster::wire::Task::Builder t) { t.getRun().disownCuts(); }),
                "task.run.cuts: missing");
  ExpectRefused(ReadEdited([](cluster::wire::Task::Builder t) {
                  t.getRun().getCuts().setSchedule(static_cast<cluster::wire::ScheduleKind>(9));
                }),
                "task.run.cuts.schedule: unknown schedule 9");
  ExpectRefused(
      ReadEdited([](cluster::wire::Task::Builder t) { t.getRun().getCuts().setWorkers(0); }),
      "task.run.cuts.workers: 0 is outside 1..65536");
  ExpectRefused(
      ReadEdited([](cluster::wire::Task::Builder t) { t.getRun().getOuter()[1].setId(4); }),
      "task.run.outer[1].id: driver value 4 given twice");
  ExpectRefused(ReadEdited([](cluster::wire::Task::Builder t) { t.getRun().setSpaceM(-2); }),
                "task.run.spaceM: -2 is negative");
}

TEST(ReadTask, ABrokenPointerIsAStatusNotAnException) {
  capnp::MallocMessageBuilder m;
  Fill(m.initRoot<cluster::wire::Task>());
  kj::Array<capnp::word> words = capnp::messageToFlatArray(m);
  // Word 0 is the segment table, word 1 the root pointer; the root struct's
  // two data words follow, then its pointer: run. Point it far away, into a
  // segment the message does not have.
  ASSERT_GT(words.size(), 4u);
  uint64_t far = (uint64_t{99} << 32) | 2;  // far pointer to segment 99
  std::memcpy(reinterpret_cast<unsigned char*>(words.begin() + 4), &far, sizeof far);
  capnp::FlatArrayMessageReader reader(words);
  StatusOr<TaskSpec> s = InvalidArgument("not read");
  EXPECT_NO_THROW(s = ReadTask(reader.getRoot<cluster::wire::Task>()));
  ExpectRefused(s, "task: malformed");
}

}  // namespace
}  // namespace rigel::worker
