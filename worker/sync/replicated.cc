// The `replicated` strategy: a parameter the loop only reads. The rows this
// worker's elements read (analysis::ParamRows::read, analysis/step_plan.h) are pulled at
// the start of the run, unless they were pulled before and nothing wrote the
// parameter since, or a current allreduce replica already holds its value.
#include <utility>

#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

class Replicated : public SyncStrategy {
 public:
  Replicated(const SyncEnv& env, std::vector<int> params) : env_(env), params_(std::move(params)) {}

  Status Begin() override {
    for (int p : params_) {
      ParamState& st = (*env_.state)[p];
      if (st.dense.valid && st.dense.generation == st.generation) continue;
      const std::vector<int64_t>& read = env_.rows->params[p].read;
      HeldRows& h = st.replicated;
      if (h.loop >= 0 && h.rows == read && h.generation == st.generation) continue;
      h.loop = env_.loop;
      h.rows = read;
      h.generation = st.generation;
      RIGEL_RETURN_IF_ERROR(env_.io->Pull(p, read, true, nullptr, env_.metrics, "replicated"));
    }
    return Status::Ok();
  }

 private:
  const SyncEnv env_;
  const std::vector<int> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> CreateReplicated(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<Replicated>(env, std::move(params));
}

}  // namespace rigel::worker::sync
