#include "exec/cost_probe.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <sstream>

#include "analysis/partition.h"
#include "analysis/relaxed.h"
#include "analysis/sync/resolve.h"
#include "common/key_sort.h"
#include "exec/executor.h"
#include "kernel/key_slice.h"

namespace rigel::exec {

namespace {

using Clock = std::chrono::steady_clock;

// The probe's state while the driver runs.
class Probe {
 public:
  Probe(const ir::Program& prog, const std::vector<analysis::Plan>& plans, const ProbeOptions& opts)
      : prog_(prog), plans_(plans), opts_(opts) {
    for (size_t i = 0; i < plans.size(); ++i) {
      variants_.push_back(Variant{
          analysis::CountState(opts.workers, static_cast<int>(prog.params.size())), {}, {}});
    }
  }

  StatusOr<std::vector<ProbeResult>> Run() {
    if (opts_.jit) {
      jit_ = *opts_.jit;
    } else {
      RIGEL_ASSIGN_OR_RETURN(jit_, kernel::DefaultJitMode());
    }
    std::ostringstream quiet;
    ExecutorOptions eo;
    eo.seed = opts_.seed;
    // The probe's own serial execution is interpreted: no compile thread of
    // its own competes with the timings; the compiled tier is timed on a
    // compiled twin of each body (TimeCompiled).
    eo.compile.jit = kernel::JitMode::kOff;
    eo.out = &quiet;
    eo.remote = [this](const RemoteRun& run) { return Count(run); };
    eo.at_checkpoint_point = [this]() -> Status {
      Close();
      if (epochs_ >= opts_.epochs) {
        done_ = true;
        return FailedPrecondition("the probe counted its epochs");
      }
      return Status::Ok();
    };
    RIGEL_ASSIGN_OR_RETURN(ex_, SerialExecutor::Create(prog_, eo));
    const SerialExecutor* ex = ex_.get();
    widths_ = [ex](int expr) { return ex->EvalInt(expr); };
    for (size_t l = 0; l < prog_.loops.size(); ++l) {
      RIGEL_ASSIGN_OR_RETURN(kernel::KeySlice s,
                             kernel::KeySlice::Compile(prog_, static_cast<int>(l), widths_));
      slices_.push_back(std::move(s));
    }
    for (size_t p = 0; p < prog_.params.size(); ++p) {
      const kernel::ParamBinding& b = ex_->bindings()[p];
      shapes_.push_back({prog_.params[p].name, b.rows, b.width});
    }
    element_s_.assign(prog_.loops.size(), 0.0);
    jit_element_s_.assign(prog_.loops.size(), 0.0);
    compile_ms_.assign(prog_.loops.size(), 0.0);
    for (Variant& v : variants_) {
      v.result.batch.assign(prog_.loops.size(), 0);
      v.result.compiled.assign(prog_.loops.size(), false);
      v.interpreted_s.assign(prog_.loops.size(), 0.0);
    }
    Status st = ex_->Run();
    if (!st.ok() && !done_) return st;
    if (!variants_[0].current.runs.empty() || epochs_ == 0) Close();
    std::vector<ProbeResult> out;
    for (Variant& v : variants_) {
      ProbeResult& r = v.result;
      r.element_s = element_s_;
      r.jit_element_s = jit_element_s_;
      r.compile_ms = compile_ms_;
      std::vector<analysis::Prediction> later;
      for (size_t e = r.epochs.size() > 1 ? 1 : 0; e < r.epochs.size(); ++e) {
        later.push_back(r.epochs[e].prediction);
      }
      r.steady = analysis::MeanPrediction(later);
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  // One plan's counts.
  struct Variant {
    analysis::CountState state;
    EpochCost current;
    ProbeResult result;
    // Per loop: what its busiest worker has interpreted so far (--jit auto).
    std::vector<double> interpreted_s;
  };

  // Ends the epoch under way: its prediction from the runs counted.
  void Close() {
    for (Variant& v : variants_) {
      v.current.prediction = analysis::Predict(v.current.runs, opts_.servers, opts_.constants);
      v.result.epochs.push_back(std::move(v.current));
      v.current = EpochCost{};
    }
    ++epochs_;
  }

  kernel::RunContext Context(const RemoteRun& run, std::vector<double>* accums) const {
    kernel::RunContext ctx;
    ctx.params = &ex_->bindings();
    ctx.data = &ex_->data_ptrs();
    accums->assign(static_cast<size_t>(ir::AccumSlots(prog_.accums)), 0.0);
    ctx.accums = accums->data();
    ctx.seed = opts_.seed;
    ctx.launch = run.launch;
    std::map<int, kernel::OuterValue> outer(run.outer.begin(), run.outer.end());
    ctx.outer = [outer](int id) -> StatusOr<kernel::OuterValue> {
      auto it = outer.find(id);
      if (it == outer.end()) return Internal("the probe lacks driver value " + std::to_string(id));
      return it->second;
    };
    return ctx;
  }

  // The rows a set of elements touches (the worker's Keys, worker/runner.cc)
  // and, with `per_element`, how many of the elements touch each (the slice
  // then runs element by element: one element may record a row twice).
  StatusOr<analysis::RowCounts> Touches(int loop, const kernel::RunContext& ctx,
                                        std::span<const int64_t> elements, bool per_element) const {
    const kernel::KeySlice& slice = slices_[static_cast<size_t>(loop)];
    const size_t np = prog_.params.size();
    std::vector<std::vector<int64_t>> keys(np), one(np);
    std::vector<int64_t> tmp;
    if (per_element) {
      for (int64_t e : elements) {
        for (auto& k : one) k.clear();
        RIGEL_RETURN_IF_ERROR(slice.Run(ctx, std::span<const int64_t>(&e, 1), &one));
        for (size_t p = 0; p < np; ++p) {
          SortKeys(&one[p], &tmp);
          one[p].erase(std::unique(one[p].begin(), one[p].end()), one[p].end());
          keys[p].insert(keys[p].end(), one[p].begin(), one[p].end());
        }
      }
    } else {
      RIGEL_RETURN_IF_ERROR(slice.Run(ctx, elements, &keys));
    }
    analysis::RowCounts out(np);
    if (elements.empty()) return out;  // as the worker's Keys
    for (size_t p = 0; p < np; ++p) {
      const int pi = static_cast<int>(p);
      if (!slice.touches(pi)) continue;
      if (slice.whole(pi) || !slice.exact(pi)) {
        for (int64_t r = 0; r < shapes_[p].rows; ++r) {
          out[p].emplace_back(r, static_cast<int64_t>(elements.size()));
        }
        continue;
      }
      SortKeys(&keys[p], &tmp);
      for (int64_t r : keys[p]) {
        if (!out[p].empty() && out[p].back().first == r) {
          ++out[p].back().second;
        } else {
          out[p].emplace_back(r, 1);
        }
      }
    }
    return out;
  }

  // The settings a run of `plan` keeps: the options', or the plan's where the
  // options hold their defaults.
  int64_t Batch(const analysis::Plan& plan) const {
    return opts_.batch > 0 ? opts_.batch : plan.settings.batch;
  }
  int Staleness(const analysis::Plan& plan) const {
    return opts_.staleness == 1 && plan.settings.staleness >= 1 ? plan.settings.staleness
                                                                : opts_.staleness;
  }
  int64_t PushBound(const analysis::Plan& plan) const {
    return opts_.push_bound > 0 ? opts_.push_bound : plan.settings.push_bound;
  }

  analysis::PlanInput Input(const analysis::Plan& plan, int loop) const {
    const analysis::LoopPlan& lp = plan.loops[static_cast<size_t>(loop)];
    analysis::PlanInput in;
    in.kind = lp.schedule.kind;
    in.workers = opts_.workers;
    in.batch = Batch(plan);
    in.staleness = Staleness(plan);
    in.static_keys = !slices_[static_cast<size_t>(loop)].draws();
    in.params = static_cast<int>(prog_.params.size());
    analysis::sync::JobSync job;
    job.staleness = in.staleness;
    job.scaled_merges = opts_.scaled_merges;
    job.cache_bytes = opts_.cache_mb << 20;
    in.loop_params = std::move(
        analysis::sync::Resolve(prog_, plan, shapes_, job).loops[static_cast<size_t>(loop)]);
    return in;
  }

  // Every parameter's values, in binding order.
  std::vector<std::vector<float>> Snapshot() const {
    std::vector<std::vector<float>> out;
    for (const kernel::ParamBinding& b : ex_->bindings()) {
      out.emplace_back(b.data, b.data + b.rows * b.width);
    }
    return out;
  }

  // Puts `values` (a Snapshot) into the parameters and returns what they held.
  void Swap(std::vector<std::vector<float>>* values) const {
    const std::vector<kernel::ParamBinding>& bs = ex_->bindings();
    for (size_t p = 0; p < bs.size(); ++p) {
      std::swap_ranges((*values)[p].begin(), (*values)[p].end(), bs[p].data);
    }
  }

  // The rows whose values differ between `before` and the parameters now.
  std::vector<std::vector<uint8_t>> Changes(const std::vector<std::vector<float>>& before) const {
    const std::vector<kernel::ParamBinding>& bs = ex_->bindings();
    std::vector<std::vector<uint8_t>> out(bs.size());
    for (size_t p = 0; p < bs.size(); ++p) {
      const size_t w = static_cast<size_t>(bs[p].width);
      out[p].assign(static_cast<size_t>(bs[p].rows), 0);
      for (size_t r = 0; r < out[p].size(); ++r) {
        // The workers' test (worker/sync/row_io.cc): a row is pushed when
        // some value's difference from its base is nonzero.
        const float* a = bs[p].data + r * w;
        const float* b = before[p].data() + r * w;
        for (size_t c = 0; c < w && out[p][r] == 0; ++c) out[p][r] = a[c] - b[c] != 0.0f;
      }
    }
    return out;
  }

  // Runs the loop serially, as SerialExecutor would without the hook (file
  // order, or lexicographic order for an `ordered` loop), adding its partial
  // sums into the driver's accumulators, and counts its element writes per
  // row into `writes` (the workers' trackers count the same way).
  Status Execute(const RemoteRun& run, std::vector<std::vector<uint32_t>>* writes) {
    std::vector<double> unused;
    kernel::RunContext ctx = Context(run, &unused);
    ctx.accums = run.accums;
    std::vector<kernel::ParamBinding> tracked = ex_->bindings();
    std::vector<kernel::RowTracker> trackers(tracked.size());
    std::vector<int64_t> never_due;  // the bound is never reached
    writes->assign(tracked.size(), {});
    for (size_t p = 0; p < tracked.size(); ++p) {
      (*writes)[p].assign(static_cast<size_t>(tracked[p].rows), 0);
      trackers[p] = kernel::RowTracker{(*writes)[p].data(), UINT32_MAX, &never_due};
      tracked[p].tracker = &trackers[p];
    }
    ctx.params = &tracked;
    const kernel::Kernel& k = ex_->kernel(run.loop);
    if (!prog_.loops[static_cast<size_t>(run.loop)].ordered) {
      return k.Run(ctx, 0, run.space->count);
    }
    auto it = ordered_.find(run.space);
    if (it == ordered_.end())
      it = ordered_.emplace(run.space, data::OrderedElements(*run.space)).first;
    return k.RunElements(ctx, it->second);
  }

  // Seconds per element of the loop body on this machine: a stretch of up
  // to time_sample elements run through the kernel after a warm-up of the
  // same stretch (a worker runs its block's elements in order too). The
  // parameters are put back as they were, for the serial execution.
  Status Time(int loop, const kernel::RunContext& ctx, const data::Dataset& space) {
    double& t = element_s_[static_cast<size_t>(loop)];
    if (t > 0 || space.count == 0) return Status::Ok();
    std::vector<std::vector<float>> saved = Snapshot();
    Status st = TimeStretches(ex_->kernel(loop), ctx, space, &t);
    Swap(&saved);
    if (!st.ok() || jit_ == kernel::JitMode::kOff) return st;
    return TimeCompiled(loop, ctx, space);
  }

  // The same stretches through the body compiled (--jit on's compile, done
  // here and now; a worker compiles its own). A body the JIT cannot compile
  // keeps no compiled figure: its runs are counted interpreted, as they run.
  Status TimeCompiled(int loop, const kernel::RunContext& ctx, const data::Dataset& space) {
    kernel::CompileOptions co;
    co.jit = kernel::JitMode::kOn;
    RIGEL_ASSIGN_OR_RETURN(kernel::Kernel k, kernel::Kernel::Compile(prog_, loop, widths_, co));
    const kernel::TierReport tier = k.tier();
    if (!tier.compiled) return Status::Ok();
    compile_ms_[static_cast<size_t>(loop)] = tier.compile_ms;
    std::vector<std::vector<float>> saved = Snapshot();
    Status st = TimeStretches(k, ctx, space, &jit_element_s_[static_cast<size_t>(loop)]);
    Swap(&saved);
    return st;
  }

  // The seconds per element a run of `loop` counted as `counts` is charged
  // with in `v`, by the workers' rule (cost_probe.h). Under auto the worker
  // with the most of the run's elements decides, as the slowest: it
  // interprets until it has spent the expected compile time, and on while
  // the compile runs beside it; the rest of the run is compiled.
  double ElementSeconds(Variant* v, int loop, const analysis::RunCounts& counts) const {
    const size_t l = static_cast<size_t>(loop);
    const double interpreted = element_s_[l], compiled = jit_element_s_[l];
    if (compiled <= 0 || jit_ == kernel::JitMode::kOff) return interpreted;
    if (jit_ == kernel::JitMode::kOn || interpreted <= 0) {
      v->result.compiled[l] = true;
      return compiled;
    }
    int64_t most = 0;
    for (const analysis::WorkerCounts& w : counts.workers) {
      most = std::max(most,
                      std::accumulate(w.step_elements.begin(), w.step_elements.end(), int64_t{0}));
    }
    if (most == 0) return interpreted;
    // A worker's first compile waits for the first estimate; the probe's own
    // compiles (its twins) say nothing of a worker's, which starts afresh.
    const double expected_s = kernel::kFirstCompileEstimateMs / 1e3;
    double& spent = v->interpreted_s[l];
    double slow = 0;  // elements of this run interpreted
    if (spent < expected_s) {
      const double compile_s = compile_ms_[l] > 0 ? compile_ms_[l] / 1e3 : expected_s;
      slow = std::min<double>(static_cast<double>(most),
                              (expected_s - spent + compile_s) / interpreted);
      spent += slow * interpreted;
    }
    v->result.compiled[l] = slow < static_cast<double>(most);
    return (slow * interpreted + (static_cast<double>(most) - slow) * compiled) /
           static_cast<double>(most);
  }

  Status TimeStretches(const kernel::Kernel& k, const kernel::RunContext& ctx,
                       const data::Dataset& space, double* t) const {
    const int64_t n = std::min<int64_t>(space.count, opts_.time_sample);
    const int64_t lo = (space.count - n) / 2;
    RIGEL_RETURN_IF_ERROR(k.Run(ctx, lo, lo + std::min<int64_t>(n, 1024)));
    // The least of at least three stretches, and of as many as fit in
    // kTimingS (at most kMostStretches): a cheap body's stretch lasts well
    // under a millisecond, where one preemption doubles a measurement (bias'
    // training loop: 6.7 ns per element in most probes, 11.5 ns in one that
    // took three stretches).
    constexpr double kTimingS = 0.02;
    constexpr int kMostStretches = 50;
    double best = 0, spent = 0;
    for (int rep = 0; rep < 3 || (spent < kTimingS && rep < kMostStretches); ++rep) {
      const auto start = Clock::now();
      RIGEL_RETURN_IF_ERROR(k.Run(ctx, lo, lo + n));
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      best = rep == 0 ? s : std::min(best, s);
      spent += s;
    }
    *t = best / static_cast<double>(n);
    return Status::Ok();
  }

  // Executes the run, then counts it from the values it started with (the
  // rows a worker's slice finds are those of the run's start).
  Status Count(const RemoteRun& run) {
    std::vector<double> accums;
    const kernel::RunContext ctx = Context(run, &accums);
    RIGEL_RETURN_IF_ERROR(Time(run.loop, ctx, *run.space));
    std::vector<std::vector<float>> values = Snapshot();
    analysis::RunEffects effects;
    RIGEL_RETURN_IF_ERROR(Execute(run, &effects.writes));
    effects.changed = Changes(values);
    const kernel::KeySlice& slice = slices_[static_cast<size_t>(run.loop)];
    for (size_t p = 0; p < prog_.params.size(); ++p) {
      const int pi = static_cast<int>(p);
      effects.inexact.push_back(slice.touches(pi) && !slice.whole(pi) && !slice.exact(pi));
    }
    Swap(&values);  // the run's start, for the slices
    Status st = CountAll(run, ctx, effects);
    Swap(&values);  // the run's end, for the driver
    return st;
  }

  Status CountAll(const RemoteRun& run, const kernel::RunContext& ctx,
                  const analysis::RunEffects& effects) {
    for (size_t v = 0; v < variants_.size(); ++v) {
      RIGEL_ASSIGN_OR_RETURN(analysis::RunCounts counts,
                             CountFor(plans_[v], run, ctx, effects, &variants_[v].state,
                                      &variants_[v].result.batch[static_cast<size_t>(run.loop)]));
      counts.element_s = ElementSeconds(&variants_[v], run.loop, counts);
      variants_[v].current.runs.push_back(std::move(counts));
    }
    return Status::Ok();
  }

  StatusOr<analysis::RunCounts> CountFor(const analysis::Plan& plan, const RemoteRun& run,
                                         const kernel::RunContext& ctx,
                                         const analysis::RunEffects& effects,
                                         analysis::CountState* state, int64_t* batch) const {
    const analysis::LoopPlan& lp = plan.loops[static_cast<size_t>(run.loop)];
    RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::MakeCuts(lp, opts_.workers, *run.space));
    RIGEL_ASSIGN_OR_RETURN(analysis::StepBlocks blocks,
                           analysis::MakeStepBlocks(lp, cuts, *run.space));
    auto touches = [&](std::span<const int64_t> e) { return Touches(run.loop, ctx, e, true); };
    analysis::RowsFn rows =
        [&](std::span<const int64_t> e) -> StatusOr<std::vector<std::vector<int64_t>>> {
      RIGEL_ASSIGN_OR_RETURN(analysis::RowCounts c, Touches(run.loop, ctx, e, false));
      std::vector<std::vector<int64_t>> out(c.size());
      for (size_t p = 0; p < c.size(); ++p) {
        for (const auto& rc : c[p]) out[p].push_back(rc.first);
      }
      return out;
    };
    analysis::PlanInput in = Input(plan, run.loop);
    const bool cached = std::any_of(in.loop_params.begin(), in.loop_params.end(),
                                    [](const analysis::PlanParam& p) { return p.cached; });
    if (in.batch == 0 && in.kind == analysis::ScheduleKind::kDataParallel) {
      RIGEL_ASSIGN_OR_RETURN(in.hot_share, analysis::HotShare(in, blocks, rows));
    }
    *batch = analysis::StepBatch(in);
    analysis::CacheSettings cache;
    if (cached) {
      analysis::RelaxedChoice c = analysis::ChooseRelaxed(opts_.workers, in.hot_share);
      cache.staleness = in.staleness >= 1 ? in.staleness : c.staleness;
      cache.push_bound = PushBound(plan) > 0 ? PushBound(plan) : c.push_bound;
    }
    return analysis::CountRun(lp, in, blocks, shapes_, rows, touches, cache, state, &effects);
  }

  const ir::Program& prog_;
  const std::vector<analysis::Plan>& plans_;
  const ProbeOptions opts_;
  std::unique_ptr<SerialExecutor> ex_;
  std::vector<kernel::KeySlice> slices_;
  std::vector<analysis::ParamShape> shapes_;
  std::vector<Variant> variants_;
  std::vector<double> element_s_;                   // per loop, measured on first run
  std::vector<double> jit_element_s_, compile_ms_;  // per loop, compiled (0: none)
  kernel::JitMode jit_ = kernel::JitMode::kOff;     // the run's tier rule
  kernel::WidthFn widths_;
  std::map<const data::Dataset*, std::vector<int64_t>> ordered_;  // `ordered` loops' order
  int epochs_ = 0;                                                // epochs closed
  bool done_ = false;
};

}  // namespace

StatusOr<std::vector<ProbeResult>> ProbeCosts(const ir::Program& prog,
                                              const std::vector<analysis::Plan>& plans,
                                              const ProbeOptions& opts) {
  if (opts.workers < 1 || opts.servers < 1 || opts.epochs < 1 || plans.empty()) {
    return InvalidArgument("the cost probe needs a plan and at least one worker, server and epoch");
  }
  Probe probe(prog, plans, opts);
  return probe.Run();
}

ProbeOptions ProbeOptionsOf(const cluster::JobOptions& job, int workers, int servers) {
  ProbeOptions o;
  o.workers = workers;
  o.servers = servers;
  o.batch = job.batch;
  // The probe's 1 is Rigel's choice, where a plan's own setting counts (as
  // the run's kStalenessAuto does, scheduler/driver.cc).
  o.staleness = job.staleness == cluster::kStalenessAuto ? 1 : job.staleness;
  o.push_bound = job.push_bound;
  o.scaled_merges = job.scaled_merges;
  o.cache_mb = job.cache_mb;
  return o;
}

StatusOr<ProbeResult> ProbeCost(const ir::Program& prog, const analysis::Plan& plan,
                                const ProbeOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::vector<ProbeResult> r, ProbeCosts(prog, {plan}, opts));
  return std::move(r[0]);
}

}  // namespace rigel::exec
