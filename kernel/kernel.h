// A compiled `parallel for` body: the loop IR lowered to a flat register
// bytecode that an interpreter runs over a range of the loop's elements.
//
// Compilation happens once data are loaded, so every vector width is a known
// number. It (1) maps registers to scalar slots and vector buffers, (2) turns
// row and whole-parameter reads into views of parameter memory when no write
// to that parameter can happen while the view is live (otherwise a copy), and
// (3) fuses linear vector expressions (sums of scalar-times-vector terms, the
// shape of every SGD update) into one pass that writes straight into the
// destination row. These steps are named passes of one pipeline
// (kernel/passes/pipeline.h) that CompileOptions can print, skip and verify.
// Values are those of evaluating the IR in f32, up to the rounding of the
// reassociated linear combinations; the same kernel runs on the serial path
// and on workers, so they agree exactly with each other.
//
// A Kernel is immutable after Compile; each Run() keeps its mutable state
// (scalar slots, the vector arena) in its own call, so one Kernel can run on
// several threads at once.
#ifndef RIGEL_KERNEL_KERNEL_H_
#define RIGEL_KERNEL_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"
#include "ir/ir.h"
#include "kernel/passes/stats.h"

namespace rigel::kernel {

// Counts the writes of a parameter's rows during runs (a worker's write-back
// row cache, ps/cache.h, counts its pending updates this way): each row or
// element write of row r adds 1 to updates[c], c = cells[r] when `cells` is
// set (a cache's slot map: rows it does not hold, cells[r] < 0, are not
// counted) and r otherwise, and the write that brings it to `bound` appends r
// to *due. Not owned; whole-parameter writes are not counted.
struct RowTracker {
  uint32_t* updates = nullptr;  // one per cell (per row without `cells`)
  uint32_t bound = UINT32_MAX;
  std::vector<int64_t>* due = nullptr;  // rows whose count reached `bound`
  // When set: rows whose count went from 0 to 1 (their first update since
  // they were last pushed), so a cache can push them by age.
  std::vector<int64_t>* started = nullptr;
  const int32_t* cells = nullptr;  // one per row, or null
};

// Where one parameter's values live during a run: `rows` rows of `width`
// floats (width 1 for 1-D parameters); `tracker`, when set, counts the
// writes. Whole (no `slots`): row r is at data + r * width. Held in part
// through a slot map (a worker's row cache of a table larger than it holds,
// ps/cache.h): row r is at data + slots[r] * width, and a row with
// slots[r] < 0 is not held here, so touching it, or reading or writing the
// parameter whole, ends the run with Internal (the rows planned for the
// step missed it: a bug, not the program's error). Not owned.
struct ParamBinding {
  float* data = nullptr;
  int64_t rows = 0;
  int64_t width = 1;
  const RowTracker* tracker = nullptr;
  const int32_t* slots = nullptr;  // one per row, or null: whole
  // Row r's values (r in [0, rows)), or null when the slot map does not
  // hold it.
  float* Row(int64_t r) const {
    if (slots == nullptr) return data + r * width;
    const int32_t s = slots[r];
    return s < 0 ? nullptr : data + static_cast<int64_t>(s) * width;
  }
};

// One scalar value of a driver expression, as bound into a loop run.
struct OuterValue {
  bool is_int = false;
  int64_t i = 0;
  double f = 0;
};

// Everything a run reads or writes besides the kernel itself. Not owned.
struct RunContext {
  const std::vector<ParamBinding>* params = nullptr;
  const std::vector<const data::Dataset*>* data = nullptr;  // by DataDecl index
  double* accums = nullptr;  // ir::AccumSlots partial sums (ir::AccumOffset), added to
  // Evaluates driver expression `id` (outer values, data attributes); called
  // once per referenced expression at the start of Run().
  std::function<StatusOr<OuterValue>(int id)> outer;
  uint64_t seed = 0;    // --seed
  uint64_t launch = 0;  // how many times this loop ran before (the "epoch")
  // Elements of this loop the program will still run after this call (its
  // launch's later calls and later launches), when the caller knows
  // (the serial executor does); -1: unknown. Only --jit auto reads it.
  int64_t work_left = -1;
};

// Resolves a width DExpr to a number (data attributes, consts).
using WidthFn = std::function<StatusOr<int64_t>(int expr)>;

// Which tier runs a loop body (`--jit`). The bytecode interpreter is tier 0:
// always there, and the reference. kOn compiles every body to native code
// when the kernel is compiled (kernel/jit/jit.h); kAuto compiles a body once
// the interpreter has spent as long on it as a compile is expected to take
// (docs/architecture.md, "Tiers"); kOff never compiles. Both tiers give the
// same results bit for bit, so a body may switch between elements. A body
// the JIT cannot compile runs interpreted, and its TierReport says why.
enum class JitMode : uint8_t { kOff, kOn, kAuto };
// "off", "on", "auto"; InvalidArgument naming the choices otherwise.
StatusOr<JitMode> ParseJitMode(std::string_view text);
const char* JitModeName(JitMode mode);
// The mode when none is given: $RIGEL_JIT when set (an invalid value is an
// error), otherwise kAuto.
StatusOr<JitMode> DefaultJitMode();

// The compile time kAuto weighs: before any compile in this process about
// the mean compile time of the example programs' 25 bodies on the project's
// 2-core machine (kFirstCompileEstimateMs; they take 13 to 128 ms,
// bench/jit_compile.cc), after one the mean of the process's own compiles.
// Thread-safe.
inline constexpr double kFirstCompileEstimateMs = 37;
double ExpectedCompileMs();
// How much faster kAuto expects compiled code to run than the interpreter:
// the smallest of the examples' serial speed-ups, rounded down (word2vec's
// 1.85; mf 2.7, fm 3.5, sparse_lr 4.7, lda 5.5: docs/benchmarks.md).
inline constexpr double kExpectedJitSpeedup = 1.5;

// A kernel's tier so far (Kernel::tier()).
struct TierReport {
  JitMode mode = JitMode::kOff;
  bool compiled = false;   // running compiled code from now on
  bool compiling = false;  // a compile is in flight (kAuto)
  bool cached = false;     // an equal body was compiled before in this process
  double compile_ms = 0;   // the compile's wall time (0 when cached)
  // Its parts (kernel/jit/jit.h): bytecode to LLVM IR, LLVM's optimiser,
  // code generation; and the size of the optimised body.
  double lower_ms = 0, optimise_ms = 0, codegen_ms = 0;
  int64_t ir_instructions = 0;
  double interpreted_ms = 0;  // time the interpreter ran this body before the switch
  std::string why;            // while not compiled: why (empty: auto, not repaid yet)
};
// The tier a report says the body runs in, as the logs name it (--log-json
// "tiers"): "jit" (compiled), "compiling" (a compile in flight) or
// "interpreter". As a number, for a worker's metrics: 2, 1 and 0; a name
// from such a number (rounded down; below 0, "interpreter").
const char* TierName(const TierReport& t);
double TierCode(const TierReport& t);
const char* TierNameOfCode(double code);

// How Kernel::Compile runs the pass pipeline (kernel/passes/pipeline.h).
struct CompileOptions {
  // The tier (above). Unset: DefaultJitMode().
  std::optional<JitMode> jit;
  // Run the IR and bytecode verifiers before the first pass and after every
  // pass. Unset: on in debug and sanitizer builds, off in Release.
  std::optional<bool> verify;
  // Passes to skip, by name (the kernel stays correct, only slower).
  std::vector<std::string> disable;
  // Passes, by name or "all", after which `print` gets the loop as text: its
  // IR (ir::PrintLoop) after an IR pass; "bytecode loop N" and the
  // disassembly after a bytecode pass. Not called for a disabled pass.
  std::vector<std::string> print_after;
  std::function<void(const std::string& pass, const std::string& text)> print;
  // Called once per compiled loop with a report per pass, in pipeline order.
  std::function<void(int loop, const std::vector<passes::PassReport>& reports)> stats;
};

class Kernel {
 public:
  ~Kernel();
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel&&) noexcept;

  // Compiles loop `loop` of `prog`. Returns InvalidArgument (with the
  // program location) if a vector width is not positive or widths disagree,
  // or if `opts` names a pass that does not exist; Internal if verification
  // is on and a pass breaks the IR or the bytecode (naming the pass).
  static StatusOr<Kernel> Compile(const ir::Program& prog, int loop, const WidthFn& widths,
                                  const CompileOptions& opts = {});

  // Runs elements [begin, end) of the loop's data set in order. Stops at the
  // first run-time error (an index out of range, integer division by zero)
  // and returns it as "FILE:LINE:COL: error: ..."; writes done before the
  // error stay. Thread-compatible: concurrent calls need distinct contexts
  // and disjoint parameter rows.
  Status Run(const RunContext& ctx, int64_t begin, int64_t end) const;
  // Runs the listed elements in list order (a block of a distributed
  // schedule); element numbers are positions in the loop's data set, so
  // rand() and friends draw what a serial run draws for them. InvalidArgument
  // (before anything runs) if an element is outside the data set; otherwise
  // as Run.
  Status RunElements(const RunContext& ctx, std::span<const int64_t> elements) const;

  // Number of bytecode instructions (for tests and dump output).
  size_t code_size() const;
  // The body's tier so far. Thread-safe.
  TierReport tier() const;
  // The body's optimised LLVM IR (`rigel dump-ir --jit`), or why it has
  // none (as TierReport::why).
  StatusOr<std::string> JitIr() const;
  // The bytecode as text, one instruction per line.
  std::string Disassemble() const;

  struct Impl;

 private:
  // KeySlice (key_slice.h) compiles a reduced copy of a loop whose parameter
  // accesses record their rows, and runs it with a key trace.
  friend class KeySlice;
  // Per parameter, the rows a key slice recorded (see KeySlice::Run).
  using KeyTrace = std::vector<std::vector<int64_t>>;

  explicit Kernel(std::unique_ptr<Impl> impl);
  // Compiles `body`, a reduced copy of loop `loop` of `prog` (same registers
  // and loop variables). With `key_slice`, every row or element read or write
  // becomes an instruction that appends its row to the run's key trace.
  static StatusOr<Kernel> CompileBody(const ir::Program& prog, int loop, ir::Loop body,
                                      bool key_slice, const WidthFn& widths,
                                      const CompileOptions& opts);
  // Elements list[begin..end) (or begin..end when list is null). `keys`
  // receives the rows of a key slice's accesses; null for a normal kernel.
  Status RunSome(const RunContext& ctx, const int64_t* list, int64_t begin, int64_t end,
                 KeyTrace* keys) const;
  // InvalidArgument if an element is outside the loop's data set.
  Status CheckElements(const RunContext& ctx, std::span<const int64_t> elements) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_KERNEL_H_
