// rigel-scheduler: the coordinator of a cluster (scheduler/coordinator.h) and,
// with --program, the driver of a program run on it (scheduler/driver.h).
//
//   rigel-scheduler --servers S --workers M (--setup FILE | --program P.rgl
//                   [--plan F] [--set NAME=VALUE]... [--seed N] [--staleness N]
//                   [--batch N] [--sync-every N] [--device cpu|cuda]
//                   [--collectives gloo|mpi] [--log-json F] [--save-params F] [--init-params F]
//                   [--progress-to F] [--checkpoint-dir D] [--checkpoint-every N|Ns]
//                   [--resume D|MANIFEST] [--print-log F | --quiet-prints N])
//                   [--transport zmq|ucx] [--listen ADDR] [--key-file F] [--insecure-plain]
//                   [--heartbeat-ms N]
//                   [--heartbeat-timeout-s S] [--stop-with-parent]
//                   [--register-timeout-s N] [--address-file FILE]
//   rigel-scheduler --relay-prints FILE
//
// The program's prints go to stdout. Exits 0 when every worker finished or on
// SIGINT/SIGTERM (after telling every member to shut down), 1 with the reason
// when the program failed or a member died, 3 when a member was lost and the
// job has checkpoints to go on from (the reason names the newest), 2 on bad
// flags or a program that does not compile or plan.
//
// --relay-prints is the launcher's relay of a job's printed lines
// (scheduler/print_relay.h): standard input to standard output, each line
// recorded in FILE; exits 0 at the end of its input, 1 when a line could not
// be written (saying why).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <thread>

#include "cluster/job_options.h"
#include "common/line_file.h"
#include "scheduler/print_relay.h"
#include "scheduler/scheduler.h"

int main(int argc, char** argv) {
  CLI::App app{"Rigel scheduler: membership, heartbeats and the end of a job"};
  rigel::scheduler::SchedulerOptions o;
  rigel::scheduler::DriverOptions& d = o.driver;
  bool stop_with_parent = false;
  app.add_option("--servers", o.servers, "parameter servers expected")->check(CLI::Range(1, 4096));
  app.add_option("--workers", o.workers, "workers expected")->check(CLI::Range(1, 65536));
  auto* setup_opt =
      app.add_option("--setup", o.setup_file, "cluster setup JSON (parameters, staleness)");
  auto* program_opt = app.add_option("--program", d.program, "run this .rgl program");
  setup_opt->excludes(program_opt);
  app.add_option("--plan", d.plan_path, "run this plan (rigel plan) instead of planning");
  app.add_option("--set", o.sets, "override a const or data path (NAME=VALUE); repeatable")
      ->take_all();
  app.add_option("--seed", d.seed, "seed of rand(), randint() and negative()");
  app.add_option("--jit", d.jit,
                 "which tier runs loop bodies, here and in every worker: auto, on or off "
                 "(docs/architecture.md, Tiers)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  rigel::cluster::AddJobOptionFlags(&app, &d.job);
  app.add_option("--log-json", d.log_json, "write per-epoch metrics as JSON lines here");
  app.add_option("--save-params", d.save_params, "write the trained parameters here (NumPy .npz)");
  app.add_option("--init-params", d.init_params,
                 "start the parameters this file names (NumPy .npz, as --save-params writes) from "
                 "its values instead of their initialisers");
  app.add_option("--save-vectors", d.save_vectors,
                 "PARAM=FILE: write a 2-D parameter in word2vec's text format, one line per row "
                 "named by its word (CORPUS.vocab rows) or else its id; repeatable")
      ->take_all()
      ->allow_extra_args(false);
  app.add_option("--checkpoint-dir", d.checkpoint_dir,
                 "write checkpoints here (docs/operations.md)");
  app.add_option("--checkpoint-every", d.checkpoint_every,
                 "N: every N top-level loop iterations; Ns: every N seconds (default 1)");
  app.add_option("--resume", d.resume,
                 "go on from this checkpoint (a manifest, or the newest in a directory)");
  app.add_option("--stop-after-epochs", d.stop_after_epochs,
                 "stop after N iterations of the top-level `for`, as if the program ended there")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  auto* print_log_opt = app.add_option(
      "--print-log", d.print_log,
      "append printed lines here; lines already there are not printed again (a scheduler killed "
      "between printing a line and appending it prints it again: scripts/rigel-launch relays "
      "instead, with --relay-prints and --quiet-prints)");
  app.add_option("--quiet-prints", d.quiet_prints,
                 "print nothing for the program's first N printed lines (counted from its "
                 "start; earlier attempts of the job printed them)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50))
      ->excludes(print_log_opt);
  std::string relay_prints;
  auto* relay_opt = app.add_option(
      "--relay-prints", relay_prints,
      "relay printed lines from the standard input to the standard output, recording each in "
      "this file, and do nothing else (scripts/rigel-launch)");
  relay_opt->excludes(setup_opt)->excludes(program_opt);
  app.add_option("--progress-to", o.progress_to, "append a progress line per epoch to this file");
  app.add_option("--transport", o.transport,
                 "zmq (ZeroMQ, the default) or ucx (UCX: shared memory, RDMA, TCP; "
                 "docs/transport.md)");
  app.add_option("--listen", o.listen,
                 "address to listen on (default: tcp://127.0.0.1:* or, with --transport ucx, "
                 "ucx://127.0.0.1:*)");
  app.add_option("--key-file", o.key_file,
                 "cluster key file (rigel keygen); none: plain, loopback only");
  app.add_flag("--insecure-plain", o.insecure_plain,
               "without a key, listen beyond loopback anyway (no authentication nor encryption)");
  app.add_option("--heartbeat-ms", o.heartbeat_ms, "heartbeat interval")
      ->check(CLI::Range(10, 600000))
      ->capture_default_str();
  app.add_option("--heartbeat-timeout-s", o.heartbeat_timeout_s,
                 "a member silent this long is dead (time this process itself was not "
                 "running does not count)")
      ->check(CLI::Range(0.05, 86400.0))
      ->capture_default_str();
  app.add_flag("--stop-with-parent", stop_with_parent,
               "stop the job (as SIGTERM does) when the process that started this one ends "
               "(scripts/rigel-launch)");
  app.add_option("--register-timeout-s", o.register_timeout_s,
                 "fail when not every member registered within this many seconds")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--address-file", o.address_file, "write the bound address to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!relay_prints.empty()) {
    // The job's last lines still come through when a Ctrl-C reaches the
    // whole process group: the relay ends with its input. A closed output
    // is an error to report (EPIPE), not a silent death.
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    auto printed = rigel::LineFile::Open(relay_prints, rigel::LineFile::Mode::kAppend);
    rigel::Status st = printed.status();
    if (st.ok()) {
      st = rigel::scheduler::RelayPrints(STDIN_FILENO, STDOUT_FILENO, &*printed).status();
    } else {
      st = rigel::IoError("the run directory's printed lines: " + st.message());
    }
    if (st.ok()) return 0;
    std::cerr << "rigel-launch: " << st.message() << "\n";
    return 1;
  }
  if (o.setup_file.empty() && d.program.empty()) {
    std::cerr << "rigel-scheduler: give --setup FILE or --program FILE\n";
    return 2;
  }
  // SIGINT/SIGTERM/SIGHUP end the job from a thread that waits for them (no
  // work in a signal handler).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (stop_with_parent) {
    // The launcher that started us (and would stop us) is gone: SIGTERM.
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent || parent == 1) raise(SIGTERM);
  }
  std::thread([set] {
    int sig = 0;
    sigwait(&set, &sig);
    const char* why = sig == SIGINT   ? "interrupted (SIGINT)"
                      : sig == SIGHUP ? "hung up (SIGHUP)"
                                      : "terminated (SIGTERM)";
    if (rigel::scheduler::StopScheduler(why)) return;
    // No job runs yet (compiling, loading data): die of the signal as before.
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
  }).detach();
  return rigel::scheduler::RunScheduler(std::move(o), std::cerr);
}
