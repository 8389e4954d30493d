// Which data sets a worker holds in part, and which of their elements
// (issue 32: each worker reads only its part; data/held.h).
//
// A data file's data set is held in part when every loop over it or over
// its split parts is data-parallel (each worker runs one block, cut by
// element count from the facts alone), every window over it is centred on
// its own loop's position with a constant radius, no loop over it reads or
// writes whole a parameter synced every step (its dense mini-batches take
// stretches of every worker's block), no loop over another
// data set reads its elements, and, unless the workers exchange what their
// own elements touch (worker/runner_samples.cc), no such loop may have rows
// that only one worker writes (a relaxed `ps` parameter it writes, with
// rows that depend only on the elements: finding those rows reads every
// worker's elements; analysis/step_plan.h ParamRows::single). A worker then
// holds, of each such loop: its block and the window radius around it, and,
// unless the workers exchange what they find in their own blocks' samples,
// the planner's samples (analysis/step_plan.h SampledElements, which every
// worker then reads) with the radius around each; every other data set is
// loaded whole. Every worker decides the same from the program and
// the plan, so strategies that depend on it agree.
//
// Thread-safe: pure functions of their arguments.
#ifndef RIGEL_EXEC_HOLD_PLAN_H_
#define RIGEL_EXEC_HOLD_PLAN_H_

#include <map>
#include <memory>
#include <vector>

#include "analysis/partition.h"
#include "analysis/plan.h"
#include "common/status.h"
#include "data/dataset.h"
#include "data/held.h"
#include "data/held_load.h"
#include "ir/ir.h"

namespace rigel::exec {

// The data set `data` was split from, at any depth (`data` itself when it
// is no split part): the one a file is read into, which decides for its
// parts.
int RootDataSet(const ir::Program& prog, int data);

// Data set `data` of `prog` (a file's, not a split part) may be held in part
// under `plan` (above). With `exchange` (workers that exchange what their
// own elements touch through a store: worker/runner_samples.cc), loops that
// may have rows with one writer do not keep it whole.
bool HoldsInPart(const ir::Program& prog, const analysis::Plan& plan, int data, bool exchange);

// The elements of data set `data` (HoldsInPart) worker `rank` of `workers`
// holds, given its facts `shape` (its count and shape attributes); with
// `samples`, the planner's samples too (above). Errors:
// the cuts' (analysis/partition.h), which a validated plan never has.
StatusOr<std::vector<data::ElementRange>> HeldRanges(const ir::Program& prog,
                                                     const analysis::Plan& plan, int rank,
                                                     int workers, int data,
                                                     const data::Dataset& shape, bool samples);

// Which elements of data set `data` (a file's, HoldsInPart) worker `rank`
// keeps by their coordinates as the file is read (data/held_load.h
// LoadHeld): those that loops cut by coordinates (model_parallel_1d,
// conflict_free_2d) over it or over its split parts place on this worker
// under `cuts` (by loop id: the scheduler's, sent with the job, which cut
// the blocks of every run of such a loop). Null when no such loop runs over
// it. InvalidArgument when such a loop has no cuts in `cuts`, or cuts for
// another schedule. The filter keeps the elements HeldRanges gives too (by
// each one's number in its own split part), given the same `shape` and
// `samples`: the loader then needs no ranges.
StatusOr<std::unique_ptr<data::ElementFilter>> HeldFilter(
    const ir::Program& prog, const analysis::Plan& plan, int rank, int workers,
    const std::map<int, analysis::Cuts>& cuts, int data, const data::Dataset& shape, bool samples);

// No loop runs over data set `data` nor reads its elements: only its split
// parts are read (its count and shape attributes still are).
bool ReadThroughPartsOnly(const ir::Program& prog, int data);

// The loops whose cuts the workers need before they load their data: those
// cut by coordinates over a data set held in part (HoldsInPart with
// `exchange`), by loop id.
std::vector<int> LoopsCutBeforeLoad(const ir::Program& prog, const analysis::Plan& plan,
                                    bool exchange);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_HOLD_PLAN_H_
