// What each field of a bytecode instruction (VOp, kernel/kernel_impl.h) means
// for its opcode, as the interpreter (kernel/run.cc) reads it: scalar slots,
// vectors, parameter / data set / accumulator indices, widths, jump targets.
// The bytecode verifier (kernel/verify.h) checks instructions against it and
// the bytecode passes (kernel/passes/) find operands through it.
// Pure functions; thread-safe.
#ifndef RIGEL_KERNEL_OPERANDS_H_
#define RIGEL_KERNEL_OPERANDS_H_

#include <cstdint>
#include <vector>

#include "kernel/kernel_impl.h"

namespace rigel::kernel {

enum class Field : uint8_t {
  kUnused,   // not read by the interpreter (may hold anything)
  kSlot,     // a scalar slot
  kSlotOpt,  // a scalar slot, or -1 for none
  kSlots2,   // slots c and c + 1 (an inner loop's hidden state)
  kSlots3,   // slots c, c + 1 and c + 2
  kVecIn,    // a vector the instruction reads
  kVecOut,   // a vector whose own buffer the instruction writes (never a view)
  kVecView,  // a vector the instruction points at other memory (always a view)
  kParam,    // a parameter index
  kData,     // a data set index
  kAccum,    // an accumulator index
  kWidth,    // the width of every vector the instruction touches
  kTarget,   // a jump target: an instruction index
  kLoc,      // an index into Impl::locs (a fused instruction's second location)
  kTerms,    // the first of `c` terms (kWrRowPair: `c` + `fn`)
  kCount,    // the number of terms
};

// The meaning of the fields d, a, b, c, n, aux and t of one opcode.
struct Operands {
  Field d, a, b, c, n, aux, t;
};

// `code` must be a Code (at most kKey).
const Operands& OperandsOf(uint16_t code);

// Whether `code` may continue at its jump target `n`.
bool IsJump(uint16_t code);
// Parameter writes (kWrElem1 ... kWrWholeLin).
bool IsParamWrite(uint16_t code);
// Linear combinations: kVLin, kWrRowLin, kWrWholeLin (and kWrRowPair, two).
bool HasTerms(uint16_t code);

// Vector indices `o` reads: its kVecIn fields and its terms' sources (a term
// reading the destination row itself has none).
std::vector<int> VecReads(const VOp& o, const std::vector<Term>& terms);
// Parameters `o` writes.
std::vector<int> ParamWrites(const VOp& o);
// Per instruction index (and one past the end), whether some jump lands there.
std::vector<bool> JumpTargets(const std::vector<VOp>& code);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_OPERANDS_H_
