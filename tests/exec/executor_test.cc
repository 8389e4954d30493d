// Semantics of the serial executor on tiny programs whose results are
// computed by hand here.
#include "exec/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "common/file.h"
#include "data/held_load.h"
#include "frontend/compile.h"

namespace rigel::exec {
namespace {

struct Ran {
  std::unique_ptr<ir::Program> prog;
  std::unique_ptr<SerialExecutor> ex;
  std::string out;
  Status status;
};

// Compiles and runs `text` (data files relative to the test temp dir).
Ran RunProgram(const std::string& text, uint64_t seed = 0, std::ostream* progress = nullptr) {
  Ran r;
  std::string path = testing::TempDir() + "/prog.rgl";
  auto prog = frontend::CompileText(text, path, {});
  if (!prog.ok()) {
    r.status = prog.status();
    return r;
  }
  r.prog = std::make_unique<ir::Program>(std::move(prog).value());
  std::ostringstream out;
  ExecutorOptions opts;
  opts.seed = seed;
  opts.out = &out;
  opts.progress = progress;
  opts.progress_after_s = 0;
  auto ex = SerialExecutor::Create(*r.prog, opts);
  if (!ex.ok()) {
    r.status = ex.status();
    return r;
  }
  r.ex = std::move(ex).value();
  r.status = r.ex->Run();
  r.out = out.str();
  return r;
}

void WriteData(const std::string& name, const std::string& text) {
  ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/" + name, text).ok());
}

TEST(Executor, DriverArithmeticAndPrint) {
  Ran r = RunProgram(R"(
const N = 4
const x = 1.5
let y = N * 2 + 1
print("y", y, "x", x * 2, "div", 7 / 2, "fdiv", 7 / 2.0)
for k in 0..3 { print(k) }
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, "y 9 x 3 div 3 fdiv 3.5\n0\n1\n2\n");
}

// Language v2: `%` (floored), int() (toward zero), floor() and ceil(), in
// loop bodies (the kernel) and in the driver (the serial evaluator), against
// values worked out by hand.
TEST(Executor, ModIntFloorCeilAsDslV2Defines) {
  Ran r = RunProgram(R"(
param W: f32[1, 4] = zeros()
accum m: f32
accum t: f32
accum f: f32
accum c: f32
parallel for i in range(7) {
  m += (i - 3) % 3
  t += int((i - 3) * 0.9)
  f += floor((i - 3) * 0.5)
  c += ceil((i - 3) * 0.5)
  W[0, (i * 5) % 4] += 1
}
print(m, t, f, c)
print(7 % 3, -7 % 3, 7 % -3, -7 % -3, 6 % 3, int(-2.5), int(2.9), floor(2.5), ceil(2.5))
let n = 10
print(n % 4, (0 - n) % 4, int(n / 4.0) % 2)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // i - 3 = -3..3: % 3 gives 0 1 2 0 1 2 0 (sum 6); int(x * 0.9) truncates
  // -2.7 -1.8 -0.9 0 0.9 1.8 2.7 to -2 -1 0 0 0 1 2 (sum 0); floor and ceil
  // of -1.5 -1 -0.5 0 0.5 1 1.5 sum to -2 and 2. (i * 5) % 4 visits
  // columns 0 1 2 3 0 1 2.
  EXPECT_EQ(r.out, "6 0 -2 2\n1 2 -2 -1 0 -2 2 2 3\n2 2 0\n");
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{2, 2, 2, 1}));
}

// `==` and `!=` of two bools, and pow() on scalars (the kernel's fpow),
// vectors (elementwise and broadcast) and in the driver (double), by hand.
TEST(Executor, BoolEqualityAndPow) {
  Ran r = RunProgram(R"(
param W: f32[2, 4] = zeros()
accum same: f32
accum differ: f32
accum unset: f32
accum pw: f32
parallel for i in range(4) {
  let x = i % 2
  let y = i / 2
  let eq = (x > 0) == (y > 0)
  if eq { same += i }
  if (x > 0) != (y > 0.5) { differ += 10 * i }
  if (x > 0) == false { unset += 100 * i }
  pw += pow(2, i) + pow(i, 2)
  W[0, i] = pow(i + 1, 2)
}
parallel for i in range(1) {
  let v = pow(W[0], 0.5)
  W[1] = pow(2, v) + pow(v, v) + pow(v, 2.0)
}
print(same, differ, unset, pw, pow(2, 10), pow(2, -1), pow(9.0, 0.5))
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // x = 0 1 0 1 and y = 0 0 1 1 over i = 0..3: x > 0 equals y > 0 at i = 0
  // and 3 (same = 3), differs from y > 0.5 at i = 1 and 2 (differ = 30), and
  // x > 0 is false at i = 0 and 2 (unset = 200). pw = (1 + 2 + 4 + 8) +
  // (0 + 1 + 4 + 9) = 29.
  EXPECT_EQ(r.out, "3 30 200 29 1024 0.5 3\n");
  // Row 0 = (i + 1)^2; v = 1 2 3 4, so row 1 = 2^v + v^v + v^2.
  const std::vector<float> w = r.ex->param(0);
  const float want[8] = {1, 4, 9, 16, 2 + 1 + 1, 4 + 4 + 4, 8 + 27 + 9, 16 + 256 + 16};
  for (int k = 0; k < 8; ++k) EXPECT_FLOAT_EQ(w[k], want[k]) << k;
}

// Language v2: elements of a vector (of a let, of a parameter row), max,
// min, argmax, argmin (first index on ties) and onehot, by hand.
TEST(Executor, VectorElementsPicksAndOneHotAsDslV2Defines) {
  Ran r = RunProgram(R"(
param W: f32[2, 4] = zeros()
accum a: f32
accum b: f32
accum c: f32
parallel for i in range(2) {
  W[i] = onehot(i + 1, 4) * 3 - onehot(3 - i, 4)
}
parallel for i in range(2) {
  let s = W[i]
  a += s[1] + W[i][3]
  b += max(s) * 10 + min(s)
  c += argmax(s) * 10 + argmin(s)
}
print(a, b, c)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // Row 0 = [0 3 0 -1], row 1 = [0 0 2 0]: a = (3 - 1) + (0 + 0) = 2;
  // b = (30 - 1) + (20 + 0) = 49; c = (1 * 10 + 3) + (2 * 10 + 0) = 33,
  // row 1's argmin being the first of its zeros.
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{0, 3, 0, -1, 0, 0, 2, 0}));
  EXPECT_EQ(r.out, "2 49 33\n");
}

// Language v2: element writes on a var vector (= += -= *= /=), by hand.
TEST(Executor, VarVectorElementWritesAsDslV2Defines) {
  Ran r = RunProgram(R"(
param W: f32[2, 4] = zeros()
parallel for i in range(2) {
  var g = zeros(4)
  for k in 0..4 { g[k] = k * 2 + i }
  g[1] += 10
  g[2] -= 1
  g[3] *= 2
  g[0] /= 2
  let h = g
  g[1 + i] = -1
  W[i] = h + g
}
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // i = 0: g = [0 2 4 6] -> [0 12 3 12], h keeps that, then g[1] = -1;
  // i = 1: g = [1 3 5 7] -> [0.5 13 4 14], then g[2] = -1.
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{0, 11, 6, 24, 1, 26, 3, 28}));
}

// Language v2: i32 parameters over a lines corpus, values worked out by hand.
// lines.txt: "a b a", "", "b c" gives ids a 0, b 1, c 2, tokens 0 1 0 1 2
// on lines 0 0 0 2 2, and three documents. (Each test writes files of its
// own: ctest runs them at once in one temporary directory.)
TEST(Executor, IntParametersAndLinesAsDslV2Defines) {
  WriteData("lines.txt", "a b a\n\nb c\n");
  Ran r = RunProgram(R"(
data c = tokens("lines.txt", lines=true)
param z: i32[c.count] = fill(2)
param n: i32[c.docs, 3] = zeros()
param m: i32[c.vocab] = fill(-1)
accum s: f32
parallel for (t, w, d) in c {
  z[t] = (t + w * 2) % 3
  n[d, z[t]] += 1
  m[w] *= 3
  m[w] -= d
  s += z[t] * 10 + d
}
print(c.docs, c.count, s)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // z = 0 0 2 2 2; in file order m[a] = -1*3 -> -3 -> -9, m[b] = -3 -> -9 - 2,
  // m[c] = -3 - 2; s = 20 + 22 + 22.
  EXPECT_EQ(r.out, "3 5 64\n");
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{0, 0, 2, 2, 2}));
  EXPECT_EQ(r.ex->param(1), (std::vector<float>{2, 0, 1, 0, 0, 0, 0, 0, 2}));
  EXPECT_EQ(r.ex->param(2), (std::vector<float>{-9, -11, -5}));
}

// randint(n, seed=S) starts an i32 parameter at integers in [0, n), a pure
// function of the seed and the element.
TEST(Executor, RandintInitialisesIntParameters) {
  const char* text =
      "param z: i32[1000, 2] = randint(5, seed=3)\n"
      "param y: i32[1000, 2] = randint(5, seed=4)\n";
  Ran a = RunProgram(text), b = RunProgram(text);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  std::vector<int> seen(5, 0);
  for (float v : a.ex->param(0)) {
    ASSERT_EQ(v, std::floor(v));
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 5);
    ++seen[static_cast<int>(v)];
  }
  for (int n : seen) EXPECT_GT(n, 300);  // 2000 draws, 400 expected each
  EXPECT_EQ(a.ex->param(0), b.ex->param(0));
  EXPECT_NE(a.ex->param(0), a.ex->param(1));
}

// With lines=true a window stops at its line's ends: 3 tokens on line 0 see
// 2 each, 2 on line 1 see 1 each, the one on line 3 none (6 + 2 + 0); as one
// stream every token sees the other 5.
TEST(Executor, WindowsStopAtLineEnds) {
  WriteData("w2.txt", "a b c\nd e\n\nf\n");
  Ran lines = RunProgram(
      "data c = tokens(\"w2.txt\", lines=true)\naccum s: f32\n"
      "parallel for (t, w, d) in c { for x in window(c, t, 5) { s += 1 } }\nprint(s, c.docs)\n");
  ASSERT_TRUE(lines.status.ok()) << lines.status.message();
  EXPECT_EQ(lines.out, "8 4\n");
  Ran plain = RunProgram(
      "data c = tokens(\"w2.txt\")\naccum s: f32\n"
      "parallel for (t, w) in c { for x in window(c, t, 5) { s += 1 } }\nprint(s)\n");
  ASSERT_TRUE(plain.status.ok()) << plain.status.message();
  EXPECT_EQ(plain.out, "30\n");
}

// sample(p): only positive weights are drawn, the frequencies follow the
// weights, and the draws are a pure function of the seed and the element.
TEST(Executor, SampleDrawsByWeight) {
  const char* text = R"(
param C: f32[4] = zeros()
parallel for i in range(40000) {
  var p = zeros(4)
  p[0] = 1
  p[2] = 3
  C[sample(p)] += 1
}
)";
  Ran a = RunProgram(text, 1), b = RunProgram(text, 1), c = RunProgram(text, 2);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  const std::vector<float> n = a.ex->param(0);
  EXPECT_EQ(n[1], 0);
  EXPECT_EQ(n[3], 0);
  EXPECT_EQ(n[0] + n[2], 40000);
  // 1/4 of 40000 with a standard deviation of about 87.
  EXPECT_NEAR(n[0], 10000, 500);
  EXPECT_EQ(a.ex->param(0), b.ex->param(0));
  EXPECT_NE(a.ex->param(0), c.ex->param(0));
}

TEST(Executor, TriplesSgdByHand) {
  WriteData("t.csv", "0,0,1\n1,0,2\n0,1,3\n");
  Ran r = RunProgram(R"(
data t = triples("t.csv")
param b: f32[t.rows] = fill(0.5)
param c: f32[t.cols] = zeros()
accum s: f32
parallel for (i, j, v) in t {
  b[i] += v
  c[j] = c[j] + v * b[i]
  s += v
}
print(s)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // In file order: b0 = 1.5, c0 = 1.5; b1 = 2.5, c0 = 1.5 + 5 = 6.5; b0 = 4.5, c1 = 13.5.
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{4.5f, 2.5f}));
  EXPECT_EQ(r.ex->param(1), (std::vector<float>{6.5f, 13.5f}));
  EXPECT_EQ(r.out, "6\n");
}

TEST(Executor, WritesDataWarningsWhereAsked) {
  WriteData("far.csv", "0,0,1\n\n2000000,1,1\n");
  auto prog = frontend::CompileText("data t = triples(\"far.csv\")\nprint(t.rows)\n",
                                    testing::TempDir() + "/prog.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  std::ostringstream out, warnings;
  ExecutorOptions opts;
  opts.out = &out;
  opts.warnings = &warnings;
  auto ex = SerialExecutor::Create(*prog, opts);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  EXPECT_EQ(warnings.str(), (*ex)->data(0).path +
                                ":3: warning: row index 2000000 is far beyond the file's other "
                                "row indices (the next largest is 0): .rows = 2000001, so one "
                                "f32 per row takes 8.0 MB\n");
  ASSERT_TRUE((*ex)->Run().ok());
  EXPECT_EQ(out.str(), "2000001\n");
}

TEST(Executor, RowUpdatesMatchHandComputation) {
  WriteData("r.csv", "0,1,2\n");
  Ran r = RunProgram(R"(
const K = 3
data t = triples("r.csv")
param W: f32[t.rows, K] = fill(1.0)
param H: f32[t.cols, K] = fill(2.0)
parallel for (i, j, v) in t {
  let e = v - dot(W[i], H[j])
  let wi = W[i]
  W[i] = wi + 0.5 * (e * H[j] - 0.1 * wi)
  H[j] = H[j] + 0.5 * (e * wi - 0.1 * H[j])
}
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // dot = 6, e = -4; W = 1 + 0.5 * (-8 - 0.1) = -3.05; H[1] = 2 + 0.5 * (-4 - 0.2) = -0.1
  // (H uses the old W row through the let).
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.ex->param(0)[k], -3.05f, 1e-6);
  for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(r.ex->param(1)[k], 2.0f);  // row 0 untouched
  for (int k = 3; k < 6; ++k) EXPECT_NEAR(r.ex->param(1)[k], -0.1f, 1e-6);
}

TEST(Executor, OrderedWavefrontMatchesRecurrence) {
  Ran r = RunProgram(R"(
const N = 3
const M = 4
param A: f32[N + 1, M + 1] = fill(1.0)
parallel ordered for (i, j) in grid(N, M) {
  A[i + 1, j + 1] = 0.5 * (A[i, j + 1] + A[i + 1, j]) + 1
}
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  float a[4][5];
  for (auto& row : a)
    for (float& x : row) x = 1;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) a[i + 1][j + 1] = 0.5f * (a[i][j + 1] + a[i + 1][j]) + 1;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_FLOAT_EQ(r.ex->param(0)[i * 5 + j], a[i][j]) << i << "," << j;
}

TEST(Executor, LibsvmFeaturesVarsAndIf) {
  WriteData("s.svm", "1 1:2 3:1\n-1 2:4\n");
  Ran r = RunProgram(R"(
data d = libsvm("s.svm")
param w: f32[d.dim] = fill(1.0)
accum pos: f32
accum z_total: f32
parallel for (n, row) in d relax w {
  var z = 0.0
  for (f, x) in row.features { z += w[f] * x }
  z_total += z
  if row.label > 0.5 { pos += 1 } else { pos += 0.25 }
  for (f, x) in row.features { w[f] -= 0.5 * x }
}
print(pos, z_total)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // Labels map to 1, 0. Sample 0: z = 2 + 1 = 3; w = {0, 1, 0.5}. Sample 1: z = 4; w[1] = -1.
  EXPECT_EQ(r.out, "1.25 7\n");
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{0.0f, -1.0f, 0.5f}));
}

TEST(Executor, WholeParameterAndDenseRows) {
  WriteData("d.csv", "1,1,2\n0,3,4\n");
  Ran r = RunProgram(R"(
data d = dense_csv("d.csv", label=0)
param w: f32[d.dim] = zeros()
parallel for (n, row) in d relax w {
  let z = dot(w, row.x)
  w -= (z - row.label) * row.x
}
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // Row 0: z = 0, w = 0 - (0 - 1) * (1, 2) = (1, 2).
  // Row 1: z = 3 + 8 = 11, w = (1, 2) - 11 * (3, 4) = (-32, -42).
  EXPECT_EQ(r.ex->param(0), (std::vector<float>{-32.0f, -42.0f}));
}

TEST(Executor, WindowVisitsNeighboursButNotSelf) {
  WriteData("c.txt", "a b c d e\n");
  Ran r = RunProgram(R"(
data c = tokens("c.txt")
accum visits: f32
accum centre: f32
parallel for (t, w) in c {
  for x in window(c, t, 2) { visits += 1 }
  if t == 2 { for x in window(c, t, 1) { centre += x } }
}
print(visits, centre)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // Windows of radius 2 over 5 positions: 2 + 3 + 4 + 3 + 2 = 14. Around t=2
  // with radius 1: tokens b (id 1) and d (id 3): all counts tie, so ids follow
  // first appearance.
  EXPECT_EQ(r.out, "14 4\n");
}

TEST(Executor, RandomnessIsDeterministicAndSeeded) {
  const char* text = R"(
accum s: f32
for ep in 0..2 {
  s = 0
  parallel for i in range(1000) { s += rand() + randint(10) }
  print(s)
}
)";
  Ran a = RunProgram(text, 1), b = RunProgram(text, 1), c = RunProgram(text, 2);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  // Each epoch draws anew (the launch count is part of the key).
  auto nl = a.out.find('\n');
  EXPECT_NE(a.out.substr(0, nl), a.out.substr(nl + 1, a.out.size() - nl - 2));
}

TEST(Executor, ChunkedRunsWithProgressGiveTheSameResult) {
  std::string text = R"(
param w: f32[100] = zeros()
accum s: f32
parallel for i in range(200000) {
  let k = randint(100)
  w[k] += rand()
  s += w[k]
}
print(s)
)";
  std::ostringstream progress;
  Ran plain = RunProgram(text, 3), chunked = RunProgram(text, 3, &progress);
  ASSERT_TRUE(plain.status.ok()) << plain.status.message();
  ASSERT_TRUE(chunked.status.ok()) << chunked.status.message();
  EXPECT_EQ(plain.out, chunked.out);
  EXPECT_EQ(plain.ex->param(0), chunked.ex->param(0));
  EXPECT_NE(progress.str().find("elements/s"), std::string::npos);
}

TEST(Executor, InlineSpacesSizedByDriverVariables) {
  Ran r = RunProgram(R"(
accum s: f32
for k in 1..4 {
  s = 0
  parallel for (i, j) in grid(k, 2) { s += 1 }
  print(s)
}
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, "2\n4\n6\n");
}

TEST(Executor, DriverVariablesKeepTheirTypeInsideLoops) {
  Ran r = RunProgram(R"(
var x = 0.0
x = x + 1
x = x / 4
param p: f32[1] = zeros()
parallel for i in range(1) { p[i] = x * 2 }
print(x, x * 2)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, "0.25 0.5\n");
  EXPECT_EQ(r.ex->param(0)[0], 0.5f);
}

// Integer arithmetic is checked: overflow is a program error at its location,
// never undefined behaviour (the sanitizer job runs these).
TEST(Executor, IntegerOverflowIsAnError) {
  struct Case {
    const char* text;
    const char* where;
  } cases[] = {
      {"var x = 9223372036854775807\nx = x + 1\n", "prog.rgl:2:7: error: integer overflow"},
      {"var x = -9223372036854775807 - 1\nprint(x / -1)\n",
       "prog.rgl:2:9: error: integer overflow"},
      {"var x = -9223372036854775807 - 1\nprint(abs(x))\n",
       "prog.rgl:2:7: error: integer overflow"},
      {"param b: f32[2] = zeros()\nparallel for i in range(2) {\n  let k = 9223372036854775807 + "
       "i\n"
       "  b[0] += k\n}\n",
       "prog.rgl:3:31: error: integer overflow"},
      {"param b: f32[2] = zeros()\nparallel for i in range(1) {\n"
       "  let k = (-9223372036854775807 - 1) / (i - 1)\n  b[0] += k\n}\n",
       "prog.rgl:3:38: error: integer overflow"},
      {"var n = 4294967296\nparallel for (i, j) in grid(n, n) { }\n",
       "prog.rgl:2:24: error: iteration space sizes must be non-negative and their product must "
       "fit"},
  };
  for (const Case& c : cases) {
    Ran r = RunProgram(c.text);
    ASSERT_FALSE(r.status.ok()) << c.text;
    EXPECT_NE(r.status.message().find(c.where), std::string::npos) << c.text << "\n"
                                                                   << r.status.message();
  }
}

TEST(Executor, HugeWindowRadiusAndVectorWidthAreHandled) {
  WriteData("h.txt", "a b c\n");
  Ran r = RunProgram(R"(
data c = tokens("h.txt")
accum n: f32
parallel for (t, w) in c { for x in window(c, t, 9223372036854775807) { n += 1 } }
print(n)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out, "6\n");
  Ran z =
      RunProgram("accum s: f32\nparallel for i in range(1) { s += sum(zeros(1099511627776)) }\n");
  ASSERT_FALSE(z.status.ok());
  EXPECT_NE(z.status.message().find("widths must be between 1 and 2^30"), std::string::npos)
      << z.status.message();
}

TEST(Executor, IndexOutOfRangeNamesTheAccess) {
  Ran r = RunProgram(R"(
param b: f32[4] = zeros()
parallel for i in range(5) {
  b[i] += 1
}
)");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(
      r.status.message().find("prog.rgl:4:3: error: index 4 out of range for the rows of 'b' (4)"),
      std::string::npos)
      << r.status.message();
}

// Every other run-time error of a loop body: the message names its cause
// and the source position of the operation.
TEST(Executor, LoopBodyErrorsNameTheirCause) {
  WriteData("w.txt", "a b c d e f\n");
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"param b: f32[2] = zeros()\nparallel for i in range(2) {\n  let k = 1 / i\n  b[0] += k\n}\n",
       "prog.rgl:3:13: error: integer division by zero"},
      {"param W: f32[2, 3] = zeros()\nparallel for i in range(2) {\n  W[i, 3 - i] += 1\n}\n",
       "prog.rgl:3:3: error: index 3 out of range for the columns of 'W' (3)"},
      {"accum s: f32\nparallel for i in range(3) {\n  s += randint(i - 1)\n}\n",
       "prog.rgl:3:8: error: randint bound must be positive, got -1"},
      {"data c = tokens(\"w.txt\")\naccum n: f32\nparallel for (t, w) in c {\n"
       "  for x in window(c, t, t - 3) { n += 1 }\n}\n",
       "prog.rgl:4:3: error: window radius must not be negative, got -3"},
      {"param b: f32[2] = zeros()\nparallel for i in range(2) {\n  let k = 1 % i\n  b[0] += k\n}\n",
       "prog.rgl:3:13: error: integer modulo by zero"},
      {"accum s: f32\nparallel for i in range(2) {\n  s += int(log(-1.0 - i))\n}\n",
       "prog.rgl:3:8: error: int() of NaN"},
      {"accum s: f32\nparallel for i in range(2) {\n  s += int(1e30 * (i + 1))\n}\n",
       "prog.rgl:3:8: error: int() of 1e+30 is outside the int range"},
      {"let z = 0\nprint(5 % z)\n", "prog.rgl:2:9: error: integer modulo by zero"},
      {"param W: f32[2, 3] = zeros()\naccum a: f32\nparallel for i in range(2) {\n"
       "  let s = W[i]\n  a += s[i + 2]\n}\n",
       "prog.rgl:5:8: error: element index 3 out of range for a vector of width 3"},
      {"accum a: f32\nparallel for i in range(2) {\n  a += sum(onehot(i + 2, 3))\n}\n",
       "prog.rgl:3:12: error: onehot index 3 out of range for width 3"},
      {"let z = 0.0 / 0.0\nprint(int(z))\n", "prog.rgl:2:7: error: int() of NaN"},
      {"param z: i32[3] = zeros()\nparallel for i in range(3) {\n  z[i] = i * 10000000\n}\n",
       "prog.rgl:3:12: error: i32 value 20000000 is outside [-16777216, 16777216], where i32 "
       "parameters are exact"},
      {"accum a: f32\nparallel for i in range(2) {\n  var g = zeros(3)\n  g[i + 2] = 1\n"
       "  a += g[0]\n}\n",
       "prog.rgl:4:3: error: element index 3 out of range for a vector of width 3"},
      {"accum a: f32\nparallel for i in range(2) {\n  a += sample(zeros(3))\n}\n",
       "prog.rgl:3:8: error: sample needs a vector with a positive element; every element is 0"},
      {"accum a: f32\nparallel for i in range(2) {\n  var p = zeros(3) + 1\n  p[2] = -0.5\n"
       "  a += sample(p)\n}\n",
       "prog.rgl:5:8: error: sample needs finite, non-negative numbers; element 2 is -0.5"},
      {"accum a: f32\nparallel for i in range(2) {\n  var p = zeros(3) + 1\n"
       "  p[1] = log(-1.0)\n  a += sample(p)\n}\n",
       "prog.rgl:5:8: error: sample needs finite, non-negative numbers; element 1 is NaN"},
  };
  for (const Case& c : cases) {
    Ran r = RunProgram(c.text);
    ASSERT_FALSE(r.status.ok()) << c.text;
    EXPECT_NE(r.status.message().find(c.message), std::string::npos) << c.text << "\n"
                                                                     << r.status.message();
  }
}

// Vector accumulators (DSL.md, version 2), against sums worked out by hand.
// Over i in 0..11: by i % 3 the sums of i are 0+3+6+9 = 18, 1+4+7+10 = 22,
// 2+5+8+11 = 26; onehot(i % 4, 4) * 2 counts 3 of each class twice: 6 each;
// s += v adds (i, 1, 0.5) per element: (66, 12, 6). Resets between epochs
// make every epoch print the same; the scalar accumulator is unchanged.
TEST(Executor, VectorAccumulatorsSumByElementAndReset) {
  Ran r = RunProgram(R"(
const N = 12
accum c: f32[3]
accum h: f32[4]
accum v: f32[3]
accum n: f32
for ep in 0..2 {
  parallel for i in range(N) {
    c[i % 3] += i
    h += onehot(i % 4, 4) * 2
    var x = zeros(3) + 0.5
    x[0] = i
    x[1] = 1
    v += x
    n += 1
  }
  print(ep, c[0], c[1], c[2], h[0], h[1], h[2], h[3], v[0], v[1], v[2], n)
  c = 0
  h = 0
  v = 0
}
c = 2.5
let k = 2
print(c[0], c[k], n)
)");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.out,
            "0 18 22 26 6 6 6 6 66 12 6 12\n"
            "1 18 22 26 6 6 6 6 66 12 6 24\n"
            "2.5 2.5 24\n");
  EXPECT_EQ(r.ex->accum(0, 2), 2.5);
  EXPECT_EQ(r.ex->accum(3), 24);
  EXPECT_EQ(r.ex->accums().size(), 11u);
}

TEST(Executor, VectorAccumulatorElementOutOfRangeIsAnErrorAtItsPosition) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"accum s: f32[3]\nparallel for i in range(5) {\n  s[i - 1] += 1\n}\n",
       "prog.rgl:3:3: error: element index -1 out of range for accumulator 's' (width 3)"},
      {"accum s: f32[3]\nparallel for i in range(5) {\n  s[i] += 1\n}\n",
       "prog.rgl:3:3: error: element index 3 out of range for accumulator 's' (width 3)"},
      {"accum s: f32[3]\nlet k = 3\nprint(\"s\", s[k])\n",
       "prog.rgl:3:12: error: element index 3 out of range for accumulator 's' (width 3)"},
      {"accum s: f32[3]\nfor k in -1..1 {\n  print(s[k])\n}\n",
       "prog.rgl:3:9: error: element index -1 out of range for accumulator 's' (width 3)"},
  };
  for (const Case& c : cases) {
    Ran r = RunProgram(c.text);
    ASSERT_FALSE(r.status.ok()) << c.text;
    EXPECT_NE(r.status.message().find(c.message), std::string::npos) << c.text << "\n"
                                                                     << r.status.message();
  }
}

// A vector whose width is known only once the data are loaded is checked
// against the accumulator's before anything runs.
TEST(Executor, VectorAccumulatorWidthFromDataIsCheckedAtLoad) {
  WriteData("acc.csv", "1,0.5,2\n0,1.5,3\n");
  Ran r = RunProgram(R"(
data d = dense_csv("acc.csv", label=0)
accum s: f32[2]
accum t: f32[3]
parallel for (n, row) in d { s += row.x }
print(s[0], s[1])
parallel for (n, row) in d { t += row.x }
)");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("prog.rgl:7:39: error: vector width mismatch in accumulator "
                                    "update: d.dim = 2 vs 3"),
            std::string::npos)
      << r.status.message();
}

TEST(Executor, FusedInstructionsReportTheirOwnLocations) {
  // Two row reads fuse into one instruction and two row writes into another;
  // an out-of-range second subscript must still point at its own access.
  Ran r = RunProgram(R"(
param W: f32[3, 2] = zeros()
param H: f32[2, 2] = zeros()
accum s: f32
parallel for i in range(3) {
  s += dot(W[i], H[i])
}
)");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(
      r.status.message().find("prog.rgl:6:18: error: index 2 out of range for the rows of 'H' (2)"),
      std::string::npos)
      << r.status.message();
  Ran w = RunProgram(R"(
param W: f32[3, 2] = fill(1.0)
param H: f32[2, 2] = zeros()
param G: f32[1, 2] = fill(5.0)
parallel for i in range(3) {
  let g = G[0]
  W[i] = W[i] * 2
  H[i] = g * 3
}
)");
  ASSERT_FALSE(w.status.ok());
  EXPECT_NE(
      w.status.message().find("prog.rgl:8:3: error: index 2 out of range for the rows of 'H' (2)"),
      std::string::npos)
      << w.status.message();
  EXPECT_NE(w.ex->kernel(0).Disassemble().find("wr.row.pair"), std::string::npos);
  // As in a sequential run, W[2] was doubled before the write to H[2] failed.
  EXPECT_EQ(w.ex->param(0), (std::vector<float>{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(w.ex->param(1), (std::vector<float>{15, 15, 15, 15}));
}

TEST(Executor, MissingDataFileIsReportedAtItsDeclaration) {
  Ran r = RunProgram("data t = triples(\"nope.csv\")\nparallel for (i, j, v) in t { }\n");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("prog.rgl:1:6: error: cannot load data set 't'"),
            std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("no such file"), std::string::npos);
}

TEST(Executor, DataDependentWidthMismatchCaughtBeforeRunning) {
  WriteData("w.csv", "1,1,2\n");
  Ran r = RunProgram(R"(
data d = dense_csv("w.csv")
param w: f32[4] = zeros()
accum s: f32
parallel for (n, row) in d { s += dot(w, row.x) }
)");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("prog.rgl:5:35: error: vector width mismatch in dot"),
            std::string::npos)
      << r.status.message();
}

}  // namespace
}  // namespace rigel::exec

namespace rigel::exec {
namespace {

// `ordered` means lexicographic order of (i, j), not the file's order; lines
// with the same (i, j) keep the file's order.
TEST(Executor, OrderedLoopOverUnsortedTriplesRunsInLexicographicOrder) {
  WriteData("unsorted.csv", "2,0,1\n0,1,2\n0,0,3\n2,0,4\n");
  const std::string decls =
      "data r = triples(\"unsorted.csv\")\nparam s0: f32[1] = zeros()\naccum out: f32\n";
  const std::string print = "parallel for k in range(1) { out += s0[k] }\nprint(out)\n";
  Ran ordered = RunProgram(
      decls + "parallel ordered for (i, j, v) in r { s0[0] = s0[0] * 10 + v }\n" + print);
  ASSERT_TRUE(ordered.status.ok()) << ordered.status.message();
  EXPECT_EQ(ordered.out, "3214\n");
  Ran unordered =
      RunProgram(decls + "parallel for (i, j, v) in r { s0[0] = s0[0] * 10 + v }\n" + print);
  ASSERT_TRUE(unordered.status.ok()) << unordered.status.message();
  EXPECT_EQ(unordered.out, "1234\n");
}

// A run-time error names the data line of the element that failed.
TEST(Executor, IndexErrorNamesTheDataLine) {
  WriteData("bad_row.csv", "0,0,1\n\n1,1,2\n5,0,3\n");
  Ran r = RunProgram(
      "data r = triples(\"bad_row.csv\")\nparam b: f32[2] = zeros()\n"
      "parallel for (i, j, v) in r { b[i] += v }\n");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("index 5 out of range for the rows of 'b' (2)"),
            std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find(
                "bad_row.csv:4: note: while running element 2 of data set 'r': 5,0,3\n"),
            std::string::npos)
      << r.status.message();
}

// A data set held in part (data/held.h): its loops read the held elements as
// a whole load has them, each kind's reads at their column positions, and
// an element outside is Rigel's error (Internal), never a wrong value.
TEST(Executor, DataHeldInPartReadsItsElementsAndRefusesOthers) {
  WriteData("held.svm", "+1 1:1 2:2\n-1 3:3\n+1 1:0.5\n-1 2:4 3:1\n+1 1:2\n");
  WriteData("held.txt", "a b c\nd a b\nc a\n");
  const std::string text = R"(
data s = libsvm("held.svm")
data c = tokens("held.txt", lines=true)
accum z: f32
accum w: f32
for ep in 0..1 {
  parallel for (n, row) in s { for (f, x) in row.features { z += x * row.label } }
  parallel for (t, v, d) in c { for q in window(c, t, 1) { w += q * 10 + d } }
  print(z, w)
}
)";
  const std::string path = testing::TempDir() + "/held.rgl";
  auto prog = frontend::CompileText(text, path, {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  // Whole, then held in part as [1, 4) of s and [0, 8) of c (every element
  // a loop reads there: all of c, and s's 1..3 when the loop runs 1..3).
  std::ostringstream whole_out;
  ExecutorOptions whole_opts;
  whole_opts.out = &whole_out;
  auto whole = SerialExecutor::Create(*prog, whole_opts);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_TRUE((*whole)->Run().ok());
  std::ostringstream log;
  ExecutorOptions opts;
  opts.log = &log;
  opts.hold_part = [](int) { return true; };
  opts.hold_ranges = [](int data, const data::Dataset& shape) {
    EXPECT_TRUE(shape.shape_only);
    return StatusOr<std::vector<data::ElementRange>>(
        data == 0 ? std::vector<data::ElementRange>{{1, 4}}
                  : std::vector<data::ElementRange>{{0, shape.count}});
  };
  auto held = SerialExecutor::Create(*prog, opts);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_NE(log.str().find("/held.svm): 3 of 5 elements"), std::string::npos) << log.str();
  const data::Dataset& s = (*held)->data(0);
  const data::Dataset& s_whole = (*whole)->data(0);
  EXPECT_TRUE(s.in_part);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.dim, s_whole.dim);
  for (int64_t e = 1; e < 4; ++e) {
    EXPECT_EQ(s.labels[s.Local(e)], s_whole.labels[e]);
  }
  EXPECT_EQ(s.Local(0), -1);
  EXPECT_EQ(s.Local(4), -1);
  // The corpus, held whole in part, runs as the whole load.
  const double whole_w = (*whole)->accum(1);  // after its one run of the loop
  auto run_c = [](SerialExecutor& ex) {
    EXPECT_TRUE(ex.RunLoop(1).ok());
    return ex.accum(1);
  };
  EXPECT_EQ(run_c(**held), whole_w);
  // s's loop runs all 5 elements: element 0 is not held.
  Status st = (*held)->RunLoop(0);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  EXPECT_NE(st.message().find("element 0 of data set 's' ("), std::string::npos);
  EXPECT_NE(st.message().find("/held.svm) is not held by this worker, which holds 3 of its 5 "
                              "elements; please report this"),
            std::string::npos)
      << st.ToString();
}

// A held part reads its chunks with the facts the scheduler sent
// (ExecutorOptions::entries), which must be for the program's loader options.
TEST(Executor, AHeldPartReadsWithTheFactsTheSchedulerSent) {
  WriteData("sent.svm", "+1 1:1 2:2\n-1 3:3\n+1 1:0.5\n-1 2:4 3:1\n+1 1:2\n");
  const std::string text = R"(
data s = libsvm("sent.svm")
accum z: f32
parallel for (n, row) in s { for (f, x) in row.features { z += x * row.label } }
)";
  auto prog = frontend::CompileText(text, testing::TempDir() + "/sent.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  const std::string path = prog->data[0].path;
  auto scan = data::ScanFile(path, data::LoadSpec::Of(data::LibsvmOptions{}), 2);
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  const std::string sent =
      data::IndexEntryText(data::EntryOfScan(data::LoadSpec::Of(data::LibsvmOptions{}), *scan));
  ExecutorOptions opts;
  opts.hold_part = [](int) { return true; };
  opts.hold_ranges = [](int, const data::Dataset&) {
    return StatusOr<std::vector<data::ElementRange>>(std::vector<data::ElementRange>{{2, 5}});
  };
  opts.entries[0] = sent;
  auto held = SerialExecutor::Create(*prog, opts);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ((*held)->data(0).HeldCount(), 3);
  EXPECT_EQ((*held)->data(0).count, 5);
  // Facts of the file read with other options (labels kept as read) are refused.
  data::LibsvmOptions other;
  other.labels = data::LibsvmLabels::kKeep;
  opts.entries[0] = data::IndexEntryText(data::EntryOfScan(data::LoadSpec::Of(other), *scan));
  auto refused = SerialExecutor::Create(*prog, opts);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("the scheduler's facts of data set 's': the facts are "
                                            "of a file read with the loader options"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace rigel::exec
