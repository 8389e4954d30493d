// The process's part in an MPI job, for the MPI collectives backend: every
// process that mpirun started (scheduler, servers, workers, all through
// rigel-node) initialises MPI once and takes part in one split of
// MPI_COMM_WORLD; the workers come out of it with a communicator of their
// own, ordered by worker rank, which the backend (mpi/communicator.h) runs
// on. The other processes only take part in the split and in the final
// MPI_Finalize, which mpirun expects of every rank.
//
// Errors: Unavailable when this build has no MPI (RIGEL_HAVE_MPI 0) or the
// process was not started by an MPI launcher (no OMPI_COMM_WORLD_SIZE or
// PMI_SIZE), naming which; Internal when MPI itself fails.
//
// Thread-safety: Join and Finalize must be called from one thread, the same
// for both (MPI_THREAD_FUNNELED); they are idempotent.
#ifndef RIGEL_COLLECTIVES_MPI_WORLD_H_
#define RIGEL_COLLECTIVES_MPI_WORLD_H_

#include "common/status.h"

namespace rigel::collectives::mpi_backend {

// OK when MPI collectives can run in this process (see the file comment).
Status Available();

// Initialises MPI if needed and splits MPI_COMM_WORLD: with `participate`,
// this process joins the workers' communicator at position `key`; without,
// it joins none. Collective over every process of the MPI job: each must
// call it once, in any order of time. A second call returns the first's
// result.
Status Join(bool participate, int key);

// The workers' communicator (an MPI_Comm, as an opaque handle), once Join
// was called with participate; null otherwise.
void* WorkersComm();

// MPI_Finalize when Join initialised MPI; nothing otherwise. Collective over
// the job like Join.
void Finalize();

}  // namespace rigel::collectives::mpi_backend

#endif  // RIGEL_COLLECTIVES_MPI_WORLD_H_
