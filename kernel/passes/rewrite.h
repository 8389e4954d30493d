// Rebuilding bytecode for the fusing passes of kernel/passes/ (private to
// them). Thread-compatible.
#ifndef RIGEL_KERNEL_PASSES_REWRITE_H_
#define RIGEL_KERNEL_PASSES_REWRITE_H_

#include <cstddef>
#include <vector>

#include "kernel/kernel_impl.h"
#include "kernel/operands.h"

namespace rigel::kernel::passes {

// Rebuilds `code`: at each position `step(p, &out)` appends the
// instructions that replace code[p ..] and returns how many it consumed (at
// least 1). Passes only fuse groups with no jump target after their first
// instruction, so remapping every target to its group's start is exact.
template <typename Step>
void Rewrite(std::vector<VOp>* code, Step step) {
  std::vector<VOp> out;
  std::vector<int> new_index(code->size() + 1, 0);
  for (size_t p = 0; p < code->size();) {
    int start = static_cast<int>(out.size());
    size_t consumed = step(p, &out);
    for (size_t i = p; i < p + consumed; ++i) new_index[i] = start;
    p += consumed;
  }
  new_index[code->size()] = static_cast<int>(out.size());
  for (VOp& o : out) {
    if (IsJump(o.code)) o.n = new_index[o.n];
  }
  *code = std::move(out);
}

}  // namespace rigel::kernel::passes

#endif  // RIGEL_KERNEL_PASSES_REWRITE_H_
