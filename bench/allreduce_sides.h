// The sides bench/allreduce.cc compares, each a set of rank processes started
// once and then told to run trials: ours forked from the bench, the
// references (bench/allreduce_mpi.cc) under mpirun. Single-threaded; Die()
// stops every side's processes on the way out.
#ifndef RIGEL_BENCH_ALLREDUCE_SIDES_H_
#define RIGEL_BENCH_ALLREDUCE_SIDES_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rigel::bench::allreduce {

using Clock = std::chrono::steady_clock;

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

struct Size {
  size_t bytes;
  int iters;  // per trial
  int warmup;
};

// "4KiB", "16MiB".
std::string SizeName(size_t b);

struct Options {
  bool quick = false;
  int trials = 5;
  int ranks = 2;
  std::string mpirun;   // "" = search PATH
  std::string mpi_ref;  // "" = allreduce_mpi next to this binary
  int timeout_s = 120;  // per trial, and for a side to start
};

// Prints `what`, stops every side's processes, removes the temporary
// directories and exits with status 1.
[[noreturn]] void Die(const std::string& what);

// Lines from a child's pipe, with a deadline. Owns the descriptor.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  LineReader(LineReader&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }
  ~LineReader();
  // The next line (without '\n'); nullopt at EOF or past `deadline`
  // (*timed_out says which).
  std::optional<std::string> Next(Clock::time_point deadline, bool* timed_out);

 private:
  int fd_;
  std::string buf_;
};

// A side: N rank processes that take "run <index> <check>" and "quit".
struct Side {
  std::string label;           // "ours (gloo)", "MPI tcp", "MPI shm"
  std::string reference_name;  // for the figures (MPI sides)
  bool mpi = false;
  std::vector<std::string> extra_args;    // MPI sides: more arguments of allreduce_mpi
  std::vector<pid_t> pids;                // ours: the ranks; MPI: mpirun
  std::vector<int> control;               // one per rank
  std::vector<LineReader> out;            // ours: one per rank; MPI: mpirun's stdout
  std::string dir;                        // temporary: store, FIFOs, mpirun's stderr
  std::vector<std::vector<double>> secs;  // [size][trial] seconds per allreduce
  std::string note;                       // why there are no figures
  bool failed = false;                    // started but failed: exit status 1
  bool running = false;
};

// Forks our ranks, which join through a FileStore in a fresh temporary
// directory. Dies if it cannot.
void StartOurs(const Options& opt, const std::vector<Size>& plan, Side* side);
// Starts the reference under mpirun, over TCP loopback (`tcp`) or shared
// memory; a failure is recorded in `side` (failed, note).
void StartMpi(const Options& opt, const std::string& mpirun, const std::string& binary,
              const std::vector<Size>& plan, bool tcp, Side* side);
// One trial of plan[index] on `side`; appends its seconds per allreduce.
// `check`: the ranks first reduce known inputs and check the sums.
void Trial(const Options& opt, const std::vector<Size>& plan, size_t index, bool check, Side* side);
// Stops the side's processes (killing them when `kill`) and cleans up.
void Stop(Side* side, bool kill, int timeout_s);

}  // namespace rigel::bench::allreduce

#endif  // RIGEL_BENCH_ALLREDUCE_SIDES_H_
