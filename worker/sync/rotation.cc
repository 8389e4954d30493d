// The `rotate` strategy of the conflict-free 2-D schedule: block column q of
// a parameter is the rows the blocks (*, q) touch (analysis::ParamRows::columns,
// analysis/step_plan.h). Worker w starts with column w; after step t it sends
// its column straight to worker w - 1 and takes column w + t + 1 from worker
// w + 1 (worker/sync/handoff.h): no barrier, each worker waits only for its
// neighbour. The last holder of a column pushes its delta against the
// servers' value, which nobody changed during the run.
#include <utility>

#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

class Rotation : public SyncStrategy {
 public:
  Rotation(const SyncEnv& env, std::vector<int> params)
      : env_(env), params_(std::move(params)), base_(params_.size()) {}

  // The column this worker ends the run with.
  int64_t Last() const { return (env_.rank + env_.workers - 1) % env_.workers; }

  Status Begin() override {
    for (size_t k = 0; k < params_.size(); ++k) {
      const auto& columns = env_.rows->params[params_[k]].columns;
      RIGEL_RETURN_IF_ERROR(
          env_.io->Pull(params_[k], columns[Last()], true, &base_[k], env_.metrics, "rotate"));
      if (Last() != env_.rank) {
        RIGEL_RETURN_IF_ERROR(
            env_.io->Pull(params_[k], columns[env_.rank], true, nullptr, env_.metrics, "rotate"));
      }
    }
    return Status::Ok();
  }

  Status BeforeStep(const Step& step) override {
    if (step.index == 0) return Status::Ok();
    const int64_t q = (env_.rank + step.index) % env_.workers;
    for (int p : params_) {
      RIGEL_RETURN_IF_ERROR(
          env_.handoffs->Take(Id(step.index, p, q), env_.rows->params[p].columns[q], env_.metrics));
    }
    return Status::Ok();
  }

  Status AfterStep(const Step& step) override {
    if (step.last()) return Status::Ok();
    const int64_t q = (env_.rank + step.index) % env_.workers;
    for (int p : params_) {
      RIGEL_RETURN_IF_ERROR(env_.handoffs->Send(Id(step.index + 1, p, q),
                                                env_.rows->params[p].columns[q], env_.metrics));
    }
    return Status::Ok();
  }

  Status End() override {
    for (size_t k = 0; k < params_.size(); ++k) {
      const analysis::ParamRows& r = env_.rows->params[params_[k]];
      if (!r.param.written) continue;
      RIGEL_RETURN_IF_ERROR(
          env_.io->PushDeltas(params_[k], r.columns[Last()], &base_[k], env_.metrics, "rotate"));
    }
    return Status::Ok();
  }

 private:
  ColumnId Id(int64_t step, int p, int64_t column) const {
    return ColumnId{env_.loop, env_.launch, step, p, column};
  }

  const SyncEnv env_;
  const std::vector<int> params_;
  std::vector<std::vector<float>> base_;  // per parameter: the servers' value of column Last()
};

}  // namespace

std::unique_ptr<SyncStrategy> CreateRotation(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<Rotation>(env, std::move(params));
}

}  // namespace rigel::worker::sync
