// rigel-node: the one entry point a cluster launcher starts N times.
//
//   mpirun -n N rigel-node PROG.rgl --servers S [flags of rigel run]
//   srun -n N rigel-node PROG.rgl --servers S ...
//   rigel-node PROG.rgl --servers S --rank R --size N --scheduler HOST:PORT ...
//
// Each process reads its rank and the job's size from the launcher's
// environment (node/launch_env.h) or --rank/--size, finds where rank 0
// listens, and becomes rigel-scheduler (rank 0: its prints are the job's
// output), rigel-server (ranks 1..S) or rigel-worker (the rest) by exec'ing
// that binary from its own directory (or --bin-dir). Members listen on the
// address that routes to the scheduler and carry the program's job key, so a
// rank started on another program or build is refused. Flags rigel-node does
// not know go to the scheduler (--staleness, --batch, --log-json, ...).
//
// Exits 2 on bad flags or an environment that names no rank; otherwise the
// exit status is the role binary's.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cluster/job_identity.h"
#include "cluster/membership.h"
#include "cluster/route.h"
#include "node/launch_env.h"
#include "transport/endpoint.h"

namespace {

using namespace rigel;

struct Flags {
  std::string program, scheduler, listen, key_file, bin_dir, transport;
  int servers = 0, workers = 0, rank = -1, size = 0, heartbeat_ms = 500;
  bool insecure_plain = false;
  double register_timeout_s = 30;
  double heartbeat_timeout_s = cluster::kDefaultHeartbeatTimeoutS;
  std::vector<std::string> sets;
};

std::string SelfDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

[[noreturn]] void Fail(int code, const std::string& message) {
  std::cerr << "rigel-node: " << message << "\n";
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rigel node: run one rank of a job started by mpirun, srun or a script"};
  Flags f;
  app.add_option("program", f.program, "the .rgl program")->required();
  app.add_option("--servers", f.servers, "parameter servers (ranks 1..S)")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--workers", f.workers, "workers; default: the job's size - 1 - servers");
  app.add_option("--scheduler", f.scheduler,
                 "where rank 0 listens: HOST:PORT (default: from the launcher)");
  auto* rank_opt =
      app.add_option("--rank", f.rank, "this process's rank (default: from the launcher)");
  auto* size_opt = app.add_option("--size", f.size, "the job's process count");
  rank_opt->needs(size_opt);
  size_opt->needs(rank_opt);
  app.add_option("--listen", f.listen,
                 "address to listen on (default: the one that routes to the scheduler)");
  app.add_option("--transport", f.transport,
                 "zmq (default, or $RIGEL_TRANSPORT) or ucx (UCX: shared memory, RDMA, TCP; "
                 "docs/transport.md); the same on every rank");
  app.add_option("--key-file", f.key_file, "cluster key file (rigel keygen); needed off loopback");
  app.add_flag("--insecure-plain", f.insecure_plain,
               "without a key, run beyond loopback anyway (no authentication nor encryption)");
  app.add_option("--heartbeat-ms", f.heartbeat_ms, "heartbeat interval")->capture_default_str();
  app.add_option("--heartbeat-timeout-s", f.heartbeat_timeout_s,
                 "a process silent this long is gone (the scheduler's members, the members' "
                 "scheduler)")
      ->check(CLI::Range(0.05, 86400.0))
      ->capture_default_str();
  app.add_option("--register-timeout-s", f.register_timeout_s,
                 "registration deadline of every process")
      ->capture_default_str();
  app.add_option("--set", f.sets, "override a const or data path (NAME=VALUE); repeatable")
      ->allow_extra_args(false);
  app.add_option("--bin-dir", f.bin_dir, "where rigel-scheduler, -server and -worker are");
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const node::Env env = node::CurrentEnv();
  node::LaunchRank lr;
  if (f.rank >= 0) {
    if (f.size < 1 || f.rank >= f.size) Fail(2, "--rank must be in [0, --size)");
    lr = {f.rank, f.size, node::Launcher::kFlags};
  } else {
    auto r = node::RankFromEnv(env);
    if (!r.ok()) Fail(2, r.status().message());
    lr = *r;
  }
  const int workers = lr.size - 1 - f.servers;
  if (workers < 1) {
    Fail(2, fmt::format("a job of {} processes has no room for a worker: rank 0 is the scheduler "
                        "and {} are servers; start at least {}",
                        lr.size, f.servers, f.servers + 2));
  }
  if (f.workers != 0 && f.workers != workers) {
    Fail(2, fmt::format("--workers {} does not fit a job of {} processes with --servers {} "
                        "({} workers)",
                        f.workers, lr.size, f.servers, workers));
  }
  auto ep = node::FindScheduler(f.scheduler, lr, env);
  if (!ep.ok()) Fail(2, ep.status().message());
  const node::NodeRole role = node::RoleOfRank(lr.rank, f.servers);
  const std::string bin = f.bin_dir.empty() ? SelfDir() : f.bin_dir;
  // The transport: --transport, else the scheme --scheduler names, else
  // $RIGEL_TRANSPORT, else zmq.
  std::string backend = f.transport;
  const std::string named = ep->scheme.empty() ? "" : transport::Endpoint{ep->scheme}.backend();
  if (backend.empty()) backend = named;
  if (auto it = env.find("RIGEL_TRANSPORT"); backend.empty() && it != env.end())
    backend = it->second;
  if (backend.empty()) backend = "zmq";
  if (Status st = transport::CheckBackendName(backend); !st.ok()) Fail(2, st.message());
  if (!named.empty() && named != backend) {
    Fail(2, fmt::format("--transport {}, but --scheduler names a {} address", backend, named));
  }
  const std::string scheduler_addr =
      transport::HostAddress(backend, ep->host, std::to_string(ep->port));

  std::string listen = f.listen;
  if (listen.empty()) {
    auto local = cluster::LocalAddressTowards(ep->host, ep->port);  // loopback stays loopback
    if (!local.ok()) Fail(1, local.status().message());
    listen = transport::HostAddress(backend, *local,
                                    role.role == "scheduler" ? std::to_string(ep->port) : "*");
  }
  std::vector<std::string> args = {bin + "/rigel-" + role.role};
  if (role.role == "scheduler") {
    args.insert(args.end(), {"--program", f.program, "--servers", std::to_string(f.servers),
                             "--workers", std::to_string(workers), "--transport", backend});
    for (const std::string& s : f.sets) args.insert(args.end(), {"--set", s});
    for (const std::string& x : app.remaining()) args.push_back(x);
  } else {
    auto id = cluster::ProgramIdentity(f.program, f.sets);
    if (!id.ok()) Fail(2, "cannot read the program on this host: " + id.status().message());
    args.insert(args.end(), {"--scheduler", scheduler_addr, "--rank", std::to_string(role.rank),
                             "--job-key", id->key, "--job-name", f.program});
  }
  args.insert(args.end(), {"--listen", listen, "--heartbeat-ms", std::to_string(f.heartbeat_ms),
                           "--register-timeout-s", fmt::format("{}", f.register_timeout_s),
                           "--heartbeat-timeout-s", fmt::format("{}", f.heartbeat_timeout_s)});
  if (!f.key_file.empty()) args.insert(args.end(), {"--key-file", f.key_file});
  if (f.insecure_plain) args.push_back("--insecure-plain");

  std::cerr << fmt::format(
      "rigel-node: rank {} of {} ({}) is {} {}; scheduler {} ({}); listening on {}\n", lr.rank,
      lr.size, node::LauncherName(lr.launcher), role.role, role.rank, scheduler_addr, ep->how,
      listen);
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  execv(cargv[0], cargv.data());
  Fail(1, fmt::format("cannot run {}: {} (build it, or give --bin-dir)", args[0],
                      std::strerror(errno)));
}
