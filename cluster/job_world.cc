#include "cluster/job_world.h"

#include "collectives/world.h"

namespace rigel::cluster {

Status JoinJobWorldAsBystander(const JobOptions& options) {
  if (options.collectives != "mpi") return Status::Ok();
  // The workers' communicator is split from every rank of the job, this one
  // included, so a rank with no part in it still takes part in the split.
  return collectives::JoinMpiWorld(/*participate=*/false, 0);
}

void LeaveJobWorld() { collectives::FinalizeMpiWorld(); }

}  // namespace rigel::cluster
