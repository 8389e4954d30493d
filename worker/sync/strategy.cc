#include "worker/sync/strategy.h"

#include <algorithm>
#include <utility>

#include "analysis/sync/units.h"
#include "ir/source.h"

namespace rigel::worker::sync {

namespace units = analysis::sync;

namespace {

// The runtime of each unit (analysis/sync/units.h), in the order the runner
// calls them: the collective sum first after a step (every worker blocks in
// it), then the row caches (their exchanges are under way while the step
// computes), the other pulls and pushes through the servers, then the
// hand-offs a neighbour waits for. local and held share one runtime.
struct Runtime {
  std::vector<const units::Unit*> units;
  std::unique_ptr<SyncStrategy> (*create)(const SyncEnv& env, std::vector<int> params);
};

const std::vector<Runtime>& Runtimes() {
  static const std::vector<Runtime> runtimes = {
      {{&units::Allreduce()}, CreateAllreduce},
      {{&units::Cache()}, CreateCachedRows},
      {{&units::Ps()}, CreatePsPullPush},
      {{&units::Local(), &units::Held()}, CreateLocalRows},
      {{&units::Rotate()}, CreateRotation},
      {{&units::Replicated()}, CreateReplicated},
  };
  return runtimes;
}

}  // namespace

bool HasRuntime(const analysis::sync::Unit& unit) {
  for (const Runtime& r : Runtimes()) {
    if (std::find(r.units.begin(), r.units.end(), &unit) != r.units.end()) return true;
  }
  return false;
}

StatusOr<std::vector<std::unique_ptr<SyncStrategy>>> CreateStrategies(const SyncEnv& env) {
  std::vector<std::unique_ptr<SyncStrategy>> out;
  for (const Runtime& rt : Runtimes()) {
    std::vector<int> params;
    for (const analysis::ParamRows& r : env.rows->params) {
      const units::Unit* u = r.used ? units::UnitOf(r.param) : nullptr;
      if (u != nullptr && std::find(rt.units.begin(), rt.units.end(), u) != rt.units.end()) {
        params.push_back(r.param.index);
      }
    }
    if (params.empty()) continue;
    if (rt.create == CreateAllreduce && !env.dense) {
      return Internal("allreduce parameters but no collectives joined");
    }
    out.push_back(rt.create(env, std::move(params)));
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
