// Partition cuts: where the blocks of a loop's schedule begin and end. A
// `Cuts` value holds, per axis of the schedule (the element index for
// data_parallel, a coordinate for model_parallel_1d, two for
// conflict_free_2d, one skewed coordinate per dimension for wavefront), the
// boundaries of its parts; the part an element falls in on each axis says
// which worker runs it and when (analysis/order.h). Axes, balance bounds and
// why any non-decreasing boundaries keep a schedule's dependences:
// docs/schedules.md ("Cuts: where the blocks begin and end").
//
// EqualCuts cuts every axis into equal lengths; MakeCuts balances each
// coordinate axis by element counts (a value's elements are never split). The
// JSON form (CutsToJson/CutsFromJson) is for tests and files; workers get
// cuts typed (cluster/wire/control.capnp TaskCuts). Errors: InvalidArgument
// naming the axis or key.
//
// Value types and pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_PARTITION_H_
#define RIGEL_ANALYSIS_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "common/status.h"
#include "data/dataset.h"

namespace rigel::analysis {

// The parts of one axis: part p holds the x with bounds[p] <= x < bounds[p + 1].
// Invariant: bounds.size() >= 2, bounds.front() == 0, bounds.back() == extent,
// non-decreasing (strictly increasing for balanced cuts of an axis with
// extent >= parts; equal ranges of an axis shorter than its part count leave
// some parts empty, as Rigel always did).
struct AxisCuts {
  int dim = -1;  // what the axis is (see the file comment)
  std::vector<int64_t> bounds;

  int64_t parts() const { return static_cast<int64_t>(bounds.size()) - 1; }
  int64_t extent() const { return bounds.back(); }
  // The part holding x: the last p with bounds[p] <= x (binary search,
  // O(log parts)). x below 0 gives part 0, x at or past the extent the last
  // part; on an axis of extent 0 every x is in part 0.
  int64_t Part(int64_t x) const;

  bool operator==(const AxisCuts&) const = default;
};

// The cuts of one loop's schedule for P workers (see the file comment for
// which axes each schedule has).
struct Cuts {
  ScheduleKind kind = ScheduleKind::kSerial;
  int workers = 1;
  std::vector<AxisCuts> axes;

  bool operator==(const Cuts&) const = default;
};

// `parts` equal ranges of [0, extent): bounds[p] = ceil(p * extent / parts),
// so Part(x) = floor(x * parts / extent). Requires parts >= 1, extent >= 0
// (checked: aborts otherwise).
AxisCuts EqualAxisCuts(int64_t extent, int64_t parts);

// Balanced cuts of [0, extent) into `parts` ranges for elements whose
// coordinates on the axis are `coords` (any order; taken by value and sorted,
// O(n log n)). Boundary p is put at the value boundary where the prefix count
// is nearest p * n / parts (a value's elements are never split). Guarantees,
// for extent >= parts: bounds strictly increase (no part is an empty range)
// and no part holds more than n / parts + h elements, h being the largest
// number of coordinates equal to one value. For extent < parts, each value is
// its own part and the last parts are empty. With no coordinates, the equal
// ranges. Requires parts >= 1 and every coordinate in [0, extent) (checked:
// aborts otherwise).
AxisCuts BalancedCuts(std::vector<int64_t> coords, int64_t extent, int64_t parts);

// The same from a per-value histogram: `histogram[v]` elements have
// coordinate v, extent = histogram.size(). O(extent + parts). Requires
// parts >= 1 and non-negative counts (checked).
AxisCuts BalancedCutsFromHistogram(const std::vector<int64_t>& histogram, int64_t parts);

// The skewed coordinate r of point x under a wavefront schedule's skew, and
// its extent (1 + sum_c skew[r][c] * (extent[c] - 1), never below 0; exact
// when no dimension is empty). Require r < x.size() (r < extent.size()) and a
// skew of at least r + 1 rows of at least r + 1 entries; the skew of a valid
// plan is unit lower-triangular with non-negative entries, so the skewed
// coordinates of points in the space lie in [0, extent).
int64_t SkewedCoord(const Schedule& s, const std::vector<int64_t>& x, size_t r);
int64_t SkewedExtent(const Schedule& s, const std::vector<int64_t>& extent, size_t r);

// OK when `loop`'s schedule can run on `workers` workers over a space of
// `dims` dimensions: workers >= 1, the loop's space has `dims` dimensions,
// the dimensions the schedule names exist (and differ, for conflict_free_2d),
// and a wavefront's skew is dims x dims with `dims` blocks, each at least 1.
// Otherwise InvalidArgument saying what is wrong.
Status CheckScheduleFits(const LoopPlan& loop, int workers, size_t dims);

// Equal-range cuts of `loop`'s schedule on `workers` workers over a space of
// `extent` (one entry per dimension, see SpaceExtent) holding `count`
// elements: exactly the blocks Rigel used before cuts existed. Requires a
// schedule that fits (CheckScheduleFits(loop, workers, extent.size()) is OK;
// not checked here).
Cuts EqualCuts(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
               int64_t count);

// Balanced cuts of `loop`'s schedule on `workers` workers for `data` (see the
// file comment). O(count log count) at worst, O(count + extent) when an
// axis's extent is at most about twice the count; memory O(count + extent)
// at most. A coordinate outside its axis (a skewed coordinate under a
// hand-edited skew with negative entries) counts as the axis's first or last
// value, the part Place puts it in. InvalidArgument when workers < 1, the
// data set does not fit the loop's space (a 2-D schedule over 1-D data), or
// the schedule names a dimension the space lacks or has a skew or blocks of
// the wrong shape (CheckScheduleFits).
StatusOr<Cuts> MakeCuts(const LoopPlan& loop, int workers, const data::Dataset& data);

// OK when `cuts` can place the elements of a space of `extent` holding
// `count` elements under `loop`'s schedule: same schedule kind, the axes that
// kind has (same dims, extents as the space gives, parts = workers, or
// schedule.blocks[r] for wavefront), well-formed bounds. Otherwise
// InvalidArgument saying what differs ("cuts: axes[1]: extent 100, but the
// space's j has 120").
Status CheckCuts(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& extent,
                 int64_t count);

// Compact JSON text of `cuts` (format in the file comment; stable key order).
std::string CutsToJson(const Cuts& cuts);

// Reads cuts written by CutsToJson. InvalidArgument naming the key path,
// prefixed by `what`, when malformed: "what: axes[1].bounds: must start at 0,
// found 3". Checks the cuts on their own (known schedule, the number of axes
// it has, bounds from 0 to extent, non-decreasing, parts = workers where the
// schedule says so); CheckCuts checks them against a loop and a data set.
StatusOr<Cuts> CutsFromJson(const std::string& text, const std::string& what);

// Work per worker per step when `data` runs under `loop`'s schedule with
// `cuts`. Workers here are those the schedule uses (1 for serial; the first
// axis's parts for wavefront).
struct Imbalance {
  int64_t steps = 1;
  int64_t workers = 1;
  std::vector<std::vector<int64_t>> load;  // load[step][worker]: elements
  std::vector<int64_t> per_worker;         // elements per worker over all steps
  // max / mean of load over all steps x workers cells (wavefront steps that
  // have idle workers count them as 0).
  double cell_max_over_mean = 1;
  // max / mean of per_worker (for conflict_free_2d: work per block row).
  double worker_max_over_mean = 1;
  // sum over steps of the busiest worker's load, over count / workers: how
  // much longer than perfectly shared work a run with a barrier after each
  // step takes (at least 1; a wavefront's fill and drain steps count too).
  double makespan_ratio = 1;
};

// Elements placed by Place (analysis/order.h) for each step and worker, and
// the ratios above (all 1 for an empty data set). Errors as CheckCuts and
// ScheduleOrder.
StatusOr<Imbalance> MeasureImbalance(const LoopPlan& loop, const Cuts& cuts,
                                     const data::Dataset& data);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_PARTITION_H_
