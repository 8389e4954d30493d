// Which `local` rows a worker may keep past the end of a run (issue 31: the
// row sums `R[i] += A[i, j]`, cut 1-D by i, moved R's 10 KB to the servers
// after every epoch although nothing read them there).
//
// A written `local` parameter that no other loop of the program touches is
// read and written only by the runs of its own loop, each worker holding the
// same rows run after run (the cuts of a loop over a data set are made once),
// and the driver never reads parameters. Its rows then need to reach the
// servers only when something reads them there: a checkpoint's copy, the
// parameters written at the end (--save-params, --save-vectors). The
// scheduler sends the workers a flush first (scheduler/driver.cc,
// worker::Runner::Flush); a job that ends without either never moves them.
// A space sized at launch (grid(n, m)) is cut anew at every run, so its rows
// are never held.
//
// Thread-safe: a pure function of its arguments.
#ifndef RIGEL_ANALYSIS_HELD_ROWS_H_
#define RIGEL_ANALYSIS_HELD_ROWS_H_

#include "analysis/plan.h"
#include "ir/ir.h"

namespace rigel::analysis {

// Whether loop `loop`'s parameter `pp` (one of plan.loops[loop].params)
// keeps its rows on the workers between runs, as above.
bool HeldBetweenRuns(const ir::Program& prog, const Plan& plan, int loop, const ParamPlan& pp);

// Whether any parameter of loop `loop` does: its runs leave rows on the
// workers that a flush must push before the servers' rows are read.
bool LoopHoldsRows(const ir::Program& prog, const Plan& plan, int loop);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_HELD_ROWS_H_
