// bench/allreduce: Rigel's AllReduce (the Gloo backend through
// collectives::Communicator, ring algorithm, TCP on 127.0.0.1) against
// OpenMPI's MPI_Allreduce for the same sizes and ranks, in the same run, over
// TCP loopback and over shared memory.
//
// Three sides, each a set of N rank processes (default 2) started once and
// kept for the whole run:
//  - ours: processes forked from the bench, joined through a FileStore in a
//    fresh temporary directory;
//  - MPI over TCP: `mpirun -np N --bind-to none --oversubscribe --mca pml ob1
//    --mca btl tcp,self --mca btl_tcp_if_include lo allreduce_mpi ...`;
//  - MPI over shared memory: the same with `--mca btl vader,self`.
//  (`pml ob1`: else OpenMPI's UCX pml, when present, ignores the btl choice.
//  allreduce_mpi is built next to this binary when CMake finds MPI.)
// The bench sends every rank its commands through a pipe or FIFO, so an idle
// side blocks in read() instead of spinning. A trial of one size on one side:
// in the first trial of a size every rank reduces known inputs once and checks
// every element (a wrong sum fails the bench); then every rank zeroes the
// buffer, runs `warmup` untimed allreduces (float sums, in place), a barrier,
// then `iters` timed ones; the time per allreduce is the slowest rank's time
// / iters.
// Trials run size by size, the three sides back to back in a rotating order,
// T times (5; --quick: 2), so drift in machine load hits the sides alike.
//
// Figures, per size: ours and the reference are the medians over trials of
// algbw = bytes / time and busbw = algbw * 2(N-1)/N (nccl-tests; GB = 10^9
// bytes); ratio is the median of the per-trial ratios ours / reference.
// One JSON object per figure on stdout (DESIGN.md convention): against MPI
// over TCP, case "Nranks/SIZE/algbw" and ".../busbw" (goal 0.9 from 1 MiB on,
// null below), against MPI over shared memory ".../algbw/shm" and
// ".../busbw/shm" (goal null). Without mpirun or the reference binary the
// figures carry "reference": null and a "note" saying why. A table and
// progress go to stderr.
// Exit status: 0; 1 when a side failed or a sum was wrong; 2 on bad usage.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/allreduce_common.h"
#include "collectives/communicator.h"
#include "collectives/store.h"

#ifndef RIGEL_ALLREDUCE_HAVE_MPI
#define RIGEL_ALLREDUCE_HAVE_MPI 0
#endif

namespace {

namespace coll = rigel::collectives;
namespace fs = std::filesystem;
using rigel::bench::allreduce::CheckSum;
using rigel::bench::allreduce::FillInput;
using Clock = std::chrono::steady_clock;

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr double kGoal = 0.9;           // ours / MPI over TCP, from kGoalFrom on
constexpr size_t kGoalFrom = 1 * kMiB;  // the issue: "at >= 1 MiB"

struct Size {
  size_t bytes;
  int iters;  // per trial
  int warmup;
};

// Per trial: 32 MiB of payload, at least 10 and at most 200 allreduces (200
// at <= 64 KiB, 128 at 256 KiB, 32 at 1 MiB, 10 from 4 MiB on); warm-up: a
// tenth, at least 2. --quick: three sizes, a tenth of that (at least 3).
std::vector<Size> Plan(bool quick) {
  std::vector<size_t> bytes;
  if (quick) {
    bytes = {4 * kKiB, 1 * kMiB, 16 * kMiB};
  } else {
    for (size_t b = 4 * kKiB; b <= 64 * kMiB; b *= 4) bytes.push_back(b);
  }
  std::vector<Size> plan;
  for (size_t b : bytes) {
    int iters = static_cast<int>(std::clamp<size_t>(32 * kMiB / b, 10, 200));
    int warmup = std::max(2, iters / 10);
    if (quick) {
      iters = std::max(3, iters / 10);
      warmup = 1;
    }
    plan.push_back({b, iters, warmup});
  }
  return plan;
}

std::string SizeName(size_t b) {
  return b % kMiB == 0 ? std::to_string(b / kMiB) + "MiB" : std::to_string(b / kKiB) + "KiB";
}

struct Options {
  bool quick = false;
  int trials = 5;
  int ranks = 2;
  std::string mpirun;   // "" = search PATH
  std::string mpi_ref;  // "" = allreduce_mpi next to this binary
  int timeout_s = 120;  // per trial, and for a side to start
};

// Process groups to kill and temporary directories to remove if the bench
// dies, so nothing outlives it.
std::vector<pid_t> g_groups;
std::vector<std::string> g_dirs;

int WaitFor(pid_t pid, Clock::time_point deadline);

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "allreduce bench: %s\n", what.c_str());
  for (pid_t g : g_groups) WaitFor(g, Clock::now());
  std::error_code ec;
  for (const std::string& d : g_dirs) fs::remove_all(d, ec);
  std::exit(1);
}

// ---------------------------------------------------------------------------
// Lines from a child's pipe, with a deadline.

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  LineReader(LineReader&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }
  ~LineReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  // The next line (without '\n'); nullopt at EOF or past `deadline`
  // (*timed_out says which).
  std::optional<std::string> Next(Clock::time_point deadline, bool* timed_out) {
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

 private:
  int fd_;
  std::string buf_;
};

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

// ---------------------------------------------------------------------------
// A side: N rank processes that take "run <index> <check>" and "quit".

struct Side {
  std::string label;           // "ours (gloo)", "MPI tcp", "MPI shm"
  std::string reference_name;  // for the figures (MPI sides)
  bool mpi = false;
  std::vector<pid_t> pids;                // ours: the ranks; MPI: mpirun
  std::vector<int> control;               // one per rank
  std::vector<LineReader> out;            // ours: one per rank; MPI: mpirun's stdout
  std::string dir;                        // temporary: store, FIFOs, mpirun's stderr
  std::vector<std::vector<double>> secs;  // [size][trial] seconds per allreduce
  std::string note;                       // why there are no figures
  bool failed = false;                    // started but failed: exit status 1
  bool running = false;
};

std::string MakeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/rigel_allreduce.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp " + tmpl + ": " + std::strerror(errno));
  g_dirs.push_back(tmpl);
  return tmpl;
}

// Stops the side's processes (killing them when `kill`) and cleans up.
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

// One trial of plan[index] on `side`; appends its seconds per allreduce.
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

// ---------------------------------------------------------------------------
// Figures.

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `v` to 4 significant digits, for the JSON.
double Round4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// "load average 0.52 0.61 0.70": other work on this machine skews figures.
std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  double l[3] = {0, 0, 0};
  bool ok = f != nullptr && std::fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) == 3;
  if (f != nullptr) std::fclose(f);
  if (!ok) return "load average unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "load average %.2f %.2f %.2f", l[0], l[1], l[2]);
  return buf;
}

[[noreturn]] void Usage(const std::string& what) {
  std::fprintf(stderr,
               "allreduce bench: %s\nusage: allreduce [--quick] [--trials N] [--ranks N] "
               "[--mpirun PATH] [--mpi-ref PATH] [--timeout SECONDS]\n",
               what.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool trials_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](int lo) {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < lo || n > 100000) Usage(a + ": bad number " + v);
      return static_cast<int>(n);
    };
    if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--trials") {
      opt.trials = number(1);
      trials_set = true;
    } else if (a == "--ranks") {
      opt.ranks = number(2);
    } else if (a == "--mpirun") {
      opt.mpirun = value();
    } else if (a == "--mpi-ref") {
      opt.mpi_ref = value();
    } else if (a == "--timeout") {
      opt.timeout_s = number(1);
    } else if (a == "--help" || a == "-h") {
      Usage("help");
    } else {
      Usage("unknown argument " + a);
    }
  }
  if (opt.quick && !trials_set) opt.trials = 2;
  // A rank that died closes its pipe: the next command to it must fail with
  // EPIPE (and its missing answer be reported), not kill the bench.
  ::signal(SIGPIPE, SIG_IGN);
  const std::vector<Size> plan = Plan(opt.quick);
  const auto start = Clock::now();
  std::fprintf(stderr, "allreduce bench: %d ranks, %zu sizes, %d trials%s; %ld cores, %s\n",
               opt.ranks, plan.size(), opt.trials, opt.quick ? " (--quick)" : "",
               ::sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str());

  // Which references can run.
  std::string mpirun = opt.mpirun.empty() ? FindInPath("mpirun") : opt.mpirun;
  std::string binary = opt.mpi_ref;
  if (binary.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    binary = (self.parent_path() / "allreduce_mpi").string();
  }
  std::string missing;
  if (mpirun.empty()) {
    missing = "mpirun not found in PATH (install openmpi-bin: scripts/setup.sh)";
  } else if (::access(mpirun.c_str(), X_OK) != 0) {
    missing = "mpirun " + mpirun + " is not executable";
  } else if (::access(binary.c_str(), X_OK) != 0) {
    missing = RIGEL_ALLREDUCE_HAVE_MPI
                  ? "reference binary " + binary + " not found (build the allreduce_mpi target)"
                  : "reference binary allreduce_mpi was not built: CMake found no MPI (install "
                    "libopenmpi-dev: scripts/setup.sh, then re-run cmake)";
  }

  Side ours, tcp, shm;
  ours.label = "ours (gloo)";
  tcp.label = "MPI tcp";
  shm.label = "MPI shm";
  tcp.mpi = shm.mpi = true;
  tcp.reference_name = "OpenMPI MPI_Allreduce, TCP loopback";
  shm.reference_name = "OpenMPI MPI_Allreduce, shared memory (vader)";
  StartOurs(opt, plan, &ours);
  if (missing.empty()) {
    StartMpi(opt, mpirun, binary, plan, /*tcp=*/true, &tcp);
    StartMpi(opt, mpirun, binary, plan, /*tcp=*/false, &shm);
  } else {
    tcp.note = shm.note = missing;
    std::fprintf(stderr, "allreduce bench: no reference: %s\n", missing.c_str());
  }

  // Trials: size by size, the sides in a rotating order.
  Side* sides[3] = {&ours, &tcp, &shm};
  for (int t = 0; t < opt.trials; ++t) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < plan.size(); ++i) {
      for (int k = 0; k < 3; ++k) Trial(opt, plan, i, t == 0, sides[(t + i + k) % 3]);
    }
    std::fprintf(stderr, "  trial %d/%d: %.1f s, %s\n", t + 1, opt.trials,
                 std::chrono::duration<double>(Clock::now() - t0).count(), LoadAverage().c_str());
  }
  for (Side* s : sides) Stop(s, /*kill=*/false, opt.timeout_s);
  if (ours.failed) Die(ours.note);

  // Figures.
  const double bus_factor = 2.0 * (opt.ranks - 1) / opt.ranks;
  std::fprintf(stderr, "\n%-6s %5s | %8s %7s | %8s %7s %6s %11s %-4s | %8s %7s %6s %11s\n", "size",
               "iters", "ours us", "GB/s", "tcp us", "GB/s", "ratio", "(min-max)", "goal", "shm us",
               "GB/s", "ratio", "(min-max)");
  for (size_t i = 0; i < plan.size(); ++i) {
    const Size& z = plan[i];
    const std::vector<double>& ours_t = ours.secs[i];
    const double ours_s = Median(ours_t);
    const double ours_alg = z.bytes / ours_s / 1e9;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-6s %5d | %8.1f %7.3f", SizeName(z.bytes).c_str(), z.iters,
                  ours_s * 1e6, ours_alg);
    std::string row = buf;
    for (Side* ref : {&tcp, &shm}) {
      const bool have = !ref->failed && ref->note.empty();
      const bool goal = ref == &tcp && z.bytes >= kGoalFrom;
      double ref_s = 0, ref_alg = 0, ratio = 0, lo = 0, hi = 0;
      if (have) {
        const std::vector<double>& ref_t = ref->secs[i];
        std::vector<double> ratios;
        for (size_t t = 0; t < ref_t.size() && t < ours_t.size(); ++t) {
          ratios.push_back(ref_t[t] / ours_t[t]);
        }
        ref_s = Median(ref_t);
        ref_alg = z.bytes / ref_s / 1e9;
        ratio = Median(ratios);
        lo = *std::min_element(ratios.begin(), ratios.end());
        hi = *std::max_element(ratios.begin(), ratios.end());
      }
      for (const char* metric : {"algbw", "busbw"}) {
        const double f = std::strcmp(metric, "busbw") == 0 ? bus_factor : 1.0;
        nlohmann::ordered_json j;
        j["bench"] = "allreduce";
        j["case"] = std::to_string(opt.ranks) + "ranks/" + SizeName(z.bytes) + "/" + metric +
                    (ref == &shm ? "/shm" : "");
        j["metric"] = "GB/s";
        j["ours"] = Round4(ours_alg * f);
        j["reference"] = have ? nlohmann::json(Round4(ref_alg * f)) : nlohmann::json(nullptr);
        j["reference_name"] = ref->reference_name;
        j["ratio"] = have ? nlohmann::json(Round4(ratio)) : nlohmann::json(nullptr);
        j["goal"] = goal ? nlohmann::json(kGoal) : nlohmann::json(nullptr);
        j["better"] = "higher";
        j["bytes"] = z.bytes;
        j["iters"] = z.iters;
        j["trials"] = opt.trials;
        if (!have) j["note"] = ref->note;
        std::printf("%s\n", j.dump().c_str());
      }
      if (have) {
        std::snprintf(buf, sizeof buf, " | %8.1f %7.3f %6.2f (%4.2f-%4.2f) %-4s", ref_s * 1e6,
                      ref_alg, ratio, lo, hi,
                      ref != &tcp      ? ""
                      : !goal          ? "-"
                      : ratio >= kGoal ? "met"
                                       : "MISS");
      } else {
        std::snprintf(buf, sizeof buf, " | %8s %7s %6s %11s %-4s", "-", "-", "-", "", "");
      }
      row += buf;
    }
    std::fprintf(stderr, "%s\n", row.c_str());
  }
  std::fprintf(stderr,
               "(us: median time per allreduce; GB/s: median algbw = busbw at 2 ranks; ratio: "
               "median of per-trial ours/MPI)\n%.1f s, %s at the end\n",
               std::chrono::duration<double>(Clock::now() - start).count(), LoadAverage().c_str());
  std::fflush(stdout);
  if (tcp.failed || shm.failed) {
    std::fprintf(stderr, "allreduce bench: a reference failed: %s\n",
                 (tcp.failed ? tcp.note : shm.note).c_str());
    return 1;
  }
  return 0;
}
