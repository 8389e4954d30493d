#include "analysis/partition.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/order.h"
#include "common/check.h"
#include "common/json_reader.h"

namespace rigel::analysis {

using data::Dataset;
using json = nlohmann::ordered_json;

int64_t AxisCuts::Part(int64_t x) const {
  if (extent() <= 0) return 0;
  auto it = std::upper_bound(bounds.begin(), bounds.end(), x);
  return std::clamp<int64_t>((it - bounds.begin()) - 1, 0, parts() - 1);
}

AxisCuts EqualAxisCuts(int64_t extent, int64_t parts) {
  RIGEL_CHECK(parts >= 1);
  RIGEL_CHECK(extent >= 0);
  AxisCuts a;
  a.bounds.resize(static_cast<size_t>(parts) + 1);
  for (int64_t p = 0; p <= parts; ++p) {
    __int128 num = static_cast<__int128>(p) * extent;
    a.bounds[p] = static_cast<int64_t>((num + parts - 1) / parts);
  }
  return a;
}

namespace {

// `count` elements have coordinate `value`.
struct Run {
  int64_t value;
  int64_t count;
};

// The greedy prefix-sum cut over `runs` (ascending values in [0, extent),
// positive counts summing to `total`). See BalancedCuts.
AxisCuts CutRuns(const std::vector<Run>& runs, int64_t total, int64_t extent, int64_t parts) {
  if (total == 0) return EqualAxisCuts(extent, parts);
  AxisCuts a;
  a.bounds.assign(static_cast<size_t>(parts) + 1, 0);
  if (extent <= parts) {
    // Every value alone: the best any cut can do.
    for (int64_t p = 0; p <= parts; ++p) a.bounds[p] = std::min(p, extent);
    return a;
  }
  size_t i = 0;
  int64_t before = 0;  // elements with values below runs[i].value
  for (int64_t p = 1; p < parts; ++p) {
    // Counts are scaled by `parts` so the target p * total / parts is exact.
    __int128 target = static_cast<__int128>(p) * total;
    while (static_cast<__int128>(before + runs[i].count) * parts < target) {
      before += runs[i].count;
      ++i;  // stays in range: the last run ends at total * parts > target
    }
    // The prefix count crosses the target inside runs[i]: cut before it (lo)
    // or after it (hi), whichever prefix is nearer (ties: after).
    __int128 below = target - static_cast<__int128>(before) * parts;
    __int128 above = static_cast<__int128>(before + runs[i].count) * parts - target;
    int64_t b = above <= below ? runs[i].value + 1 : runs[i].value;
    // Every part a non-empty range: after the previous boundary, and leaving
    // one value for each later part.
    b = std::max(b, a.bounds[p - 1] + 1);
    b = std::min(b, extent - (parts - p));
    a.bounds[p] = b;
  }
  a.bounds[parts] = extent;
  return a;
}

// What is wrong with `bounds` as the bounds of an axis, or "" when nothing.
std::string BoundsProblem(const std::vector<int64_t>& bounds) {
  if (bounds.size() < 2) return "needs at least two bounds (one part)";
  if (bounds.front() != 0) return "must start at 0, found " + std::to_string(bounds.front());
  for (size_t p = 1; p < bounds.size(); ++p) {
    if (bounds[p] < bounds[p - 1]) {
      return "must not decrease, but bound " + std::to_string(p) + " is " +
             std::to_string(bounds[p]) + " after " + std::to_string(bounds[p - 1]);
    }
  }
  return "";
}

// What an axis of a schedule must be.
struct AxisSpec {
  int dim;
  int64_t extent;
  int64_t parts;
};

// The axes `loop`'s schedule cuts (see the file comment of partition.h).
// Requires CheckScheduleFits(loop, workers, extent.size()).
std::vector<AxisSpec> Axes(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                           int64_t count) {
  const Schedule& s = loop.schedule;
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      return {{-1, count, workers}};
    case ScheduleKind::kModelParallel1D:
      return {{s.dim, extent[s.dim], workers}};
    case ScheduleKind::kConflictFree2D:
      return {{s.local_dim, extent[s.local_dim], workers},
              {s.rotate_dim, extent[s.rotate_dim], workers}};
    case ScheduleKind::kWavefront: {
      std::vector<AxisSpec> axes;
      for (size_t r = 0; r < extent.size(); ++r) {
        axes.push_back({static_cast<int>(r), SkewedExtent(s, extent, r), s.blocks[r]});
      }
      return axes;
    }
    case ScheduleKind::kSerial:
      break;
  }
  return {};
}

size_t AxesOf(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kDataParallel:
    case ScheduleKind::kModelParallel1D:
      return 1;
    case ScheduleKind::kConflictFree2D:
      return 2;
    default:
      return 0;
  }
}

// Per-axis counts of coordinate values, dense (a histogram) when the extent
// is small next to the number of elements, else the coordinates themselves.
class ValueCounter {
 public:
  ValueCounter(int64_t extent, int64_t count) : extent_(extent) {
    if (extent <= 2 * count + 1024) {
      dense_ = true;
      hist_.assign(static_cast<size_t>(extent), 0);
    } else {
      coords_.reserve(static_cast<size_t>(count));
    }
  }
  // Counts `x`; a value outside [0, extent) counts as the nearest end, the
  // part Place puts it in.
  void Add(int64_t x) {
    x = std::clamp<int64_t>(x, 0, std::max<int64_t>(extent_ - 1, 0));
    if (extent_ <= 0) return;
    if (dense_) {
      ++hist_[x];
    } else {
      coords_.push_back(x);
    }
  }
  AxisCuts Cut(int64_t parts) {
    if (extent_ <= 0) return EqualAxisCuts(0, parts);
    return dense_ ? BalancedCutsFromHistogram(hist_, parts)
                  : BalancedCuts(std::move(coords_), extent_, parts);
  }

 private:
  int64_t extent_;
  bool dense_ = false;
  std::vector<int64_t> hist_;
  std::vector<int64_t> coords_;
};

}  // namespace

AxisCuts BalancedCuts(std::vector<int64_t> coords, int64_t extent, int64_t parts) {
  RIGEL_CHECK(parts >= 1);
  RIGEL_CHECK(extent >= 0);
  std::sort(coords.begin(), coords.end());
  RIGEL_CHECK_MSG(coords.empty() || (coords.front() >= 0 && coords.back() < extent),
                  "a coordinate lies outside [0, extent)");
  std::vector<Run> runs;
  for (int64_t x : coords) {
    if (runs.empty() || runs.back().value != x) {
      runs.push_back({x, 1});
    } else {
      ++runs.back().count;
    }
  }
  return CutRuns(runs, static_cast<int64_t>(coords.size()), extent, parts);
}

AxisCuts BalancedCutsFromHistogram(const std::vector<int64_t>& histogram, int64_t parts) {
  RIGEL_CHECK(parts >= 1);
  std::vector<Run> runs;
  int64_t total = 0;
  for (size_t v = 0; v < histogram.size(); ++v) {
    RIGEL_CHECK_MSG(histogram[v] >= 0, "negative count in a histogram");
    if (histogram[v] == 0) continue;
    runs.push_back({static_cast<int64_t>(v), histogram[v]});
    total += histogram[v];
  }
  return CutRuns(runs, total, static_cast<int64_t>(histogram.size()), parts);
}

int64_t SkewedCoord(const Schedule& s, const std::vector<int64_t>& x, size_t r) {
  int64_t v = 0;
  for (size_t c = 0; c <= r; ++c) v += s.skew[r][c] * x[c];
  return v;
}

int64_t SkewedExtent(const Schedule& s, const std::vector<int64_t>& extent, size_t r) {
  int64_t v = 1;
  for (size_t c = 0; c <= r; ++c) v += s.skew[r][c] * (extent[c] - 1);
  return std::max<int64_t>(v, 0);
}

Status CheckScheduleFits(const LoopPlan& loop, int workers, size_t dims) {
  const std::vector<std::string>& names = loop.accesses.space.dims;
  if (names.size() != dims) {
    return InvalidArgument("the loop's space has " + std::to_string(names.size()) +
                           " dimensions but its data set has " + std::to_string(dims));
  }
  if (workers < 1) return InvalidArgument("workers must be at least 1");
  const Schedule& s = loop.schedule;
  auto is_dim = [&](int d) { return d >= 0 && static_cast<size_t>(d) < dims; };
  std::string kind = ScheduleKindName(s.kind);
  switch (s.kind) {
    case ScheduleKind::kModelParallel1D:
      if (!is_dim(s.dim)) {
        return InvalidArgument(kind + " partitions dimension " + std::to_string(s.dim) +
                               ", which the loop's space does not have");
      }
      break;
    case ScheduleKind::kConflictFree2D:
      if (!is_dim(s.local_dim) || !is_dim(s.rotate_dim) || s.local_dim == s.rotate_dim) {
        return InvalidArgument(kind + " needs two different dimensions of the loop's space, got " +
                               std::to_string(s.local_dim) + " and " +
                               std::to_string(s.rotate_dim));
      }
      break;
    case ScheduleKind::kWavefront: {
      bool square = s.skew.size() == dims;
      for (const auto& row : s.skew) square = square && row.size() == dims;
      if (!square) {
        return InvalidArgument(kind + " skew must be a " + std::to_string(dims) + " x " +
                               std::to_string(dims) + " matrix");
      }
      if (s.blocks.size() != dims) {
        return InvalidArgument(kind + " blocks must have one count per dimension");
      }
      for (int64_t b : s.blocks) {
        if (b < 1) return InvalidArgument(kind + " blocks must be at least 1 per dimension");
      }
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

Cuts EqualCuts(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
               int64_t count) {
  Cuts c;
  c.kind = loop.schedule.kind;
  c.workers = workers;
  for (const AxisSpec& a : Axes(loop, workers, extent, count)) {
    c.axes.push_back(EqualAxisCuts(a.extent, a.parts));
    c.axes.back().dim = a.dim;
  }
  return c;
}

StatusOr<Cuts> MakeCuts(const LoopPlan& loop, int workers, const data::Dataset& data) {
  std::vector<int64_t> extent = SpaceExtent(data);
  RIGEL_RETURN_IF_ERROR(CheckScheduleFits(loop, workers, extent.size()));
  const Schedule& s = loop.schedule;
  if (s.kind == ScheduleKind::kDataParallel || s.kind == ScheduleKind::kSerial) {
    return EqualCuts(loop, workers, extent, data.count);  // equal counts, or nothing to cut
  }
  std::vector<AxisSpec> axes = Axes(loop, workers, extent, data.count);
  Cuts c;
  c.kind = s.kind;
  c.workers = workers;
  std::vector<ValueCounter> counters;
  for (const AxisSpec& a : axes) counters.emplace_back(a.extent, data.count);
  for (int64_t e = 0; e < data.count; ++e) {
    std::vector<int64_t> x = ElementCoords(data, e);
    for (size_t k = 0; k < axes.size(); ++k) {
      counters[k].Add(s.kind == ScheduleKind::kWavefront ? SkewedCoord(s, x, k) : x[axes[k].dim]);
    }
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    c.axes.push_back(counters[k].Cut(axes[k].parts));
    c.axes.back().dim = axes[k].dim;
  }
  return c;
}

Status CheckCuts(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& extent,
                 int64_t count) {
  RIGEL_RETURN_IF_ERROR(CheckScheduleFits(loop, cuts.workers, extent.size()));
  const Schedule& s = loop.schedule;
  if (cuts.kind != s.kind) {
    return InvalidArgument(std::string("cuts: made for ") + ScheduleKindName(cuts.kind) +
                           ", but the loop's schedule is " + ScheduleKindName(s.kind));
  }
  std::vector<AxisSpec> want = Axes(loop, cuts.workers, extent, count);
  if (cuts.axes.size() != want.size()) {
    return InvalidArgument("cuts: " + std::string(ScheduleKindName(s.kind)) + " here has " +
                           std::to_string(want.size()) + " axes, the cuts have " +
                           std::to_string(cuts.axes.size()));
  }
  const std::vector<std::string>& names = loop.accesses.space.dims;
  auto axis_name = [&](int dim) -> std::string {
    if (s.kind == ScheduleKind::kDataParallel) return "the element count";
    if (s.kind == ScheduleKind::kWavefront) return "skewed coordinate " + std::to_string(dim);
    return "the space's " + names[dim];
  };
  for (size_t k = 0; k < want.size(); ++k) {
    const AxisCuts& a = cuts.axes[k];
    std::string key = "cuts: axes[" + std::to_string(k) + "]: ";
    std::string problem = BoundsProblem(a.bounds);
    if (!problem.empty()) return InvalidArgument(key + "bounds " + problem);
    if (a.dim != want[k].dim) {
      return InvalidArgument(key + "cuts dimension " + std::to_string(a.dim) + ", but " +
                             ScheduleKindName(s.kind) + " cuts " + axis_name(want[k].dim) +
                             " (dimension " + std::to_string(want[k].dim) + ") there");
    }
    if (a.extent() != want[k].extent) {
      return InvalidArgument(key + "extent " + std::to_string(a.extent()) + ", but " +
                             axis_name(want[k].dim) + " has " + std::to_string(want[k].extent));
    }
    if (a.parts() != want[k].parts) {
      return InvalidArgument(key + std::to_string(a.parts()) + " parts, but the schedule has " +
                             std::to_string(want[k].parts));
    }
  }
  return Status::Ok();
}

std::string CutsToJson(const Cuts& cuts) {
  json j;
  j["schedule"] = ScheduleKindName(cuts.kind);
  j["workers"] = cuts.workers;
  j["axes"] = json::array();
  for (const AxisCuts& a : cuts.axes) {
    json aj;
    aj["dim"] = a.dim;
    aj["extent"] = a.bounds.empty() ? 0 : a.extent();
    aj["bounds"] = a.bounds;
    j["axes"].push_back(std::move(aj));
  }
  return j.dump();
}

namespace {

// Axis `k` of cuts of `kind` on `workers` workers, as CutsFromJson reads it.
StatusOr<AxisCuts> ReadAxis(const JsonValue& aj, size_t k, ScheduleKind kind, int workers) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  AxisCuts a;
  const bool element_axis = kind == ScheduleKind::kDataParallel;
  RIGEL_ASSIGN_OR_RETURN(int64_t dim,
                         aj.GetIntIn("dim", element_axis ? -1 : 0, element_axis ? -1 : 64));
  if (kind == ScheduleKind::kWavefront && dim != static_cast<int64_t>(k)) {
    return aj.FieldError("dim", "wavefront axis " + std::to_string(k) + " must have dim " +
                                    std::to_string(k) + ", found " + std::to_string(dim));
  }
  a.dim = static_cast<int>(dim);
  RIGEL_ASSIGN_OR_RETURN(int64_t extent, aj.GetIntIn("extent", 0, kMax));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> bounds, aj.GetArray("bounds"));
  for (const JsonValue& b : bounds) {
    RIGEL_ASSIGN_OR_RETURN(int64_t x, b.AsIntIn(0, kMax));
    a.bounds.push_back(x);
  }
  std::string problem = BoundsProblem(a.bounds);
  if (!problem.empty()) return aj.FieldError("bounds", problem);
  if (a.extent() != extent) {
    return aj.FieldError("bounds", "must end at the extent " + std::to_string(extent) + ", found " +
                                       std::to_string(a.extent()));
  }
  if (kind != ScheduleKind::kWavefront && a.parts() != workers) {
    return aj.FieldError("bounds", std::to_string(a.parts()) + " parts, but " +
                                       ScheduleKindName(kind) + " on " + std::to_string(workers) +
                                       " workers has " + std::to_string(workers));
  }
  return a;
}

}  // namespace

StatusOr<Cuts> CutsFromJson(const std::string& text, const std::string& what) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, what));
  Cuts c;
  RIGEL_ASSIGN_OR_RETURN(JsonValue schedule, j.Get("schedule"));
  RIGEL_ASSIGN_OR_RETURN(std::string kind, schedule.AsString());
  if (!ParseScheduleKind(kind, &c.kind)) {
    return schedule.Error("unknown schedule '" + kind +
                          "' (expected one of data_parallel, model_parallel_1d, "
                          "conflict_free_2d, wavefront, serial)");
  }
  RIGEL_ASSIGN_OR_RETURN(int64_t workers, j.GetIntIn("workers", 1, 65536));
  c.workers = static_cast<int>(workers);
  RIGEL_ASSIGN_OR_RETURN(JsonValue axes_value, j.Get("axes"));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> axes, axes_value.Elements());
  const size_t want = AxesOf(c.kind);
  if (c.kind == ScheduleKind::kWavefront ? axes.size() < 2 : axes.size() != want) {
    return axes_value.Error(
        kind + " has " +
        (c.kind == ScheduleKind::kWavefront ? std::string("at least 2") : std::to_string(want)) +
        " axes, found " + std::to_string(axes.size()));
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    RIGEL_ASSIGN_OR_RETURN(AxisCuts a, ReadAxis(axes[k], k, c.kind, c.workers));
    c.axes.push_back(std::move(a));
  }
  if (c.kind == ScheduleKind::kConflictFree2D && c.axes[0].dim == c.axes[1].dim) {
    return axes[1].FieldError("dim", "conflict_free_2d cuts two different dimensions, found " +
                                         std::to_string(c.axes[1].dim) + " twice");
  }
  return c;
}

StatusOr<Imbalance> MeasureImbalance(const LoopPlan& loop, const Cuts& cuts,
                                     const data::Dataset& data) {
  std::vector<int64_t> extent = SpaceExtent(data);
  RIGEL_RETURN_IF_ERROR(CheckCuts(loop, cuts, extent, data.count));
  Imbalance m;
  switch (cuts.kind) {
    case ScheduleKind::kDataParallel:
    case ScheduleKind::kModelParallel1D:
      m.workers = cuts.workers;
      break;
    case ScheduleKind::kConflictFree2D:
      m.workers = m.steps = cuts.workers;
      break;
    case ScheduleKind::kWavefront:
      m.workers = cuts.axes[0].parts();
      for (const AxisCuts& a : cuts.axes) m.steps += a.parts() - 1;
      break;
    case ScheduleKind::kSerial:
      break;
  }
  m.load.assign(static_cast<size_t>(m.steps), std::vector<int64_t>(m.workers, 0));
  m.per_worker.assign(static_cast<size_t>(m.workers), 0);
  for (int64_t e = 0; e < data.count; ++e) {
    Placement p = Place(loop, cuts, ElementCoords(data, e), e);
    ++m.load[p.step][p.worker];
    ++m.per_worker[p.worker];
  }
  if (data.count == 0) return m;
  int64_t cell_max = 0, busiest_sum = 0;
  for (const std::vector<int64_t>& step : m.load) {
    int64_t busiest = *std::max_element(step.begin(), step.end());
    cell_max = std::max(cell_max, busiest);
    busiest_sum += busiest;
  }
  double n = static_cast<double>(data.count);
  double per_worker = n / static_cast<double>(m.workers);
  m.cell_max_over_mean =
      static_cast<double>(cell_max) / (per_worker / static_cast<double>(m.steps));
  m.worker_max_over_mean =
      static_cast<double>(*std::max_element(m.per_worker.begin(), m.per_worker.end())) / per_worker;
  m.makespan_ratio = static_cast<double>(busiest_sum) / per_worker;
  return m;
}

}  // namespace rigel::analysis
