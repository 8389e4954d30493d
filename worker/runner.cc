#include "worker/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>

#include "analysis/batch.h"
#include "analysis/partition.h"
#include "analysis/sync/resolve.h"
#include "common/cpu_time.h"
#include "common/key_sort.h"
#include "common/memory.h"
#include "common/seconds.h"
#include "data/data_index.h"
#include "exec/hold_plan.h"
#include "exec/init_params.h"
#include "frontend/compile.h"
#include "kernel/kernel.h"
#include "worker/exchange_errors.h"

namespace rigel::worker {

using Clock = std::chrono::steady_clock;
using RowLists = std::vector<std::vector<int64_t>>;

namespace {

// The scheduler cut the data into blocks from its own copy and names
// elements by number: a worker that read different data would run other
// elements than the plan says, and nothing else would notice.
Status CheckSameData(const ir::Program& prog, const exec::SerialExecutor& ex,
                     const cluster::JobSpec& job) {
  for (const auto& [name, digest] : job.data) {
    for (size_t k = 0; k < prog.data.size(); ++k) {
      if (prog.data[k].name != name) continue;
      const data::Dataset& d = ex.data(static_cast<int>(k));
      // Held in part: the file's facts and fingerprint are checked instead
      // (CheckSameFile), as no digest of the whole load is known here.
      if (d.in_part && d.digest.empty()) {
        const std::string count = ", " + std::to_string(d.count) + " elements";
        if (digest.size() < count.size() ||
            digest.compare(digest.size() - count.size(), count.size(), count) != 0) {
          return FailedPrecondition("data set '" + name + "' (" + d.path + ") has " +
                                    std::to_string(d.count) +
                                    " elements here; the scheduler's copy: " + digest +
                                    "; every process of a job must read the same file (did it "
                                    "change after the job started, or differ between hosts?)");
        }
        continue;
      }
      std::string mine = data::DatasetDigest(d);
      if (mine != digest) {
        return FailedPrecondition("data set '" + name + "' (" + d.path +
                                  ") differs from the scheduler's copy: here " + mine +
                                  ", at the scheduler " + digest +
                                  "; every process of a job must read the same file (did it "
                                  "change after the job started, or differ between hosts?)");
      }
    }
  }
  return Status::Ok();
}

// Files are compared before anything loads: a host whose file differs is
// refused before it reads it, by the fingerprint of data/data_index.h (size
// and the checksums of its first and last MiB).
Status CheckSameFiles(const ir::Program& prog, const cluster::JobSpec& job) {
  for (const auto& [name, theirs] : job.files) {
    for (const ir::DataDecl& d : prog.data) {
      if (d.name != name) continue;
      RIGEL_ASSIGN_OR_RETURN(data::FileFingerprint f, data::FingerprintFile(d.path));
      const std::string mine = data::FingerprintText(f);
      if (mine != theirs) {
        return FailedPrecondition("data set '" + name + "': " + d.path +
                                  " differs from the scheduler's file: here " + mine +
                                  ", at the scheduler " + theirs +
                                  "; every host of a job must read an identical file (a shared "
                                  "path, or the same file copied to every host)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Runner::Runner(cluster::JobSpec job, transport::Transport* transport, RunnerOptions options)
    : job_(std::move(job)), transport_(transport), opts_(options) {}

Runner::~Runner() = default;

StatusOr<std::unique_ptr<Runner>> Runner::Create(const cluster::JobSpec& job,
                                                 transport::Transport* transport,
                                                 cluster::ShardMap map, RunnerOptions options) {
  std::unique_ptr<Runner> r(new Runner(job, transport, options));
  frontend::CompileOptions co;
  co.sets = job.sets;
  RIGEL_ASSIGN_OR_RETURN(r->prog_, frontend::CompileFile(job.program, co));
  if (!job.init_params.empty()) {
    RIGEL_ASSIGN_OR_RETURN(data::FileFingerprint f, data::FingerprintFile(job.init_params));
    if (const std::string mine = data::FingerprintText(f); mine != job.init_params_fingerprint) {
      return FailedPrecondition("--init-params " + job.init_params +
                                " differs from the scheduler's file: here " + mine +
                                ", at the scheduler " + job.init_params_fingerprint +
                                "; every host of a job must read an identical file");
    }
    RIGEL_RETURN_IF_ERROR(exec::UseInitParams(job.init_params, &r->prog_).status());
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::Plan plan, analysis::ParsePlan(job.plan, "the job's plan"));
  RIGEL_ASSIGN_OR_RETURN(r->plan_,
                         analysis::ValidatePlan(r->prog_, std::move(plan), "the job's plan"));
  if (r->plan_.loops.size() != r->prog_.loops.size()) {
    return InvalidArgument("the job's plan has " + std::to_string(r->plan_.loops.size()) +
                           " loops; the program has " + std::to_string(r->prog_.loops.size()));
  }
  exec::ExecutorOptions eo;
  eo.seed = job.seed;
  RIGEL_ASSIGN_OR_RETURN(eo.compile.jit, kernel::ParseJitMode(job.jit));
  // Data sets only data-parallel loops run over are held in part: this
  // worker's blocks, and the samples every worker plans from unless the
  // workers exchange what their own samples touch (runner_samples.cc).
  RIGEL_RETURN_IF_ERROR(CheckSameFiles(r->prog_, job));
  const Runner* self = r.get();
  eo.hold_part = [self](int data) { return self->HoldsInPart(data); };
  eo.hold_ranges = [self](int data, const data::Dataset& shape) {
    return exec::HeldRanges(self->prog_, self->plan_, self->opts_.rank, self->opts_.workers, data,
                            shape, /*samples=*/!self->CanExchangeSamples());
  };
  RIGEL_RETURN_IF_ERROR(r->ReadHeldCuts());
  eo.hold_filter = [self](int data, const data::Dataset& shape) {
    return exec::HeldFilter(self->prog_, self->plan_, self->opts_.rank, self->opts_.workers,
                            self->held_cuts_, data, shape,
                            /*samples=*/!self->CanExchangeSamples());
  };
  eo.hold_workers = options.workers;
  for (const auto& [name, entry] : job.scans) {
    for (size_t k = 0; k < r->prog_.data.size(); ++k) {
      if (r->prog_.data[k].name == name) eo.entries[static_cast<int>(k)] = entry;
    }
  }
  eo.log = options.log;  // what was loaded, and how much of it is held here
  Runner* mut = r.get();
  eo.hold_whole = [mut](const std::vector<int64_t>& rows, const std::vector<int64_t>& widths) {
    return mut->ResolveSync(rows, widths);
  };
  RIGEL_ASSIGN_OR_RETURN(r->ex_, exec::SerialExecutor::Create(r->prog_, eo));
  RIGEL_RETURN_IF_ERROR(CheckSameData(r->prog_, *r->ex_, job));
  const exec::SerialExecutor* ex = r->ex_.get();
  kernel::WidthFn widths = [ex](int expr) { return ex->EvalInt(expr); };
  for (size_t l = 0; l < r->prog_.loops.size(); ++l) {
    RIGEL_ASSIGN_OR_RETURN(kernel::KeySlice slice,
                           kernel::KeySlice::Compile(r->prog_, static_cast<int>(l), widths));
    // The rows a block touches depend only on its elements (and the driver
    // values the slice reads, which key the kept plans) unless the slice
    // itself draws (a draw only the computation uses, as LDA's sample(),
    // does not count).
    r->static_keys_.push_back(!slice.draws());
    r->slices_.push_back(std::move(slice));
  }
  const size_t np = r->prog_.params.size();
  if (map.params().size() != np) {
    return InvalidArgument("the cluster setup has " + std::to_string(map.params().size()) +
                           " parameters; the program has " + std::to_string(np));
  }
  ps::PsClientOptions po;
  // The clocks' bound, for the `ps` strategy (relaxed rows at --staleness 0,
  // sums); relaxed rows otherwise go through the row caches.
  po.staleness = cluster::ClockStaleness(options.job);
  po.call.timeout = transport::Millis(options.job.exchange_timeout_ms);
  r->client_ = std::make_unique<ps::PsClient>(transport, std::move(map), po);
  r->exchange_ = std::make_unique<ps::RowExchange>(transport, r->client_->map().servers(), po.call);
  r->HoldWholeWhereRowsAreUnknown();
  r->io_ = std::make_unique<sync::RowIo>(&r->ex_->bindings(), r->client_.get());
  r->handoffs_ =
      std::make_unique<sync::Handoffs>(transport, r->io_.get(), options.rank, options.workers);
  r->handoffs_->set_test_pause(options.handoff_pause, options.log);
  r->state_.resize(np);
  RIGEL_RETURN_IF_ERROR(r->StartCollectives());
  return r;
}

Status Runner::ReadHeldCuts() {
  for (const auto& [loop, text] : job_.cuts) {
    const std::string what = "the job's cuts of loop " + loop;
    char* end = nullptr;
    const long l = std::strtol(loop.c_str(), &end, 10);
    if (loop.empty() || *end != '\0' || l < 0 || l >= static_cast<long>(prog_.loops.size())) {
      return InvalidArgument(what + ": no such loop; the program has " +
                             std::to_string(prog_.loops.size()));
    }
    RIGEL_ASSIGN_OR_RETURN(held_cuts_[static_cast<int>(l)], analysis::CutsFromJson(text, what));
  }
  return Status::Ok();
}

bool Runner::Handle(const transport::InMessage& msg) { return handoffs_->Put(msg); }

void Runner::Abort(const Status& why) { handoffs_->Abort(why); }

std::string Runner::PlanKey(const TaskSpec& task) const {
  std::string key = analysis::CutsToJson(task.cuts);
  // A slice that reads driver values may touch other rows when they change
  // (`if f < train.dim` keeps train.dim): they are part of the key.
  if (slices_[task.loop].reads_outer()) {
    for (const auto& [id, v] : task.outer) {
      key +=
          "|" + std::to_string(id) + "=" + (v.is_int ? std::to_string(v.i) : std::to_string(v.f));
    }
  }
  return key;
}

Status Runner::Prepare(const TaskSpec& task) {
  if (task.loop < 0 || task.loop >= static_cast<int>(prog_.loops.size())) {
    return InvalidArgument("task.loop: loop " + std::to_string(task.loop) + "; the program has " +
                           std::to_string(prog_.loops.size()));
  }
  if (task.cuts.workers != opts_.workers) {
    return InvalidArgument("task.run.cuts.workers: cuts for " + std::to_string(task.cuts.workers) +
                           " workers; the cluster has " + std::to_string(opts_.workers));
  }
  if (task.sized) return ex_->SizeSpace(task.loop, task.space_n, task.space_m);
  return Status::Ok();
}

StatusOr<const analysis::StepBlocks*> Runner::Blocks(const TaskSpec& task,
                                                     const std::string& cuts_key) {
  const int loop = task.loop;
  auto key = std::make_pair(loop, cuts_key);
  auto it = blocks_.find(key);
  const data::Dataset& data = *ex_->data_ptrs()[prog_.loops[loop].data];
  // A space sized at launch may change size between runs with the same cuts.
  if (it != blocks_.end() && !prog_.data[prog_.loops[loop].data].sized_at_launch) {
    return it->second.get();
  }
  // Held by these cuts, this worker has only the elements they place on it.
  const auto held = held_cuts_.find(loop);
  if (data.in_part && held != held_cuts_.end() && !(held->second == task.cuts)) {
    return FailedPrecondition("task: loop " + std::to_string(loop) +
                              " is cut otherwise than the job's cuts this worker read its data by");
  }
  auto b = analysis::MakeStepBlocks(plan_.loops[loop], task.cuts, data);
  if (!b.ok()) return Status(b.status().code(), "task: " + b.status().message());
  auto stored = std::make_unique<analysis::StepBlocks>(std::move(b).value());
  const analysis::StepBlocks* out = stored.get();
  blocks_[key] = std::move(stored);
  return out;
}

const analysis::StepLists& Runner::Steps(const TaskSpec& task, const std::string& cuts_key,
                                         const analysis::PlanInput& in,
                                         const analysis::StepBlocks& blocks) {
  KeptSteps& kept = steps_[std::make_pair(task.loop, cuts_key)];
  const int64_t batch = analysis::StepBatch(in);
  // Blocks of a space sized at launch are made anew each run (Blocks).
  if (!kept.planned || kept.batch != batch ||
      prog_.data[prog_.loops[task.loop].data].sized_at_launch) {
    kept.planned = true;
    kept.batch = batch;
    kept.steps = analysis::PlanStepLists(in, blocks);
  }
  return kept.steps;
}

StatusOr<RowLists> Runner::Keys(int loop, const kernel::RunContext& ctx,
                                std::span<const int64_t> elements) const {
  RowLists keys(prog_.params.size());
  // No elements touch no rows, not even a parameter whose rows the slice
  // cannot know: a worker with nothing to run (one of a serial loop's idle
  // workers) must not hold every row of it as its own.
  if (elements.empty()) return keys;
  const kernel::KeySlice& slice = slices_[loop];
  // Sliced in pieces, each piece's rows merged into the sorted distinct rows
  // so far: a worker's whole share of a loop (every element of its blocks)
  // would otherwise list one row per element and access at once (a 2-D MF
  // worker's 1.8M elements: 29 MB of keys and as much again to sort them).
  constexpr size_t kPiece = size_t{1} << 16;
  RowLists piece(keys.size());
  std::vector<int64_t> tmp, merged;
  for (size_t at = 0; at < elements.size(); at += kPiece) {
    for (auto& k : piece) k.clear();
    RIGEL_RETURN_IF_ERROR(
        slice.Run(ctx, elements.subspan(at, std::min(kPiece, elements.size() - at)), &piece));
    for (size_t p = 0; p < keys.size(); ++p) {
      const int q = static_cast<int>(p);
      if (!slice.touches(q) || slice.whole(q) || !slice.exact(q)) continue;
      SortKeys(&piece[p], &tmp);
      piece[p].erase(std::unique(piece[p].begin(), piece[p].end()), piece[p].end());
      if (at == 0) {
        keys[p].swap(piece[p]);
        continue;
      }
      merged.clear();
      std::set_union(keys[p].begin(), keys[p].end(), piece[p].begin(), piece[p].end(),
                     std::back_inserter(merged));
      keys[p].swap(merged);
    }
  }
  for (size_t p = 0; p < keys.size(); ++p) {
    const int q = static_cast<int>(p);
    if (slice.touches(q) && (slice.whole(q) || !slice.exact(q))) {
      keys[p].resize(static_cast<size_t>(ex_->bindings()[p].rows));
      std::iota(keys[p].begin(), keys[p].end(), 0);
    }
  }
  return keys;
}

analysis::PlanInput Runner::PlanFor(int loop) const {
  const analysis::LoopPlan& lp = plan_.loops[loop];
  analysis::PlanInput in;
  in.kind = lp.schedule.kind;
  in.rank = opts_.rank;
  in.workers = opts_.workers;
  // Every worker holds the loop's data in part or every one holds it whole
  // (exec/hold_plan.h decides from the program and the plan alone).
  in.holds_all = !ex_->data_ptrs()[static_cast<size_t>(prog_.loops[loop].data)]->in_part;
  in.batch = opts_.job.batch;
  in.staleness = cluster::ClockStaleness(opts_.job);
  in.static_keys = static_keys_[loop];
  in.params = static_cast<int>(prog_.params.size());
  in.loop_params = resolved_.loops[static_cast<size_t>(loop)];
  return in;
}

std::vector<bool> Runner::ResolveSync(const std::vector<int64_t>& rows,
                                      const std::vector<int64_t>& widths) {
  std::vector<analysis::ParamShape> shapes;
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    shapes.push_back({prog_.params[p].name, rows[p], widths[p]});
  }
  analysis::sync::JobSync job;
  job.staleness = opts_.job.staleness;
  job.scaled_merges = opts_.job.scaled_merges;
  job.cache_bytes = opts_.job.cache_mb << 20;
  resolved_ = analysis::sync::Resolve(prog_, plan_, shapes, job);
  std::vector<bool> whole(prog_.params.size());
  for (size_t p = 0; p < whole.size(); ++p) whole[p] = !resolved_.held_in_part(static_cast<int>(p));
  return whole;
}

void Runner::HoldWholeWhereRowsAreUnknown() {
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    const int q = static_cast<int>(p);
    if (!resolved_.held_in_part(q)) continue;
    const std::string& name = prog_.params[p].name;
    for (size_t l = 0; l < slices_.size(); ++l) {
      const kernel::KeySlice& slice = slices_[l];
      if (!slice.touches(q) || (slice.exact(q) && !slice.whole(q))) continue;
      resolved_.in_part[p] = 0;
      ex_->AllocateParam(q);
      if (opts_.log) {
        *opts_.log << "parameter '" << name << "' is held whole: loop " << l
                   << (slice.whole(q) ? " reads or writes it whole"
                                      : " touches rows of it that depend on parameter values")
                   << ", so its rows cannot be listed ahead\n";
      }
      break;
    }
    if (resolved_.held_in_part(q) && opts_.log) {
      const kernel::ParamBinding& b = ex_->bindings()[p];
      *opts_.log << "parameter '" << name << "' (" << b.rows << " x " << b.width
                 << ") is held in part: a row cache of at most " << resolved_.cache_rows[p]
                 << " rows\n";
    }
  }
}

Status Runner::MeasureHotShare(const TaskSpec& task, const std::string& cuts_key,
                               const analysis::StepBlocks& blocks, const kernel::RunContext& ctx,
                               analysis::PlanInput* in) {
  if (in->batch > 0 || in->kind != analysis::ScheduleKind::kDataParallel) return Status::Ok();
  const auto key = std::make_pair(task.loop, cuts_key);
  const bool cacheable = static_keys_[task.loop];
  if (cacheable) {
    auto it = hot_share_.find(key);
    if (it != hot_share_.end()) {
      in->hot_share = it->second;
      return Status::Ok();
    }
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::RowSample sample,
                         SampleLoopRows(task, blocks, ctx, *in, analysis::kBatchSample, {}));
  in->hot_share = analysis::HotShareOf(sample);
  if (cacheable) {
    // One kept per loop: driver values in the key may change every run.
    std::erase_if(hot_share_, [&](const auto& e) { return e.first.first == task.loop; });
    hot_share_[key] = in->hot_share;
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<const analysis::RowPlan>> Runner::Rows(const TaskSpec& task,
                                                                const std::string& cuts_key,
                                                                const analysis::PlanInput& in,
                                                                const analysis::StepBlocks& blocks,
                                                                const analysis::StepLists& steps,
                                                                const kernel::RunContext& ctx) {
  const auto key = std::make_pair(task.loop, cuts_key);
  const bool cacheable = static_keys_[task.loop];
  if (cacheable) {
    auto it = rows_.find(key);
    if (it != rows_.end()) return it->second;
  }
  analysis::RowsFn rows = [&](std::span<const int64_t> elements) {
    return Keys(task.loop, ctx, elements);
  };
  // Held in part, the workers learn the rows only one of them writes from
  // what their own elements touch, exchanged.
  analysis::PlanInput with = in;
  RowLists mine, theirs;
  const bool one_writer =
      std::any_of(in.loop_params.begin(), in.loop_params.end(),
                  [](const analysis::PlanParam& pp) { return pp.cached && pp.written; });
  if (!in.holds_all && in.static_keys && opts_.workers > 1 && one_writer && CanExchangeSamples()) {
    RIGEL_RETURN_IF_ERROR(ExchangeRows(task, ctx, in, steps, &mine, &theirs));
    with.my_rows = &mine;
    with.their_rows = &theirs;
  }
  std::vector<RowLists> columns;  // [p][q]
  if (!in.holds_all && in.kind == analysis::ScheduleKind::kConflictFree2D) {
    RIGEL_RETURN_IF_ERROR(ExchangeColumns(task, ctx, in, blocks, &columns));
    with.columns = &columns;
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::RowPlan plan, analysis::PlanRows(with, blocks, steps, rows));
  auto out = std::make_shared<const analysis::RowPlan>(std::move(plan));
  if (cacheable) {
    std::erase_if(rows_, [&](const auto& e) { return e.first.first == task.loop; });
    rows_[key] = out;
  }
  return out;
}

Status Runner::RunSteps(int loop, const kernel::RunContext& ctx, const analysis::StepLists& steps,
                        const analysis::RowPlan& rows,
                        const std::vector<std::unique_ptr<sync::SyncStrategy>>& strategies,
                        sync::SyncMetrics* m) {
  const int64_t n = static_cast<int64_t>(steps.size());
  std::vector<int64_t> keyed;  // a strided step's elements, written out for Keys
  auto server_rows = [&](int64_t s) -> StatusOr<RowLists> {
    if (steps.StepSize(static_cast<size_t>(s)) == 0) return RowLists(rows.params.size());
    RIGEL_ASSIGN_OR_RETURN(RowLists touched,
                           Keys(loop, ctx, steps.Step(static_cast<size_t>(s), &keyed)));
    return analysis::ServerRowsAt(rows, std::move(touched));
  };
  const kernel::Kernel& kernel = ex_->kernel(loop);
  RowLists cur(rows.params.size()), next;
  std::vector<int64_t> elements;  // a strided step's, written out
  bool have_next = false;
  // Strategies that work a step ahead (pulls ahead, row cache exchanges)
  // get the next step's rows too.
  const bool ahead = rows.prefetch || (rows.step_keys && !rows.step_sync);
  for (int64_t s = 0; s < n; ++s) {
    if (rows.step_keys) {
      if (have_next) {
        cur = std::move(next);
      } else {
        RIGEL_ASSIGN_OR_RETURN(cur, server_rows(s));
      }
      have_next = ahead && s + 1 < n;
      if (have_next) {
        RIGEL_ASSIGN_OR_RETURN(next, server_rows(s + 1));
      }
    }
    const sync::Step step{s, n, &cur, have_next ? &next : nullptr};
    for (const auto& st : strategies) RIGEL_RETURN_IF_ERROR(st->BeforeStep(step));
    const std::span<const int64_t> all = steps.Step(static_cast<size_t>(s), &elements);
    const size_t part = rows.part > 0 ? static_cast<size_t>(rows.part) : all.size();
    for (size_t at = 0; at < all.size() || at == 0; at += part) {
      if (at > 0) {
        for (const auto& st : strategies) RIGEL_RETURN_IF_ERROR(st->WithinStep(step));
      }
      auto tc = Clock::now();
      RIGEL_RETURN_IF_ERROR(
          kernel.RunElements(ctx, all.subspan(at, std::min(part, all.size() - at))));
      m->compute_s += SecondsSince(tc);
      if (all.empty()) break;
    }
    for (const auto& st : strategies) RIGEL_RETURN_IF_ERROR(st->AfterStep(step));
    if (rows.step_sync) {
      auto t = Clock::now();
      RIGEL_RETURN_IF_ERROR(client_->AdvanceClock());
      m->comm_s += SecondsSince(t);
    }
  }
  return Status::Ok();
}

Status Runner::RunSynced(const TaskSpec& task, const analysis::StepLists& steps,
                         const analysis::RowPlan& rows, const kernel::RunContext& ctx,
                         std::vector<kernel::ParamBinding>* bindings,
                         const sync::RelaxedRun& relaxed, sync::SyncMetrics* m) {
  sync::SyncEnv env;
  env.prog = &prog_;
  env.loop = task.loop;
  env.launch = task.launch;
  env.epoch = task.epoch;
  env.rank = opts_.rank;
  env.workers = opts_.workers;
  env.sync_every = std::max<int64_t>(1, opts_.job.sync_every);
  env.restored = job_.restored;
  env.rows = &rows;
  env.io = io_.get();
  env.handoffs = handoffs_.get();
  env.dense = dense_.get();
  env.state = &state_;
  env.metrics = m;
  env.exchange = exchange_.get();
  env.map = &client_->map();
  env.bindings = bindings;
  env.relaxed = &relaxed;
  RIGEL_ASSIGN_OR_RETURN(auto strategies, sync::CreateStrategies(env));
  for (const analysis::ParamRows& r : rows.params) {
    const int p = r.param.index;
    if (!r.used || !r.param.written || !prog_.loops[task.loop].relaxed[p] ||
        prog_.params[p].is_int) {
      continue;
    }
    const kernel::ParamBinding& b = (*bindings)[p];
    Watch(p, task.loop).Before(b.data, b.rows, b.width, b.slots);
  }
  for (const auto& st : strategies) RIGEL_RETURN_IF_ERROR(st->Begin());
  RIGEL_RETURN_IF_ERROR(RunSteps(task.loop, ctx, steps, rows, strategies, m));
  for (const analysis::ParamRows& r : rows.params) {
    if (r.used && r.param.written) ++state_[r.param.index].generation;
  }
  for (const auto& st : strategies) RIGEL_RETURN_IF_ERROR(st->End());
  auto t = Clock::now();
  RIGEL_RETURN_IF_ERROR(client_->WaitForPushes());
  m->comm_s += SecondsSince(t);
  return sync::Diverged(env, CheckDiverged(task.loop, rows, *bindings, m));
}

exec::DivergenceWatch& Runner::Watch(int p, int loop) {
  std::vector<exec::DivergenceWatch>& w = state_[p].watch;
  w.resize(prog_.loops.size());
  return w[loop];
}

// Every worker scans its copy of each relaxed parameter the run wrote: what
// it fetched and merged of the others' updates and its own. A parameter that
// blows up does so on every copy, so each worker finds it on its own.
Status Runner::CheckDiverged(int loop, const analysis::RowPlan& rows,
                             const std::vector<kernel::ParamBinding>& bindings,
                             sync::SyncMetrics* metrics) {
  for (const analysis::ParamRows& r : rows.params) {
    const int p = r.param.index;
    if (!r.used || !r.param.written || !prog_.loops[loop].relaxed[p] || prog_.params[p].is_int) {
      continue;
    }
    const kernel::ParamBinding& b = bindings[p];
    exec::DivergenceWatch& watch = Watch(p, loop);
    const std::string what = watch.After(prog_.params[p].name, b.data, b.rows, b.width, b.slots);
    if (metrics) {
      metrics->values.emplace_back("relaxed.max.magnitude." + prog_.params[p].name,
                                   static_cast<double>(watch.last().largest));
    }
    if (!what.empty()) return FailedPrecondition(what);
  }
  return Status::Ok();
}

StatusOr<TaskResult> Runner::Run(const TaskSpec& task) {
  StatusOr<TaskResult> r = RunTask(task);
  if (!r.ok()) return WithExchangeTimeoutCauses(r.status(), opts_.job);
  return r;
}

StatusOr<TaskResult> Runner::RunTask(const TaskSpec& task) {
  const auto run_start = Clock::now();
  // The whole process's CPU: the transport's threads work for the run too.
  const double cpu_start = ProcessCpuSeconds();
  RIGEL_RETURN_IF_ERROR(Prepare(task));
  const std::string cuts_key = PlanKey(task);
  RIGEL_ASSIGN_OR_RETURN(const analysis::StepBlocks* blocks,
                         Blocks(task, analysis::CutsToJson(task.cuts)));
  TaskResult out;
  out.accums.assign(ir::AccumSlots(prog_.accums), 0.0);
  // The run's own bindings: the cache strategy counts writes through them.
  std::vector<kernel::ParamBinding> bindings = ex_->bindings();
  kernel::RunContext ctx;
  ctx.params = &bindings;
  ctx.data = &ex_->data_ptrs();
  ctx.accums = out.accums.data();
  ctx.seed = job_.seed;
  ctx.launch = task.launch;
  ctx.outer = [&task](int id) -> StatusOr<kernel::OuterValue> {
    auto it = task.outer.find(id);
    if (it == task.outer.end()) {
      return InvalidArgument("task.run.outer: lacks driver value " + std::to_string(id));
    }
    return it->second;
  };
  analysis::PlanInput in = PlanFor(task.loop);
  RIGEL_RETURN_IF_ERROR(MeasureHotShare(task, cuts_key, *blocks, ctx, &in));
  sync::RelaxedRun relaxed;
  RIGEL_RETURN_IF_ERROR(Relaxed(task, *blocks, ctx, in, &relaxed));
  const analysis::StepLists& steps = Steps(task, cuts_key, in, *blocks);
  auto t_keys = Clock::now();
  RIGEL_ASSIGN_OR_RETURN(auto rows, Rows(task, cuts_key, in, *blocks, steps, ctx));
  const double keys_s = SecondsSince(t_keys);
  sync::SyncMetrics m;
  if (int64_t batch = analysis::StepBatch(in); batch > 0) {
    m.values.emplace_back("batch", static_cast<double>(batch));
  }
  RIGEL_RETURN_IF_ERROR(RunSynced(task, steps, *rows, ctx, &bindings, relaxed, &m));
  m.values.emplace_back("cpu_s", ProcessCpuSeconds() - cpu_start);
  m.values.emplace_back("peak_bytes", static_cast<double>(PeakResidentBytes()));
  Report(task, steps, keys_s, SecondsSince(run_start), m, &out);
  return out;
}

StatusOr<TaskResult> Runner::Flush() {
  sync::SyncMetrics m;
  const auto t = Clock::now();
  for (size_t p = 0; p < state_.size(); ++p) {
    sync::HeldRows& h = state_[p].local;
    if (!h.unpushed) continue;
    RIGEL_RETURN_IF_ERROR(io_->PushDeltas(static_cast<int>(p), h.rows, &h.base, &m, "local"));
    h.unpushed = false;
  }
  RIGEL_RETURN_IF_ERROR(client_->WaitForPushes());
  TaskResult out;
  out.metrics = {{"comm_s", SecondsSince(t)}};
  for (const auto& [k, v] : m.bytes) out.metrics.emplace_back("bytes." + k, v);
  return out;
}

void Runner::Report(const TaskSpec& task, const analysis::StepLists& steps, double keys_s,
                    double total, const sync::SyncMetrics& m, TaskResult* out) const {
  const int64_t elements = steps.Elements();
  out->metrics = {{"elements", static_cast<double>(elements)},
                  {"steps", static_cast<double>(steps.size())},
                  {"seconds", total},
                  {"compute_s", m.compute_s},
                  {"comm_s", m.comm_s},
                  {"wait_s", m.wait_s},
                  {"keys_s", keys_s}};
  for (const auto& [k, v] : m.bytes) out->metrics.emplace_back("bytes." + k, v);
  out->metrics.insert(out->metrics.end(), m.values.begin(), m.values.end());
  // The loop's tier so far, for the scheduler's epoch lines (--log-json
  // "tiers").
  const kernel::TierReport tier = ex_->kernel(task.loop).tier();
  out->metrics.insert(out->metrics.end(), {{"tier", kernel::TierCode(tier)},
                                           {"tier.compile_ms", tier.compile_ms},
                                           {"tier.interpreted_ms", tier.interpreted_ms}});
  if (opts_.log) {
    *opts_.log << "loop " << task.loop << " run " << task.launch << ": " << elements
               << " elements in " << steps.size() << " step(s), " << total << " s (compute "
               << m.compute_s << " s, communication " << m.comm_s << " s, waiting " << m.wait_s
               << " s, slicing " << keys_s << " s)\n";
    // The loop's tier, once settled (exec::TierLine, as `rigel run -v`).
    tier_said_.resize(prog_.loops.size(), false);
    if (!tier_said_[task.loop] && (tier.compiled || !tier.why.empty())) {
      *opts_.log << exec::TierLine(task.loop, prog_.loops[task.loop].loc.line, tier);
      tier_said_[task.loop] = true;
    }
  }
}

}  // namespace rigel::worker
