// The JIT tier: a loop body's bytecode compiled to native code through LLVM
// (ORC LLJIT), for the host CPU's features. The compiled code is the
// interpreter's own opcode functions (kernel/ops.h, as bitcode:
// kernel/jit/ops_bitcode.cc) called in the order the bytecode gives, with
// every operand a constant, so LLVM folds the dispatch and the operand
// decoding away and inlines and unrolls the row kernels for their widths. It
// computes what the interpreter computes, bit for bit (kernel/row_calls.h).
// Private to kernel/; Kernel chooses the tier (kernel/tier.h).
//
// Thread-safe: compiles are serialised in one process-wide engine, and a
// compiled body, cached by its bytecode for the life of the process, may run
// on any number of threads at once.
#ifndef RIGEL_KERNEL_JIT_JIT_H_
#define RIGEL_KERNEL_JIT_JIT_H_

#include <string>

#include "common/status.h"
#include "kernel/kernel_impl.h"
#include "kernel/ops.h"

namespace rigel::kernel::jit {

// Runs elements list[begin, end) of `data` (begin..end without a list)
// through a body as kernel/elements.h RunEach does, on `m`, whose fields are
// the interpreter's (Kernel::RunSome sets them up); returns a RunEnd, with
// m->e and m->fault set as the interpreter sets them. The slots and vectors
// of m are copied in and not back: a run's registers are its own.
using BodyFn = int (*)(ops::Machine* m, const data::Dataset* data, const int64_t* list,
                       int64_t begin, int64_t end);

struct Compiled {
  BodyFn fn = nullptr;
  bool cached = false;    // an equal body was compiled before in this process
  double compile_ms = 0;  // wall time of this call's compile; 0 when cached
  // Its parts: the bytecode to IR (reading the bitcode it needs), LLVM's
  // optimiser, and code generation with linking.
  double lower_ms = 0, optimise_ms = 0, codegen_ms = 0;
  int64_t instructions = 0;  // in the optimised IR of the body
  std::string ir;            // the optimised LLVM IR, when asked for
};

// Ok when this process can compile bodies; otherwise FailedPrecondition
// saying why (a build without LLVM, a host LLVM cannot generate code for, a
// bitcode/host layout disagreement). Computed once.
Status Available();

// Compiles `k`'s bytecode, or finds it compiled. Unimplemented for a body
// the JIT does not run (a key slice), FailedPrecondition as Available(),
// Internal when LLVM rejects the module (a bug; the message has LLVM's
// words). With `want_ir`, Compiled::ir holds the body's optimised IR (a
// cached body is compiled again to print it, and not replaced).
StatusOr<Compiled> Compile(const Kernel::Impl& k, bool want_ir = false);

}  // namespace rigel::kernel::jit

#endif  // RIGEL_KERNEL_JIT_JIT_H_
