// The sync strategies as units (issue 43): each way a process keeps a
// parameter in sync is one class in one file of analysis/sync/, with its
// name, its words for `rigel explain`, the rule that says which resolved
// parameters it keeps (analysis/sync/resolve.h), its model of the bytes it
// moves in a run (which the cost model, analysis/cost.h CountRun, calls) and
// of what it holds on a worker beyond the parameter's copy (which the memory
// model, analysis/memory.h, calls) and on each server beyond the shard's
// rows (ServerMemory). Its runtime is the file of the same name
// in worker/sync/ (the layers keep transports out of analysis/).
//
// Units() lists them, as kernel/passes/pipeline.cc lists the passes; a new
// strategy is a new file here, a line there, and its runtime.
//
//   unit        keeps                                        runtime
//   local       a parameter whose rows the blocks own        worker/sync/local_rows.cc
//   held        local, and its rows stay between runs        worker/sync/local_rows.cc
//   rotate      rows handed from worker to worker            worker/sync/rotation.cc
//   cache       relaxed sparse rows in a write-back cache    worker/sync/cached_rows.cc
//   ps          rows pulled and pushed around every step     worker/sync/ps_pull_push.cc
//   allreduce   a dense parameter summed by collectives      worker/sync/allreduce.cc
//   replicated  a read-only copy, fetched once per run       worker/sync/replicated.cc
//
// Thread-safe: units are stateless singletons.
#ifndef RIGEL_ANALYSIS_SYNC_UNITS_H_
#define RIGEL_ANALYSIS_SYNC_UNITS_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/cost.h"
#include "analysis/memory.h"
#include "analysis/step_plan.h"

namespace rigel::analysis::sync {

// One parameter in one worker's run of a loop, as a unit's traffic model
// sees it.
struct ParamRun {
  const ParamRows* rows = nullptr;  // its rows in this worker's row plan
  const ParamShape* shape = nullptr;
  int loop = -1;
  int rank = 0, workers = 1;
  const std::vector<uint8_t>* changed = nullptr;  // rows the run changed (null: all)
  // The worker's share of the run's elements, when its rows are all rows
  // (RunEffects::inexact); 1 otherwise. `writes`: the run's writes per row.
  double share = 1;
  const std::vector<uint32_t>* writes = nullptr;
  // [step][param]: the rows each step moves through the servers (a step's
  // entry is empty when the row plan has no step keys, or the step no
  // elements).
  const std::vector<std::vector<std::vector<int64_t>>>* server_rows = nullptr;
  CountState::Param* state = nullptr;  // what this worker keeps of it between runs
};

// The (row, elements touching it) of one worker's run per exchange (one per
// step, or one per part of a step when RowPlan::part cuts them), with the
// step each belongs to.
struct StepTouches {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> units;
  std::vector<size_t> step;
};

// One parameter on every worker of a run, for a unit counted across
// workers: all indexed by worker.
struct AcrossWorkers {
  const ParamShape* shape = nullptr;
  const CacheSettings* cache = nullptr;
  const StepTouches* touches = nullptr;
  const std::vector<int64_t>* single = nullptr;   // ParamRows::single of each worker
  const std::vector<uint32_t>* writes = nullptr;  // the run's writes per row (null: unknown)
  std::vector<CountState::Param*> states;
};

// One parameter on one server, as a unit's memory model sees it.
struct ServerShare {
  const MemoryInputs::Param* param = nullptr;
  int64_t created = 0;      // rows this server creates of it
  int64_t worker_rows = 0;  // rows one worker holds of it (its cache's, its blocks')
  int workers = 1;
  int servers = 1;
};

class Unit {
 public:
  virtual ~Unit() = default;
  // As the plan JSON's "sync" and `rigel explain` write it.
  virtual std::string_view name() const = 0;
  // How it keeps a parameter, in plain words (a clause of `rigel explain`).
  virtual std::string_view description() const = 0;
  // Whether it keeps resolved parameter `p`. Exactly one unit keeps each.
  virtual bool Keeps(const PlanParam& p) const = 0;

  // Adds what one worker's run moves for `r` to `wc` and updates
  // r.state's kept copies. Not called for a unit counted across workers.
  virtual void Count(const ParamRun& r, WorkerCounts* wc) const = 0;
  // Its traffic depends on every worker's touches (a row cache's pushes
  // make the others' rows stale): CountAcross is called instead, once per
  // run, with the touches of every exchange.
  virtual bool CountsAcrossWorkers() const { return false; }
  virtual void CountAcross(const AcrossWorkers& /*a*/,
                           std::vector<WorkerCounts>* /*workers*/) const {}
  // A run wrote the parameter (r.state's generation already advanced): its
  // copies counted in this run stay valid.
  virtual void Written(CountState::Param* /*state*/) const {}

  // What it holds on each worker for parameter `p` beyond the parameter's
  // copy (a row cache of `cache_rows` rows, allreduce buffers); `in_part`:
  // the worker has no whole copy (analysis/sync/resolve.h), so a row cache
  // holds the values of its rows too.
  virtual std::vector<MemoryPart> WorkerMemory(const MemoryInputs::Param& /*p*/,
                                               int64_t /*cache_rows*/, bool /*in_part*/) const {
    return {};
  }
  // What it holds on each server for `s.param` beyond the shard's rows (per-row
  // versions, the rows every worker pushes at once when a run ends).
  virtual std::vector<MemoryPart> ServerMemory(const ServerShare& /*s*/) const { return {}; }
};

// Every unit, in the order UnitOf asks them.
const std::vector<const Unit*>& Units();

// The unit that keeps `p` (a parameter from Resolve); null if none does.
const Unit* UnitOf(const PlanParam& p);

const Unit& Local();
const Unit& Held();
const Unit& Rotate();
const Unit& Cache();
const Unit& Ps();
const Unit& Allreduce();
const Unit& Replicated();

}  // namespace rigel::analysis::sync

#endif  // RIGEL_ANALYSIS_SYNC_UNITS_H_
