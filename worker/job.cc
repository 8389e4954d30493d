#include "worker/job.h"

#include "cluster/wire/messages.h"
#include "collectives/world.h"
#include "worker/task.h"

namespace rigel::worker {

void TaskQueue::Push(transport::InMessage m) {
  MutexLock l(&mu_);
  tasks_.push_back(std::move(m));
  cv_.NotifyAll();
}

bool TaskQueue::Pop(const cluster::Member& member, transport::InMessage* out) {
  MutexLock l(&mu_);
  // The member's end is not signalled on cv_: it is looked at every 200 ms.
  while (tasks_.empty() && !member.ended()) cv_.WaitFor(&mu_, std::chrono::milliseconds(200));
  if (tasks_.empty()) return false;
  *out = std::move(tasks_.front());
  tasks_.pop_front();
  return true;
}

namespace {

// Tells the scheduler a task ended: its result, or why it failed.
Status Report(transport::Transport* t, uint32_t loop, uint64_t launch, const TaskResult* res,
              const Status& st) {
  transport::OutMessage msg;
  auto d = msg.InitBody<cluster::wire::TaskDone>();
  d.setLoop(loop);
  d.setLaunch(launch);
  if (res) {
    auto a = d.initAccums(static_cast<unsigned>(res->accums.size()));
    for (size_t k = 0; k < res->accums.size(); ++k) a.set(k, res->accums[k]);
    auto e = d.initMetrics(static_cast<unsigned>(res->metrics.size()));
    for (size_t k = 0; k < res->metrics.size(); ++k) {
      e[k].setName(res->metrics[k].first);
      e[k].setValue(res->metrics[k].second);
    }
  }
  if (!st.ok()) d.setError(st.message());
  return t->Send({transport::Role::kScheduler, 0}, std::move(msg));
}

}  // namespace

Status RunJob(const cluster::ClusterSetup& setup, int rank, transport::Transport* t,
              const cluster::Member& member, TaskQueue& tasks, collectives::Store* store,
              std::atomic<Runner*>& runner, std::unique_ptr<Runner>* owned, std::ostream& log,
              std::chrono::milliseconds handoff_pause, bool audit_staleness) {
  if (setup.options.collectives == "mpi") {
    // Every process of the MPI job takes part in this split, whether or not
    // the program has allreduce parameters (collectives/world.h).
    Status joined = collectives::JoinMpiWorld(/*participate=*/true, rank);
    if (!joined.ok()) {
      return Status(joined.code(), "worker " + std::to_string(rank) + ": " + joined.message());
    }
  }
  auto map = setup.MakeShardMap();
  RunnerOptions ro;
  ro.rank = rank;
  ro.workers = setup.workers;
  ro.job = setup.options;
  ro.log = &log;
  ro.store = store;
  ro.handoff_pause = handoff_pause;
  ro.audit_staleness = audit_staleness;
  auto made = map.ok() ? Runner::Create(*setup.job, t, std::move(map).value(), ro)
                       : StatusOr<std::unique_ptr<Runner>>(map.status());
  if (!made.ok()) {
    log << "rigel-worker " << rank << ": " << made.status().message() << "\n";
    (void)Report(t, 0, 0, nullptr, made.status());
    return made.status();
  }
  *owned = std::move(made).value();
  runner = owned->get();
  transport::OutMessage ready;
  ready.InitBody<cluster::wire::Step>().setCommand(cluster::wire::StepCommand::START);
  Status result = t->Send({transport::Role::kScheduler, 0}, std::move(ready));
  transport::InMessage m;
  while (result.ok() && tasks.Pop(member, &m)) {
    auto task = m.Body<cluster::wire::Task>();
    if (task.getEnd()) break;
    auto run = [&]() -> StatusOr<TaskResult> {
      if (task.getFlush()) return (*owned)->Flush();
      RIGEL_ASSIGN_OR_RETURN(TaskSpec spec, ReadTask(task));
      return (*owned)->Run(spec);
    };
    StatusOr<TaskResult> res = run();
    result = Report(t, task.getLoop(), task.getLaunch(), res.ok() ? &*res : nullptr, res.status());
    if (!res.ok()) {
      log << "rigel-worker " << rank << ": " << res.status().message() << "\n";
      result = res.status();
    }
  }
  return result;
}

Status FinishJob(transport::Transport* t, cluster::Member& member) {
  transport::OutMessage done;
  done.InitBody<cluster::wire::Step>().setCommand(cluster::wire::StepCommand::FINISHED);
  RIGEL_RETURN_IF_ERROR(t->Send({transport::Role::kScheduler, 0}, std::move(done)));
  return member.WaitForEnd();
}

}  // namespace rigel::worker
