// What every process of a cluster must agree on before parameters move: the
// parameters the servers hold (name, rows, width, sharding, initialiser), the
// number of servers and workers, the job's options and, for a program run,
// the job. The scheduler sends it to every member as the typed `plan` message
// (cluster/wire/setup.capnp); from it each process computes the same
// ShardMap. A cluster started for a self-test reads it from a JSON file:
//   {"servers": 2, "workers": 2, "staleness": 0,
//    "params": [{"name": "W", "rows": 1000, "width": 16, "shard": "range",
//                "init": "normal", "a": 0, "b": 0.1, "seed": 1}, ...]}
//
// Value types; thread-compatible.
#ifndef RIGEL_CLUSTER_SETUP_H_
#define RIGEL_CLUSTER_SETUP_H_

#include <optional>
#include <string>
#include <vector>

#include "cluster/job_options.h"
#include "cluster/shard_map.h"
#include "cluster/wire/setup.capnp.h"
#include "common/status.h"
#include "ir/ir.h"

namespace rigel::cluster {

struct ParamSpec {
  ir::ParamDecl decl;  // name, width (0 = 1-D), initialiser
  int64_t rows = 0;
  bool hash = false;  // hash shards (else range shards)
};

// The program a cluster runs (absent for clusters started for a self-test):
// every worker compiles it itself from the same file and overrides, and
// checks the plan against it, so all processes agree on loops and layouts.
struct JobSpec {
  std::string program;  // absolute path of the .rgl file (shared or copied)
  std::vector<std::pair<std::string, std::string>> sets;  // --set overrides, paths absolute
  uint64_t seed = 0;                                      // --seed
  std::string plan;  // the plan, as a plan file's text (analysis/plan.h ParsePlan)
  // (data set name, data::DatasetDigest) of every data set read from a
  // file, as the scheduler loaded it: every worker loads its own copy and
  // refuses the job when its digest differs (elements are named by number).
  std::vector<std::pair<std::string, std::string>> data;
  // (data set name, data::FingerprintText) of every data file the job reads:
  // each worker compares its own file's before loading it.
  std::vector<std::pair<std::string, std::string>> files;
  // (data set name, data::IndexEntryText) of the data sets the workers hold
  // in part: the facts and chunks the scheduler's index or scan found, which
  // each worker reads its part with instead of scanning the file itself.
  std::vector<std::pair<std::string, std::string>> scans;
  // (loop id, analysis::CutsToJson) of the loops cut by coordinates over a
  // data set held in part (exec/hold_plan.h LoopsCutBeforeLoad): each worker
  // keeps the elements these cuts place on it as it reads the file, and
  // every run of such a loop is cut the same.
  std::vector<std::pair<std::string, std::string>> cuts;
  // The servers start from a checkpoint's rows (--resume, or a recovery):
  // until a run writes a parameter, its rows are not known to be its
  // initialiser's (worker/sync/local_rows.cc relies on that when false).
  bool restored = false;
  // --init-params: the parameter file every process reads the rows of the
  // parameters it names from (exec/init_params.h), absolute, and its
  // data::FingerprintText at the scheduler; empty for none.
  std::string init_params;
  std::string init_params_fingerprint;
  // --jit: which tier runs the loop bodies in every worker ("auto", "on",
  // "off"; kernel::ParseJitMode). Both give the same results.
  std::string jit = "auto";
};

struct ClusterSetup {
  int servers = 1;
  int workers = 1;
  // staleness s: a worker at clock c sees every update of clocks < c - s.
  JobOptions options;
  std::vector<ParamSpec> params;
  std::optional<JobSpec> job;

  // The shard map every process derives from this setup.
  StatusOr<ShardMap> MakeShardMap() const;
  // Floats per row of param `p` (1 for a 1-D parameter).
  int64_t Width(int p) const { return params[p].decl.width > 0 ? params[p].decl.width : 1; }
};

// The `plan` message's body: SetupToWire writes `setup` into `out`;
// SetupFromWire reads it back, InvalidArgument naming `what` and the field
// when a value is out of range.
void SetupToWire(const ClusterSetup& setup, wire::Plan::Builder out);
StatusOr<ClusterSetup> SetupFromWire(wire::Plan::Reader in, const std::string& what);

// A setup file (the JSON form above); InvalidArgument naming `what` and the
// key when malformed.
StatusOr<ClusterSetup> SetupFromJson(const std::string& text, const std::string& what);

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_SETUP_H_
