// libFuzzer target: the JIT tier (kernel/jit/) against the interpreter. The
// input chooses a loop body from a small grammar of the language's
// statements and expressions (row and element reads and writes, dot
// products, linear updates, scalar functions, comparisons and branches,
// inner loops, vector maps and picks, draws, accumulators, index
// arithmetic that may leave the parameters' rows); the program is compiled
// to bytecode by the real compiler, and run over a few triples by both
// tiers. Any difference is a crash: the status (a fault's message names
// the same place and element), the printed text, or a parameter's bits.
// Bodies the compiler rejects are skipped.
//
// Seeds: none needed (every input is a body); `scripts/test.sh --sanitize`
// runs it with the other fuzzers. Without LLVM in the build it has nothing
// to compare and stops at once.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"
#include "kernel/jit/jit.h"

namespace {

constexpr int kWidth = 8;

class BodyMaker {
 public:
  explicit BodyMaker(FuzzedDataProvider* in) : in_(*in) {}

  std::string Body() {
    std::string out;
    const int n = in_.ConsumeIntegralInRange(1, 5);
    for (int k = 0; k < n; ++k) out += Statement(0);
    return out;
  }

 private:
  // A row index: usually in range (rows 0..3), sometimes not.
  std::string Row() {
    switch (in_.ConsumeIntegralInRange(0, 5)) {
      case 0:
        return "i";
      case 1:
        return "j";
      case 2:
        return std::to_string(in_.ConsumeIntegralInRange(0, 3));
      case 3:
        return "(i + j) % 4";
      case 4:
        return "int(abs(" + Scalar(2) + ")) % 4";
      default:
        return "i + " + std::to_string(in_.ConsumeIntegralInRange(0, 4));  // maybe out of range
    }
  }
  std::string Col() {
    return in_.ConsumeBool() ? std::to_string(in_.ConsumeIntegralInRange(0, kWidth - 1))
                             : "(i * 3 + j) % " + std::to_string(kWidth);
  }
  std::string Vector(int depth) {
    const int pick = in_.ConsumeIntegralInRange(0, depth > 2 ? 2 : 7);
    switch (pick) {
      case 0:
        return "W[" + Row() + "]";
      case 1:
        return "H[" + Row() + "]";
      case 2:
        return "zeros(" + std::to_string(kWidth) + ")";
      case 3:
        return Scalar(depth + 1) + " * " + Vector(depth + 1);
      case 4:
        return Vector(depth + 1) + (in_.ConsumeBool() ? " + " : " - ") + Vector(depth + 1);
      case 5: {
        static const char* kFns[] = {"exp", "abs", "tanh", "sigmoid", "sqrt"};
        return std::string(kFns[in_.ConsumeIntegralInRange(0, 4)]) + "(" + Vector(depth + 1) + ")";
      }
      case 6:
        return "min(" + Vector(depth + 1) + ", " + Scalar(depth + 1) + ")";
      default:
        return "onehot(" + Row() + ", " + std::to_string(kWidth) + ")";
    }
  }
  std::string Scalar(int depth) {
    const int pick = in_.ConsumeIntegralInRange(0, depth > 2 ? 3 : 13);
    switch (pick) {
      case 0:
        return "v";
      case 1:
        return std::to_string(in_.ConsumeIntegralInRange(-3, 3)) + ".5";
      case 2:
        return "b[" + Row() + "]";
      case 3:
        return "W[" + Row() + ", " + Col() + "]";
      case 4:
        return "dot(" + Vector(depth + 1) + ", " + Vector(depth + 1) + ")";
      case 5: {
        static const char* kOps[] = {" + ", " - ", " * ", " / "};
        return "(" + Scalar(depth + 1) + kOps[in_.ConsumeIntegralInRange(0, 3)] +
               Scalar(depth + 1) + ")";
      }
      case 6: {
        static const char* kFns[] = {"exp", "log", "abs", "sqrt", "tanh", "sigmoid", "log1pexp",
                                     "floor", "ceil"};
        return std::string(kFns[in_.ConsumeIntegralInRange(0, 8)]) + "(" + Scalar(depth + 1) +
               ")";
      }
      case 7:
        return (in_.ConsumeBool() ? "min(" : "max(") + Scalar(depth + 1) + ", " +
               Scalar(depth + 1) + ")";
      case 8:
        return "sum(" + Vector(depth + 1) + ")";
      case 9:
        return (in_.ConsumeBool() ? "max(" : "norm(") + Vector(depth + 1) + ")";
      case 10:
        return "rand()";
      case 11:
        return "(i * 2 - j)";
      case 12:
        return "clip(" + Scalar(depth + 1) + ", 0 - 1, 1)";
      default:
        return "pow(abs(" + Scalar(depth + 1) + "), 0.5)";
    }
  }
  std::string Cond() {
    static const char* kCmp[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    std::string c = Scalar(1) + kCmp[in_.ConsumeIntegralInRange(0, 5)] + Scalar(1);
    if (in_.ConsumeIntegralInRange(0, 3) == 0) c = "not (" + c + ") or i == j";
    return c;
  }
  std::string Statement(int depth) {
    const int pick = in_.ConsumeIntegralInRange(0, depth > 1 ? 5 : 8);
    switch (pick) {
      case 0:
        return "b[" + Row() + "] += " + Scalar(0) + "\n";
      case 1: {
        const std::string r = Row();
        return "W[" + r + "] = W[" + r + "] + 0.01 * " + Vector(1) + "\n";
      }
      case 2: {
        const std::string r = Row();
        return "H[" + r + "] = H[" + r + "] - 0.02 * " + Scalar(1) + " * W[" + Row() + "]\n";
      }
      case 3:
        return "s += " + Scalar(0) + "\n";
      case 4:
        return "W[" + Row() + ", " + Col() + "] = " + Scalar(1) + "\n";
      case 5:
        return "c[" + Col() + " % 3] += " + Scalar(1) + "\n";
      case 6:
        return "if " + Cond() + " {\n" + Statement(depth + 1) + "} else {\n" +
               Statement(depth + 1) + "}\n";
      case 7:
        return "for k in 0.." + std::to_string(in_.ConsumeIntegralInRange(0, 3)) + " {\n" +
               Statement(depth + 1) + "}\n";
      default: {
        const std::string e = Vector(1);
        return "let u = " + e + "\n b[" + Row() + "] += u[" + Col() + "] + argmax(u)\n";
      }
    }
  }

  FuzzedDataProvider& in_;
};

struct Outcome {
  rigel::Status status = rigel::Status::Ok();
  std::string out;
  std::vector<std::vector<float>> params;
  bool compiled = true;
};

Outcome Run(const rigel::ir::Program& prog, rigel::kernel::JitMode mode) {
  std::ostringstream out;
  rigel::exec::ExecutorOptions opts;
  opts.out = &out;
  opts.compile.jit = mode;
  Outcome o;
  auto ex = rigel::exec::SerialExecutor::Create(prog, opts);
  if (!ex.ok()) {
    o.status = ex.status();
    return o;
  }
  o.status = (*ex)->Run();
  o.out = out.str();
  for (size_t p = 0; p < prog.params.size(); ++p) o.params.push_back((*ex)->param(p));
  for (size_t l = 0; l < prog.loops.size(); ++l) {
    o.compiled = o.compiled && (*ex)->kernel(static_cast<int>(l)).tier().compiled;
  }
  return o;
}

[[noreturn]] void Differ(const std::string& text, const std::string& what) {
  std::fprintf(stderr, "jit_fuzz: the tiers differ (%s) on\n%s\n", what.c_str(), text.c_str());
  std::abort();
}

std::string& Dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/rigel-jit-fuzz-XXXXXX";
    const char* d = mkdtemp(tmpl);
    std::string path = d ? d : "/tmp";
    (void)rigel::WriteFileAtomically(path + "/t.csv", "0,1,2\n1,0,-3\n2,3,0.5\n3,3,1\n1,2,4\n");
    return path;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!rigel::kernel::jit::Available().ok()) return 0;
  FuzzedDataProvider in(data, size);
  const std::string body = BodyMaker(&in).Body();
  const std::string text = std::string(R"(
data t = triples("t.csv")
param W: f32[4, 8] = normal(0, 1, seed=3)
param H: f32[4, 8] = normal(0, 1, seed=4)
param b: f32[4] = zeros()
accum s: f32
accum c: f32[3]
for ep in 0..2 {
  s = 0
  c = 0
  parallel for (i, j, v) in t {
)") + body + "  }\n  print(s, c[0], c[1], c[2])\n}\n";
  auto prog = rigel::frontend::CompileText(text, Dir() + "/jit_fuzz.rgl", {});
  if (!prog.ok()) return 0;
  Outcome off = Run(*prog, rigel::kernel::JitMode::kOff);
  Outcome on = Run(*prog, rigel::kernel::JitMode::kOn);
  if (!on.compiled) Differ(text, "a body the JIT did not compile");
  if (off.status.code() != on.status.code() || off.status.message() != on.status.message()) {
    Differ(text, "status: '" + off.status.message() + "' vs '" + on.status.message() + "'");
  }
  if (off.out != on.out) Differ(text, "output: '" + off.out + "' vs '" + on.out + "'");
  if (off.params.size() != on.params.size()) Differ(text, "parameter count");
  for (size_t p = 0; p < off.params.size(); ++p) {
    if (off.params[p].size() != on.params[p].size() ||
        std::memcmp(off.params[p].data(), on.params[p].data(),
                    off.params[p].size() * sizeof(float)) != 0) {
      Differ(text, "parameter " + std::to_string(p));
    }
  }
  return 0;
}
