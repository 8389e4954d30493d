// Read CSE over a loop body (private to the kernel compiler).
#ifndef RIGEL_KERNEL_CSE_H_
#define RIGEL_KERNEL_CSE_H_

#include <cstddef>

#include "ir/ir.h"

namespace rigel::kernel {

// Removes repeated reads of the same parameter row (or whole parameter) with
// the same immutable subscript registers when no write to that parameter can
// happen in between, renaming the later read's register to the earlier one.
// Programs say H[j] several times per statement; each would otherwise be a
// dispatch and, in linear forms, a separate term. Rewrites `loop` in place.
void MergeRepeatedReads(ir::Loop* loop, size_t num_params);

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_CSE_H_
