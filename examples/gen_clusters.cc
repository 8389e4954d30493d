// `clusters`: Gaussian blobs around planted centres, CSV `cluster,x0,...` (k-means).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

enum Stream : uint64_t { kCentres = 1, kPoints };

// Tries per centre before keeping the farthest one drawn.
constexpr int64_t kMaxCentreTries = 100;

Status Validate(const ClustersOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.count < 1 || o.dim < 1 || o.k < 1) {
    return InvalidArgument("count, dim and k must be positive");
  }
  if (!(o.spread >= 0) || !std::isfinite(o.spread) || !(o.separation > 0) ||
      !std::isfinite(o.separation)) {
    return InvalidArgument("spread must be finite and >= 0, separation finite and > 0");
  }
  return Status::Ok();
}

// Rounds to `scale` (1e4: 4 decimals) as the file holds it; + 0.0 avoids "-0".
double Round(double x, double scale) { return std::nearbyint(x * scale) / scale + 0.0; }

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(d);
}

// Centre c is drawn from its own stream per try, so it does not depend on how
// many tries earlier centres needed.
std::vector<std::vector<double>> DrawCentres(const ClustersOptions& o) {
  const double min_distance = 2.0 * o.spread * std::sqrt(static_cast<double>(o.dim));
  std::vector<std::vector<double>> centres;
  std::vector<double> best, candidate(static_cast<size_t>(o.dim));
  for (int64_t c = 0; c < o.k; ++c) {
    double best_gap = -1.0;
    for (int64_t t = 0; t < kMaxCentreTries && best_gap < min_distance; ++t) {
      SplitMix64 rng(HashCoords(o.seed, kCentres, c, t));
      for (double& x : candidate) x = Round(o.separation * (2.0 * rng.Uniform() - 1.0), 1e6);
      double gap = std::numeric_limits<double>::infinity();
      for (const auto& earlier : centres) gap = std::min(gap, Distance(candidate, earlier));
      if (gap > best_gap) best_gap = gap, best = candidate;
    }
    centres.push_back(best);
  }
  return centres;
}

}  // namespace

StatusOr<GenOutput> MakeClusters(const ClustersOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  const std::vector<std::vector<double>> centres = DrawCentres(o);
  fmt::memory_buffer centre_buf;
  double min_gap = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < centres.size(); ++c) {
    for (size_t i = 0; i < centres[c].size(); ++i) {
      if (i > 0) centre_buf.push_back(',');
      fmt::format_to(fmt::appender(centre_buf), "{:.6f}", centres[c][i]);
    }
    centre_buf.push_back('\n');
    for (size_t e = 0; e < c; ++e) min_gap = std::min(min_gap, Distance(centres[c], centres[e]));
  }

  SplitMix64 rng(HashCoords(o.seed, kPoints));
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(o.count * (o.dim * 9 + 4)));
  double inertia = 0.0;
  for (int64_t n = 0; n < o.count; ++n) {
    const int64_t c = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(o.k)));
    fmt::format_to(fmt::appender(buf), "{}", c);
    for (int64_t i = 0; i < o.dim; ++i) {
      // The inertia is that of the values as written.
      const double x = Round(centres[c][i] + o.spread * rng.Normal(), 1e4);
      inertia += (x - centres[c][i]) * (x - centres[c][i]);
      fmt::format_to(fmt::appender(buf), ",{:.4f}", x);
    }
    buf.push_back('\n');
  }
  GenOutput out;
  out.files.push_back({o.out, fmt::to_string(buf)});
  out.files.push_back({o.out + ".centres", fmt::to_string(centre_buf)});
  out.summary = {
      fmt::format("count: {}", o.count),
      fmt::format("dim: {}", o.dim),
      fmt::format("k: {}", o.k),
      fmt::format("planted inertia: {:.4f}", inertia / static_cast<double>(o.count)),
      // With one centre there is no pair; 0 keeps the line a number.
      fmt::format("min centre distance: {:.4f}", o.k > 1 ? min_gap : 0.0),
  };
  return out;
}

StatusOr<GenReport> GenerateClusters(const ClustersOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeClusters(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
