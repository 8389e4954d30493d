// The `local` strategy: the rows of a parameter that only this worker's
// elements touch stay here for the run. They are pulled at its start — or
// kept from the previous run of the same loop when nothing wrote the
// parameter since (mf's W is pulled once, not every epoch), or computed when
// nothing wrote it yet (Initial, below) — and their deltas pushed at its
// end, or, for a parameter held between runs (analysis/held_rows.h), when
// the scheduler asks (Runner::Flush): no other loop touches it, so the next
// run of this loop keeps the rows as they are. Rows other workers touch too
// (a wavefront's block boundaries; analysis::ParamRows::shared in
// analysis/step_plan.h) go through the servers around every step, always
// synchronously.
#include <algorithm>
#include <string>
#include <utility>

#include "ir/param_init.h"
#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

class LocalRows : public SyncStrategy {
 public:
  LocalRows(const SyncEnv& env, std::vector<int> params) : env_(env) {
    for (int p : params) {
      const analysis::PlanParam& pp = env.rows->params[p].param;
      params_.push_back(Param{p, pp.written, pp.held, {}, {}});
    }
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
      // Pulling over rows whose changes the servers lack would lose them;
      // the scheduler flushes before anything else touches the parameter.
      if (h.unpushed) {
        return Internal("worker " + std::to_string(env_.rank) + ": parameter '" +
                        env_.prog->params[r.p].name + "' holds rows changed by loop " +
                        std::to_string(h.loop) + " that were never flushed, and loop " +
                        std::to_string(env_.loop) + " needs other rows of it");
      }
      h.loop = env_.loop;
      h.rows = held;
      if (!env_.restored && st.generation == 0) {
        Initial(r.p, held, &h.base);
        continue;
      }
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
      if (r.held) {
        st.local.unpushed = true;
      } else {
        RIGEL_RETURN_IF_ERROR(
            env_.io->PushDeltas(r.p, st.local.rows, &st.local.base, env_.metrics, "local"));
      }
      st.local.generation = st.generation;
    }
    return Status::Ok();
  }

 private:
  // No run wrote parameter p yet and the servers started from the
  // initialisers, which they compute as the workers do (ir/param_init.h):
  // `rows` are computed here, into `base` and the local copy, not pulled
  // (the row sums' R moves nothing in its first epoch either).
  void Initial(int p, const std::vector<int64_t>& rows, std::vector<float>* base) const {
    const ir::ParamDecl& decl = env_.prog->params[p];
    const kernel::ParamBinding& b = env_.io->param(p);
    const size_t w = static_cast<size_t>(b.width);
    base->resize(rows.size() * w);
    for (size_t k = 0; k < rows.size(); ++k) {
      float* row = base->data() + k * w;
      ir::InitialRow(decl, rows[k], row);
      std::copy(row, row + w, b.data + static_cast<size_t>(rows[k]) * w);
    }
  }

  struct Param {
    int p;
    bool written;
    bool held;                  // pushed by Runner::Flush, not at the end
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
