#include "collectives/mpi/world.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/mutex.h"

#if RIGEL_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace rigel::collectives::mpi_backend {

namespace {

Mutex g_mu;
std::optional<Status> g_joined RIGEL_GUARDED_BY(g_mu);
bool g_initialised_here RIGEL_GUARDED_BY(g_mu) = false;
#if RIGEL_HAVE_MPI
MPI_Comm g_workers RIGEL_GUARDED_BY(g_mu) = MPI_COMM_NULL;

Status MpiFailure(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Internal(std::string("mpi: ") + what + ": " + std::string(text, static_cast<size_t>(len)));
}
#endif

}  // namespace

Status Available() {
#if !RIGEL_HAVE_MPI
  return Unavailable(
      "the MPI collectives backend is not in this build: CMake found no MPI (install "
      "libopenmpi-dev, scripts/setup.sh, and rebuild)");
#else
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE") &&
      !std::getenv("PMIX_RANK")) {
    return Unavailable(
        "the MPI collectives backend needs every process of the job started by mpirun (mpirun "
        "-n N rigel-node ...); this one was not");
  }
  return Status::Ok();
#endif
}

Status Join(bool participate, int key) {
  MutexLock l(&g_mu);
  if (g_joined) return *g_joined;
  Status st = Available();
#if RIGEL_HAVE_MPI
  if (st.ok()) {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
      int provided = 0;
      int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (rc != MPI_SUCCESS) {
        st = MpiFailure("MPI_Init_thread", rc);
      } else {
        g_initialised_here = true;
        // Errors come back as codes (turned into Status) instead of
        // aborting the job.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      }
    }
  }
  if (st.ok()) {
    int rc = MPI_Comm_split(MPI_COMM_WORLD, participate ? 0 : MPI_UNDEFINED, key, &g_workers);
    if (rc != MPI_SUCCESS) st = MpiFailure("MPI_Comm_split", rc);
    if (st.ok() && g_workers != MPI_COMM_NULL) {
      MPI_Comm_set_errhandler(g_workers, MPI_ERRORS_RETURN);
    }
  }
#else
  (void)participate;
  (void)key;
#endif
  g_joined = st;
  return st;
}

void* WorkersComm() {
  MutexLock l(&g_mu);
#if RIGEL_HAVE_MPI
  return g_workers == MPI_COMM_NULL ? nullptr : static_cast<void*>(&g_workers);
#else
  return nullptr;
#endif
}

void Finalize() {
  MutexLock l(&g_mu);
#if RIGEL_HAVE_MPI
  if (!g_initialised_here) return;
  if (g_workers != MPI_COMM_NULL) MPI_Comm_free(&g_workers);
  MPI_Finalize();
#endif
  g_initialised_here = false;
}

}  // namespace rigel::collectives::mpi_backend
