#include "tests/harness/job_cluster.h"

#include <atomic>
#include <memory>
#include <sstream>

#include "cluster/member.h"
#include "cluster/scheduler_store.h"
#include "cluster/wire/messages.h"
#include "scheduler/coordinator.h"
#include "scheduler/driver.h"
#include "worker/job.h"

namespace rigel::testing {
namespace {

using transport::PeerId;
using transport::Role;

cluster::MemberOptions MemberOptionsFor(const JobClusterOptions& o) {
  cluster::MemberOptions m;
  m.scheduler = "loopback://scheduler:0";
  m.heartbeat = o.heartbeat;
  m.join_timeout = o.member_timeout;
  return m;
}

// A parameter server as rigel-server runs one, until the job ends.
Status Server(InProcCluster& c, int rank, const JobClusterOptions& o) {
  RIGEL_ASSIGN_OR_RETURN(ServerNode * node, c.JoinServer(rank));
  cluster::Member& member = node->BecomeMember(MemberOptionsFor(o));
  Status st = [&]() -> Status {
    RIGEL_RETURN_IF_ERROR(member.Join());
    RIGEL_ASSIGN_OR_RETURN(cluster::ClusterSetup setup, member.WaitForSetup(o.member_timeout));
    RIGEL_RETURN_IF_ERROR(node->Serve(setup));
    member.SetupDone();
    (void)member.WaitForEnd();  // the job's verdict is the coordinator's
    return Status::Ok();
  }();
  // The process would exit here: the scheduler sees this server leave.
  node->endpoint().Close();
  return st;
}

// A worker as rigel-worker runs one: its job's result.
Status Worker(InProcCluster& c, int rank, const JobClusterOptions& o) {
  RIGEL_ASSIGN_OR_RETURN(transport::Transport * t, c.Join(PeerId{Role::kWorker, rank}));
  std::atomic<worker::Runner*> runner{nullptr};
  worker::TaskQueue tasks;
  cluster::Member member(t, MemberOptionsFor(o));
  cluster::SchedulerStore store(t);  // the runner's rendezvous; it outlives the job
  std::unique_ptr<worker::Runner> owned;
  t->SetHandler([&](transport::InMessage m) {
    if (m.Is<cluster::wire::Task>()) return tasks.Push(std::move(m));
    if (worker::Runner* r = runner.load(); r && r->Handle(m)) return;
    member.Handle(m);
  });
  Status st = [&]() -> Status {
    RIGEL_RETURN_IF_ERROR(member.Join());
    RIGEL_ASSIGN_OR_RETURN(cluster::ClusterSetup setup, member.WaitForSetup(o.member_timeout));
    std::ostringstream log;
    RIGEL_RETURN_IF_ERROR(
        worker::RunJob(setup, rank, t, member, tasks, &store, runner, &owned, log));
    return worker::FinishJob(t, member);
  }();
  // The handler reaches this frame's locals: no receive thread past here.
  t->Close();
  return st;
}

}  // namespace

JobRun RunJobCluster(const JobClusterOptions& o) {
  JobRun out;
  InProcCluster c(o.cluster);
  StatusOr<transport::Transport*> sched = c.Join(PeerId{Role::kScheduler, 0});
  if (!sched.ok()) {
    out.result = sched.status();
    return out;
  }
  std::ostringstream printed;
  scheduler::DriverOptions d;
  d.program = o.program;
  d.workers = o.workers;
  d.servers = o.servers;
  d.out = &printed;
  StatusOr<std::unique_ptr<scheduler::Driver>> driver = scheduler::Driver::Create(d);
  if (!driver.ok()) {
    out.result = driver.status();
    return out;
  }
  scheduler::Driver* dr = driver->get();
  scheduler::CoordinatorOptions co;
  co.setup = dr->setup();
  co.heartbeat = o.heartbeat;
  co.on_message = [dr](const transport::InMessage& m) { dr->Handle(m); };
  auto coordinator = scheduler::Coordinator::Start(*sched, co);
  out.servers.assign(o.servers, Status::Ok());
  out.workers.assign(o.workers, Status::Ok());
  for (int s = 0; s < o.servers; ++s) c.Spawn([&, s] { out.servers[s] = Server(c, s, o); });
  for (int w = 0; w < o.workers; ++w) c.Spawn([&, w] { out.workers[w] = Worker(c, w, o); });
  c.Spawn([&] {
    Status st = dr->Run(*sched);
    if (!st.ok()) coordinator->Fail(st);
  });
  out.result = coordinator->Wait();
  dr->Abort(out.result);
  c.JoinSpawned();
  coordinator.reset();
  (*sched)->Close();
  out.printed = printed.str();
  return out;
}

}  // namespace rigel::testing
