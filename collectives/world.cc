// The root's names for the MPI backend's world (mpi/world.h), so that roles
// need no backend header; every call forwards unchanged, including the
// backend's messages for a build without MPI.
#include "collectives/world.h"

#include "collectives/mpi/world.h"

namespace rigel::collectives {

Status MpiWorldAvailable() { return mpi_backend::Available(); }

Status JoinMpiWorld(bool participate, int key) { return mpi_backend::Join(participate, key); }

void FinalizeMpiWorld() { mpi_backend::Finalize(); }

}  // namespace rigel::collectives
