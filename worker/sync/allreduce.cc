// The `allreduce` strategy: parameters read and written whole keep a replica
// on every worker (worker/dense_sync.h). After every `sync_every` steps and
// at the end of the run the workers' deltas are summed with a collective, so
// every replica stays bit for bit equal; the servers are not used during the
// run. The replica is pulled only when something else wrote the parameter
// since it was last current; worker 0 pushes the run's delta at the end, so
// the servers' copy stays authoritative for other loops, prints and
// --save-params. Each run reports the written replicas' hashes
// ("replica_hash.<name>"), which the scheduler compares across workers.
#include <chrono>
#include <numeric>
#include <utility>

#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

using Clock = std::chrono::steady_clock;

class Allreduce : public SyncStrategy {
 public:
  Allreduce(const SyncEnv& env, std::vector<int> params) : env_(env), params_(std::move(params)) {
    for (int p : params_) {
      if (env.rows->params[p].param.written) written_.push_back(p);
    }
  }

  Status Begin() override {
    for (int p : params_) {
      ParamState& st = (*env_.state)[p];
      DenseReplica& d = st.dense;
      if (d.valid && d.generation == st.generation) continue;
      // Every worker pulls the same values: the servers are quiet between runs.
      const kernel::ParamBinding& b = env_.io->param(p);
      d.rows.resize(static_cast<size_t>(b.rows));
      std::iota(d.rows.begin(), d.rows.end(), 0);
      RIGEL_RETURN_IF_ERROR(env_.io->Pull(p, d.rows, true, &d.server, env_.metrics, "allreduce"));
      d.base.assign(b.data, b.data + b.rows * b.width);
      d.valid = true;
      d.generation = st.generation;
    }
    return Status::Ok();
  }

  // Every worker takes the same number of steps, so the collectives match.
  Status AfterStep(const Step& step) override {
    if ((step.index + 1) % env_.sync_every != 0 && !step.last()) return Status::Ok();
    return Sync();
  }

  Status End() override {
    for (int p : written_) {
      ParamState& st = (*env_.state)[p];
      DenseReplica& d = st.dense;
      if (env_.rank == 0) {
        RIGEL_RETURN_IF_ERROR(env_.io->PushDeltas(p, d.rows, &d.server, env_.metrics, "allreduce"));
      }
      d.generation = st.generation;
      const kernel::ParamBinding& b = env_.io->param(p);
      env_.metrics->values.emplace_back(
          "replica_hash." + env_.prog->params[p].name,
          static_cast<double>(ReplicaHash(b.data, static_cast<size_t>(b.rows * b.width))));
    }
    return Status::Ok();
  }

 private:
  // Sums the written replicas' deltas over every worker.
  Status Sync() {
    if (written_.empty()) return Status::Ok();
    auto t = Clock::now();
    std::vector<Replica> replicas;
    for (int p : written_) {
      const kernel::ParamBinding& b = env_.io->param(p);
      DenseReplica& d = (*env_.state)[p].dense;
      replicas.push_back(Replica{b.data, d.base.data(), static_cast<size_t>(b.rows * b.width)});
    }
    const uint64_t before = env_.dense->bytes_reduced();
    RIGEL_RETURN_IF_ERROR(env_.dense->Sync(replicas));
    env_.metrics->bytes["allreduce.collective"] +=
        static_cast<double>(env_.dense->bytes_reduced() - before);
    env_.metrics->comm_s += std::chrono::duration<double>(Clock::now() - t).count();
    return Status::Ok();
  }

  const SyncEnv env_;
  const std::vector<int> params_;
  std::vector<int> written_;  // the allreduce parameters this loop writes
};

}  // namespace

std::unique_ptr<SyncStrategy> CreateAllreduce(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<Allreduce>(env, std::move(params));
}

}  // namespace rigel::worker::sync
