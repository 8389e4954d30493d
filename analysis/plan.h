// Plans: how each `parallel for` of a program runs on P workers, and how each
// parameter is kept in sync. A Plan is made from the program text alone
// (MakePlan), written as a versioned JSON document (plan_json), and is the
// single thing the distributed runtime executes. A plan given back to Rigel
// (possibly edited by hand) is checked against the program's dependences
// before anything runs (ValidatePlan). The schema is in docs/schedules.md.
//
// Schedules, in the order they are tried (each rejection keeps its reason):
//   data_parallel      no dependence between iterations;
//   model_parallel_1d  every conflict needs one coordinate equal: partition by it;
//   conflict_free_2d   every conflict needs coordinate a or b equal: P x P
//                      blocks, worker p runs block (p, (p + t) mod P) at step t;
//                      parameters keyed by a stay local, those keyed by b rotate;
//   wavefront          all dependences have constant distances: a unimodular
//                      skew makes them non-negative, anti-diagonals of blocks
//                      run in parallel (analysis/order.h MakeStepBlocks enumerates them);
//   serial             one worker, with the reason and the `relax` clause that
//                      would make the loop parallel.
//
// Thread-safe: pure functions over immutable inputs.
#ifndef RIGEL_ANALYSIS_PLAN_H_
#define RIGEL_ANALYSIS_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/access.h"
#include "analysis/dependence.h"
#include "common/status.h"
#include "ir/ir.h"

namespace rigel::analysis {

enum class ScheduleKind { kDataParallel, kModelParallel1D, kConflictFree2D, kWavefront, kSerial };
enum class Strategy { kLocal, kRotate, kPs, kAllreduce, kReplicated, kAccumulator, kReduce };

struct ParamPlan;
// The strategy that moves `pp`'s values at run time: `reduce` becomes `ps`
// (sparse) or `allreduce` (dense); every other strategy is its own.
Strategy Mechanism(const ParamPlan& pp);

// Names as written in plans: "data_parallel", ..., "local", "rotate", ...
const char* ScheduleKindName(ScheduleKind k);
const char* StrategyName(Strategy s);
bool ParseScheduleKind(const std::string& name, ScheduleKind* out);
bool ParseStrategy(const std::string& name, Strategy* out);

// How one parameter (or accumulator) of a loop is kept in sync. `reduce` (a
// sum: the loop only adds to it) moves like `ps` when its rows are touched
// one at a time and like `allreduce` when it is touched whole (Mechanism).
struct ParamPlan {
  std::string name;
  int index = -1;  // param or accumulator index in the program
  bool is_accum = false;
  Strategy strategy = Strategy::kReplicated;
  int keyed_by = -1;   // local/rotate: the space dimension its conflicts need equal
  std::string shard;   // ps: "range" (keyed by a loop variable) or "hash" (indirect)
  bool dense = false;  // read or written whole (else rows/elements: sparse)
  bool written = false;
  std::string why;  // plain words for `rigel explain`
};

struct Rejection {
  ScheduleKind kind;
  std::string reason;
};

struct Schedule {
  ScheduleKind kind = ScheduleKind::kSerial;
  int dim = -1;         // model_parallel_1d: partition dimension
  int local_dim = -1;   // conflict_free_2d: a (its parameters stay local)
  int rotate_dim = -1;  // conflict_free_2d: b (its parameters rotate)
  // wavefront: unit lower-triangular skew T (x' = T x), and blocks per
  // dimension of the skewed space (blocks[0] = workers).
  std::vector<std::vector<int64_t>> skew;
  std::vector<int64_t> blocks;
};

struct LoopPlan {
  int id = -1;
  ir::Loc loc;
  bool ordered = false;
  std::string data;                  // the iterated data set ("train", "grid(N, M)")
  std::vector<std::string> relaxed;  // relaxed parameter names
  Schedule schedule;
  std::string schedule_why;  // plain words
  std::vector<Rejection> rejected;
  std::vector<ParamPlan> params;  // touched params in declaration order, then accumulators
  // serial: the relax clause that makes the loop parallel ("relax W, H";
  // empty if none does) and the schedule it would then get.
  std::string suggestion;
  ScheduleKind suggestion_kind = ScheduleKind::kSerial;
  // serial: the parameters left out of the suggestion because relaxing them
  // would change the result, with why ("P: one iteration writes P[i + 1] ...").
  std::string no_relax;
  // What the choice was made from (not read back from JSON).
  LoopAccesses accesses;
  std::vector<Dependence> dependences;
  std::vector<std::string> independent;  // pairs proven independent, with the reason
};

// How relaxed parameters are kept (DSL.md version 3), fixed by the plan
// instead of chosen by Rigel at run time: what `rigel tune` writes when a
// setting ran faster within the quality rule. Each value stands in for
// Rigel's choice only where the run leaves that choice to Rigel (its
// --batch, --staleness or --push-bound not given); 0 (staleness -1) leaves
// it to Rigel. In the plan's JSON as "settings" (absent when none is set).
struct PlanSettings {
  int64_t batch = 0;       // elements per mini-batch of data-parallel loops
  int staleness = -1;      // merges by others a cached row's read may lack (>= 1)
  int64_t push_bound = 0;  // a cached row's updates before it is pushed
  bool any() const { return batch > 0 || staleness >= 1 || push_bound > 0; }
  // "--push-bound 256", "--batch 1024 --staleness 2": the settings as the
  // run's flags; "" when none is set.
  std::string Flags() const;
};

struct Plan {
  int version = 1;
  std::string program;       // path as given
  std::string program_hash;  // "xxh64:<16 hex>" of the program text
  int workers = 1;
  std::vector<LoopPlan> loops;
  PlanSettings settings;
};

struct PlanOptions {
  int workers = 4;  // P; at least 1
};

// Analyses every parallel loop of a checked program and chooses its
// schedule and strategies. Returns InvalidArgument if workers < 1.
StatusOr<Plan> MakePlan(const ir::Program& prog, const PlanOptions& opts);

// The analysis of one loop with a given set of relaxed parameters (used for
// `relax` suggestions and by tests).
LoopPlan PlanLoop(const ir::Program& prog, int loop, int workers, const std::vector<bool>& relaxed);

// Every legal schedule of loop `loop` (its relax clause as written), each
// with its strategies: first the one PlanLoop chooses, then data_parallel
// (no conflict but sums), model_parallel_1d by each dimension every
// conflict needs equal (parameters whose every dependence needs it kept
// local, other sums reduced), conflict_free_2d and wavefront when they
// apply, and serial. A loop that relaxes a dependence has only PlanLoop's
// schedule (another would change how stale its reads are). For the cost
// model to choose among (analysis/cost.h; docs/planner.md).
std::vector<LoopPlan> LoopCandidates(const ir::Program& prog, int loop, int workers);

// JSON text of the plan (pretty-printed, stable key order).
std::string PlanToJson(const ir::Program& prog, const Plan& plan);

// Reads a plan document. Errors (InvalidArgument) name `path` and the
// offending key: "plan.json: loops[0].schedule.kind: unknown schedule 'fast'
// (expected one of data_parallel, ...)".
StatusOr<Plan> ParsePlan(const std::string& text, const std::string& path);

// Checks a parsed plan against the program: same loops, known names, and no
// schedule or strategy that would break a dependence. On success returns the
// plan with each loop's analysis (accesses, dependences) filled in. A refusal
// is InvalidArgument naming the loop and the conflicting accesses, e.g.
// "plan.json: loop 0 (mf.rgl:13): data_parallel would break a dependence:
// W[i] (write, 16:5) and W[i] (read, 14:24) conflict when i is equal".
StatusOr<Plan> ValidatePlan(const ir::Program& prog, Plan plan, const std::string& path);

// One line per parameter that loop `lp` relaxes although relaxing changes
// what it computes (a recurrence, or an assignment merged as a delta; see
// Dependence::carries), for `rigel explain` and distributed runs to warn.
std::vector<std::string> RelaxWarnings(const ir::Program& prog, const LoopPlan& lp);

namespace sync {
struct Resolved;
}  // namespace sync

// Plain-words report of every loop: accesses, dependences, schedule with the
// rejected ones and why, strategies, and suggestions. The units that run
// each parameter are the plan's resolved without shapes (whether a
// parameter is cached, not how much of it); with `resolved`, as a job with
// its parameters' shapes resolves them (analysis/sync/resolve.h: a table
// held in part is read through its row cache).
std::string Explain(const ir::Program& prog, const Plan& plan);
std::string Explain(const ir::Program& prog, const Plan& plan, const sync::Resolved& resolved);

// "xxh64:<16 hex digits>" of a program's source text.
std::string ProgramHash(const ir::Program& prog);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_PLAN_H_
