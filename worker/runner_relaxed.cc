// How a run keeps its relaxed parameters' rows (the cache strategy,
// worker/sync/cached_rows.cc): the job's options where given, else Rigel's
// choice (analysis/relaxed.h), and the hot rows from a sample of the loop's
// rows measured on its first run.
#include "analysis/relaxed.h"
#include "worker/runner.h"

namespace rigel::worker {

Status Runner::Relaxed(const TaskSpec& task, const analysis::StepBlocks& blocks,
                       const kernel::RunContext& ctx, const analysis::PlanInput& in,
                       sync::RelaxedRun* out) {
  const size_t np = prog_.params.size();
  out->capacity = resolved_.cache_rows;
  out->touched_only.assign(np, 0);
  out->hot.assign(np, {});
  out->scaled.assign(np, {});
  out->audit = opts_.audit_staleness;
  const cluster::JobOptions& job = opts_.job;
  // Hot rows are chosen for the tables the loop writes, not those it only
  // reads through their caches.
  std::vector<bool> scalable(np, false), written(np, false);
  bool any = false, only_reads = true;
  for (const analysis::PlanParam& pp : in.loop_params) {
    const size_t p = static_cast<size_t>(pp.index);
    written[p] = pp.cached && pp.written;
    out->touched_only[p] = pp.partial;
    scalable[p] = pp.scaled;
    any |= pp.cached;
    only_reads = only_reads && (!pp.cached || (!pp.written && !pp.relaxed));
  }
  if (!any) return Status::Ok();
  analysis::RelaxedChoice c = analysis::ChooseRelaxed(opts_.workers, in.hot_share);
  c.batch = analysis::StepBatch(in);  // --batch, when given
  if (job.staleness >= 1) c.staleness = job.staleness;
  if (job.push_bound > 0) c.push_bound = job.push_bound;
  if (job.merge_every > 0) c.merge_every = job.merge_every;
  if (job.push_age > 0) c.push_age = job.push_age;
  // A loop that only reads its cached tables (a test loop over tables held
  // in part) reads them exactly: its exchanges refresh every held row that
  // lacks any merge, and nothing writes them meanwhile.
  out->staleness = only_reads ? 0 : static_cast<uint32_t>(c.staleness);
  out->push_bound = static_cast<uint32_t>(std::min<int64_t>(c.push_bound, UINT32_MAX));
  out->merge_every = c.merge_every;
  out->push_age = c.push_age;
  if (opts_.workers < 2) return Status::Ok();
  bool choose = false, scale = false;
  for (size_t p = 0; p < np; ++p) {
    choose |= job.hot_rows && written[p] && !state_[p].hot.chosen();
    scale |= scalable[p];
  }
  if (!choose && !scale) return Status::Ok();
  auto it = samples_.find(task.loop);
  if (it == samples_.end()) {
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample sample,
                           SampleLoopRows(task, blocks, ctx, in, analysis::kHotSample, written));
    it = samples_.emplace(task.loop, std::move(sample)).first;
  }
  const double share = analysis::ScaledShare(opts_.workers);
  for (size_t p = 0; p < np; ++p) {
    if (!written[p]) continue;
    const int64_t width = ex_->bindings()[p].width;
    if (choose) {
      out->hot[p] = analysis::ChooseHotRows(it->second.counts[p], it->second.sampled, width,
                                            opts_.workers, c);
    }
    if (scalable[p]) {
      out->scaled[p] =
          analysis::ChooseScaledRows(it->second.counts[p], it->second.sampled, width, share);
    }
  }
  return Status::Ok();
}

}  // namespace rigel::worker
