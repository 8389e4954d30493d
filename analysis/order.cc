#include "analysis/order.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "common/check.h"

namespace rigel::analysis {

using frontend::DataKind;
using frontend::Dataset;

std::vector<int64_t> SpaceExtent(const Dataset& data) {
  switch (data.kind) {
    case DataKind::kTriples:
    case DataKind::kGrid:
      return {data.rows, data.cols};
    default:
      return {data.count};
  }
}

std::vector<int64_t> ElementCoords(const Dataset& data, int64_t e) {
  switch (data.kind) {
    case DataKind::kTriples:
      return {data.ti[e], data.tj[e]};
    case DataKind::kGrid:
      return {e / data.cols, e % data.cols};
    default:
      return {e};
  }
}

Placement Place(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& x, int64_t e) {
  const Schedule& s = loop.schedule;
  RIGEL_CHECK_MSG(cuts.kind == s.kind, "cuts made for another schedule");
  Placement p;
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      RIGEL_CHECK(cuts.axes.size() == 1);
      p.worker = static_cast<int>(cuts.axes[0].Part(e));
      break;
    case ScheduleKind::kModelParallel1D:
      RIGEL_CHECK(cuts.axes.size() == 1);
      p.worker = static_cast<int>(cuts.axes[0].Part(x[s.dim]));
      break;
    case ScheduleKind::kConflictFree2D: {
      RIGEL_CHECK(cuts.axes.size() == 2);
      int64_t workers = cuts.workers;
      int64_t a = cuts.axes[0].Part(x[s.local_dim]);
      int64_t b = cuts.axes[1].Part(x[s.rotate_dim]);
      p.worker = static_cast<int>(a);
      p.step = ((b - a) % workers + workers) % workers;  // b = (a + t) mod P
      p.block = {a, b};
      break;
    }
    case ScheduleKind::kWavefront: {
      // Blocks of the skewed space; a block only depends on blocks with no
      // larger coordinate, which run on earlier steps.
      RIGEL_CHECK(cuts.axes.size() == x.size());
      for (size_t r = 0; r < x.size(); ++r) {
        p.block.push_back(cuts.axes[r].Part(SkewedCoord(s, x, r)));
      }
      p.worker = static_cast<int>(p.block[0]);
      p.step = std::accumulate(p.block.begin(), p.block.end(), int64_t{0});
      break;
    }
    case ScheduleKind::kSerial:
      break;
  }
  return p;
}

Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& x, int64_t e, int64_t count) {
  return Place(loop, EqualCuts(loop, workers, extent, count), x, e);
}

StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const Dataset& data) {
  std::vector<int64_t> extent = SpaceExtent(data);
  RIGEL_RETURN_IF_ERROR(CheckScheduleFits(loop, workers, extent.size()));
  return ScheduleOrder(loop, EqualCuts(loop, workers, extent, data.count), data);
}

StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, const Cuts& cuts,
                                             const Dataset& data) {
  RIGEL_RETURN_IF_ERROR(CheckCuts(loop, cuts, SpaceExtent(data), data.count));
  struct Key {
    int64_t step;
    int worker;
    std::vector<int64_t> coords;
    int64_t e;
  };
  bool lexicographic = loop.ordered || loop.schedule.kind == ScheduleKind::kWavefront;
  std::vector<Key> keys;
  keys.reserve(static_cast<size_t>(data.count));
  for (int64_t e = 0; e < data.count; ++e) {
    std::vector<int64_t> x = ElementCoords(data, e);
    Placement p = Place(loop, cuts, x, e);
    keys.push_back({p.step, p.worker, lexicographic ? std::move(x) : std::vector<int64_t>{}, e});
  }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.step, a.worker, a.coords, a.e) < std::tie(b.step, b.worker, b.coords, b.e);
  });
  std::vector<int64_t> order;
  order.reserve(keys.size());
  for (const Key& k : keys) order.push_back(k.e);
  return order;
}

}  // namespace rigel::analysis
