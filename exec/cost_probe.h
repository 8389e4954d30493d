// Predicts a plan's epochs before it runs (analysis/cost.h) from the real
// data: loads them, runs the program's driver serially with every loop run
// counted as each plan would run it (the cuts, blocks, steps and rows each
// worker would have, found by the loop's prefetch slice, from the values the
// parameters hold when the run starts), times the loop body on a sample of
// its elements in the tiers the run would use (the interpreter, and the
// body compiled unless --jit is off), and stops after `epochs` iterations of
// the top-level driver `for`. Each run is also executed serially, so the driver and later runs
// see real values and the counts know which rows a run left unchanged (the
// workers push only rows with a delta); a distributed schedule's order
// differs from the serial one, so the rows it changes can differ slightly.
// A probe costs about `epochs` serial epochs (interpreted) plus the counting
// and, unless --jit is off, a compile of each loop body.
//
// Which tier a run's step is counted at follows the workers' rule
// (kernel/tier.h): --jit on, compiled from the start; auto, compiled once
// the worker that runs the most of the loop's elements has interpreted it
// for kernel::kFirstCompileEstimateMs (a fresh worker's estimate; workers do
// not know the work left, so they do not compile sooner) and for the
// body's measured compile time after that; off, or a body the JIT cannot
// compile, interpreted.
//
// Not thread-safe; one call is one probe.
#ifndef RIGEL_EXEC_COST_PROBE_H_
#define RIGEL_EXEC_COST_PROBE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/cost.h"
#include "analysis/plan.h"
#include "cluster/job_options.h"
#include "common/status.h"
#include "ir/ir.h"
#include "kernel/kernel.h"

namespace rigel::exec {

struct ProbeOptions {
  int workers = 2;
  int servers = 2;
  uint64_t seed = 0;
  int epochs = 3;  // top-level driver iterations to count
  // The run's relaxed settings. A plan's own settings (analysis::PlanSettings)
  // count where these hold their defaults, as a run's flags left unset do.
  int64_t batch = 0;            // --batch (0: Rigel's choice)
  int staleness = 1;            // --staleness (0: no row caches; 1, the default: Rigel's)
  int64_t push_bound = 0;       // --push-bound (0: Rigel's choice)
  bool scaled_merges = true;    // --scaled-merges
  int64_t cache_mb = 1024;      // --cache-mb: a cache smaller than its parameter is partial
  int64_t time_sample = 20000;  // elements per loop timed on this machine
  // The run's --jit (kernel::JitMode). Unset: kernel::DefaultJitMode(), as
  // a run that is given none.
  std::optional<kernel::JitMode> jit;
  analysis::CostConstants constants;
};

struct EpochCost {
  std::vector<analysis::RunCounts> runs;
  analysis::Prediction prediction;
};

struct ProbeResult {
  std::vector<EpochCost>
      epochs;  // one per counted epoch (one in all for a program without a top-level `for`)
  std::vector<double> element_s;  // per loop: seconds per element measured here (0: never run)
  // Per loop: the same, of the body compiled (0: not compiled: --jit off,
  // never run, or the JIT could not compile it), and that compile's
  // milliseconds (0 when an equal body was compiled before in this process).
  std::vector<double> jit_element_s, compile_ms;
  // Per loop: whether the steady epochs' runs of it were counted compiled.
  std::vector<bool> compiled;
  // The mean of the epochs after the first (the first alone when it is the
  // only one): what a run's later epochs should show. Caches whose pushes
  // fall in step with the epochs make single epochs alternate around it.
  analysis::Prediction steady;
  // Per loop: the mini-batch its last counted run was cut into
  // (analysis::StepBatch; 0: not cut into mini-batches or never run).
  std::vector<int64_t> batch;
};

// The options of a probe of a job of `workers` workers and `servers` servers
// run with `job`: the settings the cost model reads (--batch, --staleness,
// --push-bound, --scaled-merges); `job`'s other options leave it unchanged.
// The one translation of a run's flags into the probe's, for `rigel
// explain --cost` and `rigel plan --cost`.
ProbeOptions ProbeOptionsOf(const cluster::JobOptions& job, int workers, int servers);

// Errors: those of loading the data and compiling (as SerialExecutor::Create),
// of the cuts (analysis::MakeCuts) and of the loop bodies' slices; an
// invalid $RIGEL_JIT when opts.jit is unset.
StatusOr<ProbeResult> ProbeCost(const ir::Program& prog, const analysis::Plan& plan,
                                const ProbeOptions& opts);

// The same for several plans of one program in one walk of the driver (the
// data loaded once): one result per plan, in order.
StatusOr<std::vector<ProbeResult>> ProbeCosts(const ir::Program& prog,
                                              const std::vector<analysis::Plan>& plans,
                                              const ProbeOptions& opts);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_COST_PROBE_H_
