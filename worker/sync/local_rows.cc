// The `local` strategy: the rows of a parameter that only this worker's
// elements touch stay here for the run. They are pulled at its start — or
// kept from the previous run of the same loop when nothing wrote the
// parameter since (mf's W is pulled once, not every epoch) — and their
// deltas pushed at its end. Rows other workers touch too (a wavefront's
// block boundaries; analysis::ParamRows::shared in analysis/step_plan.h) go through the servers
// around every step, always synchronously.
#include <utility>

#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

class LocalRows : public SyncStrategy {
 public:
  LocalRows(const SyncEnv& env, std::vector<int> params) : env_(env) {
    for (int p : params) params_.push_back(Param{p, env.rows->params[p].param.written, {}, {}});
  }

  Status Begin() override {
    for (const Param& r : params_) {
      const std::vector<int64_t>& held = env_.rows->params[r.p].held;
      ParamState& st = (*env_.state)[r.p];
      HeldRows& h = st.local;
      if (h.loop == env_.loop && h.rows == held && h.generation == st.generation) {
        env_.metrics->bytes["local.kept"] += static_cast<double>(h.base.size() * sizeof(float));
        continue;
      }
      h.loop = env_.loop;
      h.rows = held;
      RIGEL_RETURN_IF_ERROR(env_.io->Pull(r.p, held, true, &h.base, env_.metrics, "local"));
    }
    return Status::Ok();
  }

  Status BeforeStep(const Step& step) override {
    for (Param& r : params_) {
      r.keys = (*step.server_rows)[r.p];
      RIGEL_RETURN_IF_ERROR(env_.io->Pull(r.p, r.keys, true, &r.base, env_.metrics, "local"));
    }
    return Status::Ok();
  }

  Status AfterStep(const Step&) override {
    for (Param& r : params_) {
      if (!r.written || r.keys.empty()) continue;
      RIGEL_RETURN_IF_ERROR(env_.io->PushDeltas(r.p, r.keys, &r.base, env_.metrics, "local"));
    }
    return Status::Ok();
  }

  Status End() override {
    for (const Param& r : params_) {
      if (!r.written) continue;
      ParamState& st = (*env_.state)[r.p];
      RIGEL_RETURN_IF_ERROR(
          env_.io->PushDeltas(r.p, st.local.rows, &st.local.base, env_.metrics, "local"));
      st.local.generation = st.generation;
    }
    return Status::Ok();
  }

 private:
  struct Param {
    int p;
    bool written;
    std::vector<int64_t> keys;  // this step's shared rows
    std::vector<float> base;    // what the servers held for `keys`
  };

  const SyncEnv env_;
  std::vector<Param> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> CreateLocalRows(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<LocalRows>(env, std::move(params));
}

}  // namespace rigel::worker::sync
