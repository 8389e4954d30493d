#include "analysis/order.h"

#include <algorithm>
#include <numeric>
#include <tuple>

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

namespace {

// Which of `parts` equal ranges of [0, extent) holds x.
int64_t Part(int64_t x, int64_t extent, int64_t parts) {
  if (extent <= 0) return 0;
  __int128 p = static_cast<__int128>(x) * parts / extent;
  return std::clamp<int64_t>(static_cast<int64_t>(p), 0, parts - 1);
}

}  // namespace

Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& x, int64_t e, int64_t count) {
  const Schedule& s = loop.schedule;
  Placement p;
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      p.worker = static_cast<int>(Part(e, count, workers));
      break;
    case ScheduleKind::kModelParallel1D:
      p.worker = static_cast<int>(Part(x[s.dim], extent[s.dim], workers));
      break;
    case ScheduleKind::kConflictFree2D: {
      int64_t a = Part(x[s.local_dim], extent[s.local_dim], workers);
      int64_t b = Part(x[s.rotate_dim], extent[s.rotate_dim], workers);
      p.worker = static_cast<int>(a);
      p.step = ((b - a) % workers + workers) % workers;  // b = (a + t) mod P
      p.block = {a, b};
      break;
    }
    case ScheduleKind::kWavefront: {
      // Skewed coordinates and their extents (the skew is unit
      // lower-triangular with non-negative entries, so each skewed
      // coordinate ranges over [0, sum of T[r][c] * (extent[c] - 1)]).
      size_t d = x.size();
      for (size_t r = 0; r < d; ++r) {
        int64_t xr = 0, er = 1;
        for (size_t c = 0; c <= r; ++c) {
          xr += s.skew[r][c] * x[c];
          er += s.skew[r][c] * (extent[c] - 1);
        }
        p.block.push_back(Part(xr, er, s.blocks[r]));
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

StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const Dataset& data) {
  std::vector<int64_t> extent = SpaceExtent(data);
  if (extent.size() != loop.accesses.space.dims.size()) {
    return InvalidArgument("the loop's space has " +
                           std::to_string(loop.accesses.space.dims.size()) +
                           " dimensions but its data set has " + std::to_string(extent.size()));
  }
  if (workers < 1) return InvalidArgument("workers must be at least 1");
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
    Placement p = Place(loop, workers, extent, x, e, data.count);
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
