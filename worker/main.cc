// rigel-worker: one worker of a cluster. It joins the cluster and connects to
// the other members; when the setup carries a job (a program run by
// `rigel-scheduler --program`), it loads the program and its data, says it is
// ready (step{start}) and runs every task the scheduler sends
// (worker/runner.h) until the `end` task. Without a job, --selftest-pushes N
// runs N clocks of pushing +1 to every row of the first parameter and checks
// the sums at the end (the smoke test of the parameter-server path).
//
//   rigel-worker --scheduler ADDR --rank R [--transport zmq|ucx] [--listen ADDR] [--key-file F]
//                [--heartbeat-ms N] [--selftest-pushes N] [--selftest-rows K]
//
// Exits 0 when the job finished, 1 with the reason otherwise, 2 on bad flags,
// 4 (cluster::kExitSchedulerGone) when the scheduler fell silent.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <numeric>
#include <thread>

#include "cluster/member_flags.h"
#include "cluster/scheduler_store.h"
#include "cluster/wire/messages.h"
#include "collectives/world.h"
#include "common/memory.h"
#include "ps/client.h"
#include "worker/job.h"
#include "worker/runner.h"

namespace {

using namespace rigel;

// The parameter-server smoke test: `pushes` clocks of +1 to the first
// `rows` rows of the first parameter (which the setup must have), then
// their sum.
Status SelfTest(const cluster::ClusterSetup& setup, int rank, transport::Transport* t,
                const cluster::Member& member, int pushes, int64_t rows, int pace_ms) {
  auto map = setup.MakeShardMap();
  if (!map.ok()) return map.status();
  ps::PsClientOptions co;
  co.staleness = cluster::ClockStaleness(setup.options);
  ps::PsClient client(t, std::move(map).value(), co);
  int64_t width = setup.Width(0);
  rows = std::min(rows, setup.params[0].rows);
  std::vector<int64_t> keys(rows);
  std::iota(keys.begin(), keys.end(), 0);
  std::vector<float> ones(rows * width, 1.0f);
  Status result;
  for (int c = 0; c < pushes && result.ok(); ++c) {
    result = client.Push(0, keys, ones.data());
    if (result.ok()) result = client.AdvanceClock();
    if (pace_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pace_ms));
    if (member.ended()) break;
  }
  if (result.ok()) result = client.WaitForPushes();
  if (!result.ok()) return result;
  auto pulled = client.Pull(0, keys).get();
  if (!pulled.ok()) return pulled.status();
  // Every worker pushed the same: all rows moved by workers * pushes once
  // everyone is done; at least our own share right now.
  double sum = std::accumulate(pulled->begin(), pulled->end(), 0.0);
  std::cout << "rigel-worker " << rank << ": pushed " << pushes << " clocks; row sum " << sum
            << std::endl;
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  rigel::KeepLargeBuffersInHeap();
  CLI::App app{"Rigel worker"};
  rigel::cluster::MemberFlags flags;
  int pushes = 0, pace_ms = 0;
  int64_t rows = 1000;
  rigel::cluster::AddMemberFlags(&app, &flags, 65535);
  app.add_option("--selftest-pushes", pushes, "clocks of +1 pushes to run (0: none)");
  app.add_option("--selftest-rows", rows, "rows of the first parameter the self-test touches");
  app.add_option("--selftest-pace-ms", pace_ms, "sleep this long after each self-test clock");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const int rank = flags.rank;
  auto t = cluster::MemberTransport(transport::Role::kWorker, flags, std::cerr);
  if (!t.ok()) {
    std::cerr << "rigel-worker: " << t.status().message() << "\n";
    // Flags naming another transport than the scheduler's are bad usage.
    return t.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::atomic<cluster::Member*> member{nullptr};
  std::atomic<worker::Runner*> runner{nullptr};
  worker::TaskQueue tasks;
  (*t)->SetHandler([&](transport::InMessage m) {
    if (m.Is<cluster::wire::Task>()) {
      tasks.Push(std::move(m));
      return;
    }
    worker::Runner* r = runner.load();
    if (r && r->Handle(m)) return;
    cluster::Member* mem = member.load();
    if (mem) mem->Handle(m);
  });
  cluster::MemberOptions mo = flags.Options();
  // A failed job (a peer died) ends this process at once: the compute thread
  // may be waiting on a request to the dead peer, and there is nothing left
  // to save.
  mo.on_end = [rank, &member](const Status& st) {
    if (st.ok()) return;
    std::cerr << "rigel-worker " << rank << ": stopping: " << st.message() << std::endl;
    const cluster::Member* m = member.load();
    std::_Exit(m != nullptr && m->scheduler_gone() ? cluster::kExitSchedulerGone : 1);
  };
  auto joined = std::make_unique<cluster::Member>(t->get(), mo);
  member = joined.get();
  if (Status st = joined->Join(); !st.ok()) {
    std::cerr << "rigel-worker: " << st.message() << "\n";
    member = nullptr;
    return 1;
  }
  auto setup = joined->WaitForSetup(std::chrono::milliseconds(60000));
  if (!setup.ok()) {
    std::cerr << "rigel-worker " << rank << ": " << setup.status().message() << "\n";
    return 1;
  }
  Status result;
  // Outlives the transport's receive thread, which may be in its Handle().
  std::unique_ptr<worker::Runner> owned;
  cluster::SchedulerStore store(t->get());
  if (setup->job) {
    // A testing hook (tests/e2e/recovery_test.cc kills a worker in the
    // middle of a 2-D hand-off): the pause after each hand-off is sent.
    std::chrono::milliseconds handoff_pause(0);
    if (const char* pause = std::getenv("RIGEL_TEST_HANDOFF_PAUSE_MS")) {
      handoff_pause = std::chrono::milliseconds(std::atoi(pause));
    }
    // A testing hook: relaxed rows' exchanges audit the staleness bound
    // against the servers' versions (ps::RowExchange::set_audit).
    const char* audit = std::getenv("RIGEL_TEST_AUDIT_STALENESS");
    result = worker::RunJob(*setup, rank, t->get(), *joined, tasks, &store, runner, &owned,
                            std::cerr, handoff_pause, audit != nullptr && audit[0] == '1');
  } else if (pushes > 0) {
    if (!setup->MakeShardMap().ok() || setup->params.empty()) {
      std::cerr << "rigel-worker " << rank << ": the self-test needs a parameter\n";
      return 1;
    }
    result = SelfTest(*setup, rank, t->get(), *joined, pushes, rows, pace_ms);
  }
  Status end = result.ok() ? worker::FinishJob(t->get(), *joined) : result;
  // Closing first stops the receive thread, which may be inside the member's
  // Handle(); only then is the member destroyed.
  member = nullptr;
  (*t)->Close();
  joined.reset();
  // mpirun expects MPI_Finalize of every rank that initialised MPI.
  collectives::FinalizeMpiWorld();
  if (!end.ok()) {
    std::cerr << "rigel-worker " << rank << ": stopping: " << end.message() << "\n";
    return 1;
  }
  return 0;
}
