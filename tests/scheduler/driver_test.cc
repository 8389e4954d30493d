// The program driver with its whole cluster in one process: a coordinator and
// a Driver on the scheduler's endpoint, parameter servers (ps::PsService) and
// workers (worker::RunJob) as threads over LoopbackTransport. The printed
// results must match the serial executor's, and a worker that cannot run the
// job must fail it with the worker's reason.
#include "scheduler/driver.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "cluster/member.h"
#include "cluster/scheduler_store.h"
#include "exec/executor.h"
#include "frontend/compile.h"
#include "ps/service.h"
#include "scheduler/coordinator.h"
#include "transport/loopback_transport.h"
#include "worker/job.h"

namespace rigel::scheduler {
namespace {

using namespace std::chrono_literals;
using transport::PeerId;
using transport::Role;

cluster::MemberOptions Options() {
  cluster::MemberOptions o;
  o.scheduler = "loopback://scheduler:0";
  o.heartbeat = 50ms;
  o.join_timeout = 10000ms;
  return o;
}

// A parameter server as rigel-server runs one.
void Server(transport::LoopbackNetwork* net, int rank) {
  auto t = std::move(net->Join(PeerId{Role::kServer, rank})).value();
  std::atomic<ps::PsService*> service{nullptr};
  cluster::Member member(t.get(), Options());
  t->SetHandler([&](transport::InMessage m) {
    if (member.Handle(m)) return;
    if (ps::PsService* s = service.load(); s && s->Handle(m)) return;
    if (m.is_request()) (void)t->RespondError(m, Unavailable("not ready"));
  });
  ASSERT_TRUE(member.Join().ok());
  auto setup = member.WaitForSetup(10000ms);
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  auto svc = ps::PsService::Create(t.get(), rank, *setup);
  ASSERT_TRUE(svc.ok()) << svc.status().message();
  service = svc->get();
  member.SetupDone();
  (void)member.WaitForEnd();
  t->Close();
}

// A worker as rigel-worker runs one; its job's result goes to *result.
void Worker(transport::LoopbackNetwork* net, int rank, Status* result) {
  auto t = std::move(net->Join(PeerId{Role::kWorker, rank})).value();
  std::atomic<worker::Runner*> runner{nullptr};
  worker::TaskQueue tasks;
  cluster::Member member(t.get(), Options());
  t->SetHandler([&](transport::InMessage m) {
    if (m.type() == transport::MessageType::TASK) return tasks.Push(std::move(m));
    if (worker::Runner* r = runner.load(); r && r->Handle(m)) return;
    member.Handle(m);
  });
  *result = member.Join();
  if (!result->ok()) return;
  auto setup = member.WaitForSetup(10000ms);
  *result = setup.status();
  if (!result->ok()) return;
  cluster::SchedulerStore store(t.get());
  std::unique_ptr<worker::Runner> owned;
  std::ostringstream log;
  *result = worker::RunJob(*setup, rank, t.get(), member, tasks, &store, runner, &owned, log);
  if (result->ok()) *result = worker::FinishJob(t.get(), member);
  t->Close();
}

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rigel-driver-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream r(dir_ + "/r.csv");
    uint64_t x = 777;
    for (int k = 0; k < 120; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      r << (x >> 33) % 19 << "," << (x >> 40) % 11 << ","
        << 1 + static_cast<double>((x >> 20) % 400) / 100 << "\n";
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }

  // Runs `program` serially; its printed lines.
  std::string Serial(const std::string& program) {
    auto prog = frontend::CompileFile(program, {});
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    if (!prog.ok()) return "";
    std::ostringstream out;
    exec::ExecutorOptions eo;
    eo.out = &out;
    auto ex = exec::SerialExecutor::Create(*prog, eo);
    EXPECT_TRUE(ex.ok()) << ex.status().message();
    if (!ex.ok()) return "";
    Status st = (*ex)->Run();
    EXPECT_TRUE(st.ok()) << st.message();
    return out.str();
  }

  // Runs `program` on an in-process cluster; the coordinator's result, the
  // driver's printed lines and each worker's result.
  Status Cluster(const std::string& program, int servers, int workers, std::string* printed,
                 std::vector<Status>* worker_results) {
    auto net = transport::LoopbackNetwork::Create();
    auto sched = std::move(net->Join(PeerId{Role::kScheduler, 0})).value();
    std::ostringstream out;
    DriverOptions d;
    d.program = program;
    d.workers = workers;
    d.servers = servers;
    d.out = &out;
    auto driver = Driver::Create(d);
    if (!driver.ok()) return driver.status();
    CoordinatorOptions co;
    co.setup = (*driver)->setup();
    co.heartbeat = 50ms;
    Driver* dr = driver->get();
    co.on_message = [dr](const transport::InMessage& m) { dr->Handle(m); };
    auto coordinator = Coordinator::Start(sched.get(), co);
    std::vector<std::thread> threads;
    worker_results->assign(workers, Status::Ok());
    for (int s = 0; s < servers; ++s) threads.emplace_back(Server, net.get(), s);
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back(Worker, net.get(), w, &(*worker_results)[w]);
    }
    std::thread driving([&] {
      Status st = dr->Run(sched.get());
      if (!st.ok()) coordinator->Fail(st);
    });
    Status result = coordinator->Wait();
    dr->Abort(result);
    driving.join();
    for (auto& t : threads) t.join();
    coordinator.reset();
    sched->Close();
    *printed = out.str();
    return result;
  }

  std::string dir_;
};

TEST_F(DriverTest, PrintsWhatTheSerialRunPrintsOnTwoAndThreeWorkers) {
  const std::string prog = Write("bias.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
param c: f32[r.cols] = zeros()
accum sq: f32
accum cs: f32
for ep in 0..3 {
  parallel for (i, j, v) in r { b[i] += 0.1 * (v - b[i]) }
  parallel ordered for (i, j, v) in r { c[j] = c[j] * 0.5 + v }
  sq = 0
  parallel for (i, j, v) in r {
    let e = v - b[i]
    sq += e * e
  }
  cs = 0
  parallel for (i, j, v) in r { cs += c[j] }
  print("epoch", ep, "sq", sq, "cs", cs)
}
)");
  const std::string want = Serial(prog);
  ASSERT_NE(want.find("epoch 2 sq"), std::string::npos) << want;
  for (int workers : {2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    std::string got;
    std::vector<Status> results;
    Status st = Cluster(prog, 2, workers, &got, &results);
    ASSERT_TRUE(st.ok()) << st.message();
    for (const Status& r : results) EXPECT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(got, want);
  }
}

TEST_F(DriverTest, ARunTimeErrorOnAWorkerFailsTheJobNamingTheProgramLine) {
  const std::string prog = Write("oor.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
parallel for (i, j, v) in r { b[i + j] += v }
print("done")
)");
  std::string got;
  std::vector<Status> results;
  Status st = Cluster(prog, 1, 2, &got, &results);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("oor.rgl:3:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("out of range"), std::string::npos) << st.message();
  EXPECT_EQ(got.find("done"), std::string::npos) << got;
}

}  // namespace
}  // namespace rigel::scheduler
