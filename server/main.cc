// rigel-server: one parameter server of a cluster (ps/service.h).
//
//   rigel-server --scheduler ADDR --rank R [--transport zmq|ucx] [--listen ADDR] [--key-file F]
//                [--heartbeat-ms N]
//
// Registers with the scheduler, waits for the cluster setup, serves pulls and
// pushes until the scheduler says shutdown. Exits 0 when the job finished, 1
// with the reason when it failed (a peer died, the scheduler went away), 2 on
// bad flags, 4 (cluster::kExitSchedulerGone) when the scheduler fell silent.
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdlib>
#include <iostream>

#include "cluster/job_world.h"
#include "cluster/member_flags.h"
#include "common/memory.h"
#include "ps/service.h"

int main(int argc, char** argv) {
  rigel::KeepLargeBuffersInHeap();
  CLI::App app{"Rigel parameter server"};
  rigel::cluster::MemberFlags flags;
  rigel::cluster::AddMemberFlags(&app, &flags, 4095);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  using namespace rigel;
  const int rank = flags.rank;
  auto t = cluster::MemberTransport(transport::Role::kServer, flags, std::cerr);
  if (!t.ok()) {
    std::cerr << "rigel-server: " << t.status().message() << "\n";
    // Flags naming another transport than the scheduler's are bad usage.
    return t.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  // The handler exists before the service does: control messages can come
  // first, and data messages wait for the setup.
  std::atomic<ps::PsService*> service{nullptr};
  std::atomic<cluster::Member*> member{nullptr};
  (*t)->SetHandler([&](transport::InMessage m) {
    cluster::Member* mem = member.load();
    if (mem && mem->Handle(m)) return;
    ps::PsService* svc = service.load();
    if (svc && svc->Handle(m)) return;
    if (m.is_request()) {
      (void)(*t)->RespondError(m, Unavailable("server " + std::to_string(rank) + " is not ready"));
    }
  });
  cluster::MemberOptions mo = flags.Options();
  auto joined = std::make_unique<cluster::Member>(t->get(), mo);
  member = joined.get();
  if (Status st = joined->Join(); !st.ok()) {
    std::cerr << "rigel-server: " << st.message() << "\n";
    member = nullptr;
    return 1;
  }
  auto setup = joined->WaitForSetup(std::chrono::milliseconds(60000));
  if (!setup.ok()) {
    std::cerr << "rigel-server " << rank << ": " << setup.status().message() << "\n";
    return 1;
  }
  auto svc = ps::PsService::Create(t->get(), rank, *setup);
  if (!svc.ok()) {
    std::cerr << "rigel-server " << rank << ": " << svc.status().message() << "\n";
    return 1;
  }
  service = svc->get();
  // A testing hook (tests/e2e/recovery_test.cc kills a server in the middle
  // of a checkpoint): the pause after each rows file is written.
  if (const char* pause = std::getenv("RIGEL_TEST_CHECKPOINT_PAUSE_MS")) {
    (*svc)->set_checkpoint_pause(std::chrono::milliseconds(std::atoi(pause)));
  }
  joined->SetupDone();
  if (Status st = cluster::JoinJobWorldAsBystander(setup->options); !st.ok()) {
    std::cerr << "rigel-server " << rank << ": " << st.message() << "\n";
    return 1;
  }
  std::cerr << "rigel-server " << rank << ": serving " << setup->params.size() << " parameter(s)\n";
  Status end = joined->WaitForEnd();
  auto stats = (*svc)->stats();
  std::cerr << "rigel-server " << rank << ": " << stats.pulls << " pulls, " << stats.pushes
            << " pushes, " << (*svc)->rows() << " rows held\n";
  member = nullptr;
  service = nullptr;
  (*t)->Close();
  cluster::LeaveJobWorld();
  if (!end.ok()) {
    std::cerr << "rigel-server " << rank << ": stopping: " << end.message() << "\n";
    return joined->scheduler_gone() ? cluster::kExitSchedulerGone : 1;
  }
  return 0;
}
