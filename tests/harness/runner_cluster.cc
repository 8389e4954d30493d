#include "tests/harness/runner_cluster.h"

#include <numeric>
#include <utility>

#include "analysis/order.h"
#include "analysis/partition.h"
#include "data/dataset.h"
#include "frontend/compile.h"

namespace rigel::testing {

using transport::PeerId;
using transport::Role;
using worker::Runner;
using worker::TaskResult;
using worker::TaskSpec;

RunnerCluster::RunnerCluster(std::string program, const RunnerClusterOptions& opts)
    : base_(opts.cluster), path_(std::move(program)), opts_(opts) {}

RunnerCluster::~RunnerCluster() {
  // Endpoints first: their receive threads may be in a runner or the client.
  base_.Close();
  client_.reset();
  runners_.clear();
}

StatusOr<std::unique_ptr<RunnerCluster>> RunnerCluster::Start(const std::string& program,
                                                              const RunnerClusterOptions& opts) {
  std::unique_ptr<RunnerCluster> c(new RunnerCluster(program, opts));
  RIGEL_ASSIGN_OR_RETURN(c->prog_, frontend::CompileFile(program, {}));
  analysis::PlanOptions po;
  po.workers = opts.workers;
  RIGEL_ASSIGN_OR_RETURN(c->plan_, analysis::MakePlan(c->prog_, po));
  exec::ExecutorOptions eo;
  eo.seed = opts.seed;
  eo.out = &c->printed_;
  eo.allocate_params = false;
  RunnerCluster* self = c.get();
  eo.remote = [self](const exec::RemoteRun& run) { return self->RunRemote(run); };
  RIGEL_ASSIGN_OR_RETURN(c->driver_, exec::SerialExecutor::Create(c->prog_, eo));
  RIGEL_ASSIGN_OR_RETURN(cluster::ClusterSetup setup, c->MakeSetup());
  RIGEL_RETURN_IF_ERROR(c->base_.StartServers(setup));
  RIGEL_RETURN_IF_ERROR(c->StartClient(setup));
  RIGEL_RETURN_IF_ERROR(c->StartWorkers(setup));
  return c;
}

// The cluster setup as scheduler/driver.cc makes it.
StatusOr<cluster::ClusterSetup> RunnerCluster::MakeSetup() const {
  cluster::ClusterSetup setup;
  setup.servers = opts_.servers;
  setup.workers = opts_.workers;
  setup.options.staleness = opts_.staleness;
  setup.options.batch = opts_.batch;
  setup.options.sync_every = opts_.sync_every;
  setup.options.data_parts = opts_.data_parts;
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    cluster::ParamSpec spec;
    spec.decl = prog_.params[p];
    spec.rows = driver_->bindings()[p].rows;
    for (const analysis::LoopPlan& lp : plan_.loops) {
      for (const analysis::ParamPlan& pp : lp.params) {
        spec.hash |= !pp.is_accum && pp.index == static_cast<int>(p) &&
                     pp.strategy == analysis::Strategy::kPs && pp.shard == "hash";
      }
    }
    setup.params.push_back(std::move(spec));
  }
  cluster::JobSpec job;
  job.program = path_;
  job.seed = opts_.seed;
  job.plan = analysis::PlanToJson(prog_, plan_);
  for (size_t k = 0; k < prog_.data.size(); ++k) {
    const data::Dataset& d = driver_->data(static_cast<int>(k));
    if (!d.path.empty()) job.data.emplace_back(prog_.data[k].name, data::DatasetDigest(d));
  }
  setup.job = std::move(job);
  return setup;
}

// The scheduler's endpoint, for the client that pulls the parameters.
Status RunnerCluster::StartClient(const cluster::ClusterSetup& setup) {
  RIGEL_ASSIGN_OR_RETURN(transport::Transport * t, base_.Join(PeerId{Role::kScheduler, 0}));
  RIGEL_ASSIGN_OR_RETURN(cluster::ShardMap map, setup.MakeShardMap());
  ps::PsClientOptions po;
  client_ = std::make_unique<ps::PsClient>(t, std::move(map), po);
  return Status::Ok();
}

Status RunnerCluster::StartWorkers(const cluster::ClusterSetup& setup) {
  const int m = setup.workers;
  for (int w = 0; w < m; ++w) {
    RIGEL_ASSIGN_OR_RETURN(transport::Transport * t, base_.Join(PeerId{Role::kWorker, w}));
    handlers_.push_back(std::make_unique<std::atomic<Runner*>>(nullptr));
    std::atomic<Runner*>* runner = handlers_.back().get();
    // Messages that come before the runner exists are not for it yet.
    t->SetHandler([runner](transport::InMessage msg) {
      if (Runner* r = runner->load()) r->Handle(msg);
    });
    workers_.push_back(t);
  }
  std::vector<StatusOr<std::unique_ptr<Runner>>> made;
  for (int w = 0; w < m; ++w) made.emplace_back(Internal("not started"));
  for (int w = 0; w < m; ++w) {
    base_.Spawn([&, w] {
      auto map = setup.MakeShardMap();
      if (!map.ok()) {
        made[w] = map.status();
        return;
      }
      worker::RunnerOptions ro;
      ro.rank = w;
      ro.workers = m;
      ro.job = setup.options;
      ro.store = &store_;
      ro.collectives_host = "127.0.0.1";
      ro.collectives_timeout = std::chrono::milliseconds(20000);
      made[w] = Runner::Create(*setup.job, workers_[w], std::move(map).value(), ro);
    });
  }
  base_.JoinSpawned();
  for (int w = 0; w < m; ++w) {
    if (!made[w].ok()) return made[w].status();
    runners_.push_back(std::move(made[w]).value());
    handlers_[w]->store(runners_.back().get());
  }
  return Status::Ok();
}

StatusOr<std::vector<TaskResult>> RunnerCluster::RunTask(const TaskSpec& task) {
  const int m = static_cast<int>(runners_.size());
  std::vector<StatusOr<TaskResult>> results;
  for (int w = 0; w < m; ++w) results.emplace_back(Internal("not run"));
  for (int w = 0; w < m; ++w) {
    base_.Spawn([&, w] {
      results[w] = runners_[w]->Run(task);
      // A worker that failed leaves its neighbours waiting for hand-offs.
      if (!results[w].ok()) {
        for (auto& r : runners_) r->Abort(results[w].status());
      }
    });
  }
  base_.JoinSpawned();
  std::vector<TaskResult> out;
  for (int w = 0; w < m; ++w) {
    if (!results[w].ok()) return results[w].status();
    out.push_back(std::move(results[w]).value());
  }
  return out;
}

Status RunnerCluster::RunRemote(const exec::RemoteRun& run) {
  const ir::DataDecl& space = prog_.data[prog_.loops[run.loop].data];
  TaskSpec task;
  task.loop = run.loop;
  task.launch = run.launch;
  RIGEL_ASSIGN_OR_RETURN(task.cuts,
                         analysis::MakeCuts(plan_.loops[run.loop], opts_.workers, *run.space));
  for (const auto& [id, v] : run.outer) task.outer[id] = v;
  if (space.sized_at_launch) {
    task.sized = true;
    RIGEL_ASSIGN_OR_RETURN(task.space_n, driver_->EvalInt(space.grid_n));
    RIGEL_ASSIGN_OR_RETURN(task.space_m, driver_->EvalInt(space.grid_m));
  }
  RIGEL_ASSIGN_OR_RETURN(std::vector<TaskResult> results, RunTask(task));
  std::vector<double> hashes;
  for (const TaskResult& r : results) {
    for (size_t a = 0; a < r.accums.size(); ++a) run.accums[a] += r.accums[a];
    for (const auto& [name, value] : r.metrics) {
      totals_[name] += value;
      if (name.rfind("replica_hash.", 0) == 0) hashes.push_back(value);
    }
  }
  if (!hashes.empty()) hashes_.push_back(std::move(hashes));
  return Status::Ok();
}

StatusOr<std::vector<float>> RunnerCluster::PullParam(int p) {
  std::vector<int64_t> keys(static_cast<size_t>(driver_->bindings()[p].rows));
  std::iota(keys.begin(), keys.end(), 0);
  return client_->Pull(p, keys).get();
}

StatusOr<RunValues> RunnerCluster::Run() {
  RIGEL_RETURN_IF_ERROR(driver_->Run());
  // Rows held between runs (analysis/held_rows.h) reach the servers only
  // when asked, as the scheduler asks before it saves the parameters.
  for (const auto& r : runners_) RIGEL_RETURN_IF_ERROR(r->Flush().status());
  RunValues out;
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    RIGEL_ASSIGN_OR_RETURN(std::vector<float> v, PullParam(static_cast<int>(p)));
    out.params.push_back(std::move(v));
  }
  out.accums = driver_->accums();
  out.printed = printed_.str();
  return out;
}

StatusOr<RunValues> RunnerCluster::Serial() const {
  std::ostringstream printed;
  exec::ExecutorOptions eo;
  eo.seed = opts_.seed;
  eo.out = &printed;
  const analysis::Plan& plan = plan_;
  const int workers = opts_.workers;
  eo.order = [&plan, workers](int loop,
                              const data::Dataset& data) -> StatusOr<std::vector<int64_t>> {
    const analysis::LoopPlan& lp = plan.loops[loop];
    if (lp.schedule.kind == analysis::ScheduleKind::kDataParallel) return std::vector<int64_t>{};
    RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::MakeCuts(lp, workers, data));
    return analysis::ScheduleOrder(lp, cuts, data);
  };
  RIGEL_ASSIGN_OR_RETURN(auto ex, exec::SerialExecutor::Create(prog_, eo));
  RIGEL_RETURN_IF_ERROR(ex->Run());
  RunValues out;
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    out.params.push_back(ex->param(static_cast<int>(p)));
  }
  out.accums = ex->accums();
  out.printed = printed.str();
  return out;
}

}  // namespace rigel::testing
