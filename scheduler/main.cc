// rigel-scheduler: the coordinator of a cluster (scheduler/coordinator.h) and,
// with --program, the driver of a program run on it (scheduler/driver.h).
//
//   rigel-scheduler --servers S --workers M (--setup FILE | --program P.rgl
//                   [--plan F] [--set NAME=VALUE]... [--seed N] [--staleness N]
//                   [--batch N] [--sync-every N] [--device cpu|cuda] [--log-json F] [--save-params
//                   F] [--progress-to F])
//                   [--listen ADDR] [--key-file F] [--heartbeat-ms N]
//                   [--address-file FILE]
//
// The program's prints go to stdout. Exits 0 when every worker finished or on
// SIGINT/SIGTERM (after telling every member to shut down), 1 with the reason
// when the program failed or a member died, 2 on bad flags or a program that
// does not compile or plan.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "cluster/job_options.h"
#include "common/file.h"
#include "frontend/compile.h"
#include "scheduler/coordinator.h"
#include "scheduler/driver.h"
#include "transport/zmq/transport.h"

namespace {
rigel::scheduler::Coordinator* g_coordinator = nullptr;
}

int main(int argc, char** argv) {
  CLI::App app{"Rigel scheduler: membership, heartbeats and the end of a job"};
  int servers = 1, workers = 1, heartbeat_ms = 500;
  std::string setup_file, listen = "tcp://127.0.0.1:*", key_file, address_file;
  rigel::scheduler::DriverOptions dopt;
  std::vector<std::string> sets;
  std::string progress_to;
  std::ofstream progress_file;
  app.add_option("--servers", servers, "parameter servers expected")->check(CLI::Range(1, 4096));
  app.add_option("--workers", workers, "workers expected")->check(CLI::Range(1, 65536));
  auto* setup_opt =
      app.add_option("--setup", setup_file, "cluster setup JSON (parameters, staleness)");
  auto* program_opt = app.add_option("--program", dopt.program, "run this .rgl program");
  setup_opt->excludes(program_opt);
  app.add_option("--plan", dopt.plan_path, "run this plan (rigel plan) instead of planning");
  app.add_option("--set", sets, "override a const or data path (NAME=VALUE); repeatable")
      ->take_all();
  app.add_option("--seed", dopt.seed, "seed of rand(), randint() and negative()");
  rigel::cluster::AddJobOptionFlags(&app, &dopt.job);
  app.add_option("--log-json", dopt.log_json, "write per-epoch metrics as JSON lines here");
  app.add_option("--save-params", dopt.save_params, "write the trained parameters here");
  app.add_option("--progress-to", progress_to, "append a progress line per epoch to this file");
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
  if (setup_file.empty() && dopt.program.empty()) {
    std::cerr << "rigel-scheduler: give --setup FILE or --program FILE\n";
    return 2;
  }
  std::unique_ptr<rigel::scheduler::Driver> driver;
  rigel::StatusOr<rigel::cluster::ClusterSetup> setup = rigel::Internal("no setup");
  if (!dopt.program.empty()) {
    for (const std::string& s : sets) {
      auto kv = rigel::frontend::ParseSetFlag(s);
      if (!kv.ok()) {
        std::cerr << "rigel-scheduler: " << kv.status().message() << "\n";
        return 2;
      }
      dopt.sets.push_back(*kv);
    }
    dopt.workers = workers;
    dopt.servers = servers;
    if (!progress_to.empty()) {
      progress_file.open(progress_to, std::ios::app);
      if (!progress_file) {
        std::cerr << "rigel-scheduler: cannot write progress to " << progress_to << "\n";
        return 2;
      }
      dopt.progress = &progress_file;
    }
    dopt.log = &std::cerr;
    auto d = rigel::scheduler::Driver::Create(dopt);
    if (!d.ok()) {
      const std::string m = d.status().message();
      std::cerr << (d.status().code() == rigel::StatusCode::kInvalidArgument ? ""
                                                                             : "rigel-scheduler: ")
                << m;
      if (m.empty() || m.back() != '\n') std::cerr << "\n";
      return 2;
    }
    driver = std::move(d).value();
    setup = driver->setup();
  } else {
    auto text = rigel::ReadFileToString(setup_file);
    if (!text.ok()) {
      std::cerr << "rigel-scheduler: " << text.status().message() << "\n";
      return 2;
    }
    setup = rigel::cluster::SetupFromJson(*text, setup_file);
    if (!setup.ok()) {
      std::cerr << "rigel-scheduler: " << setup.status().message() << "\n";
      return 2;
    }
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
  if (driver) {
    rigel::scheduler::Driver* d = driver.get();
    co.on_message = [d](const rigel::transport::InMessage& m) { d->Handle(m); };
  }
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
  std::thread driving;
  if (driver) {
    driving = std::thread([&] {
      rigel::Status st = driver->Run(transport->get());
      if (!st.ok()) coordinator->Fail(st);
    });
  }
  rigel::Status result = coordinator->Wait();
  if (driver) {
    driver->Abort(result);
    driving.join();
  }
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
