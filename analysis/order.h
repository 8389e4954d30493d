// The serial order equivalent to running a loop's schedule on P workers.
//
// A schedule runs blocks of iterations step by step; on one step the blocks
// of different workers touch disjoint parameter rows (that is what the
// analysis proved), so running the steps one after another, and each block's
// iterations in the order the worker would, gives exactly what the
// distributed run gives (up to float summation order of merged deltas). Tests
// compare distributed runs with the serial executor run in this order, and
// the wavefront's tests check that this order keeps every dependence.
//
// Where the blocks begin and end is given by the cuts of analysis/partition.h:
// the functions taking a `Cuts` place elements with those (balanced cuts from
// MakeCuts, or cuts a scheduler sent to its workers), so a distributed run and
// this order agree block for block; those without cuts use EqualCuts (equal
// ranges of a dimension, or of the element count for data_parallel).
//
// Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_ORDER_H_
#define RIGEL_ANALYSIS_ORDER_H_

#include <cstdint>
#include <vector>

#include "analysis/partition.h"
#include "analysis/plan.h"
#include "common/status.h"
#include "data/dataset.h"

namespace rigel::analysis {

// Where one element runs: its step, its worker, and its block.
struct Placement {
  int64_t step = 0;
  int worker = 0;
  std::vector<int64_t> block;  // block coordinates (one per blocked dimension)
};

// Coordinates of element `e` of `data` in its space (i, j) / (n) / (t).
std::vector<int64_t> ElementCoords(const data::Dataset& data, int64_t e);

// Where the schedule of `loop` runs element `e` with coordinates `coords`
// when its blocks are cut by `cuts`: worker and block from the part of each
// axis (for conflict_free_2d, block (a, b) runs at step (b - a) mod P; for
// wavefront, block q at step sum(q) on worker q[0]). Requires cuts that fit
// the loop and the space (CheckCuts is OK; only the number of axes and the
// schedule kind are checked here, aborting when they differ). O(axes *
// log parts).
Placement Place(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& coords,
                int64_t e);

// The same with equal-range cuts (EqualCuts) of a space of `extent` (see
// SpaceExtent) holding `count` elements, for P = `workers`. Builds the cuts on
// every call (O(P) allocation): in a loop over elements, make them once and
// use the overload above. Requires CheckScheduleFits(loop, workers,
// extent.size()) to be OK.
Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& coords, int64_t e, int64_t count);

// The extent of each dimension of `data`'s space: (rows, cols) for triples and
// grid, (count) otherwise.
std::vector<int64_t> SpaceExtent(const data::Dataset& data);

// Every element of `data` (0 .. count-1) once, in the order a run of the
// schedule completes them: by step, then worker, then (within a block) in
// lexicographic order of the coordinates for ordered and wavefront loops or
// in element order otherwise; blocks cut into equal ranges (EqualCuts).
// InvalidArgument if workers < 1 or the data set does not fit the loop's
// space (a 2-D schedule over 1-D data; see CheckScheduleFits).
StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const data::Dataset& data);

// The same with the blocks cut by `cuts` (P = cuts.workers), e.g. the
// balanced cuts of MakeCuts(loop, P, data): the order a distributed run with
// these cuts is compared with. InvalidArgument if the cuts do not fit the
// loop and the data set (CheckCuts).
StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, const Cuts& cuts,
                                             const data::Dataset& data);

// The elements each worker runs on each step of a schedule with the blocks
// cut by `cuts`: blocks[step][worker], each in the order ScheduleOrder gives
// (their concatenation, step by step and worker by worker, is ScheduleOrder).
// Every step up to the last non-empty one is present (some blocks empty).
struct StepBlocks {
  int workers = 1;
  std::vector<std::vector<std::vector<int64_t>>> blocks;
  int64_t steps() const { return static_cast<int64_t>(blocks.size()); }
};
// InvalidArgument if the cuts do not fit the loop and the data (CheckCuts).
StatusOr<StepBlocks> MakeStepBlocks(const LoopPlan& loop, const Cuts& cuts,
                                    const data::Dataset& data);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_ORDER_H_
