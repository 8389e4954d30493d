// The MPI backend: collectives on host memory through the MPI library of the
// job's mpirun (OpenMPI from Debian here), for jobs whose every process
// mpirun started (`mpirun -n N rigel-node ... --collectives mpi`). Make
// joins the process's MPI world (mpi/world.h) as a worker at position
// o.rank; the other processes of the job join it without taking part.
//
// AllReduce is a ring (a reduce-scatter, then an all-gather) over
// MPI_Sendrecv: every element is summed once, by one rank, and copied to the
// others, so every rank gets the same bits (MPI_Allreduce does not promise
// that). The Store is not used: MPI
// found the other ranks through the launcher already.
//
// Errors: as mpi_backend::Available() (Unavailable: no MPI in this build, a
// process mpirun did not start); FailedPrecondition when the MPI job's
// workers do not match o.rank/o.size; Unavailable naming the MPI call and
// MPI's message when a collective fails. MPI has no timeouts: a rank that
// dies makes mpirun end the whole job (its default) rather than a collective
// return an error; o.timeout is not used.
//
// Thread-safety: as collectives::Communicator; every call from the thread
// that made the communicator (MPI_THREAD_FUNNELED).
#ifndef RIGEL_COLLECTIVES_MPI_COMMUNICATOR_H_
#define RIGEL_COLLECTIVES_MPI_COMMUNICATOR_H_

#include <memory>

#include "collectives/communicator.h"

namespace rigel::collectives::mpi_backend {

StatusOr<std::unique_ptr<Communicator>> NewMpiCommunicator(Store* store,
                                                           const CommunicatorOptions& o);

}  // namespace rigel::collectives::mpi_backend

#endif  // RIGEL_COLLECTIVES_MPI_COMMUNICATOR_H_
