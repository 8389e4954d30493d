// `fm`: libsvm train/test files (labels 0/1) from a planted order-2
// factorization machine whose pairwise term dominates its linear one.
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

enum Stream : uint64_t { kLinear = 1, kFactors, kTrain, kTest, kFeaturePerm };

Status Validate(const FmOptions& o) {
  RIGEL_RETURN_IF_ERROR(ValidateTrainTest(o.out, o.test_out));
  if (o.count < 1 || o.test_count < 1 || o.dim < 1 || o.factors < 1) {
    return InvalidArgument("count, test_count, dim and factors must be positive");
  }
  if (o.nnz < 2) return InvalidArgument("nnz must be at least 2 (pairs of features)");
  RIGEL_RETURN_IF_ERROR(ValidateFeatureDraws(o.dim, o.nnz));
  if (!(o.zipf >= 0) || !std::isfinite(o.zipf) || !(o.linear_std >= 0) ||
      !std::isfinite(o.linear_std) || !(o.factor_std >= 0) || !std::isfinite(o.factor_std)) {
    return InvalidArgument("zipf, linear_std and factor_std must be finite and >= 0");
  }
  return Status::Ok();
}

struct Model {
  std::vector<double> w;  // linear weights
  std::vector<double> v;  // v[f * factors + q]
  std::vector<int64_t> feature_of_rank;
};

// Counts over the samples of one file.
struct Tally {
  int64_t correct = 0;         // y > 0 matches the label
  int64_t linear_correct = 0;  // w . x > 0 matches the label
  int64_t positives = 0;
};

// Writes `n` samples drawn from `rng` and tallies them into `tally`.
std::string WriteSamples(const FmOptions& o, const Model& m, const ZipfSampler& zipf, int64_t n,
                         SplitMix64 rng, Tally* tally) {
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(n * o.nnz) * 7);
  std::vector<int64_t> feats;
  const std::vector<double> ones(static_cast<size_t>(o.nnz), 1.0);  // binary features
  std::vector<double> sum(static_cast<size_t>(o.factors));
  for (int64_t i = 0; i < n; ++i) {
    DrawFeatures(o.nnz, zipf, m.feature_of_rank, rng, &feats);
    // sum_{i<j} <v_i, v_j> = (|sum_i v_i|^2 - sum_i |v_i|^2) / 2 for binary x.
    double linear = 0.0, squares = 0.0;
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t f : feats) {
      linear += m.w[f];
      for (int64_t q = 0; q < o.factors; ++q) {
        const double vq = m.v[f * o.factors + q];
        sum[q] += vq;
        squares += vq * vq;
      }
    }
    double pairwise = -squares;
    for (double s : sum) pairwise += s * s;
    const double y = linear + 0.5 * pairwise;
    const bool positive = rng.Uniform() < 1.0 / (1.0 + std::exp(-y));
    tally->positives += positive;
    tally->correct += (y > 0) == positive;
    tally->linear_correct += (linear > 0) == positive;
    buf.push_back(positive ? '1' : '0');
    AppendFeatures(feats, ones, nullptr, &buf);
    buf.push_back('\n');
  }
  return fmt::to_string(buf);
}

}  // namespace

StatusOr<GenOutput> MakeFm(const FmOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  Model m;
  m.w.resize(static_cast<size_t>(o.dim));
  m.v.resize(static_cast<size_t>(o.dim * o.factors));
  SplitMix64 linear(HashCoords(o.seed, kLinear)), factors(HashCoords(o.seed, kFactors));
  for (double& w : m.w) w = o.linear_std * linear.Normal();
  // Distinct pairs' products are uncorrelated with variance factors * std^4,
  // so this std makes the pairwise term's standard deviation 2 * factor_std.
  const double pairs = static_cast<double>(o.nnz * (o.nnz - 1) / 2);
  const double v_std =
      std::sqrt(2.0 * o.factor_std / std::sqrt(pairs * static_cast<double>(o.factors)));
  for (double& v : m.v) v = v_std * factors.Normal();
  m.feature_of_rank = SeededPermutation(o.dim, HashCoords(o.seed, kFeaturePerm));
  ZipfSampler zipf(o.dim, o.zipf);

  Tally train, test;
  GenOutput out;
  out.files.push_back(
      {o.out, WriteSamples(o, m, zipf, o.count, SplitMix64(HashCoords(o.seed, kTrain)), &train)});
  out.files.push_back({o.test_out, WriteSamples(o, m, zipf, o.test_count,
                                                SplitMix64(HashCoords(o.seed, kTest)), &test)});
  const double test_count = static_cast<double>(o.test_count);
  out.summary = {
      fmt::format("count: {}", o.count),
      fmt::format("test count: {}", o.test_count),
      fmt::format("dim: {}", o.dim),
      fmt::format("nnz: {}", o.nnz),
      fmt::format("factors: {}", o.factors),
      fmt::format("zipf: {}", o.zipf),
      fmt::format("positive fraction: {:.4f}",
                  static_cast<double>(train.positives + test.positives) /
                      static_cast<double>(o.count + o.test_count)),
      fmt::format("planted model train accuracy: {:.4f}",
                  static_cast<double>(train.correct) / static_cast<double>(o.count)),
      fmt::format("planted model test accuracy: {:.4f}", test.correct / test_count),
      fmt::format("planted linear part test accuracy: {:.4f}", test.linear_correct / test_count),
  };
  return out;
}

StatusOr<GenReport> GenerateFm(const FmOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeFm(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
