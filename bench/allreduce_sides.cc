// The allreduce bench (bench/allreduce.cc): starting, driving and stopping its sides.
#include "bench/allreduce_sides.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/allreduce_common.h"
#include "collectives/communicator.h"
#include "collectives/store.h"

namespace rigel::bench::allreduce {
namespace {

namespace coll = rigel::collectives;
namespace fs = std::filesystem;

// Process groups to kill and temporary directories to remove if the bench
// dies, so nothing outlives it.
std::vector<pid_t> g_groups;
std::vector<std::string> g_dirs;

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader died: its reply will say so
    done += static_cast<size_t>(n);
  }
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + ::strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Waits for `pid` until `deadline`, then stops its group: SIGTERM (mpirun
// then takes its ranks down), and SIGKILL 2 s later.
int WaitFor(pid_t pid, Clock::time_point deadline) {
  int status = 0;
  bool termed = false;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (Clock::now() >= deadline) {
      if (termed) {
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return status;
      }
      ::kill(-pid, SIGTERM);
      termed = true;
      deadline = Clock::now() + std::chrono::seconds(2);
    }
    ::usleep(10000);
  }
}

std::string MakeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/rigel_allreduce.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp " + tmpl + ": " + std::strerror(errno));
  g_dirs.push_back(tmpl);
  return tmpl;
}

// One of our ranks: joins, then runs the trials it is told to; writes
// "result <bytes> <seconds per allreduce>" per trial.
int RankMain(int rank, int ranks, const std::string& store_dir, const std::vector<Size>& plan,
             int control_fd, int result_fd) {
  coll::FileStore store(store_dir);
  coll::CommunicatorOptions o;
  o.rank = rank;
  o.size = ranks;
  o.prefix = "allreduce";
  o.host = "127.0.0.1";
  o.timeout = std::chrono::seconds(60);
  auto made = coll::Make(coll::Backend::kGloo, &store, o);
  if (!made.ok()) {
    std::fprintf(stderr, "allreduce bench: rank %d could not join: %s\n", rank,
                 made.status().ToString().c_str());
    return 1;
  }
  coll::Communicator& comm = **made;
  FILE* in = ::fdopen(control_fd, "r");
  FILE* out = ::fdopen(result_fd, "w");
  char line[128];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    if (std::strncmp(line, "quit", 4) == 0) return 0;
    size_t index = 0;
    int check = 0;
    if (std::sscanf(line, "run %zu %d", &index, &check) != 2 || index >= plan.size()) {
      std::fprintf(stderr, "allreduce bench: rank %d: bad command %s", rank, line);
      return 2;
    }
    const Size& s = plan[index];
    auto fail = [&](const std::string& what) {
      std::fprintf(stderr, "allreduce bench: rank %d, %s: %s\n", rank, SizeName(s.bytes).c_str(),
                   what.c_str());
      return 1;
    };
    const size_t count = s.bytes / sizeof(float);
    std::vector<float> data(count);
    rigel::Status st;
    if (check) {
      FillInput(data.data(), count, rank);
      st = comm.AllReduce(data.data(), count, coll::ReduceOp::kSum);
      if (!st.ok()) return fail(st.ToString());
      if (std::string wrong = CheckSum(data.data(), count, ranks); !wrong.empty()) {
        return fail("wrong sum: " + wrong);
      }
      std::fill(data.begin(), data.end(), 0.0f);
    }
    for (int i = 0; i < s.warmup && st.ok(); ++i) {
      st = comm.AllReduce(data.data(), count, coll::ReduceOp::kSum);
    }
    if (st.ok()) st = comm.Barrier();
    const auto t0 = Clock::now();
    for (int i = 0; i < s.iters && st.ok(); ++i) {
      st = comm.AllReduce(data.data(), count, coll::ReduceOp::kSum);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) return fail(st.ToString());
    std::fprintf(out, "result %zu %.9e\n", s.bytes, seconds / s.iters);
    std::fflush(out);
  }
  std::fprintf(stderr, "allreduce bench: rank %d: the bench went away\n", rank);
  return 1;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

template <typename T>
std::string JoinField(const std::vector<Size>& plan, T Size::*field) {
  std::vector<std::string> v;
  for (const Size& z : plan) v.push_back(std::to_string(z.*field));
  return Join(v, ",");
}

std::vector<std::string> MpirunArgv(const std::string& mpirun, const std::string& binary, bool tcp,
                                    int ranks, const std::vector<Size>& plan) {
  std::vector<std::string> a = {mpirun,      "-np",  std::to_string(ranks),
                                "--bind-to", "none", "--oversubscribe"};
  if (::geteuid() == 0) a.push_back("--allow-run-as-root");
  a.insert(a.end(), {"--mca", "pml", "ob1", "--mca", "btl"});
  if (tcp) {
    a.insert(a.end(), {"tcp,self", "--mca", "btl_tcp_if_include", "lo"});
  } else {
    a.push_back("vader,self");
  }
  a.insert(a.end(), {binary, "--sizes", JoinField(plan, &Size::bytes), "--iters",
                     JoinField(plan, &Size::iters), "--warmup", JoinField(plan, &Size::warmup)});
  return a;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Gives up on an MPI side: records why, prints mpirun's stderr, kills it.
void FailMpi(Side* side, const std::string& why, int timeout_s) {
  if (side->failed) return;
  const std::string err = ReadFile(side->dir + "/stderr");
  // The reference's own message (a wrong sum, bad arguments), if it wrote one.
  std::string said;
  std::istringstream lines(err);
  for (std::string l; said.empty() && std::getline(lines, l);) {
    if (l.rfind("allreduce_mpi:", 0) == 0) said = l;
  }
  side->failed = true;
  side->note = side->label + " failed: " + why + (said.empty() ? "" : ": " + said);
  std::fprintf(stderr, "allreduce bench: %s\n", side->note.c_str());
  if (!err.empty()) std::fprintf(stderr, "  mpirun's stderr:\n%s\n", err.c_str());
  Stop(side, /*kill=*/true, timeout_s);
}

// Reads mpirun's stdout to the next "allreduce_mpi <kind> ..." line (skipping
// anything else mpirun prints) and returns the rest of it.
std::optional<std::string> NextMpiLine(Side* side, const std::string& kind, int timeout_s) {
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  const std::string head = "allreduce_mpi " + kind;
  while (true) {
    bool timed_out = false;
    auto line = side->out[0].Next(deadline, &timed_out);
    if (!line) {
      if (timed_out) {
        FailMpi(side, "no answer within " + std::to_string(timeout_s) + " s", timeout_s);
      } else {
        int status = WaitFor(side->pids[0], Clock::now() + std::chrono::seconds(5));
        side->pids.clear();
        FailMpi(side, "mpirun ended (" + DescribeExit(status) + ")", timeout_s);
      }
      return std::nullopt;
    }
    if (line->rfind(head + " ", 0) == 0) return line->substr(head.size() + 1);
  }
}

}  // namespace

std::string SizeName(size_t b) {
  return b % kMiB == 0 ? std::to_string(b / kMiB) + "MiB" : std::to_string(b / kKiB) + "KiB";
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "allreduce bench: %s\n", what.c_str());
  for (pid_t g : g_groups) WaitFor(g, Clock::now());
  std::error_code ec;
  for (const std::string& d : g_dirs) fs::remove_all(d, ec);
  std::exit(1);
}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> LineReader::Next(Clock::time_point deadline, bool* timed_out) {
  *timed_out = false;
  while (true) {
    size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return line;
    }
    if (fd_ < 0) return std::nullopt;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      *timed_out = true;
      return std::nullopt;
    }
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n <= 0) continue;
    char chunk[4096];
    ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got > 0) {
      buf_.append(chunk, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      ::close(fd_);
      fd_ = -1;
    }
  }
}

void Stop(Side* side, bool kill, int timeout_s) {
  if (!side->running) return;
  side->running = false;
  for (int fd : side->control) {
    if (!kill) WriteAll(fd, "quit\n");
    ::close(fd);
  }
  side->control.clear();
  const auto deadline = Clock::now() + std::chrono::seconds(kill ? 0 : timeout_s);
  for (pid_t pid : side->pids) {
    int status = WaitFor(pid, deadline);
    if (!kill && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      side->failed = true;
      if (side->note.empty()) {
        side->note = side->label + " did not exit cleanly: " + DescribeExit(status);
      }
    }
    g_groups.erase(std::remove(g_groups.begin(), g_groups.end(), pid), g_groups.end());
  }
  side->pids.clear();
  side->out.clear();
  std::error_code ec;
  fs::remove_all(side->dir, ec);
}

void StartOurs(const Options& opt, const std::vector<Size>& plan, Side* side) {
  side->dir = MakeTempDir();
  const std::string store_dir = side->dir + "/store";
  std::vector<int> parent_fds;  // to close in later children
  for (int r = 0; r < opt.ranks; ++r) {
    int ctl[2], res[2];
    if (::pipe2(ctl, O_CLOEXEC) != 0 || ::pipe2(res, O_CLOEXEC) != 0) Die("pipe");
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) Die("fork");
    if (pid == 0) {
      ::setpgid(0, 0);
      for (int fd : parent_fds) ::close(fd);
      ::close(ctl[1]);
      ::close(res[0]);
      int rc = RankMain(r, opt.ranks, store_dir, plan, ctl[0], res[1]);
      std::fflush(nullptr);
      ::_exit(rc);
    }
    ::setpgid(pid, pid);
    g_groups.push_back(pid);
    ::close(ctl[0]);
    ::close(res[1]);
    side->pids.push_back(pid);
    side->control.push_back(ctl[1]);
    side->out.emplace_back(res[0]);
    parent_fds.push_back(ctl[1]);
    parent_fds.push_back(res[0]);
  }
  side->secs.assign(plan.size(), {});
  side->running = true;
}

void StartMpi(const Options& opt, const std::string& mpirun, const std::string& binary,
              const std::vector<Size>& plan, bool tcp, Side* side) {
  side->dir = MakeTempDir();
  const std::string control = side->dir + "/control";
  for (int r = 0; r < opt.ranks; ++r) {
    const std::string fifo = control + "." + std::to_string(r);
    if (::mkfifo(fifo.c_str(), 0600) != 0) Die("mkfifo " + fifo + ": " + std::strerror(errno));
    // O_RDWR: does not wait for the reader, and keeps the FIFO open.
    int fd = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) Die("open " + fifo + ": " + std::strerror(errno));
    side->control.push_back(fd);
  }
  std::vector<std::string> argv = MpirunArgv(mpirun, binary, tcp, opt.ranks, plan);
  argv.insert(argv.end(), {"--control", control});
  argv.insert(argv.end(), side->extra_args.begin(), side->extra_args.end());
  std::fprintf(stderr, "  %s: %s\n", side->label.c_str(), Join(argv, " ").c_str());
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) Die("pipe");
  const std::string err_path = side->dir + "/stderr";
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    int null = ::open("/dev/null", O_RDONLY);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  g_groups.push_back(pid);
  ::close(out[1]);
  side->pids.push_back(pid);
  side->out.emplace_back(out[0]);
  side->secs.assign(plan.size(), {});
  side->running = true;

  auto library = NextMpiLine(side, "library", opt.timeout_s);
  if (!library) return;
  // "Open MPI v4.1.4, package: ..." -> "OpenMPI 4.1.4"
  std::string name = library->substr(0, library->find(','));
  if (name.rfind("Open MPI v", 0) == 0) name = "OpenMPI " + name.substr(10);
  side->reference_name =
      name + " MPI_Allreduce, " + (tcp ? "TCP loopback" : "shared memory (vader)");
  auto ranks = NextMpiLine(side, "ranks", opt.timeout_s);
  if (!ranks) return;
  if (std::atoi(ranks->c_str()) != opt.ranks) {
    FailMpi(side, "allreduce_mpi runs on " + *ranks + " ranks", opt.timeout_s);
  }
}

void Trial(const Options& opt, const std::vector<Size>& plan, size_t index, bool check,
           Side* side) {
  if (!side->running) return;
  const std::string cmd = "run " + std::to_string(index) + " " + (check ? "1" : "0") + "\n";
  for (int fd : side->control) WriteAll(fd, cmd);
  const Size& z = plan[index];
  if (side->mpi) {
    auto rest = NextMpiLine(side, "result", opt.timeout_s);
    if (!rest) return;
    size_t bytes = 0;
    int iters = 0;
    double s = 0;
    std::istringstream(*rest) >> bytes >> iters >> s;
    if (bytes != z.bytes || iters != z.iters || !(s > 0)) {
      FailMpi(side, "unexpected result line: " + *rest, opt.timeout_s);
      return;
    }
    side->secs[index].push_back(s);
    return;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(opt.timeout_s);
  double slowest = 0;
  for (size_t r = 0; r < side->out.size(); ++r) {
    bool timed_out = false;
    auto line = side->out[r].Next(deadline, &timed_out);
    size_t bytes = 0;
    double s = 0;
    std::string tag;
    if (line) std::istringstream(*line) >> tag >> bytes >> s;
    if (!line || tag != "result" || bytes != z.bytes || !(s > 0)) {
      Die("ours failed: rank " + std::to_string(r) + " " +
          (timed_out ? "gave no result within " + std::to_string(opt.timeout_s) + " s"
           : line    ? "wrote: " + *line
                     : "died (its message is above)"));
    }
    slowest = std::max(slowest, s);
  }
  side->secs[index].push_back(slowest);
}

}  // namespace rigel::bench::allreduce
