// Checkpoint points of the serial executor (DriverState, State, Restore): a
// run restored at any point between two top-level loop iterations, with the
// parameters it had there, prints and computes exactly what the whole run
// did from that point on; quiet_prints and print_log behave as the launcher
// relies on when it restarts a job.
#include <gtest/gtest.h>

#include <sstream>

#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::exec {
namespace {

// rand() (the launch counts), an accumulator, driver variables of both types,
// and a second top-level loop after the first.
constexpr const char* kProgram = R"(
const N = 5
param W: f32[8] = normal(0, 1, seed=3)
accum s: f32
var total = 0.5
var steps = 0
for ep in 0..N {
  s = 0
  parallel for i in range(8) {
    W[i] = W[i] * 0.9 + rand() * 0.1
    s += W[i]
  }
  total = total + s
  steps = steps + 1
  print("ep", ep, s, total, steps)
}
for k in 0..3 {
  s = 0
  parallel for i in range(8) { s += W[i] * k }
  print("k", k, s)
}
)";

struct Point {
  DriverState state;
  std::vector<float> w;
};

// The index of the first top-level `for` among the driver's statements.
int64_t FirstFor(const ir::Program& p) {
  for (size_t k = 0; k < p.driver.size(); ++k) {
    if (p.driver[k].kind == ir::DStmt::kFor) return static_cast<int64_t>(k);
  }
  return -1;
}

std::unique_ptr<ir::Program> Compile() {
  auto p = frontend::CompileText(kProgram, testing::TempDir() + "/resume.rgl", {});
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::make_unique<ir::Program>(std::move(p).value());
}

TEST(Resume, EveryCheckpointPointGoesOnExactlyAsTheWholeRun) {
  auto prog = Compile();
  std::ostringstream out;
  std::vector<Point> points;
  SerialExecutor* running = nullptr;
  ExecutorOptions o;
  o.seed = 11;
  o.out = &out;
  o.at_checkpoint_point = [&] {
    points.push_back({running->State(), running->param(0)});
    return Status::Ok();
  };
  auto ex = SerialExecutor::Create(*prog, o);
  ASSERT_TRUE(ex.ok());
  running = ex->get();
  ASSERT_TRUE((*ex)->Run().ok());
  const std::string whole = out.str();
  const std::vector<float> final_w = (*ex)->param(0);
  ASSERT_EQ(points.size(), 8u);  // 5 + 3 iterations of top-level loops

  for (size_t k = 0; k < points.size(); ++k) {
    std::ostringstream rest;
    ExecutorOptions ro;
    ro.seed = 11;
    ro.out = &rest;
    auto again = SerialExecutor::Create(*prog, ro);
    ASSERT_TRUE(again.ok());
    (*again)->mutable_param(0) = points[k].w;
    ASSERT_TRUE((*again)->Restore(points[k].state).ok());
    ASSERT_TRUE((*again)->Run().ok()) << k;
    // The lines after the point, as the whole run printed them.
    size_t pos = 0;
    for (int64_t l = 0; l < points[k].state.prints; ++l) pos = whole.find('\n', pos) + 1;
    EXPECT_EQ(rest.str(), whole.substr(pos)) << "resumed at point " << k;
    EXPECT_EQ((*again)->param(0), final_w) << "resumed at point " << k;
  }
}

TEST(Resume, QuietPrintsAreNotWrittenTwiceAndThePrintLogHoldsWhatWas) {
  auto prog = Compile();
  std::ostringstream first, log;
  ExecutorOptions o;
  o.seed = 11;
  o.out = &first;
  o.print_log = [&log](const std::string& line) {
    log << line << "\n";
    return Status::Ok();
  };
  DriverState at2;
  std::vector<float> w2;
  SerialExecutor* running = nullptr;
  o.at_checkpoint_point = [&] {
    if (running->State().next == 2 && running->State().stmt == FirstFor(*prog)) {
      at2 = running->State();
      w2 = running->param(0);
    }
    return Status::Ok();
  };
  auto ex = SerialExecutor::Create(*prog, o);
  ASSERT_TRUE(ex.ok());
  running = ex->get();
  ASSERT_TRUE((*ex)->Run().ok());
  EXPECT_EQ(log.str(), first.str());
  ASSERT_EQ(at2.prints, 2);
  // A restart from the point after ep 1 of a run that had printed 4 lines
  // prints from the 5th on.
  std::ostringstream again_out;
  ExecutorOptions ro;
  ro.seed = 11;
  ro.out = &again_out;
  ro.quiet_prints = 4;
  auto again = SerialExecutor::Create(*prog, ro);
  ASSERT_TRUE(again.ok());
  (*again)->mutable_param(0) = w2;
  ASSERT_TRUE((*again)->Restore(at2).ok());
  ASSERT_TRUE((*again)->Run().ok());
  size_t pos = 0;
  for (int l = 0; l < 4; ++l) pos = first.str().find('\n', pos) + 1;
  EXPECT_EQ(again_out.str(), first.str().substr(pos));
}

TEST(Resume, AStateOfAnotherProgramIsRefused) {
  auto prog = Compile();
  ExecutorOptions o;
  std::ostringstream out;
  o.out = &out;
  auto ex = SerialExecutor::Create(*prog, o);
  ASSERT_TRUE(ex.ok());
  DriverState st = (*ex)->State();
  st.stmt = FirstFor(*prog);
  DriverState fewer = st;
  fewer.slots.pop_back();
  Status s = (*ex)->Restore(fewer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("variables"), std::string::npos) << s.message();
  DriverState not_a_loop = st;
  not_a_loop.stmt = 0;  // `var total = 0.5`
  s = (*ex)->Restore(not_a_loop);
  EXPECT_NE(s.message().find("not a top-level for loop"), std::string::npos) << s.message();
  EXPECT_TRUE((*ex)->Restore(st).ok());
}

// A loop that writes, a test loop that reads, a writing loop under an `if`
// (so the parameters settle only after it), then a second top-level loop
// that only reads (they settle before its body).
constexpr const char* kSettleProgram = R"(
param W: f32[8] = normal(0, 1, seed=3)
accum s: f32
for ep in 0..4 {
  parallel for i in range(8) { W[i] = W[i] * 0.5 + 1 }
  s = 0
  parallel for i in range(8) { s += W[i] }
  print("a", ep, s)
  if ep < 2 {
    parallel for i in range(8) { W[i] = W[i] + 0.25 }
  }
  s = 0
  parallel for i in range(8) { s += W[i] }
  print("b", ep, s)
}
for k in 0..2 {
  s = 0
  parallel for i in range(8) { s += W[i] * k }
  print("k", k, s)
}
)";

TEST(Resume, ParametersSettleAfterTheLastStatementThatMayWriteOne) {
  auto p = frontend::CompileText(kSettleProgram, testing::TempDir() + "/settle.rgl", {});
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::ostringstream out;
  SerialExecutor* running = nullptr;
  // At each hook: what was printed so far, and W.
  std::vector<std::string> settled_out, point_out;
  std::vector<std::vector<float>> settled_w, point_w;
  ExecutorOptions o;
  o.out = &out;
  o.params_settled = [&] {
    EXPECT_EQ(settled_out.size(), point_out.size()) << "settled twice in one iteration";
    settled_out.push_back(out.str());
    settled_w.push_back(running->param(0));
    return Status::Ok();
  };
  o.at_checkpoint_point = [&] {
    point_out.push_back(out.str());
    point_w.push_back(running->param(0));
    return Status::Ok();
  };
  auto ex = SerialExecutor::Create(*p, o);
  ASSERT_TRUE(ex.ok());
  running = ex->get();
  ASSERT_TRUE((*ex)->Run().ok());
  ASSERT_EQ(settled_out.size(), 6u);
  ASSERT_EQ(point_out.size(), 6u);
  for (size_t k = 0; k < 6; ++k) {
    // Nothing written between the two points: a copy taken at the first is
    // the checkpoint's.
    EXPECT_EQ(settled_w[k], point_w[k]) << k;
    const std::string before = k == 0 ? "" : point_out[k - 1];
    const std::string during = point_out[k].substr(before.size());
    const std::string at_settle = settled_out[k].substr(before.size());
    if (k < 4) {
      // After the `if` (it may write), before the last test loop.
      EXPECT_EQ(at_settle.rfind("a ", 0), 0u) << k << ": " << at_settle;
      EXPECT_EQ(at_settle.find("b "), std::string::npos) << k << ": " << at_settle;
      EXPECT_NE(during.find("b "), std::string::npos) << k;
    } else {
      // An iteration that writes nothing: settled before its body.
      EXPECT_EQ(at_settle, "") << k;
      EXPECT_EQ(during.rfind("k ", 0), 0u) << k << ": " << during;
    }
  }
  // The hook changes nothing the run computes.
  std::ostringstream plain_out;
  ExecutorOptions plain;
  plain.out = &plain_out;
  auto again = SerialExecutor::Create(*p, plain);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->Run().ok());
  EXPECT_EQ(plain_out.str(), out.str());
  EXPECT_EQ((*again)->param(0), (*ex)->param(0));
}

}  // namespace
}  // namespace rigel::exec
