// bench/allreduce_mpi: the reference side of bench/allreduce, OpenMPI's
// MPI_Allreduce (MPI_SUM of floats, in place, MPI_COMM_WORLD), measured the
// way bench/allreduce measures Rigel's Communicator. Started by the bench
// under `mpirun -np N ...`; it can also be run by hand:
//
//   mpirun -np 2 build/bench/allreduce_mpi --sizes 4096,1048576 --iters 200,32 --warmup 20,3
//
// A trial of one size (bytes, a multiple of 4): with `check`, every rank
// fills the known inputs of allreduce_common.h, reduces them once and checks
// every element (a wrong sum aborts the job, exit 3); then it zeroes the
// buffer, runs `warmup` untimed allreduces, a barrier, and `iters` timed
// ones. The figure is the largest per-rank time (MPI_Reduce MAX) / iters.
//
// Without --control, it runs one checked trial of every size, in order. With
// --control PREFIX, rank r reads commands from PREFIX.r (a FIFO the bench
// made), one a line, blocking (so an idle job does not spin):
//   run <size index> <check 0|1>      one trial
//   quit                              MPI_Finalize and exit 0
// Output (rank 0, stdout), one line each:
//   allreduce_mpi library <MPI_Get_library_version, first line>
//   allreduce_mpi ranks <N>
//   allreduce_mpi result <bytes> <iters> <seconds per allreduce>   (per trial)
//   allreduce_mpi done
// With --impl rigel, the allreduces go through Rigel's own MPI backend
// (collectives::Make(kMpi), collectives/mpi/communicator.h) on the same
// ranks instead of MPI_Allreduce: the bench's "mpi_backend" figures.
// Errors go to stderr; exit 2 on bad arguments or commands.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/allreduce_common.h"
#include "collectives/communicator.h"

namespace {

using rigel::bench::allreduce::CheckSum;
using rigel::bench::allreduce::FillInput;

int rank = 0, ranks = 0;

// Parses "a,b,c" into numbers; false on anything else.
bool ParseList(const char* s, std::vector<long long>* out) {
  out->clear();
  while (*s) {
    char* end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || v < 0) return false;
    out->push_back(v);
    s = end;
    if (*s == ',') ++s;
  }
  return !out->empty();
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "allreduce_mpi: rank %d: %s\n", rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

// Rigel's MPI communicator with --impl rigel; null: MPI_Allreduce.
std::unique_ptr<rigel::collectives::Communicator> g_rigel;

void AllReduce(std::vector<float>& data) {
  if (g_rigel) {
    rigel::Status st =
        g_rigel->AllReduce(data.data(), data.size(), rigel::collectives::ReduceOp::kSum);
    if (!st.ok()) Fail(st.message());
    return;
  }
  MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
}

void Trial(long long bytes, long long iters, long long warmup, bool check) {
  std::vector<float> data(static_cast<size_t>(bytes) / sizeof(float));
  if (check) {
    FillInput(data.data(), data.size(), rank);
    AllReduce(data);
    std::string wrong = CheckSum(data.data(), data.size(), ranks);
    if (!wrong.empty()) {
      std::fprintf(stderr, "allreduce_mpi: rank %d: MPI_Allreduce of %lld bytes: wrong sum: %s\n",
                   rank, bytes, wrong.c_str());
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    std::fill(data.begin(), data.end(), 0.0f);
  }
  for (long long i = 0; i < warmup; ++i) AllReduce(data);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long long i = 0; i < iters; ++i) AllReduce(data);
  double mine = MPI_Wtime() - t0, slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("allreduce_mpi result %lld %lld %.9e\n", bytes, iters,
                slowest / static_cast<double>(iters));
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  std::vector<long long> sizes, iters, warmup;
  std::string control, impl = "mpi";
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (i + 1 >= argc) Fail(std::string(a) + " needs a value");
    if (std::strcmp(a, "--control") == 0) {
      control = argv[++i];
      continue;
    }
    if (std::strcmp(a, "--impl") == 0) {
      impl = argv[++i];
      if (impl != "mpi" && impl != "rigel") Fail("--impl is mpi or rigel");
      continue;
    }
    std::vector<long long>* dst = std::strcmp(a, "--sizes") == 0    ? &sizes
                                  : std::strcmp(a, "--iters") == 0  ? &iters
                                  : std::strcmp(a, "--warmup") == 0 ? &warmup
                                                                    : nullptr;
    if (dst == nullptr) Fail(std::string("unknown argument ") + a);
    if (!ParseList(argv[++i], dst)) Fail(std::string("bad list for ") + a);
  }
  if (sizes.empty() || sizes.size() != iters.size() || sizes.size() != warmup.size()) {
    Fail("--sizes, --iters and --warmup need the same number of entries");
  }
  for (long long b : sizes) {
    if (b <= 0 || b % 4 != 0) Fail("sizes are positive multiples of 4 bytes");
  }

  if (impl == "rigel") {
    rigel::collectives::CommunicatorOptions o;
    o.rank = rank;
    o.size = ranks;
    auto made = rigel::collectives::Make(rigel::collectives::Backend::kMpi, nullptr, o);
    if (!made.ok()) Fail(made.status().message());
    g_rigel = std::move(made).value();
  }
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string first(lib, static_cast<size_t>(len));
    first = first.substr(0, first.find_first_of("\r\n"));
    std::printf("allreduce_mpi library %s\nallreduce_mpi ranks %d\n", first.c_str(), ranks);
    std::fflush(stdout);
  }

  if (control.empty()) {
    for (size_t s = 0; s < sizes.size(); ++s) Trial(sizes[s], iters[s], warmup[s], true);
  } else {
    const std::string path = control + "." + std::to_string(rank);
    FILE* in = std::fopen(path.c_str(), "r");
    if (in == nullptr) Fail("cannot open " + path + ": " + std::strerror(errno));
    char line[128];
    while (true) {
      if (std::fgets(line, sizeof line, in) == nullptr) Fail("control " + path + " closed");
      size_t index = 0;
      int check = 0;
      if (std::strncmp(line, "quit", 4) == 0) break;
      if (std::sscanf(line, "run %zu %d", &index, &check) != 2 || index >= sizes.size()) {
        Fail(std::string("bad command: ") + line);
      }
      Trial(sizes[index], iters[index], warmup[index], check != 0);
    }
    std::fclose(in);
  }
  if (rank == 0) {
    std::printf("allreduce_mpi done\n");
    std::fflush(stdout);
  }
  g_rigel.reset();
  MPI_Finalize();
  return 0;
}
