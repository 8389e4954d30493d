// The JIT tier (kernel/jit/jit.h) against the interpreter: every example
// program, shapes of loop bodies the examples do not have, run-time faults,
// the switch under --jit auto in the middle of a run, and bindings held in
// part through slot maps with write trackers. The two tiers must print the
// same text and end with the same parameters, bit for bit, and the JIT must
// really have run (a body that silently stayed interpreted fails here).
//
// In a build without LLVM the tier is unavailable and says why; these tests
// then check that, and that --jit on still runs everything interpreted.
#include "kernel/jit/jit.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::kernel {
namespace {

struct Outcome {
  Status status = Status::Ok();
  std::string out;
  std::vector<std::vector<float>> params;
  std::vector<TierReport> tiers;
};

Outcome RunAt(const ir::Program& prog, JitMode mode) {
  std::ostringstream out;
  exec::ExecutorOptions opts;
  opts.out = &out;
  opts.compile.jit = mode;
  Outcome o;
  auto ex = exec::SerialExecutor::Create(prog, opts);
  if (!ex.ok()) {
    o.status = ex.status();
    return o;
  }
  o.status = (*ex)->Run();
  o.out = out.str();
  for (size_t p = 0; p < prog.params.size(); ++p) o.params.push_back((*ex)->param(p));
  for (size_t l = 0; l < prog.loops.size(); ++l) {
    o.tiers.push_back((*ex)->kernel(static_cast<int>(l)).tier());
  }
  return o;
}

// Same status, same text, same parameters bit for bit.
void ExpectSame(const Outcome& want, const Outcome& got, const std::string& what) {
  EXPECT_EQ(got.status.code(), want.status.code()) << what << ": " << got.status.message();
  EXPECT_EQ(got.status.message(), want.status.message()) << what;
  EXPECT_EQ(got.out, want.out) << what;
  ASSERT_EQ(got.params.size(), want.params.size()) << what;
  for (size_t p = 0; p < want.params.size(); ++p) {
    ASSERT_EQ(got.params[p].size(), want.params[p].size()) << what;
    size_t bad = 0;
    for (size_t k = 0; k < want.params[p].size(); ++k) {
      const float a = want.params[p][k], b = got.params[p][k];
      if (std::memcmp(&a, &b, sizeof a) != 0 && bad++ < 3) {
        ADD_FAILURE() << what << ": param " << p << "[" << k << "] = " << b << " instead of " << a;
      }
    }
    EXPECT_EQ(bad, 0u) << what << ": param " << p;
  }
}

// Every loop that ran was compiled (when this build has the JIT), or says
// why not (when it has not).
void ExpectCompiled(const Outcome& o, const std::string& what) {
  for (size_t l = 0; l < o.tiers.size(); ++l) {
    const TierReport& t = o.tiers[l];
    EXPECT_EQ(t.mode, JitMode::kOn) << what;
#if RIGEL_HAVE_LLVM
    EXPECT_TRUE(t.compiled) << what << ": loop " << l << " stayed interpreted: " << t.why;
#else
    EXPECT_FALSE(t.compiled) << what;
    EXPECT_NE(t.why.find("llvm-19-dev"), std::string::npos) << what << ": " << t.why;
#endif
  }
}

void CompareTiers(const ir::Program& prog, const std::string& what) {
  Outcome off = RunAt(prog, JitMode::kOff);
  Outcome on = RunAt(prog, JitMode::kOn);
  ExpectSame(off, on, what);
  ExpectCompiled(on, what);
  for (const TierReport& t : off.tiers) EXPECT_FALSE(t.compiled) << what;
}

std::unique_ptr<ir::Program> CompileFile(const std::string& path,
                                         const std::vector<std::string>& sets) {
  frontend::CompileOptions co;
  for (const std::string& s : sets) co.sets.push_back(*frontend::ParseSetFlag(s));
  auto prog = frontend::CompileFile(path, co);
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  if (!prog.ok()) return nullptr;
  return std::make_unique<ir::Program>(std::move(prog).value());
}

std::unique_ptr<ir::Program> CompileText(const std::string& text) {
  auto prog = frontend::CompileText(text, testing::TempDir() + "/jit.rgl", {});
  EXPECT_TRUE(prog.ok()) << prog.status().message() << "\n" << text;
  if (!prog.ok()) return nullptr;
  return std::make_unique<ir::Program>(std::move(prog).value());
}

TEST(Jit, AvailableOrSaysWhy) {
  const Status st = jit::Available();
#if RIGEL_HAVE_LLVM
  EXPECT_TRUE(st.ok()) << st.message();
#else
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("llvm-19-dev"), std::string::npos) << st.message();
#endif
}

TEST(Jit, ParsesModes) {
  EXPECT_EQ(*ParseJitMode("auto"), JitMode::kAuto);
  EXPECT_EQ(*ParseJitMode("on"), JitMode::kOn);
  EXPECT_EQ(*ParseJitMode("off"), JitMode::kOff);
  auto bad = ParseJitMode("fast");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("auto, on, off"), std::string::npos);
}

// The tier's name in the logs, the same whether a report is named here
// (serial epoch lines) or sent as a worker's number (the scheduler's).
TEST(Jit, NamesTiersAlikeFromAReportAndFromAWorkersNumber) {
  TierReport t;
  EXPECT_STREQ(TierName(t), "interpreter");
  t.compiling = true;
  EXPECT_STREQ(TierName(t), "compiling");
  EXPECT_STREQ(TierNameOfCode(TierCode(t)), "compiling");
  t.compiled = true;  // compiled wins over a compile still in flight
  EXPECT_STREQ(TierName(t), "jit");
  EXPECT_EQ(TierCode(t), 2);
  EXPECT_STREQ(TierNameOfCode(-1), "interpreter");
  EXPECT_STREQ(TierNameOfCode(0.5), "interpreter");
  EXPECT_STREQ(TierNameOfCode(1.5), "compiling");
}

// Every example and every sample program of the end-to-end tests, on the
// data the build generates; fewer epochs where a run would take seconds.
TEST(Jit, EveryExampleAndTestProgramAsTheInterpreter) {
  const std::string ex = std::string(RIGEL_SOURCE_DIR) + "/examples/";
  const std::string data = ex + "data/";
  const std::string e2e = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/";
  struct Case {
    std::string file;
    std::vector<std::string> sets;
  };
  const Case cases[] = {
      {ex + "bias.rgl", {}},
      {ex + "ctr_fm.rgl", {"EPOCHS=1"}},
      {ex + "dense_lr.rgl", {}},
      {ex + "fm.rgl", {"EPOCHS=2"}},
      {ex + "kmeans.rgl", {}},
      {ex + "lda.rgl", {"ITERS=3"}},
      {ex + "mf.rgl", {"EPOCHS=3"}},
      {ex + "softmax.rgl", {"EPOCHS=3"}},
      {ex + "sparse_lr.rgl", {"EPOCHS=3"}},
      {ex + "wavefront.rgl", {"N=128", "M=128"}},
      {ex + "word2vec.rgl", {"EPOCHS=1", "corpus.path=" + data + "corpus.txt"}},
      {ex + "word2vec_heldout.rgl", {"EPOCHS=1"}},
      {e2e + "fm.rgl",
       {"train.path=" + data + "train.svm", "test.path=" + data + "test.svm", "EPOCHS=2"}},
      {e2e + "svm.rgl",
       {"train.path=" + data + "train.svm", "test.path=" + data + "test.svm", "EPOCHS=2"}},
      {e2e + "glove.rgl", {"pairs.path=" + data + "ratings.csv", "EPOCHS=2"}},
      {e2e + "rowsum.rgl", {}},
      {e2e + "vector_accum.rgl", {}},
      {e2e + "grow.rgl", {}},
      {e2e + "deepwalk.rgl", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto prog = CompileFile(c.file, c.sets);
    if (prog == nullptr) continue;
    CompareTiers(*prog, c.file);
  }
}

// Body shapes: every kind of instruction the examples leave out (integer
// and float scalars, comparisons, branches, inner loops, vector maps,
// element reads and writes, picks, samples, one-hot vectors, accumulators
// by element, draws), each in a loop over a few triples.
TEST(Jit, EveryInstructionShapeAsTheInterpreter) {
  ASSERT_TRUE(
      WriteFileAtomically(testing::TempDir() + "/jit.csv", "0,1,2\n1,0,3\n1,1,-1.5\n0,0,0.25\n")
          .ok());
  const char* bodies[] = {
      "let wi = W[i]\n W[i] = wi + 0.5 * H[j]\n H[j] = H[j] + 0.25 * wi",
      "W[i] = W[i] * 2\n H[j] = H[j] + W[i]",
      "let r = W[i]\n for k in 0..3 { W[i] += r }",
      "var g = zeros(16)\n var n = 0.0\n for k in 0..4 { g += 0.5 * H[j]\n n += 1 }\n"
      " W[i] = g - n",
      "W[i] = W[i] + 2 * H[j] + 3 * H[i] + W[j] * 0.5 - H[0] + 4 * W[0] + 0.25 * H[1] + W[1] +"
      " H[0] * 2 - W[i] * 0.5",
      "b[0] += v - dot(W[i], H[j])\n b[1] += dot(W[i], H[j]) * 0.5 + dot(H[j], H[j]) / 2",
      "H[j] = min(W[i] * H[j], 2.5) + clip(H[j] / 2, 0, 1) + abs(0 - W[i])",
      "let e = v - dot(W[i], H[j])\n if e > 0 { W[i] = W[i] + 0.1 * e * H[j] } else {"
      " H[j] = H[j] - 0.1 * e * W[i] }\n s += e * e",
      "let n = i * 7 + j\n let q = n / 2 + n % 3 - max(i, j) + min(i, 2)\n b[i] += q\n"
      " if i == j or (i < j and not (j >= 2)) { b[j] -= 1 }",
      "let x = v * 3.5 - 1\n b[0] += sqrt(abs(x)) + exp(0 - abs(x)) + log(1 + abs(x)) + tanh(x)"
      " + sigmoid(x) + log1pexp(x) + floor(x) + ceil(x) + pow(abs(x), 1.5) + max(x, 0.5) + min(x, "
      "0.5)",
      "let x = (i + j) + v\n b[i] += x / 3 - int(x) * 2",
      "let w = W[i] * H[j] + sqrt(abs(H[j])) - exp(0 - abs(W[i]))\n H[j] = w\n"
      " b[0] += sum(w) + norm(w) + w[3] + max(w) - argmin(w)",
      "var u = W[i]\n u[2] = 7\n u[j + 1] += v\n W[i] = u",
      "let p = abs(H[j]) + 0.01\n let k = sample(p)\n b[0] += k\n W[i] = W[i] + onehot(k, 16)",
      "c[i] += v\n c[2] += sum(W[i])\n c[j + 3] += 1",
      "b[0] += rand()\n b[1] += randint(10)\n W[i, j + 2] = W[i, j + 2] + rand()",
      "W[i, j] = W[i, j] * 2 + v\n b[j] = b[j] + W[i, 0]\n H[j] *= 0.5",
      "for k in 0..i + 2 { if k % 2 == 0 { b[0] += k } else { b[1] -= k } }",
  };
  for (const char* body : bodies) {
    SCOPED_TRACE(body);
    std::string text = std::string(R"(
data t = triples("jit.csv")
param W: f32[2, 16] = normal(0, 1, seed=3)
param H: f32[2, 16] = normal(0, 1, seed=4)
param b: f32[2] = zeros()
accum s: f32
accum c: f32[6]
for ep in 0..3 {
  s = 0
  c = 0
  parallel for (i, j, v) in t {
)") + body + "\n  }\n  print(\"s\", s, c[0], c[1], c[2], c[3], c[4], c[5])\n}\n";
    auto prog = CompileText(text);
    if (prog == nullptr) continue;
    CompareTiers(*prog, body);
  }
}

// A fault stops the run with the interpreter's message, at the same
// element, with the same writes done before it.
TEST(Jit, FaultsAsTheInterpreter) {
  ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/jitf.csv", "0,1,2\n1,0,3\n1,5,1\n").ok());
  const char* bodies[] = {
      "W[i] = W[i] + 1\n H[j] = H[j] + W[i]",         // row 5 of H: out of range
      "W[i] = W[i] + 1\n b[0] += i / (j - 5)",        // division by zero
      "W[i] = W[i] + 1\n b[0] += (j - 5) % (i - 1)",  // modulo by zero
      "b[0] += int(v / (v - 1))",                     // int() of infinity
      "b[0] += randint(j - 5)",                       // a bound that is not positive
      "let x = W[i]\n b[0] += x[j + 11]",             // element 16
      "W[i] = W[i] + 1\n let e = v - dot(W[i], H[j])\n H[j] = H[j] + e * W[i]",
  };
  for (const char* body : bodies) {
    SCOPED_TRACE(body);
    std::string text = std::string(R"(
data t = triples("jitf.csv")
param W: f32[2, 16] = fill(1)
param H: f32[2, 16] = fill(2)
param b: f32[2] = zeros()
parallel for (i, j, v) in t {
)") + body + "\n}\n";
    auto prog = CompileText(text);
    if (prog == nullptr) continue;
    Outcome off = RunAt(*prog, JitMode::kOff);
    ASSERT_FALSE(off.status.ok()) << "the body was meant to fault";
    Outcome on = RunAt(*prog, JitMode::kOn);
    ExpectSame(off, on, body);
    ExpectCompiled(on, body);
  }
}

#if RIGEL_HAVE_LLVM
// Under auto with the work ahead known (the serial executor knows the
// epochs left), a long run is compiled after its first stretch, in the
// background, and switches in the middle of a run: the results are those
// of the interpreter alone.
TEST(Jit, AutoCompilesALongRunEarlyAndSwitchesInTheMiddle) {
  auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl", {"EPOCHS=40"});
  ASSERT_NE(prog, nullptr);
  Outcome off = RunAt(*prog, JitMode::kOff);
  const double expected = ExpectedCompileMs();
  Outcome automatic = RunAt(*prog, JitMode::kAuto);
  ExpectSame(off, automatic, "mf under auto");
  ASSERT_FALSE(automatic.tiers.empty());
  const TierReport& train = automatic.tiers[0];
  EXPECT_TRUE(train.compiled) << train.why << " after " << train.interpreted_ms << " ms";
  EXPECT_GT(train.interpreted_ms, 0);
  EXPECT_LT(train.interpreted_ms, expected);
}

// A run too short to repay a compile stays interpreted, and says so: four
// elements, microseconds of work however slowly the interpreter runs (a
// sanitizer build runs mf's epochs slowly enough to repay one).
TEST(Jit, AutoLeavesAShortRunInterpreted) {
  ASSERT_TRUE(
      WriteFileAtomically(testing::TempDir() + "/jits.csv", "0,1,2\n1,0,3\n1,1,1\n0,0,4\n").ok());
  auto prog = CompileText(R"(
data t = triples("jits.csv")
param W: f32[2, 16] = normal(0, 1, seed=3)
param H: f32[2, 16] = normal(0, 1, seed=4)
for ep in 0..2 {
  parallel for (i, j, v) in t {
    let e = v - dot(W[i], H[j])
    W[i] = W[i] + 0.1 * e * H[j]
  }
}
)");
  ASSERT_NE(prog, nullptr);
  Outcome automatic = RunAt(*prog, JitMode::kAuto);
  ASSERT_TRUE(automatic.status.ok()) << automatic.status.message();
  ASSERT_FALSE(automatic.tiers.empty());
  for (const TierReport& t : automatic.tiers) {
    EXPECT_FALSE(t.compiled);
    EXPECT_FALSE(t.compiling);
    EXPECT_TRUE(t.why.empty()) << t.why;
  }
}

// Runs whose caller does not know the work ahead (work_left -1): the body
// is compiled once the interpreter has spent what a compile is expected to
// take, not before.
TEST(Jit, AutoWithoutKnownWorkCompilesOnceTheInterpreterSpentACompile) {
  auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl", {});
  ASSERT_NE(prog, nullptr);
  exec::ExecutorOptions opts;
  opts.compile.jit = JitMode::kAuto;
  auto ex = exec::SerialExecutor::Create(*prog, opts);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  const Kernel& k = (*ex)->kernel(0);
  RunContext ctx;
  ctx.params = &(*ex)->bindings();
  ctx.data = &(*ex)->data_ptrs();
  std::vector<double> accums(64, 0.0);
  ctx.accums = accums.data();
  ctx.outer = [](int) -> StatusOr<OuterValue> { return OuterValue{}; };
  const double expected = ExpectedCompileMs();
  const int64_t count = (*ex)->data(prog->loops[0].data).count;
  for (int run = 0; run < 2000 && !k.tier().compiled; ++run) {
    ASSERT_TRUE(k.Run(ctx, 0, count).ok());
  }
  const TierReport t = k.tier();
  ASSERT_TRUE(t.compiled) << t.why;
  EXPECT_GE(t.interpreted_ms, expected);
}

// The same body compiled twice in a process is compiled once.
TEST(Jit, AnEqualBodyIsCompiledOnce) {
  auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/sparse_lr.rgl", {});
  ASSERT_NE(prog, nullptr);
  Outcome first = RunAt(*prog, JitMode::kOn);
  Outcome second = RunAt(*prog, JitMode::kOn);
  ASSERT_FALSE(second.tiers.empty());
  EXPECT_TRUE(second.tiers[0].compiled);
  EXPECT_TRUE(second.tiers[0].cached);
  EXPECT_EQ(second.tiers[0].compile_ms, 0);
}

// `rigel dump-ir --jit`'s text: the body's function, for this CPU.
TEST(Jit, PrintsTheOptimisedIr) {
  auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl", {});
  ASSERT_NE(prog, nullptr);
  exec::ExecutorOptions opts;
  opts.compile.jit = JitMode::kOff;
  auto ex = exec::SerialExecutor::Create(*prog, opts);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  auto ir = (*ex)->kernel(0).JitIr();
  ASSERT_TRUE(ir.ok()) << ir.status().message();
  EXPECT_NE(ir->find("define"), std::string::npos);
  EXPECT_NE(ir->find("rigel_body_"), std::string::npos);
  EXPECT_NE(ir->find("target-cpu"), std::string::npos);
}
#endif

}  // namespace
}  // namespace rigel::kernel
