// Turning off any pass of the loop compiler keeps programs correct: every
// example program (examples/*.rgl on the data the build generates in
// examples/data) and the kernel tests' update shapes run with each pass
// disabled in turn, with verification on, and print what the full pipeline
// prints and end with the same parameters.
//
// Exactly, except for merge-reads: without it, two reads of the same row are
// two terms of a linear form instead of one with the summed coefficient
// (`H - lr*reg*H` instead of `(1 - lr*reg) * H`), which rounds differently.
// For it numbers are compared to a relative 1e-5 (printed) and 1e-4
// (parameters); everything else about the output must still be equal. Under
// clang, every pass is compared that way (see Reassociates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"
#include "kernel/passes/pipeline.h"

namespace rigel::kernel {
namespace {

// clang contracts a*b+c into one fused multiply-add within an expression
// (-ffp-contract=on; GCC contracts across statements), so there a pass that
// changes which expression computes a value (fuse-row-writes) changes the
// rounding too: under clang (the sanitizer build) every pass is compared
// within the tolerance.
bool Reassociates(const std::string& pass) {
#if defined(__clang__)
  return true;
#elif defined(__FMA__)
  // With FMA in the target (-march=native on a CPU that has it) GCC
  // contracts a*b+c in some loops and not in others, and a specialised row
  // kernel is another loop than the generic one.
  return pass == "merge-reads" || pass == "specialise-row-kernels";
#else
  return pass == "merge-reads";
#endif
}

struct Outcome {
  std::string out;
  std::vector<std::vector<float>> params;
};

// Compiles `prog` with `disabled` skipped (none when empty) and runs it.
Outcome Run(const ir::Program& prog, const std::string& disabled) {
  std::ostringstream out;
  exec::ExecutorOptions opts;
  opts.out = &out;
  opts.compile.verify = true;
  if (!disabled.empty()) opts.compile.disable = {disabled};
  auto ex = exec::SerialExecutor::Create(prog, opts);
  EXPECT_TRUE(ex.ok()) << disabled << ": " << ex.status().message();
  if (!ex.ok()) return {};
  Status st = (*ex)->Run();
  EXPECT_TRUE(st.ok()) << disabled << ": " << st.message();
  Outcome o;
  o.out = out.str();
  for (size_t p = 0; p < prog.params.size(); ++p) o.params.push_back((*ex)->param(p));
  return o;
}

bool Near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

// Words of the two outputs are equal, or numbers within `rel`.
void ExpectSameText(const std::string& want, const std::string& got, double rel,
                    const std::string& what) {
  if (rel == 0) {
    EXPECT_EQ(got, want) << what;
    return;
  }
  std::istringstream a(want), b(got);
  std::string x, y;
  while (a >> x) {
    ASSERT_TRUE(b >> y) << what << ": output ends early\n" << got;
    char *ex, *ey;
    double dx = std::strtod(x.c_str(), &ex), dy = std::strtod(y.c_str(), &ey);
    if (*ex == '\0' && *ey == '\0' && ex != x.c_str() && ey != y.c_str()) {
      EXPECT_TRUE(Near(dx, dy, rel)) << what << ": " << y << " instead of " << x;
    } else {
      EXPECT_EQ(y, x) << what;
    }
  }
  EXPECT_FALSE(b >> y) << what << ": more output than expected\n" << got;
}

void ExpectSameParams(const Outcome& want, const Outcome& got, double rel,
                      const std::string& what) {
  ASSERT_EQ(got.params.size(), want.params.size()) << what;
  for (size_t p = 0; p < want.params.size(); ++p) {
    ASSERT_EQ(got.params[p].size(), want.params[p].size()) << what;
    size_t bad = 0;
    for (size_t k = 0; k < want.params[p].size(); ++k) {
      float a = want.params[p][k], b = got.params[p][k];
      bool same = rel == 0 ? std::memcmp(&a, &b, sizeof a) == 0 : Near(a, b, rel);
      if (!same && bad++ < 3)
        ADD_FAILURE() << what << ": param " << p << "[" << k << "] = " << b << " instead of " << a;
    }
    EXPECT_EQ(bad, 0u) << what << ": param " << p;
  }
}

// Runs `prog` with every pass disabled in turn against the full pipeline.
void CompareEachDisabled(const ir::Program& prog, const std::string& name) {
  Outcome full = Run(prog, "");
  ASSERT_FALSE(full.params.empty() && full.out.empty()) << name;
  for (const passes::Pass* pass : passes::Pipeline()) {
    const std::string p(pass->name());
    SCOPED_TRACE(name + " without " + p);
    Outcome without = Run(prog, p);
    ExpectSameText(full.out, without.out, Reassociates(p) ? 1e-5 : 0, name + " without " + p);
    ExpectSameParams(full, without, Reassociates(p) ? 1e-4 : 0, name + " without " + p);
  }
}

std::unique_ptr<ir::Program> CompileExample(const std::string& name,
                                            const std::vector<std::string>& sets) {
  frontend::CompileOptions co;
  for (const std::string& s : sets) co.sets.push_back(*frontend::ParseSetFlag(s));
  auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/" + name, co);
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  if (!prog.ok()) return nullptr;
  return std::make_unique<ir::Program>(std::move(prog).value());
}

TEST(DisablePasses, EveryExampleProgram) {
  struct Example {
    const char* file;
    std::vector<std::string> sets;
  };
  // Fewer epochs where a run would take seconds; every loop still runs.
  const Example examples[] = {{"mf.rgl", {"EPOCHS=5"}},
                              {"bias.rgl", {}},
                              {"sparse_lr.rgl", {"EPOCHS=3"}},
                              {"word2vec.rgl", {"EPOCHS=1", "WINDOW=1", "NEG=1"}},
                              {"dense_lr.rgl", {}},
                              {"wavefront.rgl", {"N=128", "M=128"}}};
  for (const Example& e : examples) {
    auto prog = CompileExample(e.file, e.sets);
    ASSERT_NE(prog, nullptr) << e.file;
    CompareEachDisabled(*prog, e.file);
  }
}

// The update shapes of kernel_test.cc (paired writes through a let, a
// second write reading the first, a copy used after a pair, writes of one
// parameter, reads around a write, inner loops, long combinations, dots,
// non-linear vector ops), here with a width the row kernels specialise.
TEST(DisablePasses, KernelTestPrograms) {
  ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/dp.csv", "0,1,2\n1,0,3\n").ok());
  const char* bodies[] = {
      "let wi = W[i]\n W[i] = wi + 0.5 * H[j]\n H[j] = H[j] + 0.25 * wi",
      "W[i] = W[i] * 2\n H[j] = H[j] + W[i]",
      "let wi = W[i]\n W[i] = wi * 4\n H[j] = H[j] + wi\n b[i] += sum(wi)",
      "H[j] = H[j] + 1\n H[i] = H[i] + H[j]",
      "let before = W[i]\n W[i] = W[i] + 10\n let after = W[i]\n H[j] = before + after",
      "let r = W[i]\n W[i, 0] = 7\n H[j] = r",
      "let r = W[i]\n for k in 0..3 { W[i] += r }",
      "var g = zeros(16)\n var c = 0.0\n for k in 0..4 { g += 0.5 * H[j]\n c += 1 }\n"
      " W[i] = g - c",
      "W[i] = W[i] + 2 * H[j] + 3 * H[i] + W[j] * 0.5 - H[0] + 4 * W[0] + 0.25 * H[1] + W[1] +"
      " H[0] * 2 - W[i] * 0.5",
      "b[0] += v - dot(W[i], H[j])\n b[1] += dot(W[i], H[j]) * 0.5 + dot(H[j], H[j]) / 2",
      "let d = dot(W[i], H[j])\n b[0] += d - 1\n b[1] += d * d",
      "H[j] = min(W[i] * H[j], 2.5) + clip(H[j] / 2, 0, 1) + abs(0 - W[i])",
      "let e = v - dot(W[i], H[j])\n if e > 0 { W[i] = W[i] + 0.1 * e * H[j] } else {"
      " H[j] = H[j] - 0.1 * e * W[i] }\n s += e * e",
  };
  for (const char* body : bodies) {
    std::string text = std::string(R"(
data t = triples("dp.csv")
param W: f32[2, 16] = normal(0, 1, seed=3)
param H: f32[2, 16] = normal(0, 1, seed=4)
param b: f32[2] = zeros()
accum s: f32
for ep in 0..3 {
  s = 0
  parallel for (i, j, v) in t {
)") + body + "\n  }\n  print(\"s\", s)\n}\n";
    auto prog = frontend::CompileText(text, testing::TempDir() + "/dp.rgl", {});
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    CompareEachDisabled(*prog, body);
  }
}

}  // namespace
}  // namespace rigel::kernel
