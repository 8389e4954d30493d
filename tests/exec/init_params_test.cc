// --init-params (exec/init_params.h): parameters named by a --save-params
// file start from its values, read in place (exec/param_file.h ListParams,
// ir/param_init.h kFile), bit for bit; the others keep their initialisers;
// a file that does not fit the program is refused naming what differs.
#include "exec/init_params.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/param_file.h"
#include "frontend/compile.h"
#include "ir/param_init.h"

namespace rigel::exec {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/init_params_test." + std::to_string(getpid()) + "." + name;
}

constexpr char kProgram[] = R"(param W: f32[3, 2] = normal(0, 1, seed=4)
param b: f32[4] = fill(7)
param n: i32[2] = randint(5, seed=1)
accum s: f32
s = 0
parallel for i in range(3) { s += W[i, 0] * 1000 + W[i, 1] }
print("W", s)
s = 0
parallel for i in range(4) { s += b[i] }
print("b", s)
s = 0
parallel for i in range(2) { s += n[i] }
print("n", s)
)";

ir::Program Compile() {
  auto prog = frontend::CompileText(kProgram, TempPath("p.rgl"), {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  return prog.ok() ? std::move(prog).value() : ir::Program{};
}

std::string RunIt(const ir::Program& prog, Status* st = nullptr) {
  std::ostringstream out;
  ExecutorOptions opts;
  opts.out = &out;
  auto ex = SerialExecutor::Create(prog, opts);
  Status s = ex.ok() ? (*ex)->Run() : ex.status();
  if (st != nullptr) *st = s;
  EXPECT_TRUE(st != nullptr || s.ok()) << s.message();
  return out.str();
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(InitParams, ListedEntriesPointAtTheValuesReadParamsReads) {
  const std::string path = TempPath("list.npz");
  std::vector<SavedParam> saved = {
      {"W", 3, 2, {1.5f, -0.0f, 3e38f, 1e-45f, 0.25f, -7}, false, true},
      {"n", 2, 1, {4, -16777216}, true, false}};
  ASSERT_TRUE(WriteParams(path, saved).ok());
  auto entries = ListParams(path);
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 2u);
  ir::Program prog = Compile();
  auto taken = UseInitParams(path, &prog);
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  EXPECT_EQ(*taken, (std::vector<std::string>{"W", "n"}));
  const ir::ParamDecl& w = prog.params[0];
  EXPECT_EQ(w.init, ir::ParamDecl::kFile);
  EXPECT_EQ(w.file_offset, (*entries)[0].offset);
  for (int64_t r = 0; r < 3; ++r) {
    float row[2];
    ir::InitialRow(w, r, row);
    EXPECT_TRUE(SameBits(row[0], saved[0].values[r * 2])) << r;
    EXPECT_TRUE(SameBits(row[1], saved[0].values[r * 2 + 1])) << r;
  }
  float v = 0;
  ir::InitialRow(prog.params[2], 1, &v);
  EXPECT_EQ(v, -16777216.0f);
  // 'b' is not in the file: its initialiser stays.
  EXPECT_EQ(prog.params[1].init, ir::ParamDecl::kFill);
}

TEST(InitParams, ARunStartsFromTheSavedValuesAndOnlyThose) {
  const ir::Program fresh = Compile();
  const std::string before = RunIt(fresh);
  const std::string path = TempPath("run.npz");
  ASSERT_TRUE(WriteParams(path, {{"W", 3, 2, {1, 2, 3, 4, 5, 6}, false, true}}).ok());
  ir::Program warm = Compile();
  ASSERT_TRUE(UseInitParams(path, &warm).ok());
  const std::string after = RunIt(warm);
  // W's rows from the file (1000 * (1 + 3 + 5) + 2 + 4 + 6); b and n as before.
  EXPECT_NE(after.find("W 9012\n"), std::string::npos) << after;
  EXPECT_EQ(after.substr(after.find("b ")), before.substr(before.find("b ")));
}

TEST(InitParams, AFileThatDoesNotFitTheProgramIsRefusedNamingWhatDiffers) {
  struct Case {
    SavedParam p;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"V", 3, 2, std::vector<float>(6), false, true},
       "'V' is not a parameter of the program (its parameters: W, b, n)"},
      {{"W", 3, 3, std::vector<float>(9), false, true},
       "'W' is [3, 3] in the file; the program declares it 2-D of width 2"},
      {{"b", 4, 1, std::vector<float>(4), false, true},
       "'b' is [4, 1] in the file; the program declares it 1-D"},
      {{"n", 2, 1, std::vector<float>(2), false, false},
       "'n' holds f32 values in the file; the program declares it i32"},
  };
  for (const Case& c : cases) {
    const std::string path = TempPath("bad.npz");
    ASSERT_TRUE(WriteParams(path, {c.p}).ok());
    ir::Program prog = Compile();
    auto taken = UseInitParams(path, &prog);
    ASSERT_FALSE(taken.ok()) << c.says;
    EXPECT_NE(taken.status().message().find("--init-params " + path + ": " + c.says),
              std::string::npos)
        << taken.status().message();
  }
  // Rows depend on the data: checked when the run knows them.
  const std::string path = TempPath("rows.npz");
  ASSERT_TRUE(WriteParams(path, {{"b", 5, 1, std::vector<float>(5), false, false}}).ok());
  ir::Program prog = Compile();
  ASSERT_TRUE(UseInitParams(path, &prog).ok());
  Status st;
  RunIt(prog, &st);
  EXPECT_NE(st.message().find("'b' has 5 rows in the file and 4 in this run"), std::string::npos)
      << st.message();
  // No file, or not one.
  ir::Program other = Compile();
  EXPECT_EQ(UseInitParams(TempPath("none.npz"), &other).status().code(), StatusCode::kNotFound);
}

// A process that reads rows of a file that changed since the job began (a
// server on another host with another copy) refuses to start.
TEST(InitParams, AFileOfAnotherSizeIsRefusedWhereItIsOpened) {
  const std::string path = TempPath("size.npz");
  ASSERT_TRUE(WriteParams(path, {{"b", 4, 1, {1, 2, 3, 4}, false, false}}).ok());
  ir::Program prog = Compile();
  ASSERT_TRUE(UseInitParams(path, &prog).ok());
  ir::ParamDecl moved = prog.params[1];
  moved.file = TempPath("other.npz");
  ASSERT_TRUE(WriteParams(moved.file, {{"b", 5, 1, {1, 2, 3, 4, 5}, false, false}}).ok());
  const Status st = ir::OpenInitialValues(moved);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.message();
  EXPECT_NE(st.message().find("every process must read the same file"), std::string::npos);
}

}  // namespace
}  // namespace rigel::exec
