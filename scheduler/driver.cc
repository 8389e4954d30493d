#include "scheduler/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/held_rows.h"
#include "analysis/memory.h"
#include "analysis/sync/resolve.h"
#include "cluster/wire/messages.h"
#include "common/cpu_time.h"
#include "common/file.h"
#include "common/memory.h"
#include "exec/epoch_log.h"
#include "exec/hold_plan.h"
#include "exec/init_params.h"
#include "exec/memory_inputs.h"
#include "exec/output_check.h"
#include "exec/param_file.h"
#include "frontend/compile.h"
#include "kernel/kernel.h"
#include "ps/client.h"
#include "ps/wire/messages.h"
#include "transport/message.h"

namespace rigel::scheduler {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using transport::PeerId;
using transport::Role;

// Totals of the loop runs since the last epoch line.
struct Driver::Epoch {
  Clock::time_point start = Clock::now();  // of the whole run
  Clock::time_point epoch_start = Clock::now();
  double updates = 0;
  double compute_s = 0, comm_s = 0, wait_s = 0;  // summed over workers
  std::map<std::string, double> bytes;
  int64_t replicas_checked = 0;            // allreduce replicas found equal on every worker
  double worker_cpu_s = 0;                 // summed over workers
  double own_cpu_s = ProcessCpuSeconds();  // this process's at the epoch's start
  double servers_cpu_s = 0;                // the servers' at the epoch's start
  int64_t worker_peak_bytes = -1;          // the most any worker has said so far
  std::map<int, int64_t> batch;            // mini-batch by loop
  std::map<std::string, double> param_bytes;
  std::map<int, std::map<std::string, double>> relaxed;  // by loop (exec::EpochFigures)
  // Each loop's tier as each worker last said it (by loop, then rank; kept
  // across epochs, as a tier only moves on): "tier" 0 interpreted, 1
  // compiling, 2 compiled in `tier`, the milliseconds beside it.
  std::map<int, std::map<int, exec::EpochFigures::Tier>> tiers;
  exec::EpochLog log;
};

Driver::Driver(DriverOptions options) : opts_(std::move(options)) {
  cluster::wire::RegisterMessages();
  ps::wire::RegisterMessages();  // checkpoints and restores
}
Driver::~Driver() {
  // A checkpoint still being written ends when the job was aborted (Await).
  if (writing_.joinable()) writing_.join();
}

namespace {

// A worker's "relaxed.<what>" metric into a loop's epoch figures: counters
// ("count.X") are summed over workers and runs, "max.X" kept at its most,
// settings (the same on every worker) set.
void AddRelaxed(const std::string& what, double v, std::map<std::string, double>* out) {
  if (what.rfind("count.", 0) == 0) {
    (*out)[what.substr(6)] += v;
  } else if (what.rfind("max.", 0) == 0) {
    double& m = (*out)[what.substr(4)];
    m = std::max(m, v);
  } else {
    (*out)[what] = v;
  }
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

// The plan: Rigel's, or --plan's checked against the program, whose relaxed
// settings then fill the job options the run left to Rigel.
Status Driver::LoadPlan() {
  DriverOptions& o = opts_;
  if (o.plan_path.empty()) {
    analysis::PlanOptions po;
    po.workers = o.workers;
    RIGEL_ASSIGN_OR_RETURN(plan_, analysis::MakePlan(*prog_, po));
  } else {
    RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(o.plan_path));
    RIGEL_ASSIGN_OR_RETURN(analysis::Plan plan, analysis::ParsePlan(text, o.plan_path));
    if (plan.workers != o.workers) {
      return InvalidArgument(o.plan_path + ": the plan was made for " +
                             std::to_string(plan.workers) + " workers; run it with --workers " +
                             std::to_string(plan.workers) + ", or make one for " +
                             std::to_string(o.workers) + " with `rigel plan --workers " +
                             std::to_string(o.workers) + "`");
    }
    RIGEL_ASSIGN_OR_RETURN(plan_, analysis::ValidatePlan(*prog_, std::move(plan), o.plan_path));
    // A plan's relaxed settings (what `rigel tune` found faster) stand in
    // for Rigel's choice where the run leaves it to Rigel; a flag the run
    // was given wins. Before the job's options reach the members.
    const analysis::PlanSettings& set = plan_.settings;
    if (set.batch > 0 && o.job.batch == 0) o.job.batch = set.batch;
    if (set.staleness >= 1 && o.job.staleness == cluster::kStalenessAuto) {
      o.job.staleness = set.staleness;
    }
    if (set.push_bound > 0 && o.job.push_bound == 0) o.job.push_bound = set.push_bound;
    if (set.any()) {
      std::cerr << o.plan_path << " sets " << set.Flags()
                << " (where the run leaves a setting to Rigel)\n";
    }
  }
  plan_json_ = analysis::PlanToJson(*prog_, plan_);
  for (const analysis::LoopPlan& lp : plan_.loops) {
    held_.push_back(analysis::LoopHoldsRows(*prog_, plan_, lp.id));
  }
  return Status::Ok();
}

// --save-vectors parsed, and every output checked writable.
Status Driver::CheckOutputs() {
  const DriverOptions& o = opts_;
  RIGEL_ASSIGN_OR_RETURN(vectors_, exec::ParseSaveVectors(*prog_, o.save_vectors));
  // Outputs that cannot be written stop the job now, before the data load,
  // not after training.
  if (!o.log_json.empty()) RIGEL_RETURN_IF_ERROR(exec::CheckOutputFile("--log-json", o.log_json));
  if (!o.save_params.empty()) {
    RIGEL_RETURN_IF_ERROR(exec::CheckOutputFile("--save-params", o.save_params));
  }
  for (const exec::VectorsRequest& r : vectors_) {
    RIGEL_RETURN_IF_ERROR(exec::CheckOutputFile("--save-vectors", r.path));
  }
  return Status::Ok();
}

// The executor of the driver's statements: loops run remotely (RunRemote),
// data sets loaded only as far as the scheduler needs them, and the hooks of
// epochs, checkpoints and printed lines.
StatusOr<exec::ExecutorOptions> Driver::JobExecutorOptions() {
  const DriverOptions& o = opts_;
  exec::ExecutorOptions eo;
  eo.seed = o.seed;
  RIGEL_ASSIGN_OR_RETURN(jit_,
                         o.jit.empty() ? kernel::DefaultJitMode() : kernel::ParseJitMode(o.jit));
  eo.compile.jit = jit_;
  // The scheduler needs a data set's elements only to cut loops by their
  // coordinates; where every loop over it (or over its split parts) is cut
  // by element count, the facts of a current index do (data/data_index.h).
  eo.facts_only = [prog = prog_.get(), plan = &plan_](int data) {
    for (const analysis::LoopPlan& lp : plan->loops) {
      int k = prog->loops[static_cast<size_t>(lp.id)].data;
      while (k >= 0 && k != data) k = prog->data[static_cast<size_t>(k)].split_parent;
      if (k != data) continue;
      const analysis::ScheduleKind s = lp.schedule.kind;
      if (s != analysis::ScheduleKind::kDataParallel && s != analysis::ScheduleKind::kSerial) {
        return false;
      }
    }
    return true;
  };
  // Data sets the workers hold in part: a scan (when no index is current)
  // gives the facts and the file's chunks, which the job sends, so that each
  // worker reads only its chunks (exec/hold_plan.h).
  eo.scan_facts = [prog = prog_.get(), plan = &plan_, parts = o.job.data_parts,
                   workers = o.workers](int data) {
    return parts && workers > 1 && exec::HoldsInPart(*prog, *plan, data, /*exchange=*/true);
  };
  eo.out = o.out;
  eo.warnings = &std::cerr;  // the workers load the same files and say nothing
  eo.log = o.log;            // what was loaded, or taken from an index
  eo.allocate_params = false;
  Driver* self = this;
  eo.remote = [self](const exec::RemoteRun& run) { return self->RunRemote(run); };
  eo.on_epoch = [self](int64_t i, int64_t lo, int64_t hi) { return self->OnEpoch(i, lo, hi); };
  const bool checkpoints = !o.checkpoint_dir.empty() || !o.resume.empty();
  if (checkpoints) eo.params_settled = [self] { return self->ParamsSettled(); };
  if (checkpoints || o.stop_after_epochs > 0) {
    eo.at_checkpoint_point = [self, checkpoints]() -> Status {
      if (checkpoints) RIGEL_RETURN_IF_ERROR(self->AtCheckpointPoint());
      const int64_t stop = self->opts_.stop_after_epochs;
      if (stop > 0 && ++self->epochs_done_ >= stop) {
        self->stopped_early_ = true;
        return FailedPrecondition("stopped after " + std::to_string(stop) + " epochs, as asked");
      }
      return Status::Ok();
    };
  }
  eo.quiet_prints = o.quiet_prints;
  if (!o.print_log.empty()) {
    // Opened first: a line an attempt killed mid-write left is cut off, and
    // printed again. Whole lines an earlier attempt of this job printed are
    // not.
    auto log = LineFile::Open(o.print_log, LineFile::Mode::kAppend);
    if (!log.ok()) return IoError("the run directory's printed lines: " + log.status().message());
    print_log_ = std::move(*log);
    std::ifstream earlier(o.print_log);
    std::string line;
    while (std::getline(earlier, line)) ++eo.quiet_prints;
    eo.print_log = [self](const std::string& line) {
      Status st = self->print_log_.Append(line);
      return st.ok() ? st : IoError("the run directory's printed lines: " + st.message());
    };
  }
  return eo;
}

// The cluster setup and the job the members are sent, once the data are
// loaded; a job over --memory-limit fails here, before any member starts.
Status Driver::MakeSetup() {
  const DriverOptions& o = opts_;
  cluster::ClusterSetup& s = setup_;
  s.servers = o.servers;
  s.workers = o.workers;
  s.options = o.job;
  for (size_t p = 0; p < prog_->params.size(); ++p) {
    cluster::ParamSpec spec;
    spec.decl = prog_->params[p];
    spec.rows = ex_->bindings()[p].rows;
    spec.hash = analysis::sync::ShardedByHash(plan_, static_cast<int>(p));
    s.params.push_back(std::move(spec));
  }
  // What each process will hold, known now that the data are loaded: a job
  // that would not fit --memory-limit stops here, before a worker or server
  // starts (scheduler/main.cc writes its address only after Create).
  {
    memory_ = analysis::EstimateMemory(
        *prog_, plan_,
        exec::JobMemoryInputs(*prog_, plan_, o.workers, o.servers, o.job,
                              !o.save_params.empty() || !vectors_.empty(), *ex_));
    if (o.log) *o.log << "expected peak memory per process:\n" << analysis::MemoryText(memory_);
    RIGEL_RETURN_IF_ERROR(analysis::CheckMemoryLimit(memory_, o.job.memory_limit));
  }
  cluster::JobSpec job;
  job.program = o.program;
  job.sets = o.sets;
  job.seed = o.seed;
  job.jit = kernel::JitModeName(jit_);
  job.plan = plan_json_;
  if (!o.init_params.empty()) {
    RIGEL_ASSIGN_OR_RETURN(data::FileFingerprint f, data::FingerprintFile(o.init_params));
    job.init_params = o.init_params;
    job.init_params_fingerprint = data::FingerprintText(f);
  }
  for (size_t k = 0; k < prog_->data.size(); ++k) {
    const data::Dataset& data = ex_->data(static_cast<int>(k));
    // A split part of a data set known from its index has no digest of its
    // own: the workers check the parent's, which decides the parts.
    if (!data.path.empty() && !(data.shape_only && data.digest.empty())) {
      job.data.emplace_back(prog_->data[k].name, data::DatasetDigest(data));
    }
    const ir::DataDecl& decl = prog_->data[k];
    if (!decl.path.empty() && decl.split_parent < 0) {
      RIGEL_ASSIGN_OR_RETURN(data::FileFingerprint f, data::FingerprintFile(decl.path));
      job.files.emplace_back(decl.name, data::FingerprintText(f));
    }
  }
  for (const auto& [k, entry] : ex_->facts_entries()) {
    job.scans.emplace_back(prog_->data[static_cast<size_t>(k)].name, data::IndexEntryText(entry));
  }
  // Loops cut by coordinates over data the workers hold in part: each
  // worker keeps the elements these cuts place on it as it reads the file,
  // so they are cut now, once, and every run uses them (RunRemote).
  if (o.job.data_parts && o.workers > 1) {
    for (int l : exec::LoopsCutBeforeLoad(*prog_, plan_, /*exchange=*/true)) {
      const data::Dataset& space = ex_->data(prog_->loops[static_cast<size_t>(l)].data);
      RIGEL_ASSIGN_OR_RETURN(
          cuts_[l], analysis::MakeCuts(plan_.loops[static_cast<size_t>(l)], o.workers, space));
      job.cuts.emplace_back(std::to_string(l), analysis::CutsToJson(cuts_[l]));
    }
  }
  s.job = std::move(job);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Driver>> Driver::Create(DriverOptions options) {
  std::unique_ptr<Driver> d(new Driver(std::move(options)));
  DriverOptions& o = d->opts_;
  if (o.workers < 1 || o.servers < 1) {
    return InvalidArgument("a cluster needs at least one worker and one server");
  }
  // Workers may start in another directory: every path they are sent is absolute.
  o.program = Absolute(o.program);
  for (auto& [name, value] : o.sets) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".path") == 0) value = Absolute(value);
  }
  frontend::CompileOptions co;
  co.sets = o.sets;
  RIGEL_ASSIGN_OR_RETURN(ir::Program prog, frontend::CompileFile(o.program, co));
  d->prog_ = std::make_unique<ir::Program>(std::move(prog));
  if (!o.init_params.empty()) {
    o.init_params = Absolute(o.init_params);
    RIGEL_RETURN_IF_ERROR(exec::UseInitParams(o.init_params, d->prog_.get()).status());
  }
  RIGEL_RETURN_IF_ERROR(d->LoadPlan());
  RIGEL_RETURN_IF_ERROR(d->CheckOutputs());
  RIGEL_ASSIGN_OR_RETURN(exec::ExecutorOptions eo, d->JobExecutorOptions());
  RIGEL_ASSIGN_OR_RETURN(d->ex_, exec::SerialExecutor::Create(*d->prog_, eo));
  RIGEL_RETURN_IF_ERROR(d->MakeSetup());
  RIGEL_RETURN_IF_ERROR(d->SetUpCheckpoints());
  d->setup_.job->restored = d->resumed_.has_value();
  d->epoch_ = std::make_unique<Epoch>();
  if (!o.log_json.empty()) {
    // A job that goes on from a checkpoint (a restart, or --resume) keeps
    // the epochs logged before it.
    exec::EpochLog& log = d->epoch_->log;
    RIGEL_RETURN_IF_ERROR(d->resumed_ ? log.OpenToGoOn(o.log_json) : log.Open(o.log_json));
  }
  return d;
}

bool Driver::Handle(const transport::InMessage& msg) {
  if (msg.from().role != Role::kWorker) return false;
  if (msg.Is<cluster::wire::Step>()) {
    if (msg.Body<cluster::wire::Step>().getCommand() != cluster::wire::StepCommand::START)
      return false;
    MutexLock l(&mu_);
    ++ready_;
    cv_.NotifyAll();
    return true;
  }
  if (!msg.Is<cluster::wire::TaskDone>()) return false;
  MutexLock l(&mu_);
  done_[msg.from().rank] = msg;
  cv_.NotifyAll();
  return true;
}

void Driver::Abort(const Status& why) {
  MutexLock l(&mu_);
  if (aborted_.ok()) aborted_ = why.ok() ? Unavailable("the job was stopped") : why;
  cv_.NotifyAll();
}

namespace {

// A worker's failure as the driver reports it.
Status WorkerError(const transport::InMessage& m) {
  std::string e = m.Body<cluster::wire::TaskDone>().getError().cStr();
  if (e.empty()) return Status::Ok();
  return FailedPrecondition("worker " + std::to_string(m.from().rank) + ": " + e);
}

// The first failure among the answers so far (OK when none failed).
Status FirstWorkerError(const std::map<int, transport::InMessage>& done) {
  for (const auto& [rank, m] : done) RIGEL_RETURN_IF_ERROR(WorkerError(m));
  return Status::Ok();
}

// The size of a space sized at launch (grid(n, m)); `sized` false otherwise.
struct TaskSize {
  bool sized = false;
  int64_t n = 0, m = 0;
};

// The typed task (cluster/wire/control.capnp, Task.run) the workers read
// with worker/task.h's ReadTask.
void FillTask(const exec::RemoteRun& run, const analysis::Cuts& cuts, const TaskSize& size,
              cluster::wire::Task::Builder t) {
  t.setLoop(static_cast<uint32_t>(run.loop));
  t.setLaunch(run.launch);
  auto r = t.initRun();
  auto c = r.initCuts();
  c.setSchedule(static_cast<cluster::wire::ScheduleKind>(cuts.kind));
  c.setWorkers(static_cast<uint32_t>(cuts.workers));
  auto axes = c.initAxes(static_cast<unsigned>(cuts.axes.size()));
  for (size_t k = 0; k < cuts.axes.size(); ++k) {
    axes[k].setDim(cuts.axes[k].dim);
    auto b = axes[k].initBounds(static_cast<unsigned>(cuts.axes[k].bounds.size()));
    for (size_t p = 0; p < cuts.axes[k].bounds.size(); ++p) b.set(p, cuts.axes[k].bounds[p]);
  }
  auto outer = r.initOuter(static_cast<unsigned>(run.outer.size()));
  for (size_t k = 0; k < run.outer.size(); ++k) {
    const auto& [id, v] = run.outer[k];
    outer[k].setId(static_cast<uint32_t>(id));
    outer[k].setIsInt(v.is_int);
    outer[k].setI(v.i);
    outer[k].setF(v.f);
  }
  r.setSized(size.sized);
  r.setSpaceN(size.n);
  r.setSpaceM(size.m);
  r.setEpoch(run.epoch);
}

}  // namespace

Status Driver::WaitReady() {
  MutexLock l(&mu_);
  while (aborted_.ok() && ready_ < opts_.workers && FirstWorkerError(done_).ok()) cv_.Wait(&mu_);
  if (!aborted_.ok()) return aborted_;
  return FirstWorkerError(done_);
}

StatusOr<std::map<int, transport::InMessage>> Driver::ToWorkers(
    const std::function<void(cluster::wire::Task::Builder)>& fill) {
  {
    MutexLock lock(&mu_);
    done_.clear();
  }
  for (int w = 0; w < opts_.workers; ++w) {
    transport::OutMessage msg;
    fill(msg.InitBody<cluster::wire::Task>());
    RIGEL_RETURN_IF_ERROR(transport_->Send(PeerId{Role::kWorker, w}, std::move(msg)));
  }
  std::map<int, transport::InMessage> done;
  {
    MutexLock lock(&mu_);
    while (aborted_.ok() && static_cast<int>(done_.size()) < opts_.workers &&
           FirstWorkerError(done_).ok()) {
      cv_.Wait(&mu_);
    }
    if (!aborted_.ok()) return aborted_;
    done.swap(done_);
  }
  RIGEL_RETURN_IF_ERROR(FirstWorkerError(done));
  return done;
}

Status Driver::FlushHeldRows() {
  if (!unflushed_) return Status::Ok();
  RIGEL_ASSIGN_OR_RETURN(auto done,
                         ToWorkers([](cluster::wire::Task::Builder t) { t.setFlush(true); }));
  unflushed_ = false;
  double bytes = 0;
  for (const auto& [rank, m] : done) {
    for (auto e : m.Body<cluster::wire::TaskDone>().getMetrics()) {
      const std::string name = e.getName().cStr();
      if (name.rfind("bytes.", 0) != 0) continue;
      epoch_->bytes[name.substr(6)] += e.getValue();
      bytes += e.getValue();
    }
  }
  if (opts_.log) *opts_.log << "driver: the workers flushed " << bytes << " bytes of held rows\n";
  return Status::Ok();
}

Status Driver::RunRemote(const exec::RemoteRun& run) {
  const ir::Loop& l = prog_->loops[run.loop];
  const ir::DataDecl& space = prog_->data[l.data];
  auto it = cuts_.find(run.loop);
  if (it == cuts_.end() || space.sized_at_launch) {
    RIGEL_ASSIGN_OR_RETURN(cuts_[run.loop],
                           analysis::MakeCuts(plan_.loops[run.loop], opts_.workers, *run.space));
  }
  TaskSize size;
  if (space.sized_at_launch) {
    size.sized = true;
    RIGEL_ASSIGN_OR_RETURN(size.n, ex_->EvalInt(space.grid_n));
    RIGEL_ASSIGN_OR_RETURN(size.m, ex_->EvalInt(space.grid_m));
  }
  RIGEL_ASSIGN_OR_RETURN(auto done, ToWorkers([&](cluster::wire::Task::Builder t) {
                           FillTask(run, cuts_[run.loop], size, t);
                         }));
  if (held_[static_cast<size_t>(run.loop)]) unflushed_ = true;
  // Each worker's hash of each allreduce replica it wrote: all must agree.
  std::map<std::string, std::pair<int, double>> hashes;
  for (const auto& [rank, m] : done) {
    auto d = m.Body<cluster::wire::TaskDone>();
    if (d.getLoop() != static_cast<uint32_t>(run.loop) || d.getLaunch() != run.launch) {
      return Internal("worker " + std::to_string(rank) + " answered for loop " +
                      std::to_string(d.getLoop()) + " run " + std::to_string(d.getLaunch()) +
                      "; expected loop " + std::to_string(run.loop) + " run " +
                      std::to_string(run.launch));
    }
    auto acc = d.getAccums();
    // A flat array: one slot per scalar accumulator, K per vector one.
    const int64_t slots = ir::AccumSlots(prog_->accums);
    if (static_cast<int64_t>(acc.size()) != slots) {
      return Internal("worker " + std::to_string(rank) + " sent " + std::to_string(acc.size()) +
                      " accumulator sums; the program has " + std::to_string(slots));
    }
    for (unsigned a = 0; a < acc.size(); ++a) run.accums[a] += acc[a];
    for (auto e : d.getMetrics()) {
      std::string name = e.getName().cStr();
      double v = e.getValue();
      if (name == "elements") {
        epoch_->updates += v;
      } else if (name == "compute_s") {
        epoch_->compute_s += v;
      } else if (name == "comm_s") {
        epoch_->comm_s += v;
      } else if (name == "wait_s") {
        epoch_->wait_s += v;
      } else if (name == "cpu_s") {
        epoch_->worker_cpu_s += v;
      } else if (name == "peak_bytes") {
        epoch_->worker_peak_bytes = std::max(epoch_->worker_peak_bytes, static_cast<int64_t>(v));
      } else if (name == "batch") {
        epoch_->batch[run.loop] = static_cast<int64_t>(v);
      } else if (name == "tier") {
        epoch_->tiers[run.loop][rank].tier = kernel::TierNameOfCode(v);
      } else if (name == "tier.compile_ms") {
        epoch_->tiers[run.loop][rank].compile_ms = v;
      } else if (name == "tier.interpreted_ms") {
        epoch_->tiers[run.loop][rank].interpreted_ms = v;
      } else if (name.rfind("bytes.", 0) == 0) {
        epoch_->bytes[name.substr(6)] += v;
      } else if (name.rfind("param_bytes.", 0) == 0) {
        epoch_->param_bytes[name.substr(12)] += v;
      } else if (name.rfind("relaxed.", 0) == 0) {
        AddRelaxed(name.substr(8), v, &epoch_->relaxed[run.loop]);
      } else if (name.rfind("replica_hash.", 0) == 0) {
        auto [it, first] = hashes.try_emplace(name.substr(13), rank, v);
        if (first) continue;
        if (it->second.second != v) {
          return Internal(fmt::format(
              "the replicas of allreduce parameter '{}' differ after loop {} run {}: worker {} "
              "holds hash {:x}, worker {} {:x}",
              it->first, run.loop, run.launch, it->second.first,
              static_cast<uint64_t>(it->second.second), rank, static_cast<uint64_t>(v)));
        }
        ++epoch_->replicas_checked;
      }
    }
  }
  return Status::Ok();
}

Status Driver::OnEpoch(int64_t i, int64_t lo, int64_t hi) {
  Epoch& e = *epoch_;
  auto now = Clock::now();
  const double workers = opts_.workers;
  exec::EpochFigures f;
  f.epoch = i;
  f.done = i - lo + 1;
  f.epochs = hi - lo;
  f.elapsed_s = std::chrono::duration<double>(now - e.start).count();
  f.epoch_s = std::chrono::duration<double>(now - e.epoch_start).count();
  f.updates = e.updates;
  f.compute_s = e.compute_s / workers;
  f.comm_s = e.comm_s / workers;
  f.wait_s = e.wait_s / workers;
  const double own = ProcessCpuSeconds();
  const ServerFigures servers = servers_ ? servers_() : ServerFigures{};
  f.cpu_s = e.worker_cpu_s + (own - e.own_cpu_s) + std::max(0.0, servers.cpu_s - e.servers_cpu_s);
  f.peak_bytes["scheduler"] = PeakResidentBytes();
  f.peak_bytes["worker"] = e.worker_peak_bytes;
  f.peak_bytes["server"] = servers.peak_bytes;
  f.workers = opts_.workers;
  f.servers = opts_.servers;
  f.replicas_checked = e.replicas_checked;
  f.bytes = e.bytes;
  f.batch = e.batch;
  f.param_bytes = e.param_bytes;
  f.relaxed = e.relaxed;
  // A loop is "jit" once every worker runs it compiled, "compiling" while
  // some do or compile, else "interpreter"; the milliseconds are the most
  // any worker took.
  for (const auto& [loop, by_rank] : e.tiers) {
    exec::EpochFigures::Tier& t = f.tiers[loop];
    int compiled = 0, compiling = 0;
    for (const auto& [rank, w] : by_rank) {
      compiled += w.tier == "jit";
      compiling += w.tier == "compiling";
      t.compile_ms = std::max(t.compile_ms, w.compile_ms);
      t.interpreted_ms = std::max(t.interpreted_ms, w.interpreted_ms);
    }
    t.tier = compiled == static_cast<int>(by_rank.size()) ? "jit"
             : compiled + compiling > 0                   ? "compiling"
                                                          : "interpreter";
    t.compiled_workers = compiled;
  }
  f.printed = ex_->TakePrinted();
  if (opts_.progress) *opts_.progress << exec::EpochProgressLine(f) << std::flush;
  if (e.log.is_open()) RIGEL_RETURN_IF_ERROR(e.log.Write(f));
  e.epoch_start = now;
  e.updates = e.compute_s = e.comm_s = e.wait_s = e.worker_cpu_s = 0;
  e.own_cpu_s = own;
  e.servers_cpu_s = servers.cpu_s;
  e.bytes.clear();
  e.batch.clear();
  e.param_bytes.clear();
  e.relaxed.clear();
  e.replicas_checked = 0;
  return Status::Ok();
}

Status Driver::SaveParams() {
  RIGEL_ASSIGN_OR_RETURN(cluster::ShardMap map, setup_.MakeShardMap());
  ps::PsClientOptions po;
  ps::PsClient client(transport_, std::move(map), po);
  std::vector<exec::SavedParam> out;
  for (size_t p = 0; p < setup_.params.size(); ++p) {
    exec::SavedParam sp;
    sp.name = setup_.params[p].decl.name;
    sp.rows = setup_.params[p].rows;
    sp.width = setup_.Width(static_cast<int>(p));
    sp.is_int = setup_.params[p].decl.is_int;
    sp.is_2d = setup_.params[p].decl.width > 0;
    std::vector<int64_t> keys(static_cast<size_t>(sp.rows));
    for (int64_t r = 0; r < sp.rows; ++r) keys[r] = r;
    RIGEL_ASSIGN_OR_RETURN(sp.values, client.Pull(static_cast<int>(p), keys).get());
    out.push_back(std::move(sp));
  }
  for (const exec::VectorsRequest& r : vectors_) {
    const data::Dataset* words = r.data >= 0 ? &ex_->data(r.data) : nullptr;
    RIGEL_RETURN_IF_ERROR(
        exec::SaveFailed("--save-vectors", exec::WriteVectors(r.path, words, out[r.param])));
  }
  if (opts_.save_params.empty()) return Status::Ok();
  return exec::SaveFailed("--save-params", exec::WriteParams(opts_.save_params, out));
}

Status Driver::Run(transport::Transport* transport) {
  transport_ = transport;
  if (opts_.log)
    *opts_.log << "driver: waiting for " << opts_.workers << " worker(s) to load data\n";
  RIGEL_RETURN_IF_ERROR(WaitReady());
  if (resumed_) RIGEL_RETURN_IF_ERROR(RestoreServers());
  epoch_->start = epoch_->epoch_start = last_checkpoint_ = Clock::now();
  if (opts_.log) {
    // From the scheduler's start to here: its own load (or its data's
    // index), the members' start and registration, every worker's load.
    *opts_.log << "driver: every worker is ready "
               << fmt::format("{:.2f}",
                              std::chrono::duration<double>(Clock::now() - created_).count())
               << " s after the scheduler started; running " << opts_.program << "\n";
  }
  Status st = ex_->Run();
  if (!st.ok() && stopped_early_) {
    if (opts_.log) *opts_.log << "driver: " << st.message() << "\n";
    st = Status::Ok();
  }
  // The last checkpoint is complete before the job says it finished.
  if (Status ck = FinishCheckpoint(); st.ok()) st = ck;
  if (st.ok()) finished_ = true;
  if (st.ok() && (!opts_.save_params.empty() || !vectors_.empty())) {
    st = FlushHeldRows();
    if (st.ok()) st = SaveParams();
  }
  // On failure the caller ends the job with the reason (Coordinator::Fail),
  // which stops the workers; only a finished run is ended task by task.
  if (!st.ok()) return st;
  for (int w = 0; w < opts_.workers; ++w) {
    transport::OutMessage msg;
    msg.InitBody<cluster::wire::Task>().setEnd(true);
    (void)transport_->Send(PeerId{Role::kWorker, w}, std::move(msg));
  }
  return st;
}

}  // namespace rigel::scheduler
