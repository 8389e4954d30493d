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
    const size_t root = static_cast<size_t>(RootDataSet(prog, static_cast<int>(k)));
    const data::Dataset& d = ex.data(static_cast<int>(root));
    // The workers of a job exchange through the scheduler's store.
    if (!HoldsInPart(prog, plan, static_cast<int>(root), /*exchange=*/workers > 1) ||
        d.count == 0) {
      continue;
    }
    // Worker 0's share: blocks differ by at most one element. The workers
    // of a job exchange their samples' rows (worker/runner_samples.cc).
    StatusOr<std::vector<data::ElementRange>> held =
        HeldRanges(prog, plan, 0, workers, static_cast<int>(root), d, /*samples=*/false);
    if (!held.ok()) continue;  // the job's own planning will say why
    in.data[k].worker_share =
        static_cast<double>(data::RangesCount(*held)) / static_cast<double>(d.count);
    // The scheduler holds only its facts (exec/executor.h scan_facts): from
    // an index (a shape-only data set with the whole load's digest), or from
    // a scan of the file in the chunks the workers then read.
    in.data[k].facts_only = workers > 1;
    if (root == k && in.data[k].file_bytes > 0) {
      in.data[k].chunk_bytes =
          in.data[k].file_bytes / data::ChunksFor(in.data[k].file_bytes, data::kIndexChunks / 2);
      const bool indexed = d.shape_only && !d.digest.empty();
      if (workers > 1 && !indexed) in.data[k].scan_chunk_bytes = in.data[k].chunk_bytes;
    }
  }
  return in;
}

analysis::MemoryInputs JobMemoryInputs(const ir::Program& prog, const analysis::Plan& plan,
                                       int workers, int servers, const cluster::JobOptions& job,
                                       bool save_params, const SerialExecutor& ex) {
  analysis::MemoryInputs in = MemoryInputsOf(prog, plan, workers, job.data_parts, ex);
  in.workers = workers;
  in.servers = servers;
  in.cache_bytes = job.cache_mb << 20;
  in.staleness = job.staleness;
  in.save_params = save_params;
  return in;
}

}  // namespace rigel::exec
