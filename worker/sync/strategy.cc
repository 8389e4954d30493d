#include "worker/sync/strategy.h"

#include <utility>

#include "ir/source.h"

namespace rigel::worker::sync {

using analysis::Strategy;

StatusOr<std::vector<std::unique_ptr<SyncStrategy>>> CreateStrategies(const SyncEnv& env) {
  // The order the runner calls them in: the collective sum first after a
  // step (every worker blocks in it), then pulls and pushes through the
  // servers, then the hand-offs a neighbour waits for.
  constexpr Strategy kOrder[] = {Strategy::kAllreduce, Strategy::kPs, Strategy::kLocal,
                                 Strategy::kRotate, Strategy::kReplicated};
  std::vector<std::unique_ptr<SyncStrategy>> out;
  for (Strategy s : kOrder) {
    std::vector<int> params, cached;
    for (const analysis::ParamRows& r : env.rows->params) {
      if (!r.used || r.param.strategy != s) continue;
      (r.param.cached ? cached : params).push_back(r.param.index);
    }
    // Relaxed rows kept by write-back caches: before the other ps rows, as
    // their exchanges are under way while the step computes.
    if (!cached.empty()) out.push_back(CreateCachedRows(env, std::move(cached)));
    if (params.empty()) continue;
    switch (s) {
      case Strategy::kAllreduce:
        if (!env.dense) return Internal("allreduce parameters but no collectives joined");
        out.push_back(CreateAllreduce(env, std::move(params)));
        break;
      case Strategy::kPs:
        out.push_back(CreatePsPullPush(env, std::move(params)));
        break;
      case Strategy::kLocal:
        out.push_back(CreateLocalRows(env, std::move(params)));
        break;
      case Strategy::kRotate:
        out.push_back(CreateRotation(env, std::move(params)));
        break;
      case Strategy::kReplicated:
        out.push_back(CreateReplicated(env, std::move(params)));
        break;
      case Strategy::kAccumulator:
      case Strategy::kReduce:  // not in kOrder: planned as its Mechanism
        break;
    }
  }
  return out;
}

Status Diverged(const SyncEnv& env, const Status& st) {
  if (st.ok() || st.code() != StatusCode::kFailedPrecondition) return st;
  const ir::Loop& loop = env.prog->loops[env.loop];
  return FailedPrecondition(ir::FormatDiagnostic(
      *env.prog->source, loop.loc,
      "a relaxed parameter diverged in " +
          (env.epoch >= 0 ? "epoch " + std::to_string(env.epoch) + " (run " +
                                std::to_string(env.launch) + " of this loop)"
                          : "run " + std::to_string(env.launch) + " of this loop") +
          ": " + st.message() +
          "; the job stops here (a smaller learning rate, or a smaller --staleness, "
          "--push-bound or --merge-every, keeps the merged updates smaller)"));
}

}  // namespace rigel::worker::sync
