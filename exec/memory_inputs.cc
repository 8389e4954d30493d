#include "exec/memory_inputs.h"

#include <vector>

#include "data/held_load.h"
#include "exec/hold_plan.h"

namespace rigel::exec {

analysis::MemoryInputs MemoryInputsOf(const ir::Program& prog, const analysis::Plan& plan,
                                      int workers, bool parts, const SerialExecutor& ex) {
  std::vector<int64_t> rows, widths;
  for (const kernel::ParamBinding& b : ex.bindings()) {
    rows.push_back(b.rows);
    widths.push_back(b.width);
  }
  analysis::MemoryInputs in = analysis::MemoryInputsOf(prog, ex.data_ptrs(), rows, widths);
  // The root of each data set's splits decides; its parts share its share.
  for (size_t k = 0; parts && k < prog.data.size() && k < in.data.size(); ++k) {
    size_t root = k;
    while (prog.data[root].split_parent >= 0)
      root = static_cast<size_t>(prog.data[root].split_parent);
    const data::Dataset& d = ex.data(static_cast<int>(root));
    if (!HoldsInPart(prog, plan, static_cast<int>(root)) || d.count == 0) continue;
    // Worker 0's share: blocks differ by at most one element.
    StatusOr<std::vector<data::ElementRange>> held =
        HeldRanges(prog, plan, 0, workers, static_cast<int>(root), d);
    if (!held.ok()) continue;  // the job's own planning will say why
    in.data[k].worker_share =
        static_cast<double>(data::RangesCount(*held)) / static_cast<double>(d.count);
    if (root == k && in.data[k].file_bytes > 0) {
      in.data[k].chunk_bytes =
          in.data[k].file_bytes / data::ChunksFor(in.data[k].file_bytes, workers);
    }
  }
  return in;
}

}  // namespace rigel::exec
