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
//  - MPI over shared memory: the same with `--mca btl vader,self`;
//  - Rigel's MPI backend (collectives/mpi/): allreduce_mpi --impl rigel over
//    shared memory, the collectives a job uses with `--collectives mpi`.
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
// ".../busbw/shm" (goal null), and Rigel's MPI backend against
// MPI_Allreduce over shared memory ".../algbw/mpi_backend" (goal 0.9 from
// 1 MiB on: the backend's price for identical bits on every rank). Without mpirun or the reference
// binary the figures carry "reference": null and a "note" saying why. A table and progress go to
// stderr. Exit status: 0; 1 when a side failed or a sum was wrong; 2 on bad usage.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/allreduce_sides.h"

#ifndef RIGEL_ALLREDUCE_HAVE_MPI
#define RIGEL_ALLREDUCE_HAVE_MPI 0
#endif

namespace rigel::bench::allreduce {
namespace {

namespace fs = std::filesystem;

constexpr double kGoal = 0.9;           // ours / MPI over TCP, from kGoalFrom on
constexpr size_t kGoalFrom = 1 * kMiB;  // the issue: "at >= 1 MiB"

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

Options ParseArgs(int argc, char** argv) {
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
  return opt;
}

// The reference binary: --mpi-ref, else allreduce_mpi next to this binary.
std::string ReferenceBinary(const Options& opt) {
  if (!opt.mpi_ref.empty()) return opt.mpi_ref;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "allreduce_mpi").string();
}

// Why the references cannot run, or "".
std::string MissingReference(const std::string& mpirun, const std::string& binary) {
  if (mpirun.empty()) return "mpirun not found in PATH (install openmpi-bin: scripts/setup.sh)";
  if (::access(mpirun.c_str(), X_OK) != 0) return "mpirun " + mpirun + " is not executable";
  if (::access(binary.c_str(), X_OK) != 0) {
    return RIGEL_ALLREDUCE_HAVE_MPI
               ? "reference binary " + binary + " not found (build the allreduce_mpi target)"
               : "reference binary allreduce_mpi was not built: CMake found no MPI (install "
                 "libopenmpi-dev: scripts/setup.sh, then re-run cmake)";
  }
  return "";
}

// Trials: size by size, the sides in a rotating order.
void RunTrials(const Options& opt, const std::vector<Size>& plan, Side* const sides[4]) {
  for (int t = 0; t < opt.trials; ++t) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < plan.size(); ++i) {
      for (int k = 0; k < 4; ++k) Trial(opt, plan, i, t == 0, sides[(t + i + k) % 4]);
    }
    std::fprintf(stderr, "  trial %d/%d: %.1f s, %s\n", t + 1, opt.trials,
                 std::chrono::duration<double>(Clock::now() - t0).count(), LoadAverage().c_str());
  }
}

// One size on one reference side, against ours.
struct Comparison {
  bool have = false;  // the reference has figures
  bool goal = false;  // the goal applies
  double ref_s = 0, ref_alg = 0, ratio = 0, lo = 0, hi = 0;
};

Comparison Compare(const Side& ours, const Side& ref, size_t i, const Size& z, bool tcp) {
  Comparison c;
  c.have = !ref.failed && ref.note.empty();
  c.goal = tcp && z.bytes >= kGoalFrom;
  if (!c.have) return c;
  const std::vector<double>& ours_t = ours.secs[i];
  const std::vector<double>& ref_t = ref.secs[i];
  std::vector<double> ratios;
  for (size_t t = 0; t < ref_t.size() && t < ours_t.size(); ++t) {
    ratios.push_back(ref_t[t] / ours_t[t]);
  }
  c.ref_s = Median(ref_t);
  c.ref_alg = z.bytes / c.ref_s / 1e9;
  c.ratio = Median(ratios);
  c.lo = *std::min_element(ratios.begin(), ratios.end());
  c.hi = *std::max_element(ratios.begin(), ratios.end());
  return c;
}

// The algbw and busbw figures of one size against one reference.
void EmitFigures(const Options& opt, const Size& z, double ours_alg, const Side& ref,
                 const Comparison& c, const std::string& suffix) {
  const double bus_factor = 2.0 * (opt.ranks - 1) / opt.ranks;
  for (const char* metric : {"algbw", "busbw"}) {
    const double f = std::strcmp(metric, "busbw") == 0 ? bus_factor : 1.0;
    nlohmann::ordered_json j;
    j["bench"] = "allreduce";
    j["case"] = std::to_string(opt.ranks) + "ranks/" + SizeName(z.bytes) + "/" + metric + suffix;
    j["metric"] = "GB/s";
    j["ours"] = Round4(ours_alg * f);
    j["reference"] = c.have ? nlohmann::json(Round4(c.ref_alg * f)) : nlohmann::json(nullptr);
    j["reference_name"] = ref.reference_name;
    j["ratio"] = c.have ? nlohmann::json(Round4(c.ratio)) : nlohmann::json(nullptr);
    j["goal"] = c.goal ? nlohmann::json(kGoal) : nlohmann::json(nullptr);
    j["better"] = "higher";
    j["bytes"] = z.bytes;
    j["iters"] = z.iters;
    j["trials"] = opt.trials;
    if (!c.have) j["note"] = ref.note;
    std::printf("%s\n", j.dump().c_str());
  }
}

// One reference's columns of the table.
std::string TableCells(const Comparison& c, bool tcp) {
  char buf[256];
  if (c.have) {
    std::snprintf(buf, sizeof buf, " | %8.1f %7.3f %6.2f (%4.2f-%4.2f) %-4s", c.ref_s * 1e6,
                  c.ref_alg, c.ratio, c.lo, c.hi,
                  !tcp               ? ""
                  : !c.goal          ? "-"
                  : c.ratio >= kGoal ? "met"
                                     : "MISS");
  } else {
    std::snprintf(buf, sizeof buf, " | %8s %7s %6s %11s %-4s", "-", "-", "-", "", "");
  }
  return buf;
}

// The figures on stdout and the table on stderr.
void Report(const Options& opt, const std::vector<Size>& plan, const Side& ours, const Side& tcp,
            const Side& shm, const Side& backend) {
  std::fprintf(stderr, "\n%-6s %5s | %8s %7s | %8s %7s %6s %11s %-4s | %8s %7s %6s %11s\n", "size",
               "iters", "ours us", "GB/s", "tcp us", "GB/s", "ratio", "(min-max)", "goal", "shm us",
               "GB/s", "ratio", "(min-max)");
  for (size_t i = 0; i < plan.size(); ++i) {
    const Size& z = plan[i];
    const double ours_s = Median(ours.secs[i]);
    const double ours_alg = z.bytes / ours_s / 1e9;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-6s %5d | %8.1f %7.3f", SizeName(z.bytes).c_str(), z.iters,
                  ours_s * 1e6, ours_alg);
    std::string row = buf;
    for (const Side* ref : {&tcp, &shm}) {
      const bool is_tcp = ref == &tcp;
      const Comparison c = Compare(ours, *ref, i, z, is_tcp);
      EmitFigures(opt, z, ours_alg, *ref, c, is_tcp ? "" : "/shm");
      row += TableCells(c, is_tcp);
    }
    std::fprintf(stderr, "%s\n", row.c_str());
  }
  // Rigel's MPI backend against MPI_Allreduce on the same transport.
  if (backend.failed || !backend.note.empty() || shm.failed || !shm.note.empty()) return;
  std::fprintf(stderr, "\n%-6s | %8s %7s | %8s %7s %6s %11s %-4s   (mpi backend vs MPI shm)\n",
               "size", "ours us", "GB/s", "shm us", "GB/s", "ratio", "(min-max)", "goal");
  for (size_t i = 0; i < plan.size(); ++i) {
    const Size& z = plan[i];
    const double b_s = Median(backend.secs[i]);
    const Comparison c = Compare(backend, shm, i, z, /*tcp=*/true);
    EmitFigures(opt, z, z.bytes / b_s / 1e9, shm, c, "/mpi_backend");
    std::fprintf(stderr, "%-6s | %8.1f %7.3f%s\n", SizeName(z.bytes).c_str(), b_s * 1e6,
                 z.bytes / b_s / 1e9, TableCells(c, /*tcp=*/true).c_str());
  }
}

int Main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);
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
  std::string binary = ReferenceBinary(opt);
  std::string missing = MissingReference(mpirun, binary);

  Side ours, tcp, shm, backend;
  ours.label = "ours (gloo)";
  tcp.label = "MPI tcp";
  shm.label = "MPI shm";
  backend.label = "ours (mpi backend)";
  tcp.mpi = shm.mpi = backend.mpi = true;
  backend.extra_args = {"--impl", "rigel"};
  tcp.reference_name = "OpenMPI MPI_Allreduce, TCP loopback";
  shm.reference_name = "OpenMPI MPI_Allreduce, shared memory (vader)";
  StartOurs(opt, plan, &ours);
  if (missing.empty()) {
    StartMpi(opt, mpirun, binary, plan, /*tcp=*/true, &tcp);
    StartMpi(opt, mpirun, binary, plan, /*tcp=*/false, &shm);
    StartMpi(opt, mpirun, binary, plan, /*tcp=*/false, &backend);
  } else {
    tcp.note = shm.note = backend.note = missing;
    std::fprintf(stderr, "allreduce bench: no reference: %s\n", missing.c_str());
  }
  Side* const sides[4] = {&ours, &tcp, &shm, &backend};
  RunTrials(opt, plan, sides);
  for (Side* s : sides) Stop(s, /*kill=*/false, opt.timeout_s);
  if (ours.failed) Die(ours.note);

  Report(opt, plan, ours, tcp, shm, backend);
  std::fprintf(stderr,
               "(us: median time per allreduce; GB/s: median algbw = busbw at 2 ranks; ratio: "
               "median of per-trial ours/MPI)\n%.1f s, %s at the end\n",
               std::chrono::duration<double>(Clock::now() - start).count(), LoadAverage().c_str());
  std::fflush(stdout);
  if (tcp.failed || shm.failed || backend.failed) {
    std::fprintf(stderr, "allreduce bench: an MPI side failed: %s\n",
                 (tcp.failed   ? tcp.note
                  : shm.failed ? shm.note
                               : backend.note)
                     .c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rigel::bench::allreduce

int main(int argc, char** argv) { return rigel::bench::allreduce::Main(argc, argv); }
