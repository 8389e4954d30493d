// Lowering a loop body from the IR to bytecode: the core of the loop-body
// compiler, between the IR and bytecode stages of the pipeline
// (kernel/passes/pipeline.h). Private to kernel/.
//
// Every IR register gets a scalar slot and a vector index of the same
// number (more of both are added for constants, coefficient products,
// temporaries and hidden loop state). Constants are pre-filled into the
// slot array. Vector arithmetic that is linear (sums of scalar-times-vector
// terms) is kept as a symbolic form and emitted as one combination into its
// consumer, often a parameter row (kernel/lower/linear.cc); everything else
// is selected instruction by instruction (kernel/lower/select.cc,
// kernel/lower/access.cc, kernel/lower/control.cc).
//
// What the bytecode passes decide is left to them, marked: every row or
// whole read is a copy, marked (fn 1) when liveness (kernel/lower/liveness.h)
// shows it could be a view; a dot whose value is read once is marked; row
// kernels are the width-independent ones. Not thread-safe per Impl.
#ifndef RIGEL_KERNEL_LOWER_LOWER_H_
#define RIGEL_KERNEL_LOWER_LOWER_H_

#include "common/status.h"
#include "kernel/kernel_impl.h"

namespace rigel::kernel::lower {

// Lowers k->rewritten (a loop of *k->prog, or its key slice when
// k->key_slice) into k's code, terms, slots, vectors and locations. Every
// vector width is resolved with `widths`; InvalidArgument (naming the
// register) if one is not between 1 and 2^30, or the error `widths` gives.
Status Lower(const WidthFn& widths, Kernel::Impl* k);

// Gives every vector that is not a view its own buffer in the frame's arena
// (64-byte aligned starts). Runs once, after the bytecode passes.
void LayOutArena(Kernel::Impl* k);

}  // namespace rigel::kernel::lower

#endif  // RIGEL_KERNEL_LOWER_LOWER_H_
