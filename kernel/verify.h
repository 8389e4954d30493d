// The bytecode verifier: checks a compiled loop body (Kernel::Impl) against
// what the interpreter (kernel/run.cc) relies on without checking it itself.
//
// - The program ends with `end`; every jump lands on an instruction.
// - Every field is what its opcode takes (kernel/operands.h): slots, vectors,
//   terms, hidden loop slots, locations, parameter, data set and accumulator
//   indices are in range; parameters have the dimension the access needs and
//   data sets the kind (tokens for window and negative, ...).
// - Widths agree: every vector an instruction touches, and every term's
//   source, has the instruction's width; a row access has its parameter's.
// - Views and buffers do not mix: an instruction that writes a vector's
//   buffer never targets a view, one that makes a view never a buffer.
// - Term counts and row kernels fit the opcode (a linear combination has a
//   LinFn of 1 to 8 terms, a pair two groups of 1 to 4, ...).
// - The frame: one slot value per slot, one width per vector, loop variable
//   slots as many as the data kind binds, driver values in range; once the
//   arena is laid out, every buffer lies inside it.
// - A key slice (kernel/key_slice.h) touches no parameter values: its
//   accesses are `key` instructions, and only key slices have those.
//
// Pure function of its argument; thread-safe.
#ifndef RIGEL_KERNEL_VERIFY_H_
#define RIGEL_KERNEL_VERIFY_H_

#include "common/status.h"
#include "kernel/kernel_impl.h"

namespace rigel::kernel {

// Returns OK, or Internal naming the first faulty instruction (its index and
// opcode) and what is wrong, e.g. "bytecode 3 (wr.row.lin): term 1 reads
// vector 12 of width 8, but the instruction's width is 16". `laid_out`: the
// arena has been laid out (buffers have offsets); check them too.
Status VerifyBytecode(const Kernel::Impl& k, bool laid_out);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_VERIFY_H_
