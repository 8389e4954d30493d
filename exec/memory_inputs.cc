#include "exec/memory_inputs.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "analysis/partition.h"
#include "data/held_load.h"
#include "exec/hold_plan.h"

namespace rigel::exec {

namespace {

// Some loop over data set `root`'s family is cut by coordinates: each
// worker keeps its elements by value (HeldFilter).
bool CutBeforeLoad(const ir::Program& prog, const analysis::Plan& plan, int workers, int root) {
  for (int l : LoopsCutBeforeLoad(prog, plan, /*exchange=*/workers > 1)) {
    if (RootDataSet(prog, prog.loops[static_cast<size_t>(l)].data) == root) return true;
  }
  return false;
}

// The share of `d`'s elements worker 0 holds by its ranges; -1 when they
// cannot be made.
double ShareOfRanges(const ir::Program& prog, const analysis::Plan& plan, int workers, int root,
                     const data::Dataset& d) {
  StatusOr<std::vector<data::ElementRange>> held =
      HeldRanges(prog, plan, 0, workers, root, d, /*samples=*/false);
  if (!held.ok()) return -1;
  return static_cast<double>(data::RangesCount(*held)) / static_cast<double>(d.count);
}

// The share of the file's elements worker 0 keeps by value: counted over
// the loaded elements with the cuts the scheduler makes (a pass over them);
// 1 / workers where the elements are not loaded here. -1 when the cuts
// cannot be made.
double ShareKeptByValue(const ir::Program& prog, const analysis::Plan& plan, int workers, int root,
                        const SerialExecutor& ex) {
  const data::Dataset& d = ex.data(root);
  if (d.shape_only || d.in_part || d.count == 0) return 1.0 / std::max(1, workers);
  std::map<int, analysis::Cuts> cuts;
  for (int l : LoopsCutBeforeLoad(prog, plan, /*exchange=*/workers > 1)) {
    StatusOr<analysis::Cuts> c =
        analysis::MakeCuts(plan.loops[static_cast<size_t>(l)], workers,
                           ex.data(prog.loops[static_cast<size_t>(l)].data));
    if (!c.ok()) return -1;
    cuts[l] = std::move(c).value();
  }
  StatusOr<std::unique_ptr<data::ElementFilter>> keep =
      HeldFilter(prog, plan, 0, workers, cuts, root, d, /*samples=*/false);
  if (!keep.ok() || *keep == nullptr) return -1;
  int64_t kept = 0;
  for (int64_t e = 0; e < d.count; ++e) kept += (*keep)->Keep(d, e, e);
  return static_cast<double>(kept) / static_cast<double>(d.count);
}

}  // namespace

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
    const bool by_value = CutBeforeLoad(prog, plan, workers, static_cast<int>(root));
    const double share = by_value
                             ? ShareKeptByValue(prog, plan, workers, static_cast<int>(root), ex)
                             : ShareOfRanges(prog, plan, workers, static_cast<int>(root), d);
    if (share < 0) continue;  // the job's own planning will say why
    in.data[k].worker_share = share;
    // The scheduler holds only its facts (exec/executor.h scan_facts): from
    // an index (a shape-only data set with the whole load's digest), or from
    // a scan of the file in the chunks the workers then read. Loops cut by
    // coordinates are cut from the elements: it loads those whole.
    in.data[k].facts_only = workers > 1 && !by_value;
    if (root == k && in.data[k].file_bytes > 0) {
      in.data[k].chunk_bytes =
          in.data[k].file_bytes / data::ChunksFor(in.data[k].file_bytes, data::kIndexChunks / 2);
      const bool indexed = d.shape_only && !d.digest.empty();
      if (workers > 1 && !indexed && !by_value) {
        in.data[k].scan_chunk_bytes = in.data[k].chunk_bytes;
      }
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
