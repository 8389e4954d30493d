#include "kernel/tier.h"

#include <cstdlib>
#include <string>

#include "kernel/kernel_impl.h"

namespace rigel::kernel {

namespace {

// Every compile of this process (for ExpectedCompileMs): a body compiled once
// repays itself sooner in later runs of the same size, and a machine slower
// to compile than the first estimate says so after its first compile.
std::atomic<int64_t> compiles{0};
std::atomic<int64_t> compile_us{0};

}  // namespace

StatusOr<JitMode> ParseJitMode(std::string_view text) {
  if (text == "off") return JitMode::kOff;
  if (text == "on") return JitMode::kOn;
  if (text == "auto") return JitMode::kAuto;
  return InvalidArgument("the JIT mode is one of auto, on, off; got '" + std::string(text) + "'");
}

const char* JitModeName(JitMode mode) {
  switch (mode) {
    case JitMode::kOff:
      return "off";
    case JitMode::kOn:
      return "on";
    case JitMode::kAuto:
      return "auto";
  }
  return "?";
}

double TierCode(const TierReport& t) { return t.compiled ? 2 : t.compiling ? 1 : 0; }

const char* TierNameOfCode(double code) {
  return code >= 2 ? "jit" : code >= 1 ? "compiling" : "interpreter";
}

const char* TierName(const TierReport& t) { return TierNameOfCode(TierCode(t)); }

StatusOr<JitMode> DefaultJitMode() {
  const char* env = std::getenv("RIGEL_JIT");
  if (env == nullptr || *env == '\0') return JitMode::kAuto;
  auto mode = ParseJitMode(env);
  if (!mode.ok()) return InvalidArgument("RIGEL_JIT: " + mode.status().message());
  return mode;
}

double ExpectedCompileMs() {
  const int64_t n = compiles.load(std::memory_order_relaxed);
  if (n == 0) return kFirstCompileEstimateMs;
  return compile_us.load(std::memory_order_relaxed) / 1000.0 / static_cast<double>(n);
}

Tier::Tier(const Kernel::Impl& k, JitMode mode) {
  // The widths a compiled body takes as constants where the interpreter
  // reads the binding (kernel/row_calls.h).
  for (const VOp& o : k.code) {
    if (o.code == kWrRowLin) needs_.push_back({o.aux, false, o.n});
    if (o.code == kWrRowPair) needs_.push_back({o.aux, false, k.prog->params[o.aux].width});
    if (o.code == kWrWholeLin) needs_.push_back({o.aux, true, o.n});
  }
  {
    MutexLock lock(&mu_);
    report_.mode = mode;
    if (mode == JitMode::kOff) report_.why = "--jit off";
  }
  if (mode == JitMode::kOn) {
    CompileNow(k, 0);
  } else if (mode == JitMode::kAuto) {
    if (k.key_slice) {
      MutexLock lock(&mu_);
      report_.why = "key slices run interpreted";
    } else {
      watching_.store(true, std::memory_order_relaxed);
    }
  }
}

void Tier::Interpreted(const Kernel::Impl& k, int64_t ns, int64_t elements, int64_t left) {
  const int64_t total = interpreted_ns_.fetch_add(ns, std::memory_order_relaxed) + ns;
  const int64_t done =
      interpreted_elements_.fetch_add(elements, std::memory_order_relaxed) + elements;
  const double compile_ns = ExpectedCompileMs() * 1e6;
  if (left >= 0 && done > 0) {
    // What is left, at the interpreter's pace so far, must save more than
    // the compile costs: compiled code takes 1 / speed-up of its time.
    const double saved = static_cast<double>(total) / static_cast<double>(done) *
                         static_cast<double>(left) * (1 - 1 / kExpectedJitSpeedup);
    if (saved < compile_ns) return;
  } else if (static_cast<double>(total) < compile_ns) {
    // Nothing known of what is left: compile once the interpreter has spent
    // what a compile takes.
    return;
  }
  // The thread that crosses the line starts the compile on a thread of its
  // own and goes on interpreting, as every other does, until the body is
  // there (HyPer's way): on a machine with a core to spare the compile
  // costs the run nothing.
  if (watching_.exchange(false, std::memory_order_relaxed)) {
    const double interpreted_ms = static_cast<double>(total) / 1e6;
    {
      MutexLock lock(&mu_);
      report_.compiling = true;
      report_.interpreted_ms = interpreted_ms;
    }
    compiler_ = std::thread([this, &k, interpreted_ms] { CompileNow(k, interpreted_ms); });
  }
}

Tier::~Tier() {
  // The compile reads the body, which outlives this Tier (Impl::tier is
  // its last member, so it goes first).
  if (compiler_.joinable()) compiler_.join();
}

void Tier::CompileNow(const Kernel::Impl& k, double interpreted_ms) {
  StatusOr<jit::Compiled> c = jit::Compile(k);
  MutexLock lock(&mu_);
  report_.interpreted_ms = interpreted_ms;
  report_.compiling = false;
  if (!c.ok()) {
    report_.why = c.status().message();
    return;
  }
  report_.compiled = true;
  report_.cached = c->cached;
  report_.compile_ms = c->compile_ms;
  report_.lower_ms = c->lower_ms;
  report_.optimise_ms = c->optimise_ms;
  report_.codegen_ms = c->codegen_ms;
  report_.ir_instructions = c->instructions;
  report_.why.clear();
  if (!c->cached) {
    compiles.fetch_add(1, std::memory_order_relaxed);
    compile_us.fetch_add(static_cast<int64_t>(c->compile_ms * 1000), std::memory_order_relaxed);
  }
  fn_.store(c->fn, std::memory_order_release);
}

bool Tier::Fits(const std::vector<ParamBinding>& params) const {
  for (const Need& n : needs_) {
    const ParamBinding& b = params[n.param];
    if ((n.rows ? b.rows : b.width) != n.value) return false;
  }
  return true;
}

TierReport Tier::Report() const {
  MutexLock lock(&mu_);
  TierReport r = report_;
  if (!r.compiled && !r.compiling && r.mode == JitMode::kAuto && r.why.empty()) {
    r.interpreted_ms = static_cast<double>(interpreted_ns_.load(std::memory_order_relaxed)) / 1e6;
  }
  return r;
}

}  // namespace rigel::kernel
