// The `ps` strategy: a parameter's rows live on the parameter servers; each
// step pulls the rows its elements touch and pushes their deltas after it.
// Pulls of a relaxed parameter may lag within the staleness bound, and, when
// the plan allows (analysis::RowPlan::prefetch), are asked for one clock ahead while
// the previous step computes: they then see every update the bound promises
// at the clock they are used. Rows the worker's last step updated keep its
// own values (the servers' answer may lack them), and the next delta is
// taken against those.
#include <future>
#include <utility>

#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

using Rows = std::future<StatusOr<std::vector<float>>>;

class PsPullPush : public SyncStrategy {
 public:
  PsPullPush(const SyncEnv& env, std::vector<int> params) : env_(env) {
    for (int p : params) {
      const analysis::PlanParam& pp = env.rows->params[p].param;
      params_.emplace_back();
      params_.back().p = p;
      params_.back().written = pp.written;
      params_.back().synchronous = !pp.relaxed;
    }
  }

  Status BeforeStep(const Step& step) override {
    const bool prefetched = ahead_;
    ahead_ = false;
    for (Param& r : params_) {
      if (prefetched) {
        r.keys = std::move(r.ahead_keys);
        r.pull = std::move(r.ahead);
      } else {
        r.keys = (*step.server_rows)[r.p];
        if (r.keys.empty()) continue;
        ps::PsClient& c = env_.io->client();
        r.pull = r.synchronous ? c.PullSynchronous(r.p, r.keys) : c.Pull(r.p, r.keys);
      }
    }
    for (Param& r : params_) {
      if (!r.keys.empty()) {
        RIGEL_RETURN_IF_ERROR(env_.io->Take(r.p, r.keys, std::move(r.pull), &r.base, env_.metrics,
                                            "ps", prefetched ? &r.last_keys : nullptr));
      }
      r.last_keys = r.keys;
    }
    if (step.next_rows) {
      ahead_ = true;
      for (Param& r : params_) {
        r.ahead_keys = (*step.next_rows)[r.p];
        if (!r.ahead_keys.empty()) r.ahead = env_.io->client().PullAhead(r.p, r.ahead_keys, 1);
      }
    }
    return Status::Ok();
  }

  Status AfterStep(const Step&) override {
    for (Param& r : params_) {
      if (!r.written || r.keys.empty()) continue;
      RIGEL_RETURN_IF_ERROR(env_.io->PushDeltas(r.p, r.keys, &r.base, env_.metrics, "ps"));
    }
    return Status::Ok();
  }

 private:
  struct Param {
    int p = 0;
    bool written = false;
    bool synchronous = true;         // pulls see every earlier clock (not relaxed)
    std::vector<int64_t> keys;       // this step's rows
    std::vector<int64_t> last_keys;  // the previous step's
    std::vector<float> base;         // what the servers held for `keys`
    Rows pull;
    std::vector<int64_t> ahead_keys;  // the next step's, pulled ahead
    Rows ahead;
  };

  const SyncEnv env_;
  std::vector<Param> params_;
  bool ahead_ = false;  // the next step's rows were asked for
};

}  // namespace

std::unique_ptr<SyncStrategy> CreatePsPullPush(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<PsPullPush>(env, std::move(params));
}

}  // namespace rigel::worker::sync
