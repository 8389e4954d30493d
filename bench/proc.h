// Running other programs from a bench and reading what they wrote: used by
// bench/schedules.cc and bench/models.cc, which time `rigel`, a local cluster and
// the peers users compare with. Not thread-safe: a bench runs one thing at a
// time.
#ifndef RIGEL_BENCH_PROC_H_
#define RIGEL_BENCH_PROC_H_

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace rigel::bench {

using Clock = std::chrono::steady_clock;

// Seconds since `a`.
double Secs(Clock::time_point a);
// The whole file; "" if it cannot be read.
std::string ReadFile(const std::filesystem::path& p);
// The last `lines` lines of a file (all of it if shorter).
std::string Tail(const std::filesystem::path& p, int lines);
// argv as one shell command line, quoted where needed.
std::string Join(const std::vector<std::string>& argv);

struct ProcResult {
  int rc = -1;  // exit status; 128 + signal if killed
  bool timed_out = false;
  double wall_s = 0;
  // User + system CPU seconds of the process and of every descendant it
  // waited for (a local cluster's launcher waits for all its processes).
  double cpu_s = 0;
};

// Runs argv with stdin from /dev/null and stdout/stderr into files, in a new
// process group (so a timeout stops the launcher and everything it started).
// `argv[0]` is a path; rc stays -1 when it cannot be started (said on stderr).
ProcResult Run(const std::vector<std::string>& argv, const std::filesystem::path& out,
               const std::filesystem::path& err, double timeout_s);

}  // namespace rigel::bench

#endif  // RIGEL_BENCH_PROC_H_
