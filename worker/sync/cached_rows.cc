// The `cache` strategy: relaxed parameters on the servers with bounded
// staleness per row (DSL.md version 3). Each worker keeps a write-back row
// cache per parameter (ps/cache.h) and exchanges it with every server once
// per step, pipelined: the exchange for step b + 1 (the pushes due after step
// b - 1, the rows step b + 1 needs) goes out before step b computes and is
// applied once it is done. Hot rows (worker/sync/hot_rows.h) are left out of
// the caches and merged by the collectives every `merge_every` steps. At the
// end of the run every pending delta is pushed (a flush) and worker 0 merges
// the hot rows' delta into the servers, so what the run did is all on the
// servers before the scheduler goes on.
#include <chrono>
#include <utility>

#include "common/seconds.h"
#include "worker/sync/strategy.h"

namespace rigel::worker::sync {

namespace {

using Clock = std::chrono::steady_clock;

// The most of a step's compute a hot-row merge may cost (DecideHotRows).
constexpr float kHotLatencyShare = 0.25f;

class CachedRows : public SyncStrategy {
 public:
  CachedRows(const SyncEnv& env, std::vector<int> params) : env_(env), params_(std::move(params)) {}

  Status Begin() override {
    const RelaxedRun& rr = *env_.relaxed;
    for (int p : params_) {
      ParamState& st = (*env_.state)[p];
      kernel::ParamBinding& b = (*env_.bindings)[p];
      if (!st.cache) {
        // Held in part (the worker has no whole copy: b.data is null), the
        // cache keeps the values itself and the kernel finds them through
        // its slot map.
        st.cache =
            std::make_unique<ps::RowCache>(p, *env_.map, b.data, rr.capacity[p], rr.push_bound);
        if (static_cast<size_t>(p) < rr.touched_only.size() && rr.touched_only[p]) {
          st.cache->FetchTouchedRowsOnly();
        }
      } else if (st.cache_generation != st.generation) {
        st.cache->Reset();  // another loop wrote the parameter: the rows changed
      } else if (ReadOnly(p) && !st.cache_exact && rr.staleness > 0) {
        // A loop that only reads the table (a test loop over a table cached
        // in part, analysis/sync/resolve.h) reads exact values, not the
        // writing loop's copies, which may lack the other workers' last
        // merges. At staleness 0 (a loop that only reads, worker/
        // runner_relaxed.cc) the first exchange refreshes every such row;
        // otherwise its rows are fetched afresh as its steps touch them.
        st.cache->Reset();
      } else {
        st.cache->RestoreLocal();
      }
      Bind(p);  // the hot rows load into the binding
      st.cache->set_push_bound(rr.push_bound);
      st.cache->SetScaledRows(rr.scaled[p]);
      st.hot.set_averaged(!rr.scaled[p].empty());
      st.cache->SetSingleWriter(env_.rows->params[p].single);
      // Hot rows are decided after the first run (DecideHotRows); until then
      // every row goes through the cache.
      decide_ = decide_ || (!st.hot.chosen() && !rr.hot[p].empty() && env_.dense);
      RIGEL_RETURN_IF_ERROR(st.hot.Load(*env_.io, p, b, env_.metrics));
      st.cache->set_push_age(rr.push_age);
      st.tracker =
          kernel::RowTracker{st.cache->updates(), st.cache->push_bound(), st.cache->due(),
                             rr.push_age > 0 ? st.cache->started() : nullptr, st.cache->cells()};
      b.tracker = &st.tracker;
      Bind(p);
      caches_.push_back(st.cache.get());
      before_.push_back(st.cache->stats());
      hot_bytes_.push_back(0.0);
      // Hot rows read but not written need no merges.
      hot_ = hot_ || (!st.hot.rows().empty() && !ReadOnly(p));
    }
    return Status::Ok();
  }

  Status BeforeStep(const Step& step) override {
    auto t = Clock::now();
    if (!env_.exchange->in_flight()) {
      // The first step: its rows are fetched before it runs.
      RIGEL_RETURN_IF_ERROR(Send(step.server_rows, step.index));
    }
    Status st = env_.exchange->Receive();
    if (st.ok() && !step.last()) st = Send(step.next_rows, step.index + 1);
    BindAll();
    env_.metrics->comm_s += SecondsSince(t);
    return Diverged(st);
  }

  Status WithinStep(const Step& step) override {
    // Only whole caches are cut into parts: the rows of a part need no list.
    auto t = Clock::now();
    Status st = env_.exchange->Receive();
    if (st.ok()) st = Send(nullptr, step.index);
    BindAll();
    env_.metrics->comm_s += SecondsSince(t);
    return Diverged(st);
  }

  Status AfterStep(const Step& step) override {
    step_count_ = step.count;
    if (!hot_ || ((step.index + 1) % env_.relaxed->merge_every != 0 && !step.last())) {
      return Status::Ok();
    }
    return MergeHot();
  }

  Status End() override {
    auto t = Clock::now();
    Status st;
    if (env_.exchange->in_flight()) st = env_.exchange->Receive();
    if (st.ok()) st = Send(nullptr, -1, /*flush=*/true);
    if (st.ok()) st = env_.exchange->Receive();
    BindAll();
    for (int p : params_) {
      ParamState& s = (*env_.state)[p];
      if (st.ok() && env_.rank == 0) {
        st = s.hot.Commit(*env_.exchange, *env_.map, p, (*env_.bindings)[p], env_.metrics);
      }
      s.cache_generation = s.generation;
      s.cache_exact = ReadOnly(p);
      (*env_.bindings)[p].tracker = nullptr;
    }
    if (st.ok() && decide_) st = DecideHotRows(step_count_);
    env_.metrics->comm_s += SecondsSince(t);
    Report();
    return Diverged(st);
  }

 private:
  // The run reads p and does not write it.
  bool ReadOnly(int p) const {
    const analysis::PlanParam& pp = env_.rows->params[static_cast<size_t>(p)].param;
    return !pp.written && !pp.relaxed;
  }

  // Points the run's binding of p at the cache's values (held in part, its
  // cells through its slot map) and its tracker at the cache's counts: both
  // are per cell, and move when the cache makes new cells.
  void Bind(int p) {
    ParamState& st = (*env_.state)[p];
    ps::RowCache& c = *st.cache;
    st.tracker.updates = c.updates();
    st.tracker.cells = c.cells();
    if (!c.in_part()) return;
    kernel::ParamBinding& b = (*env_.bindings)[p];
    b.data = c.data();
    b.slots = c.cells();
  }
  void BindAll() {
    for (int p : params_) Bind(p);
  }

  // One exchange: rows[p] (when given, and the cache is partial) are the rows
  // the step will touch.
  Status Send(const std::vector<std::vector<int64_t>>* rows, int64_t step, bool flush = false) {
    std::vector<std::span<const int64_t>> next;
    for (int p : params_) {
      next.push_back(rows ? std::span<const int64_t>((*rows)[p]) : std::span<const int64_t>());
    }
    env_.exchange->set_audit(env_.relaxed->audit);
    return env_.exchange->Send(caches_, next, flush, env_.relaxed->staleness,
                               static_cast<uint64_t>(step));
  }

  Status MergeHot() {
    auto t = Clock::now();
    std::vector<Replica> replicas;
    for (size_t i = 0; i < params_.size(); ++i) {
      HotRows& h = (*env_.state)[params_[i]].hot;
      if (h.rows().empty()) continue;
      replicas.push_back(h.Gather((*env_.bindings)[params_[i]]));
      // What this worker puts into the collective (allreduce.collective's count).
      hot_bytes_[i] += static_cast<double>(replicas.back().count * sizeof(float));
    }
    const uint64_t before = env_.dense->bytes_reduced();
    RIGEL_RETURN_IF_ERROR(env_.dense->Sync(replicas));
    env_.metrics->bytes["hot.collective"] +=
        static_cast<double>(env_.dense->bytes_reduced() - before);
    Status st;
    for (int p : params_) {
      HotRows& h = (*env_.state)[p].hot;
      if (st.ok() && !h.rows().empty()) {
        st = h.Scatter((*env_.bindings)[p], env_.prog->params[p].name);
      }
    }
    env_.metrics->comm_s += SecondsSince(t);
    return Diverged(st);
  }

  // Whether the candidate hot rows (the bytes rule, analysis/relaxed.h) go
  // to the collectives from the next run on: only if a merge's collective
  // call, which every worker waits for at every step, costs at most
  // kHotLatencyShare of a step's compute. Measured on this run by every
  // worker and summed over all of them, so all decide alike.
  Status DecideHotRows(int64_t steps) {
    const float per_step = static_cast<float>(env_.metrics->compute_s /
                                              static_cast<double>(std::max<int64_t>(steps, 1)));
    float probe[2] = {per_step, 0.0f}, zero[2] = {0.0f, 0.0f};
    auto t = Clock::now();
    Replica r{probe, zero, 2};
    RIGEL_RETURN_IF_ERROR(env_.dense->Sync(std::span<const Replica>(&r, 1)));
    float took[2] = {static_cast<float>(SecondsSince(t)), 0.0f}, zero2[2] = {0.0f, 0.0f};
    Replica r2{took, zero2, 2};
    RIGEL_RETURN_IF_ERROR(env_.dense->Sync(std::span<const Replica>(&r2, 1)));
    // Sums over the workers: the means' ratio is the sums' ratio.
    const bool pays = took[0] <= kHotLatencyShare * probe[0];
    for (int p : params_) {
      ParamState& st = (*env_.state)[p];
      if (st.hot.chosen()) continue;
      st.hot.Choose(pays ? env_.relaxed->hot[p] : std::vector<int64_t>{});
      st.cache->Exclude(st.hot.rows());
    }
    env_.metrics->values.emplace_back("hot.merge_s", took[0] / env_.workers);
    env_.metrics->values.emplace_back("hot.step_s", probe[0] / env_.workers);
    return Status::Ok();
  }

  Status Diverged(const Status& st) const { return sync::Diverged(env_, st); }

  // The run's settings and counters (exec::EpochFigures::relaxed) and bytes
  // per parameter.
  void Report() {
    SyncMetrics& m = *env_.metrics;
    const RelaxedRun& rr = *env_.relaxed;
    m.values.emplace_back("relaxed.staleness", rr.staleness);
    m.values.emplace_back("relaxed.push_bound", rr.push_bound);
    m.values.emplace_back("relaxed.push_age", static_cast<double>(rr.push_age));
    m.values.emplace_back("relaxed.merge_every", static_cast<double>(rr.merge_every));
    for (size_t i = 0; i < caches_.size(); ++i) {
      const ps::RowCacheStats& now = caches_[i]->stats();
      const ps::RowCacheStats& was = before_[i];
      const std::string& name = env_.prog->params[params_[i]].name;
      const double bytes =
          static_cast<double>(now.bytes_in + now.bytes_out - was.bytes_in - was.bytes_out);
      m.bytes["cache"] += bytes;
      m.values.emplace_back("param_bytes." + name, bytes + hot_bytes_[i]);
      auto count = [&](const char* what, uint64_t a, uint64_t b) {
        m.values.emplace_back(std::string("relaxed.count.") + what + "." + name,
                              static_cast<double>(a - b));
      };
      count("pushed", now.pushed, was.pushed);
      count("refreshed", now.refreshed, was.refreshed);
      count("fetched", now.fetched, was.fetched);
      count("evicted", now.evicted, was.evicted);
      // Summed over workers; the log gives drift.<name> = sqrt(drift_sq / norm_sq).
      m.values.emplace_back("relaxed.count.drift_sq." + name, now.drift_sq - was.drift_sq);
      m.values.emplace_back("relaxed.count.norm_sq." + name, now.norm_sq - was.norm_sq);
      // How much of the table this worker holds (the most over workers and
      // runs): its cells, rows held at once at the most.
      m.values.emplace_back("relaxed.max.held_rows." + name,
                            static_cast<double>(caches_[i]->cells_made()));
      m.values.emplace_back("relaxed.scaled_rows." + name,
                            static_cast<double>(rr.scaled[params_[i]].size()));
      m.values.emplace_back("relaxed.hot_rows." + name,
                            static_cast<double>((*env_.state)[params_[i]].hot.rows().size()));
      // The rows the sample proposed (analysis/relaxed.h ChooseHotRows),
      // whether or not their merges paid.
      m.values.emplace_back("relaxed.hot_candidates." + name,
                            static_cast<double>(rr.hot[params_[i]].size()));
      if (rr.audit) {
        count("audited", now.audited, was.audited);
        m.values.emplace_back("relaxed.max.max_lag." + name, static_cast<double>(now.max_lag));
      }
    }
  }

  const SyncEnv env_;
  const std::vector<int> params_;
  std::vector<ps::RowCache*> caches_;
  std::vector<ps::RowCacheStats> before_;  // each cache's counters at Begin
  bool hot_ = false;                       // some parameter has hot rows
  bool decide_ = false;                    // the hot rows are decided at this run's end
  std::vector<double> hot_bytes_;          // per parameter, this worker's collective bytes
  int64_t step_count_ = 0;
};

}  // namespace

std::unique_ptr<SyncStrategy> CreateCachedRows(const SyncEnv& env, std::vector<int> params) {
  return std::make_unique<CachedRows>(env, std::move(params));
}

}  // namespace rigel::worker::sync
