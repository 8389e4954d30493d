// The cluster a command assumes where its flags leave the size out: the one
// place `rigel run --workers`, `rigel explain`, `rigel plan`, `rigel
// calibrate`, `rigel tune` and the launchers take it from, so that what
// explain predicts is what run starts. docs/planner.md ("The cluster
// assumed") says the same. Header-only; constants and a pure function.
#ifndef RIGEL_CLUSTER_DEFAULTS_H_
#define RIGEL_CLUSTER_DEFAULTS_H_

#include <algorithm>

namespace rigel::cluster {

// Workers a plan is made for when --workers is absent (explain, plan). A run
// without --workers is serial: it makes no plan.
inline constexpr int kDefaultPlanWorkers = 4;

// Parameter servers of a job of `workers` workers when --servers is absent:
// one for a single worker, two from two workers on. Two servers halve each
// shard's rows and requests, and a third process per worker rarely pays on
// the small machines most jobs are tried on; a larger cluster sets --servers.
// scripts/rigel-launch applies the same rule (scripts/rigel-ssh is given
// both by `rigel run`).
inline int DefaultServers(int workers) { return std::clamp(workers, 1, 2); }

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_DEFAULTS_H_
