// The inputs of the memory estimate (analysis/memory.h) of a program an
// executor has loaded: its data sets and its parameters' shapes. Used by the
// scheduler (--memory-limit) and `rigel explain --memory`, so that both say
// the same. Thread-compatible: reads the executor.
#ifndef RIGEL_EXEC_MEMORY_INPUTS_H_
#define RIGEL_EXEC_MEMORY_INPUTS_H_

#include "analysis/memory.h"
#include "cluster/job_options.h"
#include "exec/executor.h"
#include "ir/ir.h"

namespace rigel::exec {

// Data sets and parameters from `ex`, with the shares of the data sets
// `workers` workers hold in part under `plan` (exec/hold_plan.h) when
// `parts` (--data-parts); the caller sets the cluster's size and the job's
// options.
analysis::MemoryInputs MemoryInputsOf(const ir::Program& prog, const analysis::Plan& plan,
                                      int workers, bool parts, const SerialExecutor& ex);

// The whole input of a job's estimate: MemoryInputsOf with the cluster's
// size and the options the estimate follows (--data-parts, --cache-mb,
// --staleness), and whether the scheduler gathers the parameters to save
// them. The one translation of a job into the memory model's terms.
analysis::MemoryInputs JobMemoryInputs(const ir::Program& prog, const analysis::Plan& plan,
                                       int workers, int servers, const cluster::JobOptions& job,
                                       bool save_params, const SerialExecutor& ex);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_MEMORY_INPUTS_H_
