// A pass of the loop-body compiler: one named rewrite, in one file of
// kernel/passes/, run by the pipeline (kernel/passes/pipeline.h) in its
// place. IR passes rewrite the loop IR before it is lowered to bytecode
// (kernel/lower/lowering.h); bytecode passes rewrite the bytecode after.
//
// A pass must keep the loop's results: turning any pass off only makes the
// kernel slower (a pass that merges terms of a linear combination may change
// their rounding, as docs/architecture.md says). It records in its
// PassStats what it changed, and nothing when it changed nothing. Passes
// are stateless singletons; Run is thread-safe for distinct loops.
#ifndef RIGEL_KERNEL_PASSES_PASS_H_
#define RIGEL_KERNEL_PASSES_PASS_H_

#include <string_view>

#include "ir/ir.h"
#include "kernel/kernel_impl.h"
#include "kernel/passes/stats.h"

namespace rigel::kernel::passes {

enum class Stage { kIr, kBytecode };

class Pass {
 public:
  virtual ~Pass() = default;
  // Kebab-case, unique: what `rigel dump-ir --disable` and `--print-after` take.
  virtual std::string_view name() const = 0;
  // One line: what the pass rewrites into what.
  virtual std::string_view description() const = 0;
  virtual Stage stage() const = 0;
};

class IrPass : public Pass {
 public:
  Stage stage() const final { return Stage::kIr; }
  // Rewrites `loop`, a copy of loop `loop->id` of `prog` (a key slice's
  // reduced body when `key_slice`), in place.
  virtual void Run(const ir::Program& prog, bool key_slice, ir::Loop* loop,
                   PassStats* stats) const = 0;
};

class BytecodePass : public Pass {
 public:
  Stage stage() const final { return Stage::kBytecode; }
  // Rewrites the bytecode of `k` (code, terms, the view flags) in place.
  // The arena is not laid out yet (Impl::vec_offset is all -1).
  virtual void Run(Kernel::Impl* k, PassStats* stats) const = 0;
};

}  // namespace rigel::kernel::passes

#endif  // RIGEL_KERNEL_PASSES_PASS_H_
