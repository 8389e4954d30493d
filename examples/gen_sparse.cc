// `sparse`: libsvm train/test files from a planted sparse logistic model.
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

enum Stream : uint64_t { kWeights = 1, kTrain, kTest, kFeaturePerm, kKinds };

Status Validate(const SparseOptions& o) {
  RIGEL_RETURN_IF_ERROR(ValidateTrainTest(o.out, o.test_out));
  if (o.count < 1 || o.test_count < 1 || o.dim < 1 || o.nnz < 1) {
    return InvalidArgument("count, test_count, dim and nnz must be positive");
  }
  RIGEL_RETURN_IF_ERROR(ValidateFeatureDraws(o.dim, o.nnz));
  return ValidateFeatureValues(o.zipf, o.weight_std, o.real_fraction);
}

struct Model {
  std::vector<double> w;
  std::vector<int64_t> feature_of_rank;
  std::vector<uint8_t> is_real;
};

// Writes `n` samples drawn from `rng`; returns the number of correct sign(w.x)
// predictions and of positive labels through the out-parameters.
std::string WriteSamples(const SparseOptions& o, const Model& m, const ZipfSampler& zipf, int64_t n,
                         SplitMix64 rng, int64_t* correct, int64_t* positives) {
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(n * o.nnz) * 9);
  std::vector<int64_t> feats;
  std::vector<double> vals;
  const int64_t lo = std::max<int64_t>(1, o.nnz / 2), hi = o.nnz + o.nnz / 2;
  *correct = 0;
  *positives = 0;
  for (int64_t s = 0; s < n; ++s) {
    const int64_t k = lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
    DrawFeatures(k, zipf, m.feature_of_rank, rng, &feats);
    DrawValues(feats, m.is_real, rng, &vals);
    double z = 0.0;
    for (size_t t = 0; t < feats.size(); ++t) z += m.w[feats[t]] * vals[t];
    const bool positive = rng.Uniform() < 1.0 / (1.0 + std::exp(-z));
    *positives += positive;
    *correct += (z > 0) == positive;
    buf.append(std::string_view(positive ? "+1" : "-1"));
    AppendFeatures(feats, vals, &m.is_real, &buf);
    buf.push_back('\n');
  }
  return fmt::to_string(buf);
}

}  // namespace

StatusOr<GenOutput> MakeSparse(const SparseOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  Model m;
  m.w.resize(static_cast<size_t>(o.dim));
  m.is_real.resize(static_cast<size_t>(o.dim));
  SplitMix64 weights(HashCoords(o.seed, kWeights));
  for (double& w : m.w) w = o.weight_std * weights.Normal();
  for (int64_t f = 0; f < o.dim; ++f) {
    m.is_real[f] = UnitDouble(HashCoords(o.seed, kKinds, f)) < o.real_fraction;
  }
  m.feature_of_rank = SeededPermutation(o.dim, HashCoords(o.seed, kFeaturePerm));
  ZipfSampler zipf(o.dim, o.zipf);

  int64_t train_correct, train_pos, test_correct, test_pos;
  GenOutput out;
  out.files.push_back(
      {o.out, WriteSamples(o, m, zipf, o.count, SplitMix64(HashCoords(o.seed, kTrain)),
                           &train_correct, &train_pos)});
  out.files.push_back(
      {o.test_out, WriteSamples(o, m, zipf, o.test_count, SplitMix64(HashCoords(o.seed, kTest)),
                                &test_correct, &test_pos)});
  const double total = static_cast<double>(o.count + o.test_count);
  out.summary = {
      fmt::format("count: {}", o.count),
      fmt::format("test count: {}", o.test_count),
      fmt::format("dim: {}", o.dim),
      fmt::format("nnz: {}", o.nnz),
      fmt::format("zipf: {}", o.zipf),
      fmt::format("positive fraction: {:.4f}", (train_pos + test_pos) / total),
      fmt::format("planted model train accuracy: {:.4f}",
                  static_cast<double>(train_correct) / static_cast<double>(o.count)),
      fmt::format("planted model test accuracy: {:.4f}",
                  static_cast<double>(test_correct) / static_cast<double>(o.test_count)),
  };
  return out;
}

StatusOr<GenReport> GenerateSparse(const SparseOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeSparse(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
