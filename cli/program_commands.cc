// `rigel check`, `rigel dump-ir` and `rigel run`: the commands that take a
// program file. Errors go to stderr exactly as the frontend renders them.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "cluster/defaults.h"
#include "cluster/job_options.h"
#include "collectives/devices.h"
#include "common/cpu_time.h"
#include "common/memory.h"
#include "exec/epoch_log.h"
#include "exec/executor.h"
#include "exec/init_params.h"
#include "exec/output_check.h"
#include "exec/param_file.h"
#include "exec/vectors_file.h"
#include "frontend/compile.h"
#include "kernel/kernel.h"
#include "kernel/passes/pipeline.h"
#include "transport/endpoint.h"

extern char** environ;

namespace rigel::cli {
namespace {

// A serial run's per-epoch JSON lines (--log-json): the figures the
// distributed driver logs, for one process that moves no bytes.
class SerialEpochs {
 public:
  // OK and no log for an empty path.
  Status Open(const std::string& path) { return path.empty() ? Status::Ok() : log_.Open(path); }
  // Call when the driver starts running (after the data are loaded).
  void Start() {
    start_ = epoch_start_ = Clock::now();
    cpu_s_ = ProcessCpuSeconds();
  }
  // Its error (the log cannot be written) stops the run.
  Status Write(exec::SerialExecutor& ex, int64_t i, int64_t lo, int64_t hi) {
    auto now = Clock::now();
    exec::EpochFigures f;
    f.epoch = i;
    f.done = i - lo + 1;
    f.epochs = hi - lo;
    f.elapsed_s = std::chrono::duration<double>(now - start_).count();
    f.epoch_s = std::chrono::duration<double>(now - epoch_start_).count();
    f.updates = static_cast<double>(ex.elements_run() - elements_);
    f.compute_s = ex.loop_seconds() - loop_s_;
    const double cpu = ProcessCpuSeconds();
    f.cpu_s = cpu - cpu_s_;
    f.workers = 1;
    f.servers = 0;
    f.peak_bytes["process"] = PeakResidentBytes();
    f.printed = ex.TakePrinted();
    for (int l = 0; l < ex.loops(); ++l) {
      const kernel::TierReport t = ex.kernel(l).tier();
      f.tiers[l] = {kernel::TierName(t), t.compile_ms, t.interpreted_ms};
    }
    epoch_start_ = now;
    elements_ = ex.elements_run();
    loop_s_ = ex.loop_seconds();
    cpu_s_ = cpu;
    return log_.Write(f);
  }

 private:
  using Clock = std::chrono::steady_clock;
  exec::EpochLog log_;
  Clock::time_point start_ = Clock::now(), epoch_start_ = start_;
  int64_t elements_ = 0;
  double loop_s_ = 0, cpu_s_ = 0;
};

// Flag values of one subcommand. Shared by the parser (which fills them) and
// the callback (which owns a reference), so they live as long as the App.
struct ProgramArgs {
  std::string path;
  std::vector<std::string> sets;
  bool bytecode = false;
  // `rigel dump-ir`: the loop compiler's passes to print after and to skip,
  // their statistics, verification.
  std::vector<std::string> print_after, disable;
  bool stats = false;
  bool verify = false;
  bool jit_ir = false;  // dump-ir --jit
  std::string jit;      // run --jit: auto, on, off (empty: $RIGEL_JIT, else auto)
  uint64_t seed = 0;
  bool verbose = false;
  // Distributed runs (`rigel run --workers M`).
  int workers = 0;
  int servers = 0;  // 0: cluster::DefaultServers(workers)
  std::string plan;
  cluster::JobOptions job;
  std::vector<CLI::Option*> job_flags;  // the job options' flags, to tell which were given
  std::string log_json, save_params, init_params, run_dir, key_file, transport;
  std::vector<std::string> save_vectors;  // PARAM=FILE
  std::string hostfile;                   // start the ranks over ssh (scripts/rigel-ssh)
  bool insecure_plain = false;
  // Checkpoints and recovery (docs/operations.md).
  std::string checkpoint_dir, checkpoint_every, resume;
  int max_restarts = -1;           // -1: the launcher's default
  double heartbeat_timeout_s = 0;  // 0: the launcher's default
  int64_t stop_after_epochs = 0;   // 0: run the whole program
};

// The script `name` next to this binary (build tree: bin/../../scripts) or in
// the source tree it was built from.
std::string FindLauncher(const std::string& name, std::string* bin_dir) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  std::string dir = exe.substr(0, exe.find_last_of('/'));
  *bin_dir = dir;
  for (const std::string& c : {dir + "/" + name, dir + "/../../scripts/" + name,
                               std::string(RIGEL_SOURCE_DIR) + "/scripts/" + name}) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

// The signal `rigel run` got while its launcher ran (0: none yet).
volatile sig_atomic_t g_signal = 0;
pid_t g_launcher = 0;

// Passes SIGTERM, SIGINT and SIGHUP on to the launcher, which stops every
// process of the job; `rigel run` then exits as the launcher did. (A
// handler, not a signal thread: kill() is async-signal-safe and the main
// thread only waits.)
void ForwardSignal(int sig) {
  g_signal = sig;
  if (g_launcher > 0) kill(g_launcher, sig);
}

// Starts the launcher and waits for it; returns its exit status (128 + N
// when it died of signal N). The launcher gets SIGTERM when this process
// dies in any way (even SIGKILL, through PR_SET_PDEATHSIG), so no job
// outlives the command that started it.
int SpawnAndWait(const std::vector<char*>& argv, const std::string& launcher) {
  struct sigaction sa = {};
  sa.sa_handler = ForwardSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "rigel: cannot start " << launcher << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The parent may have died before prctl: then nobody would signal us.
    if (getppid() != parent) _exit(143);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &dfl, nullptr);
    execve(argv[0], argv.data(), environ);
    _exit(127);
  }
  g_launcher = pid;
  // A signal that came between fork() and the store above.
  if (g_signal != 0) kill(pid, g_signal);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_launcher = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    std::cerr << "rigel: cannot start " << launcher << "\n";
    return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// --device cuda: NCCL takes a device of its own for each worker, so a local
// job with more workers than this host has devices is refused here, before
// any process starts, rather than by every worker inside NCCL ("Duplicate
// GPU detected"). With --hostfile the hosts are counted where they are, by
// scripts/rigel-ssh; a build without CUDA is refused either way (every host
// runs the same install). Prints the reason and returns the exit status (1:
// no CUDA at all, 2: the command line asks for more than the host has), or
// 0 to go on.
int CheckCudaWorkers(const ProgramArgs& a) {
  if (a.job.device != "cuda") return 0;
  StatusOr<collectives::CudaDevices> devices = collectives::CountCudaDevices();
  if (!devices.ok()) {
    std::cerr << "rigel run: --device cuda: " << devices.status().message() << "\n";
    return 1;
  }
  if (!a.hostfile.empty()) return 0;
  if (Status fit = collectives::CheckCudaPlacement("localhost", a.workers, *devices); !fit.ok()) {
    std::cerr << "rigel run: " << fit.message() << ": use "
              << (devices->count > 0 ? "--workers " + std::to_string(devices->count) + " or " : "")
              << "--device cpu\n";
    return 2;
  }
  return 0;
}

// Runs the program on a local cluster through scripts/rigel-launch, or with
// --hostfile on remote hosts through scripts/rigel-ssh; returns its exit
// status.
int RunDistributed(const ProgramArgs& a) {
  std::string bin_dir;
  const bool ssh = !a.hostfile.empty();
  const std::string script = ssh ? "rigel-ssh" : "rigel-launch";
  std::string launcher = FindLauncher(script, &bin_dir);
  if (launcher.empty()) {
    std::cerr << "rigel: cannot find scripts/" << script << " next to this binary or in "
              << RIGEL_SOURCE_DIR << "\n";
    return 1;
  }
  std::vector<std::string> args = {
      launcher,
      "--bin-dir",
      bin_dir,
      "--program",
      a.path,
      "--servers",
      std::to_string(a.servers > 0 ? a.servers : cluster::DefaultServers(a.workers)),
      "--workers",
      std::to_string(a.workers)};
  if (ssh) args.insert(args.end(), {"--hostfile", a.hostfile});
  if (!a.run_dir.empty()) args.insert(args.end(), {"--run-dir", a.run_dir});
  if (!a.key_file.empty()) args.insert(args.end(), {"--key-file", a.key_file});
  // rigel-launch's own flag; rigel-ssh gives it to every rigel-node (below).
  if (!ssh && !a.transport.empty()) args.insert(args.end(), {"--transport", a.transport});
  // rigel-launch passes each scheduler flag on by --scheduler-arg; rigel-ssh
  // gives everything after `--` to every rigel-node.
  if (ssh) args.push_back("--");
  auto pass = [&args, ssh](const std::string& flag, const std::string& value) {
    if (ssh) {
      args.insert(args.end(), {flag, value});
    } else {
      args.insert(args.end(), {"--scheduler-arg", flag, "--scheduler-arg", value});
    }
  };
  for (const std::string& s : a.sets) pass("--set", s);
  pass("--seed", std::to_string(a.seed));
  if (!a.jit.empty()) pass("--jit", a.jit);
  std::vector<std::string> job = cluster::JobOptionArgs(a.job);
  for (size_t i = 0; i + 1 < job.size(); i += 2) pass(job[i], job[i + 1]);
  if (ssh && a.insecure_plain) args.push_back("--insecure-plain");
  if (ssh && !a.transport.empty()) args.insert(args.end(), {"--transport", a.transport});
  if (!a.plan.empty()) pass("--plan", a.plan);
  if (!a.log_json.empty()) pass("--log-json", a.log_json);
  if (!a.save_params.empty()) pass("--save-params", a.save_params);
  // The scheduler may start elsewhere (a host file's first host).
  if (!a.init_params.empty()) {
    pass("--init-params", std::filesystem::absolute(a.init_params).lexically_normal().string());
  }
  for (const std::string& v : a.save_vectors) pass("--save-vectors", v);
  if (!a.checkpoint_every.empty()) pass("--checkpoint-every", a.checkpoint_every);
  if (a.stop_after_epochs > 0) pass("--stop-after-epochs", std::to_string(a.stop_after_epochs));
  // The launchers restart a job whose process died from its newest
  // checkpoint, so they own --checkpoint-dir, --resume and --max-restarts.
  auto own = [&](const std::string& flag, const std::string& value) {
    args.insert(args.begin() + 1, {flag, value});
  };
  if (!a.checkpoint_dir.empty()) own("--checkpoint-dir", a.checkpoint_dir);
  if (!a.resume.empty()) own("--resume", a.resume);
  if (a.max_restarts >= 0) own("--max-restarts", std::to_string(a.max_restarts));
  if (a.heartbeat_timeout_s > 0) {
    // rigel-launch gives it to every process; rigel-ssh to every rigel-node.
    const std::string s = std::to_string(a.heartbeat_timeout_s);
    if (ssh) {
      args.insert(args.end(), {"--heartbeat-timeout-s", s});
    } else {
      own("--heartbeat-timeout-s", s);
    }
  }
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  return SpawnAndWait(argv, launcher);
}

// "  PASS: COUNTER N, COUNTER N" per pass of each loop, "no change" for a
// pass that changed nothing, "disabled" for one that did not run.
void PrintStats(const std::vector<std::pair<int, std::vector<kernel::passes::PassReport>>>& loops) {
  for (const auto& [loop, reports] : loops) {
    std::cout << "stats loop " << loop << "\n";
    for (const kernel::passes::PassReport& r : reports) {
      std::string line;
      for (const auto& [name, value] : r.stats.counters()) {
        line += (line.empty() ? "" : ", ") + name + " " + std::to_string(value);
      }
      if (!r.ran) line = "disabled";
      if (line.empty()) line = "no change";
      std::cout << "  " << r.pass << ": " << line << "\n";
    }
  }
}

// `rigel dump-ir`: the IR; with any compiler flag, the data are loaded and
// every loop is compiled with them.
void DumpIr(const ProgramArgs& a, int* exit_code) {
  for (const auto& [names, allow_all] :
       {std::make_pair(&a.disable, false), std::make_pair(&a.print_after, true)}) {
    Status st = kernel::passes::CheckPassNames(*names, allow_all);
    if (!st.ok()) {
      std::cerr << "rigel: " << st.message() << "\n";
      *exit_code = 2;  // a usage error, like any bad flag value
      return;
    }
  }
  auto prog = CompileProgram(a.path, a.sets, exit_code);
  if (!prog) return;
  std::cout << ir::Print(*prog);
  if (!a.bytecode && !a.stats && !a.verify && !a.jit_ir && a.print_after.empty() &&
      a.disable.empty()) {
    return;
  }
  exec::ExecutorOptions opts;
  opts.compile.disable = a.disable;
  opts.compile.print_after = a.print_after;
  if (a.verify) opts.compile.verify = true;
  opts.compile.print = [](const std::string& pass, const std::string& text) {
    std::cout << "=== after " << pass << " ===\n" << text;
  };
  std::vector<std::pair<int, std::vector<kernel::passes::PassReport>>> stats;
  if (a.stats) {
    opts.compile.stats = [&stats](int loop, const std::vector<kernel::passes::PassReport>& r) {
      stats.emplace_back(loop, r);
    };
  }
  auto ex = exec::SerialExecutor::Create(*prog, opts);
  if (!ex.ok()) {
    const Status& st = ex.status();
    std::cerr << (st.code() == StatusCode::kInternal ? "rigel: internal error: " : "")
              << st.message();
    if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
    *exit_code = 1;
    return;
  }
  for (size_t l = 0; a.bytecode && l < prog->loops.size(); ++l) {
    std::cout << "bytecode loop " << l << "\n" << (*ex)->kernel(static_cast<int>(l)).Disassemble();
  }
  for (size_t l = 0; a.jit_ir && l < prog->loops.size(); ++l) {
    auto ir = (*ex)->kernel(static_cast<int>(l)).JitIr();
    if (!ir.ok()) {
      std::cerr << "rigel: loop " << l << " has no compiled form: " << ir.status().message()
                << "\n";
      *exit_code = 1;
      return;
    }
    std::cout << "llvm ir loop " << l << "\n" << *ir;
  }
  if (a.stats) PrintStats(stats);
}

void AddProgramArgs(CLI::App* cmd, ProgramArgs* args) {
  cmd->add_option("program", args->path, "the .rgl program")->required();
  cmd->add_option("--set", args->sets,
                  "override a const (NAME=VALUE) or a data path (DATA.path=FILE); repeatable")
      ->take_all();
}

}  // namespace

std::unique_ptr<ir::Program> CompileProgram(const std::string& path,
                                            const std::vector<std::string>& sets, int* exit_code) {
  frontend::CompileOptions opts;
  for (const std::string& s : sets) {
    auto kv = frontend::ParseSetFlag(s);
    if (!kv.ok()) {
      std::cerr << "rigel: " << kv.status().message() << "\n";
      *exit_code = 2;  // a malformed flag is a usage error
      return nullptr;
    }
    opts.sets.push_back(*kv);
  }
  auto prog = frontend::CompileFile(path, opts);
  if (!prog.ok()) {
    *exit_code = 1;
    const Status& st = prog.status();
    // Diagnostics already carry "FILE:LINE:COL: error:"; file errors do not.
    std::cerr << (st.code() == StatusCode::kInvalidArgument ? "" : "rigel: ") << st.message();
    if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
    return nullptr;
  }
  return std::make_unique<ir::Program>(std::move(prog).value());
}

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand("check", "parse and check a program; nothing runs");
  AddProgramArgs(cmd, args.get());
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    std::cout << args->path << ": ok (" << prog->loops.size() << " parallel loop"
              << (prog->loops.size() == 1 ? "" : "s") << ", " << prog->params.size() << " parameter"
              << (prog->params.size() == 1 ? "" : "s") << ")\n";
  });
}

void AddDumpIrCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand("dump-ir", "print a program's loop IR");
  AddProgramArgs(cmd, args.get());
  cmd->add_flag("--bytecode", args->bytecode,
                "also load the data and print each loop's compiled bytecode");
  cmd->add_option("--print-after", args->print_after,
                  "also print each loop's IR or bytecode after this pass of the loop compiler "
                  "(repeatable; all: after every pass)")
      ->expected(1)
      ->take_all();
  cmd->add_option("--disable", args->disable, "skip this pass of the loop compiler (repeatable)")
      ->expected(1)
      ->take_all();
  cmd->add_flag("--stats", args->stats, "also print what each pass did to each loop");
  cmd->add_flag("--jit", args->jit_ir,
                "also load the data and print each loop's body as the JIT compiles it (optimised "
                "LLVM IR for this machine's CPU; docs/architecture.md, Tiers)");
  cmd->add_flag("--verify", args->verify,
                "check the IR and the bytecode after every pass (always on in debug builds)");
  cmd->callback([args, exit_code] { DumpIr(*args, exit_code); });
}

// `rigel run`'s flags, into `*args` (which outlives `cmd`).
void AddRunFlags(CLI::App* cmd, ProgramArgs* args) {
  AddProgramArgs(cmd, args);
  cmd->add_option("--seed", args->seed, "seed of rand(), randint() and negative()")->default_val(0);
  cmd->add_flag("-v,--verbose", args->verbose,
                "report data loading, per-loop timing and each loop's tier on stderr");
  cmd->add_option("--jit", args->jit,
                  "which tier runs loop bodies: auto (compile a body to native code once it has "
                  "run as long as compiling takes), on (compile every body first) or off (the "
                  "interpreter); default $RIGEL_JIT, else auto. Both tiers give the same results "
                  "(docs/architecture.md, Tiers)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--save-params", args->save_params,
                  "write the trained parameters to this file (NumPy .npz)");
  cmd->add_option("--init-params", args->init_params,
                  "start the parameters this file names (NumPy .npz, as --save-params writes "
                  "it) from its values instead of their initialisers: a warm start, or an "
                  "evaluation of a trained model");
  cmd->add_option("--save-vectors", args->save_vectors,
                  "PARAM=FILE: write a 2-D parameter in word2vec's text format, one line per "
                  "row named by its word (CORPUS.vocab rows) or else its id; repeatable")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--workers", args->workers,
                  "run on a local cluster with this many workers (scripts/rigel-launch)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--servers", args->servers,
                  "parameter servers of the cluster (default: 1 for one worker, 2 from two on, "
                  "as `rigel explain` assumes)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--plan", args->plan, "run this plan (from `rigel plan`, maybe edited)");
  args->job_flags = cluster::AddJobOptionFlags(cmd, &args->job);
  cmd->add_option("--log-json", args->log_json,
                  "per-epoch metrics as JSON lines (serial and distributed runs)");
  cmd->add_option("--stop-after-epochs", args->stop_after_epochs,
                  "stop after N iterations of the top-level `for` (epochs), as if the program "
                  "ended there (a trial run; serial and distributed)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--run-dir", args->run_dir, "where the cluster's logs go (default runs/...)");
  cmd->add_option("--key-file", args->key_file, "cluster key (rigel keygen) for non-loopback use");
  cmd->add_option("--transport", args->transport,
                  "how the processes talk: zmq (ZeroMQ, default) or ucx (UCX: shared memory, "
                  "RDMA, TCP; docs/transport.md)")
      ->check([](const std::string& name) {
        const Status st = transport::CheckBackendName(name);
        return st.ok() ? std::string() : std::string(st.message());
      });
  cmd->add_option("--hostfile", args->hostfile,
                  "start the ranks on these hosts over ssh (HOST slots=N per line; "
                  "scripts/rigel-ssh, docs/launching.md)");
  cmd->add_option("--checkpoint-dir", args->checkpoint_dir,
                  "write checkpoints to this directory (docs/operations.md)");
  cmd->add_option("--checkpoint-every", args->checkpoint_every,
                  "N: a checkpoint every N iterations of the top-level loop; Ns: at the first "
                  "iteration end N seconds after the last (default 1)");
  cmd->add_option("--resume", args->resume,
                  "go on from the newest checkpoint in this directory (or this manifest)");
  cmd->add_option("--max-restarts", args->max_restarts,
                  "restart a job whose process died from its newest checkpoint at most this "
                  "many times (default 3 with --checkpoint-dir or --resume, else 0)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--heartbeat-timeout-s", args->heartbeat_timeout_s,
                  "a process of the job silent this long is gone (default 10; time a process "
                  "itself was not running does not count)")
      ->check(CLI::Range(0.05, 86400.0));
  cmd->add_flag("--insecure-plain", args->insecure_plain,
                "with --hostfile and no --key-file: plain mode across hosts (no authentication "
                "nor encryption)");
}

// A serial run in this process: the exit status (1 with the error said).
int RunSerial(const ir::Program& prog, const ProgramArgs& args,
              const std::vector<exec::VectorsRequest>& vectors) {
  exec::ExecutorOptions opts;
  opts.seed = args.seed;
  if (!args.jit.empty()) opts.compile.jit = *kernel::ParseJitMode(args.jit);
  opts.memory_limit = args.job.memory_limit;
  opts.log = args.verbose ? &std::cerr : nullptr;
  opts.warnings = &std::cerr;
  // Progress lines rewrite themselves with '\r': only on a terminal.
  if (isatty(STDERR_FILENO)) opts.progress = &std::cerr;
  SerialEpochs epochs;
  exec::SerialExecutor* running = nullptr;
  if (!args.log_json.empty()) {
    opts.on_epoch = [&](int64_t i, int64_t lo, int64_t hi) {
      return epochs.Write(*running, i, lo, hi);
    };
  }
  int64_t epochs_done = 0;
  bool stopped = false;
  if (args.stop_after_epochs > 0) {
    opts.at_checkpoint_point = [&]() -> Status {
      if (++epochs_done < args.stop_after_epochs) return Status::Ok();
      stopped = true;
      return FailedPrecondition("stopped after the asked epochs");
    };
  }
  // An unwritable log or model file fails the run before the data are
  // loaded, so that no training is lost.
  Status st = epochs.Open(args.log_json);
  if (st.ok() && !args.save_params.empty()) {
    st = exec::CheckOutputFile("--save-params", args.save_params);
  }
  for (const exec::VectorsRequest& r : vectors) {
    if (st.ok()) st = exec::CheckOutputFile("--save-vectors", r.path);
  }
  using Executor = StatusOr<std::unique_ptr<exec::SerialExecutor>>;
  Executor ex = st.ok() ? exec::SerialExecutor::Create(prog, opts) : Executor(st);
  if (ex.ok()) running = ex->get();
  epochs.Start();
  st = ex.ok() ? (*ex)->Run() : ex.status();
  if (!st.ok() && stopped) st = Status::Ok();
  if (st.ok() && (!args.save_params.empty() || !vectors.empty())) {
    std::vector<exec::SavedParam> out;
    for (size_t p = 0; p < prog.params.size(); ++p) {
      const auto& b = (*ex)->bindings()[p];
      const ir::ParamDecl& decl = prog.params[p];
      out.push_back({decl.name, b.rows, b.width, (*ex)->param(static_cast<int>(p)), decl.is_int,
                     decl.width > 0});
    }
    for (const exec::VectorsRequest& r : vectors) {
      const data::Dataset* words = r.data >= 0 ? &(*ex)->data(r.data) : nullptr;
      if (st.ok()) {
        st = exec::SaveFailed("--save-vectors", exec::WriteVectors(r.path, words, out[r.param]));
      }
    }
    if (st.ok() && !args.save_params.empty()) {
      st = exec::SaveFailed("--save-params", exec::WriteParams(args.save_params, out));
    }
  }
  if (!st.ok()) {
    std::cerr << st.message();
    if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
    return 1;
  }
  return 0;
}

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "run a program: serially in this process, or with --workers on a local cluster");
  AddRunFlags(cmd, args.get());
  cmd->callback([args, exit_code, cmd] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    // A bad --save-vectors fails before anything runs, not after training.
    auto vectors = exec::ParseSaveVectors(*prog, args->save_vectors);
    if (!vectors.ok()) {
      std::cerr << "rigel: " << vectors.status().message() << "\n";
      *exit_code = 2;
      return;
    }
    const bool distributed = args->workers > 0;
    std::vector<std::string> only = {
        "--servers",          "--plan",     "--run-dir",        "--key-file",
        "--transport",        "--hostfile", "--insecure-plain", "--checkpoint-dir",
        "--checkpoint-every", "--resume",   "--max-restarts",   "--heartbeat-timeout-s"};
    // --memory-limit bounds a serial run's one process too (ExecutorOptions).
    for (const CLI::Option* o : args->job_flags) {
      if (o->get_name() != "--memory-limit") only.push_back(o->get_name());
    }
    for (const std::string& flag : only) {
      if (!distributed && cmd->count(flag) > 0) {
        std::cerr << "rigel: " << flag << " needs --workers (a distributed run)\n";
        *exit_code = 2;
        return;
      }
    }
    if (distributed) {
      if (int rc = CheckCudaWorkers(*args); rc != 0) {
        *exit_code = rc;
        return;
      }
      // A relaxed recurrence is the program's choice but rarely what was
      // meant: warn before the cluster starts.
      analysis::PlanOptions po;
      po.workers = args->workers;
      if (auto plan = analysis::MakePlan(*prog, po); plan.ok()) {
        for (const analysis::LoopPlan& lp : plan->loops) {
          for (const std::string& w : analysis::RelaxWarnings(*prog, lp)) {
            std::cerr << prog->path << ":" << lp.loc.line << ": warning: " << w << "\n";
          }
        }
      }
      *exit_code = RunDistributed(*args);
      return;
    }
    if (!args->init_params.empty()) {
      auto taken = exec::UseInitParams(args->init_params, prog.get());
      if (!taken.ok()) {
        std::cerr << "rigel: " << taken.status().message() << "\n";
        *exit_code = 1;
        return;
      }
      if (args->verbose) {
        std::string names;
        for (const std::string& n : *taken) names += (names.empty() ? "" : ", ") + n;
        std::cerr << "parameters from " << args->init_params << ": "
                  << (names.empty() ? "none" : names) << "\n";
      }
    }
    *exit_code = RunSerial(*prog, *args, *vectors);
  });
}

}  // namespace rigel::cli
