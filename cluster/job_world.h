// A member's part in the job's MPI world when it takes no part in the
// workers' collectives (a server): with `--collectives mpi` every rank that
// mpirun started must join the world once, collectively, and finalize it at
// the end (collectives/world.h says why); with any other collectives,
// nothing. So that a role's main says "join the job" and knows nothing of
// MPI.
//
// Errors: those of collectives::JoinMpiWorld (Unavailable: no MPI in this
// build, or the process was not started by an MPI launcher).
// Thread-safety: call both from one thread, the same one
// (MPI_THREAD_FUNNELED); both are idempotent.
#ifndef RIGEL_CLUSTER_JOB_WORLD_H_
#define RIGEL_CLUSTER_JOB_WORLD_H_

#include "cluster/job_options.h"
#include "common/status.h"

namespace rigel::cluster {

// Joins the MPI world as a bystander when `options.collectives` is "mpi".
Status JoinJobWorldAsBystander(const JobOptions& options);

// Leaves the MPI world when this process joined it; nothing otherwise.
void LeaveJobWorld();

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_JOB_WORLD_H_
