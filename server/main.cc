// rigel-server: one parameter server of a cluster (server/ps_service.h).
//
//   rigel-server --scheduler ADDR --rank R [--listen ADDR] [--key-file F]
//                [--heartbeat-ms N]
//
// Registers with the scheduler, waits for the cluster setup, serves pulls and
// pushes until the scheduler says shutdown. Exits 0 when the job finished, 1
// with the reason when it failed (a peer died, the scheduler went away), 2 on
// bad flags.
#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>

#include "scheduler/member.h"
#include "server/ps_service.h"
#include "transport/zmq/transport.h"

int main(int argc, char** argv) {
  CLI::App app{"Rigel parameter server"};
  std::string scheduler, listen = "tcp://127.0.0.1:*", key_file;
  int rank = 0, heartbeat_ms = 500;
  app.add_option("--scheduler", scheduler, "the scheduler's address")->required();
  app.add_option("--rank", rank, "this server's rank (0..S-1)")
      ->required()
      ->check(CLI::Range(0, 4095));
  app.add_option("--listen", listen, "address to listen on")->capture_default_str();
  app.add_option("--key-file", key_file, "cluster key file");
  app.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat interval")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  using namespace rigel;
  transport::ZmqOptions zo;
  zo.self = {transport::Role::kServer, rank};
  zo.listen = listen;
  zo.key_file = key_file;
  auto t = transport::CreateZmqTransport(zo);
  if (!t.ok()) {
    std::cerr << "rigel-server: " << t.status().message() << "\n";
    return 1;
  }
  // The handler exists before the service does: control messages can come
  // first, and data messages wait for the setup.
  std::atomic<server::PsService*> service{nullptr};
  std::atomic<scheduler::Member*> member{nullptr};
  (*t)->SetHandler([&](transport::InMessage m) {
    scheduler::Member* mem = member.load();
    if (mem && mem->Handle(m)) return;
    server::PsService* svc = service.load();
    if (svc && svc->Handle(m)) return;
    if (m.is_request()) {
      (void)(*t)->RespondError(m, Unavailable("server " + std::to_string(rank) + " is not ready"));
    }
  });
  scheduler::MemberOptions mo;
  mo.scheduler = scheduler;
  mo.heartbeat = std::chrono::milliseconds(heartbeat_ms);
  auto joined = std::make_unique<scheduler::Member>(t->get(), mo);
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
  auto svc = server::PsService::Create(t->get(), rank, *setup);
  if (!svc.ok()) {
    std::cerr << "rigel-server " << rank << ": " << svc.status().message() << "\n";
    return 1;
  }
  service = svc->get();
  std::cerr << "rigel-server " << rank << ": serving " << setup->params.size() << " parameter(s)\n";
  Status end = joined->WaitForEnd();
  auto stats = (*svc)->stats();
  std::cerr << "rigel-server " << rank << ": " << stats.pulls << " pulls, " << stats.pushes
            << " pushes, " << (*svc)->rows() << " rows held\n";
  member = nullptr;
  service = nullptr;
  (*t)->Close();
  if (!end.ok()) {
    std::cerr << "rigel-server " << rank << ": stopping: " << end.message() << "\n";
    return 1;
  }
  return 0;
}
