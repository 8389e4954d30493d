// `dense`: CSV rows `label,x0,...,x{dim-1}` from a planted dense logistic model.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

enum Stream : uint64_t { kWeights = 1, kRows };

Status Validate(const DenseOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.count < 1 || o.dim < 1) return InvalidArgument("count and dim must be positive");
  if (!(o.scale >= 0) || !std::isfinite(o.scale)) {
    return InvalidArgument("scale must be finite and >= 0");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<GenOutput> MakeDense(const DenseOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  // w_k ~ N(0, scale^2 / dim) makes w.x ~ N(0, scale^2) whatever dim is, so
  // `scale` alone sets how separable the classes are.
  std::vector<double> w(static_cast<size_t>(o.dim));
  SplitMix64 weights(HashCoords(o.seed, kWeights));
  const double w_std = o.scale / std::sqrt(static_cast<double>(o.dim));
  for (double& x : w) x = w_std * weights.Normal();

  SplitMix64 rng(HashCoords(o.seed, kRows));
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(o.count * (o.dim * 8 + 2)));
  std::vector<double> x(static_cast<size_t>(o.dim));
  int64_t correct = 0, positives = 0;
  for (int64_t n = 0; n < o.count; ++n) {
    double z = 0.0;
    for (int64_t k = 0; k < o.dim; ++k) {
      // Keep the 4 decimals the file holds, so the planted accuracy is that of
      // the bytes written; + 0.0 avoids "-0.0000".
      x[k] = std::nearbyint(rng.Normal() * 1e4) / 1e4 + 0.0;
      z += w[k] * x[k];
    }
    const bool positive = rng.Uniform() < 1.0 / (1.0 + std::exp(-z));
    positives += positive;
    correct += (z > 0) == positive;
    buf.push_back(positive ? '1' : '0');
    for (int64_t k = 0; k < o.dim; ++k) fmt::format_to(fmt::appender(buf), ",{:.4f}", x[k]);
    buf.push_back('\n');
  }
  const double count = static_cast<double>(o.count);
  GenOutput out;
  out.files.push_back({o.out, fmt::to_string(buf)});
  out.summary = {
      fmt::format("count: {}", o.count),
      fmt::format("dim: {}", o.dim),
      fmt::format("positive fraction: {:.4f}", positives / count),
      fmt::format("planted accuracy: {:.4f}", correct / count),
  };
  return out;
}

StatusOr<GenReport> GenerateDense(const DenseOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeDense(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
