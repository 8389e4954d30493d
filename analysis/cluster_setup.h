// What every process of a cluster must agree on before parameters move: the
// parameters held by the servers (name, rows, width, sharding, initialiser),
// the number of servers and workers, and the staleness bound. The scheduler
// sends it to every member (as the `plan` message's JSON); from it each
// process computes the same ShardMap.
//
// JSON form:
//   {"servers": 2, "workers": 2, "staleness": 0,
//    "params": [{"name": "W", "rows": 1000, "width": 16, "shard": "range",
//                "init": "normal", "a": 0, "b": 0.1, "seed": 1}, ...]}
// ("init" is one of zeros, fill, normal, uniform; a/b as in
// frontend::ir::ParamDecl.)
//
// Value types; thread-compatible.
#ifndef RIGEL_ANALYSIS_CLUSTER_SETUP_H_
#define RIGEL_ANALYSIS_CLUSTER_SETUP_H_

#include <string>
#include <vector>

#include "analysis/shard_map.h"
#include "common/status.h"
#include "frontend/ir.h"

namespace rigel::analysis {

struct ParamSpec {
  frontend::ir::ParamDecl decl;  // name, width (0 = 1-D), initialiser
  int64_t rows = 0;
  bool hash = false;  // hash shards (else range shards)
};

struct ClusterSetup {
  int servers = 1;
  int workers = 1;
  int staleness = 0;  // s: a worker at clock c sees every update of clocks < c - s
  std::vector<ParamSpec> params;

  // The shard map every process derives from this setup.
  StatusOr<ShardMap> MakeShardMap() const;
  // Floats per row of param `p` (1 for a 1-D parameter).
  int64_t Width(int p) const { return params[p].decl.width > 0 ? params[p].decl.width : 1; }
};

std::string SetupToJson(const ClusterSetup& setup);
// InvalidArgument naming the key (prefixed by `what`) when malformed.
StatusOr<ClusterSetup> SetupFromJson(const std::string& text, const std::string& what);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_CLUSTER_SETUP_H_
