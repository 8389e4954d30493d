// A compiled `parallel for` body: the loop IR lowered to a flat register
// bytecode that an interpreter runs over a range of the loop's elements.
//
// Compilation happens once data are loaded, so every vector width is a known
// number. It (1) maps registers to scalar slots and vector buffers, (2) turns
// row and whole-parameter reads into views of parameter memory when no write
// to that parameter can happen while the view is live (otherwise a copy), and
// (3) fuses linear vector expressions (sums of scalar-times-vector terms, the
// shape of every SGD update) into one pass that writes straight into the
// destination row. Values are those of evaluating the IR in f32, up to the
// rounding of the reassociated linear combinations; the same kernel runs on
// the serial path and on workers, so they agree exactly with each other.
//
// A Kernel is immutable after Compile; Run() keeps its mutable state in a
// Frame, so one Kernel can run on several threads with one Frame each.
#ifndef RIGEL_WORKER_KERNEL_H_
#define RIGEL_WORKER_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/status.h"
#include "frontend/dataset.h"
#include "frontend/ir.h"

namespace rigel::worker {

// Where one parameter's values live during a run: `rows` rows of `width`
// floats (width 1 for 1-D parameters), row-major. Not owned.
struct ParamBinding {
  float* data = nullptr;
  int64_t rows = 0;
  int64_t width = 1;
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
  const std::vector<const frontend::Dataset*>* data = nullptr;  // by DataDecl index
  double* accums = nullptr;       // one partial sum per accumulator, added to
  // Evaluates driver expression `id` (outer values, data attributes); called
  // once per referenced expression at the start of Run().
  std::function<StatusOr<OuterValue>(int id)> outer;
  uint64_t seed = 0;              // --seed
  uint64_t launch = 0;            // how many times this loop ran before (the "epoch")
};

// Resolves a width DExpr to a number (data attributes, consts).
using WidthFn = std::function<StatusOr<int64_t>(int expr)>;

class Kernel {
 public:
  ~Kernel();
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel&&) noexcept;

  // Compiles loop `loop` of `prog`. Returns InvalidArgument (with the
  // program location) if a vector width is not positive or widths disagree.
  static StatusOr<Kernel> Compile(const frontend::ir::Program& prog, int loop,
                                  const WidthFn& widths);

  // Runs elements [begin, end) of the loop's data set in order. Stops at the
  // first run-time error (an index out of range, integer division by zero)
  // and returns it as "FILE:LINE:COL: error: ..."; writes done before the
  // error stay. Thread-compatible: concurrent calls need distinct contexts
  // and disjoint parameter rows.
  Status Run(const RunContext& ctx, int64_t begin, int64_t end) const;

  // Number of bytecode instructions (for tests and dump output).
  size_t code_size() const;
  // The bytecode as text, one instruction per line.
  std::string Disassemble() const;

  struct Impl;

 private:
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rigel::worker

#endif  // RIGEL_WORKER_KERNEL_H_
