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
  out->capacity = capacity_;
  out->hot.assign(np, {});
  out->audit = opts_.audit_staleness;
  std::vector<bool> cached(np, false);
  bool any = false;
  for (const analysis::PlanParam& pp : in.loop_params) {
    cached[static_cast<size_t>(pp.index)] = pp.cached;
    any |= pp.cached;
  }
  if (!any) return Status::Ok();
  const cluster::JobOptions& job = opts_.job;
  analysis::RelaxedChoice c = analysis::ChooseRelaxed(opts_.workers, in.hot_share);
  c.batch = analysis::StepBatch(in);  // --batch, when given
  if (job.staleness >= 1) c.staleness = job.staleness;
  if (job.push_bound > 0) c.push_bound = job.push_bound;
  if (job.merge_every > 0) c.merge_every = job.merge_every;
  out->staleness = static_cast<uint32_t>(c.staleness);
  out->push_bound = static_cast<uint32_t>(std::min<int64_t>(c.push_bound, UINT32_MAX));
  out->merge_every = c.merge_every;
  if (!job.hot_rows || opts_.workers < 2) return Status::Ok();
  bool choose = false;
  for (size_t p = 0; p < np; ++p) choose |= cached[p] && !state_[p].hot.chosen();
  if (!choose) return Status::Ok();
  auto it = samples_.find(task.loop);
  if (it == samples_.end()) {
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample sample,
                           SampleLoopRows(task, blocks, ctx, in, analysis::kHotSample, cached));
    it = samples_.emplace(task.loop, std::move(sample)).first;
  }
  for (size_t p = 0; p < np; ++p) {
    if (!cached[p]) continue;
    out->hot[p] = analysis::ChooseHotRows(it->second.counts[p], it->second.sampled,
                                          ex_->bindings()[p].width, opts_.workers, c);
  }
  return Status::Ok();
}

}  // namespace rigel::worker
