#include "exec/memory_inputs.h"

#include <vector>

namespace rigel::exec {

analysis::MemoryInputs MemoryInputsOf(const ir::Program& prog, const SerialExecutor& ex) {
  std::vector<int64_t> rows, widths;
  for (const kernel::ParamBinding& b : ex.bindings()) {
    rows.push_back(b.rows);
    widths.push_back(b.width);
  }
  return analysis::MemoryInputsOf(prog, ex.data_ptrs(), rows, widths);
}

}  // namespace rigel::exec
