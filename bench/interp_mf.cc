// bench/interp_mf: the MF training loop of examples/mf.rgl run by the IR
// executor's interpreter, by its JIT tier (kernel/jit/, --jit on) and by a
// hand-written, vectorised C++ loop over the same data in the same order
// (K = 16, one thread, one process). Prints updates/s of each tier against
// the hand-written loop as JSON lines (DESIGN.md convention); a table to
// stderr. Without the JIT in the build its line says so.
// A second figure runs the same kernel with W and H held in part, every row
// reached through a slot map (kernel::ParamBinding::slots, as a worker's row
// cache of a table larger than it holds binds it), against the whole copy.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "examples/generators.h"
#include "exec/executor.h"
#include "frontend/compile.h"

namespace {

constexpr int kK = 16;
constexpr float kLr = 0.02f, kReg = 0.05f;

const char* kProgram = R"(
const K = 16
const lr = 0.02
const reg = 0.05
data train = triples("ratings.csv", sep=",")
param W: f32[train.rows, K] = normal(0, 0.1, seed=1)
param H: f32[train.cols, K] = normal(0, 0.1, seed=2)
parallel for (i, j, v) in train {
  let e = v - dot(W[i], H[j])
  let wi = W[i]
  W[i] = wi + lr * (e * H[j] - reg * wi)
  H[j] = H[j] + lr * (e * wi - reg * H[j])
}
)";

// The reference: what a careful engineer writes by hand. K is a compile-time
// constant so every row loop is unrolled into two 8-wide SIMD operations.
__attribute__((noinline)) void HandWritten(const int32_t* ti, const int32_t* tj, const float* tv,
                                           int64_t n, float* __restrict W, float* __restrict H) {
  for (int64_t e = 0; e < n; ++e) {
    float* __restrict w = W + static_cast<int64_t>(ti[e]) * kK;
    float* __restrict h = H + static_cast<int64_t>(tj[e]) * kK;
    // Eight independent partial sums: one 8-wide SIMD multiply-add per half
    // row instead of a 16-long serial chain (GCC does not reassociate floats).
    float acc[8];
    for (int u = 0; u < 8; ++u) acc[u] = w[u] * h[u] + w[u + 8] * h[u + 8];
    float dot = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    float err = tv[e] - dot;
    for (int k = 0; k < kK; ++k) {
      float wk = w[k], hk = h[k];
      w[k] = wk + kLr * (err * hk - kReg * wk);
      h[k] = hk + kLr * (err * wk - kReg * hk);
    }
  }
}

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A parameter held in part with every row present: row r in cell
// rows - 1 - r, so that no row sits where a whole copy has it.
struct Cells {
  std::vector<int32_t> slots;
  std::vector<float> values;
};
Cells HoldReversed(const std::vector<float>& whole, int64_t width) {
  const int64_t rows = static_cast<int64_t>(whole.size()) / width;
  Cells c;
  c.slots.resize(static_cast<size_t>(rows));
  c.values.resize(whole.size());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t cell = rows - 1 - r;
    c.slots[static_cast<size_t>(r)] = static_cast<int32_t>(cell);
    std::copy_n(whole.data() + r * width, width, c.values.data() + cell * width);
  }
  return c;
}

// The slot-map figure: alternating one-epoch trials of the kernel over the
// executor's whole W and H and over copies held in part; the median ratio
// of their times. 0 after printing the JSON line, 1 on an error.
int SlotMapFigure(rigel::exec::SerialExecutor& ex, int trials) {
  const std::vector<rigel::kernel::ParamBinding>& whole = ex.bindings();
  Cells w = HoldReversed(ex.param(0), whole[0].width);
  Cells h = HoldReversed(ex.param(1), whole[1].width);
  std::vector<rigel::kernel::ParamBinding> in_part = whole;
  in_part[0].data = w.values.data();
  in_part[0].slots = w.slots.data();
  in_part[1].data = h.values.data();
  in_part[1].slots = h.slots.data();
  const rigel::data::Dataset& d = ex.data(0);
  std::vector<double> whole_t, part_t, ratios;
  for (int t = 0; t < trials; ++t) {
    double a = 0, b = 0;
    for (int side = 0; side < 2; ++side) {
      const bool run_whole = (side == 0) == (t % 2 == 0);
      rigel::kernel::RunContext ctx;
      ctx.params = run_whole ? &whole : &in_part;
      ctx.data = &ex.data_ptrs();
      auto t0 = std::chrono::steady_clock::now();
      rigel::Status st = ex.kernel(0).Run(ctx, 0, d.count);
      if (!st.ok()) {
        std::fprintf(stderr, "interp_mf: %s\n", st.message().c_str());
        return 1;
      }
      (run_whole ? a : b) = Seconds(t0);
    }
    whole_t.push_back(a);
    part_t.push_back(b);
    ratios.push_back(a / b);
  }
  const double ours = d.count / Median(part_t), ref = d.count / Median(whole_t);
  const double ratio = Median(ratios);
  std::fprintf(stderr, "  %-26s %12.3g updates/s\n", "held in part (slot maps)", ours);
  std::fprintf(stderr, "  %-26s %12.3g updates/s\n", "held whole", ref);
  std::fprintf(stderr, "  ratio %.3f (goal >= 0.9)\n", ratio);
  std::printf(
      "{\"bench\": \"interp_mf\", \"case\": \"mf_sgd/K16/slot_map\", \"metric\": "
      "\"updates/s\", \"ours\": %.6g, \"reference\": %.6g, \"reference_name\": \"the same "
      "kernel over whole copies\", \"ratio\": %.4f, \"goal\": 0.9, \"better\": \"higher\"}\n",
      ours, ref, ratio);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: interp_mf [--quick]\n");
      return 2;
    }
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("rigel_interp_mf_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  rigel::examples::RatingsOptions gen;
  gen.out = (dir / "ratings.csv").string();
  gen.write_info = false;
  if (quick) gen.count = 100000;
  auto made = rigel::examples::GenerateRatings(gen);
  if (!made.ok()) {
    std::fprintf(stderr, "interp_mf: %s\n", made.status().ToString().c_str());
    return 1;
  }
  std::string prog_path = (dir / "mf_bench.rgl").string();
  auto prog = rigel::frontend::CompileText(kProgram, prog_path, {});
  if (!prog.ok()) {
    std::fprintf(stderr, "interp_mf: %s\n", prog.status().message().c_str());
    return 1;
  }
  // Each tier in its own executor: the interpreter never switches (off),
  // the JIT's body is compiled before the first trial (on).
  rigel::exec::ExecutorOptions interp_opts, jit_opts;
  interp_opts.compile.jit = rigel::kernel::JitMode::kOff;
  jit_opts.compile.jit = rigel::kernel::JitMode::kOn;
  auto ex = rigel::exec::SerialExecutor::Create(*prog, interp_opts);
  auto exj = rigel::exec::SerialExecutor::Create(*prog, jit_opts);
  fs::remove_all(dir);
  if (!ex.ok() || !exj.ok()) {
    std::fprintf(stderr, "interp_mf: %s\n",
                 (ex.ok() ? exj.status() : ex.status()).message().c_str());
    return 1;
  }
  const rigel::kernel::TierReport jit_tier = (*exj)->kernel(0).tier();
  const rigel::data::Dataset& d = (*ex)->data(0);
  std::vector<float> W0 = (*ex)->param(0), H0 = (*ex)->param(1);
  // Many short trials, each timing one epoch of both loops back to back (in
  // alternating order), and the median of the per-trial ratios: machine
  // noise that drifts over seconds hits both sides of a trial alike.
  int trials = quick ? 9 : 41;
  std::vector<double> ours_t, ref_t, jit_t, ratios, jit_ratios;
  (*ex)->mutable_param(0) = W0;
  (*ex)->mutable_param(1) = H0;
  (*exj)->mutable_param(0) = W0;
  (*exj)->mutable_param(1) = H0;
  std::vector<float> W = W0, H = H0;
  for (int t = 0; t < trials; ++t) {
    double a = 0, b = 0, c = 0;
    // The three sides in a rotating order.
    for (int k = 0; k < 3; ++k) {
      const int side = (k + t) % 3;
      auto t0 = std::chrono::steady_clock::now();
      if (side == 0 || side == 2) {
        rigel::Status st = (side == 0 ? *ex : *exj)->RunLoop(0);
        if (!st.ok()) {
          std::fprintf(stderr, "interp_mf: %s\n", st.message().c_str());
          return 1;
        }
        (side == 0 ? a : c) = Seconds(t0);
      } else {
        HandWritten(d.ti.data(), d.tj.data(), d.tv.data(), d.count, W.data(), H.data());
        b = Seconds(t0);
      }
    }
    ours_t.push_back(a);
    ref_t.push_back(b);
    jit_t.push_back(c);
    ratios.push_back(b / a);
    jit_ratios.push_back(b / c);
  }
  auto median = Median;
  int epochs = trials;
  // Both computed the same SGD; their results must agree up to rounding from
  // the executor's fused (reassociated) row updates.
  double max_diff = 0;
  const std::vector<float>& Wx = (*ex)->param(0);
  for (size_t k = 0; k < W.size(); ++k)
    max_diff = std::max(max_diff, double(std::fabs(W[k] - Wx[k])));
  // The tiers compute the same values bit for bit.
  const bool tiers_agree =
      (*ex)->param(0) == (*exj)->param(0) && (*ex)->param(1) == (*exj)->param(1);
  double ours = d.count / median(ours_t), ref = d.count / median(ref_t);
  double ratio = median(ratios);
  std::fprintf(stderr, "interp_mf: %lld ratings, K=16, %d alternating one-epoch trials, medians\n",
               static_cast<long long>(d.count), epochs);
  std::fprintf(stderr, "  %-26s %12.3g updates/s\n", "executor (bytecode)", ours);
  std::fprintf(stderr, "  %-26s %12.3g updates/s\n", "hand-written C++ -O3", ref);
  std::fprintf(stderr, "  ratio %.3f (goal >= 0.3); max |W diff| %.3g\n", ratio, max_diff);
  std::printf(
      "{\"bench\": \"interp_mf\", \"case\": \"mf_sgd/K16\", \"metric\": \"updates/s\", "
      "\"ours\": %.6g, \"reference\": %.6g, \"reference_name\": \"hand-written C++ -O3 "
      "loop\", \"ratio\": %.4f, \"goal\": 0.3, \"better\": \"higher\"}\n",
      ours, ref, ratio);
  if (jit_tier.compiled) {
    const double jit = d.count / median(jit_t), jit_ratio = median(jit_ratios);
    std::fprintf(stderr, "  %-26s %12.3g updates/s\n", "executor (jit)", jit);
    std::fprintf(stderr, "  ratio %.3f (goal >= 0.9); compiled in %.1f ms; %s the interpreter's\n",
                 jit_ratio, jit_tier.compile_ms, tiers_agree ? "same values as" : "DIFFERENT from");
    std::printf(
        "{\"bench\": \"interp_mf\", \"case\": \"mf_sgd/K16/jit\", \"metric\": \"updates/s\", "
        "\"ours\": %.6g, \"reference\": %.6g, \"reference_name\": \"hand-written C++ -O3 "
        "loop\", \"ratio\": %.4f, \"goal\": 0.9, \"better\": \"higher\", \"compile_ms\": "
        "%.2f}\n",
        jit, ref, jit_ratio, jit_tier.compile_ms);
  } else {
    std::fprintf(stderr, "  executor (jit): not run: %s\n", jit_tier.why.c_str());
    std::printf("{\"bench\": \"interp_mf\", \"case\": \"mf_sgd/K16/jit\", \"skipped\": \"%s\"}\n",
                jit_tier.why.c_str());
  }
  if (max_diff > 1e-2) {
    std::fprintf(stderr, "interp_mf: results differ from the reference by %g\n", max_diff);
    return 1;
  }
  if (jit_tier.compiled && !tiers_agree) {
    std::fprintf(stderr, "interp_mf: the JIT's parameters differ from the interpreter's\n");
    return 1;
  }
  return SlotMapFigure(**ex, trials);
}
