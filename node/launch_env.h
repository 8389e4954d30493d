// What a process started by a cluster launcher (mpirun, srun, a script
// that sets RANK/WORLD_SIZE) learns from its environment: its rank among the
// job's processes, how many there are, and where rank 0 (the scheduler)
// listens. Conventions followed: OpenMPI's OMPI_COMM_WORLD_RANK/SIZE, MPICH
// and Intel MPI's PMI_RANK/PMI_SIZE, Slurm's SLURM_PROCID/SLURM_NTASKS with
// SLURM_STEP_NODELIST (first host: rank 0's under srun's block layout), PMIx's
// PMIX_RANK, and torchrun's RANK/WORLD_SIZE with MASTER_ADDR/MASTER_PORT.
//
// Pure functions of the environment given (tests pass their own); thread-safe.
#ifndef RIGEL_NODE_LAUNCH_ENV_H_
#define RIGEL_NODE_LAUNCH_ENV_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace rigel::node {

using Env = std::map<std::string, std::string>;

// This process's environment as an Env.
Env CurrentEnv();

enum class Launcher { kFlags, kOpenMpi, kPmi, kSlurm, kPmix, kTorch };
// "--rank/--size", "OpenMPI", "PMI", "Slurm", "PMIx", "RANK/WORLD_SIZE".
const char* LauncherName(Launcher l);

struct LaunchRank {
  int rank = 0;
  int size = 0;
  Launcher launcher = Launcher::kFlags;
};

// The first launcher convention whose variables are set, in the order of the
// file comment. NotFound naming the variables looked for when none is;
// InvalidArgument naming the variable when a value is not a number or the
// rank is outside [0, size).
StatusOr<LaunchRank> RankFromEnv(const Env& env);

// Expands a Slurm host list: "node[01-03,7],gpu5" -> node01 node02 node03
// node7 gpu5 (zero padding kept; several bracket groups in one name expand
// as a product, e.g. "r[1-2]n[1-2]"). InvalidArgument naming the position
// of a malformed list.
StatusOr<std::vector<std::string>> ExpandHostList(std::string_view list);

struct SchedulerEndpoint {
  std::string host;
  int port = 0;
  std::string how;  // where it came from, for the log ("--scheduler", "SLURM_STEP_NODELIST", ...)
  std::string scheme;  // "tcp" or "ucx" when the address named one, else empty
};

// Where rank 0 listens. `flag` ("HOST:PORT", "tcp://HOST:PORT", "ucx://HOST:PORT" or "HOST",
// empty when not given) wins; then RIGEL_SCHEDULER, then MASTER_ADDR and
// MASTER_PORT; then the launcher's own: Slurm's first host of the step; for
// OpenMPI/PMIx/PMI jobs whose every rank runs on this host (local size ==
// size), 127.0.0.1. A missing port is derived from the launcher's job id
// (the same in every rank, different between jobs): kPortBase +
// id % kPortSpan. InvalidArgument for a malformed address;
// FailedPrecondition (saying to give --scheduler) when nothing tells where
// rank 0 runs.
// Below Linux's ephemeral range (32768 and up), so that a port the kernel
// handed to some connection is not taken for the job's.
inline constexpr int kPortBase = 20000;
inline constexpr int kPortSpan = 12000;
StatusOr<SchedulerEndpoint> FindScheduler(const std::string& flag, const LaunchRank& rank,
                                          const Env& env);

// Rank 0 is the scheduler, ranks 1..servers the servers (0-based in their
// role), the rest workers. role: "scheduler", "server" or "worker".
struct NodeRole {
  std::string role;
  int rank = 0;
};
NodeRole RoleOfRank(int rank, int servers);

}  // namespace rigel::node

#endif  // RIGEL_NODE_LAUNCH_ENV_H_
