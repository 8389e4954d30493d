// rigel-scheduler: the coordinator of a cluster (scheduler/coordinator.h).
//
//   rigel-scheduler --servers S --workers M --setup FILE [--listen ADDR]
//                   [--key-file F] [--heartbeat-ms N] [--address-file FILE]
//
// Exits 0 when every worker finished or on SIGINT/SIGTERM (after telling every
// member to shut down), 1 with the reason when a member died, 2 on bad flags.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "common/file.h"
#include "scheduler/coordinator.h"
#include "transport/zmq/transport.h"

namespace {
rigel::scheduler::Coordinator* g_coordinator = nullptr;
}

int main(int argc, char** argv) {
  CLI::App app{"Rigel scheduler: membership, heartbeats and the end of a job"};
  int servers = 1, workers = 1, heartbeat_ms = 500;
  std::string setup_file, listen = "tcp://127.0.0.1:*", key_file, address_file;
  app.add_option("--servers", servers, "parameter servers expected")->check(CLI::Range(1, 4096));
  app.add_option("--workers", workers, "workers expected")->check(CLI::Range(1, 65536));
  app.add_option("--setup", setup_file, "cluster setup JSON (parameters, staleness)")->required();
  app.add_option("--listen", listen, "address to listen on")->capture_default_str();
  app.add_option("--key-file", key_file,
                 "cluster key file (rigel keygen); none: plain, loopback only");
  app.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat interval; dead after 3")
      ->check(CLI::Range(10, 600000))
      ->capture_default_str();
  app.add_option("--address-file", address_file, "write the bound address to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto text = rigel::ReadFileToString(setup_file);
  if (!text.ok()) {
    std::cerr << "rigel-scheduler: " << text.status().message() << "\n";
    return 2;
  }
  auto setup = rigel::analysis::SetupFromJson(*text, setup_file);
  if (!setup.ok()) {
    std::cerr << "rigel-scheduler: " << setup.status().message() << "\n";
    return 2;
  }
  setup->servers = servers;
  setup->workers = workers;
  rigel::transport::ZmqOptions zo;
  zo.self = {rigel::transport::Role::kScheduler, 0};
  zo.listen = listen;
  zo.key_file = key_file;
  auto transport = rigel::transport::CreateZmqTransport(zo);
  if (!transport.ok()) {
    std::cerr << "rigel-scheduler: " << transport.status().message() << "\n";
    return 1;
  }
  if (!address_file.empty()) {
    rigel::Status st = rigel::WriteFileAtomically(address_file, (*transport)->address() + "\n");
    if (!st.ok()) {
      std::cerr << "rigel-scheduler: " << st.message() << "\n";
      return 1;
    }
  }
  std::cerr << "rigel-scheduler: listening at " << (*transport)->address() << " for " << servers
            << " server(s) and " << workers << " worker(s)\n";
  rigel::scheduler::CoordinatorOptions co;
  co.setup = *setup;
  co.heartbeat = std::chrono::milliseconds(heartbeat_ms);
  co.log = &std::cerr;
  auto coordinator = rigel::scheduler::Coordinator::Start(transport->get(), co);
  g_coordinator = coordinator.get();
  // Stop on SIGINT/SIGTERM from a thread that waits for them (no work in a
  // signal handler).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread signals([set] {
    int sig = 0;
    sigwait(&set, &sig);
    if (g_coordinator)
      g_coordinator->Stop(sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
  });
  signals.detach();
  rigel::Status result = coordinator->Wait();
  // Give the shutdown messages a moment to leave before closing.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  g_coordinator = nullptr;
  coordinator.reset();
  (*transport)->Close();
  if (!result.ok()) {
    std::cerr << "rigel-scheduler: job failed: " << result.message() << "\n";
    return 1;
  }
  return 0;
}
