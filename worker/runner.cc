#include "worker/runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>

#include "analysis/partition.h"
#include "common/key_sort.h"
#include "frontend/compile.h"
#include "transport/message.h"

namespace rigel::worker {

using analysis::ScheduleKind;
using analysis::Strategy;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void SortUnique(std::vector<int64_t>* v) {
  std::vector<int64_t> tmp;
  SortKeys(v, &tmp);
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

std::vector<int64_t> Intersect(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int64_t> Minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Whether a loop body draws random numbers or reads driver values: then the
// rows a block touches may change from run to run.
bool UsesRunValues(const std::vector<ir::Inst>& body) {
  for (const ir::Inst& in : body) {
    if (in.op == ir::Op::kRand || in.op == ir::Op::kRandInt || in.op == ir::Op::kNegative ||
        in.op == ir::Op::kOuter || UsesRunValues(in.body) || UsesRunValues(in.else_body)) {
      return true;
    }
  }
  return false;
}

}  // namespace

// Rows of one parameter this worker holds across runs: which rows, what the
// servers hold for them (the base the next delta is taken against), and the
// parameter's generation when they were last in sync.
struct Runner::Held {
  int loop = -1;
  std::vector<int64_t> rows;
  std::vector<float> base;
  uint64_t generation = 0;
};

Runner::Runner(cluster::JobSpec job, transport::Transport* transport, RunnerOptions options)
    : job_(std::move(job)), transport_(transport), opts_(options) {}

Runner::~Runner() = default;

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

}  // namespace

StatusOr<std::unique_ptr<Runner>> Runner::Create(const cluster::JobSpec& job,
                                                 transport::Transport* transport,
                                                 cluster::ShardMap map, RunnerOptions options) {
  std::unique_ptr<Runner> r(new Runner(job, transport, options));
  frontend::CompileOptions co;
  co.sets = job.sets;
  RIGEL_ASSIGN_OR_RETURN(r->prog_, frontend::CompileFile(job.program, co));
  RIGEL_ASSIGN_OR_RETURN(analysis::Plan plan, analysis::ParsePlan(job.plan, "the job's plan"));
  RIGEL_ASSIGN_OR_RETURN(r->plan_,
                         analysis::ValidatePlan(r->prog_, std::move(plan), "the job's plan"));
  if (r->plan_.loops.size() != r->prog_.loops.size()) {
    return InvalidArgument("the job's plan has " + std::to_string(r->plan_.loops.size()) +
                           " loops; the program has " + std::to_string(r->prog_.loops.size()));
  }
  exec::ExecutorOptions eo;
  eo.seed = job.seed;
  RIGEL_ASSIGN_OR_RETURN(r->ex_, exec::SerialExecutor::Create(r->prog_, eo));
  RIGEL_RETURN_IF_ERROR(CheckSameData(r->prog_, *r->ex_, job));
  const exec::SerialExecutor* ex = r->ex_.get();
  kernel::WidthFn widths = [ex](int expr) { return ex->EvalInt(expr); };
  for (size_t l = 0; l < r->prog_.loops.size(); ++l) {
    RIGEL_ASSIGN_OR_RETURN(kernel::KeySlice slice,
                           kernel::KeySlice::Compile(r->prog_, static_cast<int>(l), widths));
    r->slices_.push_back(std::move(slice));
    r->static_keys_.push_back(!UsesRunValues(r->prog_.loops[l].body));
  }
  const size_t np = r->prog_.params.size();
  if (map.params().size() != np) {
    return InvalidArgument("the cluster setup has " + std::to_string(map.params().size()) +
                           " parameters; the program has " + std::to_string(np));
  }
  ps::PsClientOptions po;
  po.staleness = options.job.staleness;
  po.cache = false;  // the local parameter copies are the cache
  r->client_ = std::make_unique<ps::PsClient>(transport, std::move(map), po);
  r->generation_.assign(np, 0);
  for (size_t p = 0; p < np; ++p) {
    r->held_.push_back(std::make_unique<Held>());
    r->replicated_.push_back(std::make_unique<Held>());
    r->dense_replicas_.push_back(std::make_unique<DenseReplica>());
  }
  RIGEL_RETURN_IF_ERROR(r->StartCollectives());
  return r;
}

bool Runner::Handle(const transport::InMessage& msg) {
  if (msg.type() != transport::MessageType::BLOCK_HANDOFF) return false;
  auto b = msg.header().getBody().getBlockHandoff();
  std::lock_guard<std::mutex> l(mu_);
  mailbox_[{static_cast<int>(b.getLoop()), b.getEpoch(), static_cast<int64_t>(b.getStep()),
            static_cast<int>(b.getParam())}] = msg;
  cv_.notify_all();
  return true;
}

void Runner::Abort(const Status& why) {
  std::lock_guard<std::mutex> l(mu_);
  if (aborted_.ok()) aborted_ = why.ok() ? Unavailable("the job ended") : why;
  cv_.notify_all();
}

StatusOr<const analysis::StepBlocks*> Runner::Blocks(int loop, const std::string& cuts_json) {
  auto key = std::make_pair(loop, cuts_json);
  auto it = blocks_.find(key);
  const data::Dataset& data = *ex_->data_ptrs()[prog_.loops[loop].data];
  // A space sized at launch may change size between runs with the same cuts.
  if (it != blocks_.end() && !prog_.data[prog_.loops[loop].data].sized_at_launch) {
    return it->second.get();
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::CutsFromJson(cuts_json, "task cuts"));
  if (cuts.workers != opts_.workers) {
    return InvalidArgument("task cuts are for " + std::to_string(cuts.workers) +
                           " workers; the cluster has " + std::to_string(opts_.workers));
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::StepBlocks b,
                         analysis::MakeStepBlocks(plan_.loops[loop], cuts, data));
  auto stored = std::make_unique<analysis::StepBlocks>(std::move(b));
  const analysis::StepBlocks* out = stored.get();
  blocks_[key] = std::move(stored);
  return out;
}

StatusOr<std::vector<std::vector<int64_t>>> Runner::Keys(int loop, const kernel::RunContext& ctx,
                                                         std::span<const int64_t> elements) const {
  std::vector<std::vector<int64_t>> keys(prog_.params.size());
  const kernel::KeySlice& slice = slices_[loop];
  RIGEL_RETURN_IF_ERROR(slice.Run(ctx, elements, &keys));
  for (size_t p = 0; p < keys.size(); ++p) {
    if (!slice.touches(static_cast<int>(p))) continue;
    if (slice.whole(static_cast<int>(p)) || !slice.exact(static_cast<int>(p))) {
      keys[p].resize(static_cast<size_t>(ex_->bindings()[p].rows));
      std::iota(keys[p].begin(), keys[p].end(), 0);
    } else {
      SortUnique(&keys[p]);
    }
  }
  return keys;
}

namespace {

// How a parameter is kept in sync during one run.
enum class Mode { kNone, kStepSync, kLocal, kRotate, kReplicated, kAllReduce };

struct ParamRun {
  Mode mode = Mode::kNone;
  bool written = false;
  bool synchronous = true;  // step pulls see every earlier clock (not relaxed)
  const char* strategy = "";
  std::vector<int64_t> held;    // local: rows only this worker touches
  std::vector<int64_t> shared;  // local: rows other workers touch too (synced per step)
  std::vector<std::vector<int64_t>> columns;  // rotate: rows of each block column
  std::vector<int64_t> mine;                  // replicated: rows this worker reads
};

}  // namespace

struct Runner::Layout {
  std::vector<ParamRun> params;  // by parameter index
};

StatusOr<std::shared_ptr<Runner::Layout>> Runner::MakeLayout(
    int loop, const kernel::RunContext& ctx, const analysis::StepBlocks& blocks,
    const std::vector<int64_t>& all_mine) const {
  const analysis::LoopPlan& lp = plan_.loops[loop];
  const ScheduleKind kind = lp.schedule.kind;
  const int w = opts_.rank, P = opts_.workers;
  auto layout = std::make_shared<Layout>();
  std::vector<ParamRun>& pr = layout->params;
  pr.resize(prog_.params.size());
  RIGEL_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> my_keys, Keys(loop, ctx, all_mine));
  // Rows the other workers touch, per parameter, and the rows of each block
  // (step, worker): sliced once for all parameters, on first need.
  std::optional<std::vector<std::vector<int64_t>>> others;
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> block_keys;
  for (const analysis::ParamPlan& pp : lp.params) {
    if (pp.is_accum) continue;
    ParamRun& r = pr[pp.index];
    r.written = pp.written;
    r.strategy = analysis::StrategyName(pp.strategy);
    switch (pp.strategy) {
      case Strategy::kPs:
        r.mode = Mode::kStepSync;
        r.synchronous = !prog_.loops[loop].relaxed[pp.index];
        break;
      case Strategy::kAllreduce:
        r.mode = Mode::kAllReduce;
        break;
      case Strategy::kLocal:
      case Strategy::kAccumulator:
        r.mode = Mode::kLocal;
        break;
      case Strategy::kRotate:
        r.mode = kind == ScheduleKind::kConflictFree2D ? Mode::kRotate : Mode::kLocal;
        break;
      case Strategy::kReplicated:
        r.mode = pp.written ? Mode::kLocal : Mode::kReplicated;
        break;
    }
    if (r.mode == Mode::kLocal) {
      // Rows other workers touch too can only exist where blocks of several
      // workers share rows (a wavefront's boundaries); 1-D and 2-D
      // partitions were proved disjoint, so only those are scanned.
      if (kind == ScheduleKind::kWavefront && P > 1) {
        if (!others) {
          std::vector<int64_t> theirs;
          for (const auto& step : blocks.blocks) {
            for (int v = 0; v < P; ++v) {
              if (v != w) theirs.insert(theirs.end(), step[v].begin(), step[v].end());
            }
          }
          RIGEL_ASSIGN_OR_RETURN(others, Keys(loop, ctx, theirs));
        }
        r.shared = Intersect(my_keys[pp.index], (*others)[pp.index]);
      }
      r.held = Minus(my_keys[pp.index], r.shared);
    } else if (r.mode == Mode::kRotate) {
      if (block_keys.empty()) {
        block_keys.resize(blocks.steps());
        for (int64_t t = 0; t < blocks.steps(); ++t) {
          for (int a = 0; a < P; ++a) {
            RIGEL_ASSIGN_OR_RETURN(auto k, Keys(loop, ctx, blocks.blocks[t][a]));
            block_keys[t].push_back(std::move(k));
          }
        }
      }
      r.columns.resize(P);
      for (int64_t t = 0; t < blocks.steps(); ++t) {
        for (int a = 0; a < P; ++a) {
          const std::vector<int64_t>& k = block_keys[t][a][pp.index];
          std::vector<int64_t>& column = r.columns[(a + t) % P];
          column.insert(column.end(), k.begin(), k.end());
        }
      }
      for (auto& c : r.columns) SortUnique(&c);
    } else if (r.mode == Mode::kReplicated) {
      r.mine = my_keys[pp.index];
    }
  }
  return layout;
}

StatusOr<TaskResult> Runner::Run(const TaskSpec& task) {
  const auto run_start = Clock::now();
  if (task.loop < 0 || task.loop >= static_cast<int>(prog_.loops.size())) {
    return InvalidArgument("task for loop " + std::to_string(task.loop) + "; the program has " +
                           std::to_string(prog_.loops.size()));
  }
  const int loop = task.loop;
  const analysis::LoopPlan& lp = plan_.loops[loop];
  json tj;
  try {
    tj = json::parse(task.json);
  } catch (const json::parse_error& e) {
    return InvalidArgument(std::string("task: not valid JSON: ") + e.what());
  }
  if (!tj.is_object() || !tj.contains("cuts") || !tj.contains("outer")) {
    return InvalidArgument("task: expected an object with \"cuts\" and \"outer\"");
  }
  if (tj.contains("space")) {
    const json& sp = tj["space"];
    if (!sp.is_array() || sp.size() != 2) return InvalidArgument("task.space: expected [n, m]");
    RIGEL_RETURN_IF_ERROR(ex_->SizeSpace(loop, sp[0].get<int64_t>(), sp[1].get<int64_t>()));
  }
  std::map<int, kernel::OuterValue> outer;
  for (const json& o : tj["outer"]) {
    if (!o.is_array() || o.size() != 4) {
      return InvalidArgument("task.outer: expected [id, is_int, i, f] entries");
    }
    outer[o[0].get<int>()] =
        kernel::OuterValue{o[1].get<bool>(), o[2].get<int64_t>(), o[3].get<double>()};
  }
  RIGEL_ASSIGN_OR_RETURN(const analysis::StepBlocks* blocks, Blocks(loop, tj["cuts"].dump()));

  std::vector<double> accums(prog_.accums.size(), 0.0);
  kernel::RunContext ctx;
  ctx.params = &ex_->bindings();
  ctx.data = &ex_->data_ptrs();
  ctx.accums = accums.data();
  ctx.seed = job_.seed;
  ctx.launch = task.launch;
  ctx.outer = [&outer](int id) -> StatusOr<kernel::OuterValue> {
    auto it = outer.find(id);
    if (it == outer.end()) return Internal("the task lacks driver value " + std::to_string(id));
    return it->second;
  };
  Metrics m;
  const int w = opts_.rank, P = opts_.workers;
  const ScheduleKind kind = lp.schedule.kind;

  // This worker's elements per clock step.
  std::vector<std::vector<int64_t>> steps;
  bool batched = false, dense = false;
  for (const analysis::ParamPlan& pp : lp.params) {
    bool synced =
        !pp.is_accum && (pp.strategy == Strategy::kPs || pp.strategy == Strategy::kAllreduce);
    batched |= synced;
    dense |= synced && slices_[loop].whole(pp.index);
  }
  if (kind == ScheduleKind::kDataParallel && batched) {
    // Every element of a dense update conflicts with every other: the merged
    // deltas of a mini-batch act as one step batch * workers times as long,
    // which overshoots unless batches are small. Sparse rows rarely collide.
    const int64_t batch = opts_.job.batch > 0 ? opts_.job.batch : dense ? kDenseBatch : kSparseBatch;
    if (dense) {
      // Step k takes the k-th stretch of batch * workers elements of the
      // serial order, each worker its own batch of it: the updates summed by
      // a step are those the serial loop makes next to each other, so the run
      // ends on the same elements as the serial one.
      std::vector<int64_t> order;
      for (int v = 0; v < P; ++v) {
        order.insert(order.end(), blocks->blocks[0][v].begin(), blocks->blocks[0][v].end());
      }
      const int64_t stride = batch * P, total = static_cast<int64_t>(order.size());
      steps.resize(std::max<int64_t>(1, (total + stride - 1) / stride));
      for (int64_t k = 0; k < static_cast<int64_t>(steps.size()); ++k) {
        int64_t lo = std::min(total, k * stride + w * batch);
        int64_t hi = std::min(total, lo + batch);
        steps[k].assign(order.begin() + lo, order.begin() + hi);
      }
    } else {
      int64_t most = 0;
      for (int v = 0; v < P; ++v) {
        most = std::max<int64_t>(most, static_cast<int64_t>(blocks->blocks[0][v].size()));
      }
      const std::vector<int64_t>& mine = blocks->blocks[0][w];
      steps.resize(std::max<int64_t>(1, (most + batch - 1) / batch));
      for (int64_t k = 0; k < static_cast<int64_t>(steps.size()); ++k) {
        int64_t lo = std::min<int64_t>(k * batch, mine.size());
        int64_t hi = std::min<int64_t>(lo + batch, mine.size());
        steps[k].assign(mine.begin() + lo, mine.begin() + hi);
      }
    }
  } else {
    for (const auto& step : blocks->blocks) steps.push_back(step[w]);
  }
  std::vector<int64_t> all_mine;
  for (const auto& s : steps) all_mine.insert(all_mine.end(), s.begin(), s.end());

  // What each parameter does in this run: made once per cuts when the rows
  // a block touches depend only on its elements.
  auto t_keys = Clock::now();
  std::shared_ptr<Layout> layout;
  const auto layout_key = std::make_pair(loop, tj["cuts"].dump());
  if (static_keys_[loop]) {
    auto it = layouts_.find(layout_key);
    if (it != layouts_.end()) layout = it->second;
  }
  if (!layout) {
    RIGEL_ASSIGN_OR_RETURN(layout, MakeLayout(loop, ctx, *blocks, all_mine));
    if (static_keys_[loop]) layouts_[layout_key] = layout;
  }
  std::vector<ParamRun>& pr = layout->params;
  double keys_s = Since(t_keys);

  // Start of the run: local rows (unless kept), rotating columns, replicated rows.
  std::vector<std::vector<float>> rotate_base(prog_.params.size());
  for (size_t p = 0; p < pr.size(); ++p) {
    ParamRun& r = pr[p];
    const int pi = static_cast<int>(p);
    if (r.mode == Mode::kLocal) {
      Held& h = *held_[p];
      bool kept = h.loop == loop && h.rows == r.held && h.generation == generation_[p];
      if (!kept) {
        h.loop = loop;
        h.rows = r.held;
        RIGEL_RETURN_IF_ERROR(PullRows(pi, r.held, true, &h.base, &m, r.strategy));
      } else {
        m.bytes["local.kept"] += static_cast<double>(h.base.size() * sizeof(float));
      }
    } else if (r.mode == Mode::kRotate) {
      const int64_t last = (w + P - 1) % P;  // the column this worker ends with
      RIGEL_RETURN_IF_ERROR(PullRows(pi, r.columns[last], true, &rotate_base[p], &m, r.strategy));
      if (last != w)
        RIGEL_RETURN_IF_ERROR(PullRows(pi, r.columns[w], true, nullptr, &m, r.strategy));
    } else if (r.mode == Mode::kAllReduce) {
      DenseReplica& d = *dense_replicas_[p];
      if (!d.valid || d.generation != generation_[p]) {
        // Every worker pulls the same values: the servers are quiet between runs.
        d.rows.resize(static_cast<size_t>(ex_->bindings()[p].rows));
        std::iota(d.rows.begin(), d.rows.end(), 0);
        RIGEL_RETURN_IF_ERROR(PullRows(pi, d.rows, true, &d.server, &m, r.strategy));
        d.base = ex_->param(pi);
        d.valid = true;
        d.generation = generation_[p];
      }
    } else if (r.mode == Mode::kReplicated) {
      // A current allreduce replica is the parameter's value already.
      const DenseReplica& d = *dense_replicas_[p];
      if (d.valid && d.generation == generation_[p]) continue;
      Held& h = *replicated_[p];
      bool fresh = h.rows == r.mine && h.generation == generation_[p] && h.loop >= 0;
      if (!fresh) {
        h.loop = loop;
        h.rows = r.mine;
        h.generation = generation_[p];
        RIGEL_RETURN_IF_ERROR(PullRows(pi, r.mine, true, nullptr, &m, r.strategy));
      }
    }
  }

  // The steps. Rows synchronised per step (any_sync) make every worker tick
  // its clock after each step, so clocks stay equal. With a staleness bound of at least 1 and only
  // relaxed rows synchronised per step, the next mini-batch's rows are pulled while this one
  // computes: asked for one clock ahead, they still see every update the bound promises at the
  // clock they are used.
  const kernel::Kernel& kernel = ex_->kernel(loop);
  std::vector<int> dense_written;  // allreduce parameters this loop writes
  for (size_t p = 0; p < pr.size(); ++p) {
    if (pr[p].mode == Mode::kAllReduce && pr[p].written)
      dense_written.push_back(static_cast<int>(p));
  }
  const int64_t sync_every = std::max<int64_t>(1, opts_.job.sync_every);
  bool any_sync = false, prefetch = opts_.job.staleness >= 1;
  for (const ParamRun& r : pr) {
    bool sync = r.mode == Mode::kStepSync || !r.shared.empty();
    any_sync |= sync;
    if (sync && r.synchronous) prefetch = false;
  }
  struct Pulls {
    std::vector<std::vector<int64_t>> keys;
    std::vector<std::future<StatusOr<std::vector<float>>>> rows;
  };
  auto pull_step = [&](int64_t s, uint64_t ahead) -> StatusOr<Pulls> {
    Pulls out;
    out.keys.resize(pr.size());
    out.rows.resize(pr.size());
    if (steps[s].empty()) return out;
    RIGEL_ASSIGN_OR_RETURN(auto k, Keys(loop, ctx, steps[s]));
    for (size_t p = 0; p < pr.size(); ++p) {
      if (pr[p].mode == Mode::kStepSync) {
        out.keys[p] = std::move(k[p]);
      } else if (!pr[p].shared.empty()) {
        out.keys[p] = Intersect(k[p], pr[p].shared);
      }
      if (out.keys[p].empty()) continue;
      const int pi = static_cast<int>(p);
      out.rows[p] = ahead > 0           ? client_->PullAhead(pi, out.keys[p], ahead)
                    : pr[p].synchronous ? client_->PullSynchronous(pi, out.keys[p])
                                        : client_->Pull(pi, out.keys[p]);
    }
    return out;
  };
  std::optional<Pulls> next;
  std::vector<std::vector<int64_t>> step_keys(pr.size());  // this step's (then the last step's)
  for (int64_t s = 0; s < static_cast<int64_t>(steps.size()); ++s) {
    const std::vector<int64_t>& elems = steps[s];
    std::vector<std::vector<float>> step_base(pr.size());
    if (any_sync) {
      Pulls cur;
      const bool prefetched = next.has_value();
      if (prefetched) {
        cur = std::move(*next);
        next.reset();
      } else {
        RIGEL_ASSIGN_OR_RETURN(cur, pull_step(s, 0));
      }
      for (size_t p = 0; p < pr.size(); ++p) {
        if (cur.keys[p].empty()) continue;
        RIGEL_RETURN_IF_ERROR(TakeRows(static_cast<int>(p), cur.keys[p], std::move(cur.rows[p]),
                                       &step_base[p], &m, pr[p].strategy,
                                       prefetched ? &step_keys[p] : nullptr));
      }
      step_keys = std::move(cur.keys);
      if (prefetch && s + 1 < static_cast<int64_t>(steps.size())) {
        RIGEL_ASSIGN_OR_RETURN(next, pull_step(s + 1, 1));
      }
    }
    for (size_t p = 0; p < pr.size(); ++p) {
      if (pr[p].mode == Mode::kRotate && s > 0) {
        int64_t q = (w + s) % P;
        RIGEL_RETURN_IF_ERROR(
            TakeColumn(loop, task.launch, s, static_cast<int>(p), q, pr[p].columns[q], &m));
      }
    }
    auto tc = Clock::now();
    RIGEL_RETURN_IF_ERROR(kernel.RunElements(ctx, elems));
    m.compute_s += Since(tc);
    // Every worker takes the same number of steps, so the collectives match.
    if ((s + 1) % sync_every == 0 || s + 1 == static_cast<int64_t>(steps.size())) {
      RIGEL_RETURN_IF_ERROR(SyncDense(dense_written, &m));
    }
    for (size_t p = 0; p < pr.size(); ++p) {
      if (pr[p].mode == Mode::kRotate && s + 1 < static_cast<int64_t>(steps.size())) {
        int64_t q = (w + s) % P;
        RIGEL_RETURN_IF_ERROR(
            SendColumn(loop, task.launch, s + 1, static_cast<int>(p), q, pr[p].columns[q], &m));
      }
      if (!step_keys[p].empty() && pr[p].written) {
        RIGEL_RETURN_IF_ERROR(
            PushDeltas(static_cast<int>(p), step_keys[p], &step_base[p], &m, pr[p].strategy));
      }
    }
    if (any_sync) {
      auto t = Clock::now();
      RIGEL_RETURN_IF_ERROR(client_->AdvanceClock());
      m.comm_s += Since(t);
    }
  }

  // End of the run: write back what this worker holds.
  for (size_t p = 0; p < pr.size(); ++p) {
    ParamRun& r = pr[p];
    if (!r.written) continue;
    if (r.mode == Mode::kLocal) {
      Held& h = *held_[p];
      RIGEL_RETURN_IF_ERROR(PushDeltas(static_cast<int>(p), h.rows, &h.base, &m, r.strategy));
    } else if (r.mode == Mode::kRotate) {
      const int64_t last = (w + P - 1) % P;
      RIGEL_RETURN_IF_ERROR(
          PushDeltas(static_cast<int>(p), r.columns[last], &rotate_base[p], &m, r.strategy));
    } else if (r.mode == Mode::kAllReduce && w == 0) {
      DenseReplica& d = *dense_replicas_[p];
      RIGEL_RETURN_IF_ERROR(PushDeltas(static_cast<int>(p), d.rows, &d.server, &m, r.strategy));
    }
  }
  {
    auto t = Clock::now();
    RIGEL_RETURN_IF_ERROR(client_->Flush().get());
    m.comm_s += Since(t);
  }
  for (size_t p = 0; p < pr.size(); ++p) {
    if (!pr[p].written) continue;
    ++generation_[p];
    if (pr[p].mode == Mode::kLocal) held_[p]->generation = generation_[p];
    if (pr[p].mode == Mode::kAllReduce) dense_replicas_[p]->generation = generation_[p];
  }

  TaskResult out;
  out.accums = std::move(accums);
  double total = Since(run_start);
  out.metrics = {{"elements", static_cast<double>(all_mine.size())},
                 {"steps", static_cast<double>(steps.size())},
                 {"seconds", total},
                 {"compute_s", m.compute_s},
                 {"comm_s", m.comm_s},
                 {"wait_s", m.wait_s},
                 {"keys_s", keys_s}};
  for (const auto& [k, v] : m.bytes) out.metrics.emplace_back("bytes." + k, v);
  for (int p : dense_written) {
    const std::vector<float>& v = ex_->param(p);
    out.metrics.emplace_back("replica_hash." + prog_.params[p].name,
                             static_cast<double>(ReplicaHash(v.data(), v.size())));
  }
  if (opts_.log) {
    *opts_.log << "loop " << loop << " run " << task.launch << ": " << all_mine.size()
               << " elements in " << steps.size() << " step(s), " << total << " s (compute "
               << m.compute_s << " s, communication " << m.comm_s << " s, waiting " << m.wait_s
               << " s, slicing " << keys_s << " s)\n";
  }
  return out;
}

}  // namespace rigel::worker
