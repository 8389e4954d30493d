// The prefetch slice of a `parallel for`: the loop body reduced to what its
// parameter subscripts depend on, so a worker can learn which parameter rows
// a block of iterations will touch (and pull them ahead) without running the
// body.
//
// The slice keeps the instructions that compute subscripts, the control flow
// around accesses (inner loop bounds, `if` conditions) and every random draw
// (rand(), randint(), negative(), sample()), since a draw's value depends on how many
// draws came before it in the iteration. Each row or element read or write of
// a parameter becomes an instruction that records the row. Everything else
// (values, vector arithmetic, accumulators) is dropped.
//
// A subscript computed from a parameter value (directly, or because the
// access or a draw before it sits under a condition or loop bound that reads
// a parameter) cannot be known without running the body: such parameters are
// reported as not exact() and their accesses are left out of the slice.
//
// A KeySlice is immutable after Compile; Run keeps its state on the stack, so
// one KeySlice can run on several threads at once (each with its own `keys`).
#ifndef RIGEL_KERNEL_KEY_SLICE_H_
#define RIGEL_KERNEL_KEY_SLICE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"
#include "kernel/kernel.h"

namespace rigel::kernel {

class KeySlice {
 public:
  // Compiles the prefetch slice of loop `loop` of `prog`: the loop body
  // reduced to what the parameter subscripts (and control flow around the
  // accesses) depend on, with every row/element read or write of a parameter
  // replaced by recording its row key. Errors as Kernel::Compile. `prog` must
  // outlive the slice.
  static StatusOr<KeySlice> Compile(const ir::Program& prog, int loop, const WidthFn& widths);

  // Runs the slice over `elements` (positions in the loop's data set, any
  // order) and appends to (*keys)[p] the row of every access of parameter p
  // that running those elements through the full kernel would make, for every
  // p with exact(p): p[a] and p[a, b] record a (the row), for 1-D and 2-D
  // params alike. Nothing is recorded for other params. Duplicates may appear
  // (an access repeated with the same subscript register where the first
  // one dominates it is recorded once, and so is a row one element records
  // back to back, as W[i, k] for every k); order is unspecified. keys->size()
  // must be the number of params (resized if smaller).
  //
  // ctx is as for Kernel::Run: ctx.params must be bound (row counts and
  // widths are read from it; the slice never reads or writes parameter
  // values), ctx.data, ctx.seed and ctx.launch must be those of the run the
  // keys are for (draws depend on them), and ctx.outer is called for the
  // driver values the slice uses. ctx.accums is not used.
  //
  // Errors: InvalidArgument (before anything runs) if an element is outside
  // the data set. Rows (and the columns of 2-D element accesses) are checked
  // against the bindings like the kernel does: an index out of range is the
  // same "FILE:LINE:COL: error: ..." OutOfRange error the kernel gives at the
  // same access, and the run stops there (keys already appended stay). The
  // kernel may stop earlier, at an error in a computation the slice leaves
  // out (an access of a param that is not exact, say). Other run-time errors
  // of the subscript computations (integer division by zero, overflow, a bad
  // randint bound or window radius) are reported as the kernel reports them.
  // Thread-safe for distinct `keys`.
  Status Run(const RunContext& ctx, std::span<const int64_t> elements,
             std::vector<std::vector<int64_t>>* keys) const;

  // false when some subscript of parameter p depends on a parameter value
  // (data-dependent index): then the slice cannot know its rows and the
  // caller must treat every row of p as touched. Also false for params never
  // accessed by row/element. A param can be both exact() and whole().
  bool exact(int param) const { return exact_[param]; }
  // true when the loop reads or writes parameter p whole (1-D `w` without
  // subscript): every row is touched.
  bool whole(int param) const { return whole_[param]; }
  // true when the loop touches parameter p at all.
  bool touches(int param) const { return touches_[param]; }
  // true when the rows recorded depend on the run, not only on the elements
  // and the driver values: the slice keeps a random draw (whose stream moves
  // with every run).
  bool draws() const { return draws_; }
  // draws() of loop `loop`'s slice, without compiling it (no widths needed).
  static bool SliceDraws(const ir::Program& prog, int loop);
  // whole() of every parameter of loop `loop`'s slice, without compiling it.
  static std::vector<bool> SliceWhole(const ir::Program& prog, int loop);
  // true when the slice reads a driver value: runs with other values may
  // touch other rows.
  bool reads_outer() const { return reads_outer_; }

  // The slice's bytecode as text (Kernel::Disassemble), for tests and dumps.
  std::string Disassemble() const { return kernel_.Disassemble(); }

 private:
  KeySlice(Kernel kernel, std::vector<bool> exact, std::vector<bool> whole,
           std::vector<bool> touches, bool empty, bool draws, bool reads_outer);

  Kernel kernel_;
  std::vector<bool> exact_, whole_, touches_;
  bool empty_;  // nothing to record: Run only checks the elements
  bool draws_, reads_outer_;
};

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_KEY_SLICE_H_
