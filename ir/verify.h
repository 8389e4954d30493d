// The loop IR's own invariants, checked on one loop body: what the checker
// (frontend/checker_body.cc) guarantees and every later stage relies on.
//
// - Indices are in range: registers, parameters, data sets, accumulators,
//   driver expressions; a loop's data set, variables and `relaxed` flags.
// - Every register operand is defined before it is used, by an instruction
//   earlier in the same block or an enclosing one (or is a loop variable); a
//   block's definitions are not visible after it. A register that is not
//   `mut` is defined once.
// - Operands have the types their op takes (ir.h's table): subscripts are
//   ints, conditions bools, vector operands vectors of equal static width.
// - Only `for`, `for ... in features`, `for ... in window` and `if` have a
//   body, and only `if` an else body.
//
// Pure functions of their arguments; thread-safe.
#ifndef RIGEL_IR_VERIFY_H_
#define RIGEL_IR_VERIFY_H_

#include "common/status.h"
#include "ir/ir.h"

namespace rigel::ir {

struct VerifyOptions {
  // The body is a prefetch slice (kernel/key_slice.h): a parameter access
  // keeps only its subscripts, so its value register (`dst` of a read, `c`
  // of a write) and a 2-D element's column may be -1.
  bool key_slice = false;
};

// Checks `loop` (a loop of `prog`, or a rewritten copy of one) against the
// invariants above. Returns OK, or Internal naming the loop, the first
// faulty instruction (its pre-order number, op and source line) and what is
// wrong with it, e.g. "loop 0, instruction 7 (binary at 12:5): operand b %9
// is used before it is defined".
Status VerifyLoop(const Program& prog, const Loop& loop, const VerifyOptions& opts = {});

}  // namespace rigel::ir

#endif  // RIGEL_IR_VERIFY_H_
