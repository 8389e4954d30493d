// The process's part in an MPI job, for the `mpi` collectives backend,
// without MPI's types: every process that mpirun started (scheduler,
// servers, workers) joins the job's world once and finalizes it at the end;
// the workers come out of it with the communicator that collectives::Make
// (communicator.h) runs Backend::kMpi on, the others only take part. The
// backend is collectives/mpi/world.h; roles include this header instead.
//
// Errors: Unavailable when this build has no MPI (RIGEL_HAVE_MPI 0) or the
// process was not started by an MPI launcher, naming which; Internal when
// MPI itself fails.
//
// Target rigel::collectives_mpi (MPI only: no Gloo, no CUDA).
// Thread-safety: JoinMpiWorld and FinalizeMpiWorld must be called from one
// thread, the same for both (MPI_THREAD_FUNNELED); they are idempotent.
// MpiWorldAvailable may be called from any thread.
#ifndef RIGEL_COLLECTIVES_WORLD_H_
#define RIGEL_COLLECTIVES_WORLD_H_

#include "common/status.h"

namespace rigel::collectives {

// OK when this process can take part in an MPI job: the build has MPI and
// an MPI launcher started the process. Otherwise Unavailable saying which.
Status MpiWorldAvailable();

// Initialises MPI if needed and joins the job's world: with `participate`
// as the worker at position `key` of the workers' communicator; without, as
// a process with no part in it (scheduler, servers). Collective over every
// process of the MPI job: each must call it once, in any order of time. A
// second call returns the first's result.
Status JoinMpiWorld(bool participate, int key);

// Finalizes MPI when JoinMpiWorld initialised it; nothing otherwise.
// Collective over the job like JoinMpiWorld.
void FinalizeMpiWorld();

}  // namespace rigel::collectives

#endif  // RIGEL_COLLECTIVES_WORLD_H_
