// The loop-body compiler's pipeline: the one place that lists the passes and
// runs them. Two stages around the lowering, in this order:
//
//   IR stage, on a copy of the loop (IrPass):
//     merge-reads            repeated row/whole reads become one
//     fold-constants         constant scalar arithmetic is done at compile time
//   lowering to bytecode (kernel/lower/lowering.h; always runs, not a pass)
//   bytecode stage (BytecodePass):
//     read-views             copies that no write can disturb become views
//     fuse-row-writes        two row writes of different parameters: one pass
//     copies-to-views        copies only needed before a fused write: views
//     fuse-row-views         two consecutive row views: one instruction
//     fuse-dot               a dot and the scalar op using it: one instruction
//     specialise-row-kernels row kernels unrolled for the row's width
//   arena layout: every vector that is not a view gets a buffer (always runs)
//
// Each pass is a file named after it (kernel/passes/merge_reads.cc, ...).
// With verification on, the IR verifier (ir/verify.h) checks the loop before
// the first pass and after each IR pass, and the bytecode verifier
// (kernel/verify.h) after the lowering, after each bytecode pass and after
// the layout. Thread-safe: the passes are stateless.
#ifndef RIGEL_KERNEL_PASSES_PIPELINE_H_
#define RIGEL_KERNEL_PASSES_PIPELINE_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "kernel/kernel.h"
#include "kernel/passes/pass.h"

namespace rigel::kernel::passes {

// Every pass, in the order the pipeline runs them (IR passes first).
const std::vector<const Pass*>& Pipeline();

// The passes, each defined in its own file.
const IrPass& MergeReads();
const IrPass& FoldConstants();
const BytecodePass& ReadViews();
const BytecodePass& FuseRowWrites();
const BytecodePass& CopiesToViews();
const BytecodePass& FuseRowViews();
const BytecodePass& FuseDot();
const BytecodePass& SpecialiseRowKernels();

// OK when every name is a pass of Pipeline() (or "all", when `allow_all`);
// otherwise InvalidArgument "unknown pass 'NAME'; the passes are: ...".
Status CheckPassNames(const std::vector<std::string>& names, bool allow_all);

// Whether CompileOptions::verify defaults to on: in debug builds (NDEBUG not
// defined) and sanitizer builds (RIGEL_SANITIZE).
bool VerifyByDefault();

// Compiles k->rewritten (a copy of loop k->loop of *k->prog, or a key slice
// of it when k->key_slice; k->data and k->kind set) into k's bytecode:
// runs the IR passes of `passes` on it, lowers it, runs the bytecode passes,
// lays out the arena. `passes` must list IR passes before bytecode passes;
// tests may pass their own list. Errors: InvalidArgument for an unknown pass
// name in `opts` and for widths the lowering rejects; Internal when a
// verifier finds a fault: "loop L: bytecode is invalid after pass 'P': ...".
Status RunPipeline(const CompileOptions& opts, const WidthFn& widths, Kernel::Impl* k,
                   const std::vector<const Pass*>& passes = Pipeline());

}  // namespace rigel::kernel::passes

#endif  // RIGEL_KERNEL_PASSES_PIPELINE_H_
