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
// Partitions here are equal ranges of a dimension (or of the element count
// for data_parallel); balanced cuts of skewed data are the runtime's job.
//
// Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_ORDER_H_
#define RIGEL_ANALYSIS_ORDER_H_

#include <cstdint>
#include <vector>

#include "analysis/plan.h"
#include "common/status.h"
#include "frontend/dataset.h"

namespace rigel::analysis {

// Where one element runs: its step, its worker, and its block.
struct Placement {
  int64_t step = 0;
  int worker = 0;
  std::vector<int64_t> block;  // block coordinates (one per blocked dimension)
};

// Coordinates of element `e` of `data` in its space (i, j) / (n) / (t).
std::vector<int64_t> ElementCoords(const frontend::Dataset& data, int64_t e);

// Where the schedule of `loop` (with P = `workers`) runs element `e`.
// `extent` is the size of each dimension of the space (see SpaceExtent).
Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& coords, int64_t e, int64_t count);

// The extent of each dimension of `data`'s space: (rows, cols) for triples and
// grid, (count) otherwise.
std::vector<int64_t> SpaceExtent(const frontend::Dataset& data);

// Every element of `data` (0 .. count-1) once, in the order a run of the
// schedule completes them: by step, then worker, then (within a block) in
// lexicographic order of the coordinates for ordered and wavefront loops or
// in element order otherwise. InvalidArgument if the data set does not fit
// the loop's space (a 2-D schedule over 1-D data).
StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const frontend::Dataset& data);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_ORDER_H_
