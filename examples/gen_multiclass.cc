// `multiclass`: libsvm train/test files with labels 0..classes-1 drawn from a
// planted softmax model (softmax regression).
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

// Keeps W (dim * classes doubles) and the per-sample score loop small.
constexpr int64_t kMaxClasses = 1000;

Status Validate(const MulticlassOptions& o) {
  RIGEL_RETURN_IF_ERROR(ValidateTrainTest(o.out, o.test_out));
  if (o.count < 1 || o.test_count < 1 || o.dim < 1 || o.nnz < 1) {
    return InvalidArgument("count, test_count, dim and nnz must be positive");
  }
  if (o.classes < 2 || o.classes > kMaxClasses) {
    return InvalidArgument(fmt::format("classes must be in [2, {}]", kMaxClasses));
  }
  RIGEL_RETURN_IF_ERROR(ValidateFeatureDraws(o.dim, o.nnz));
  return ValidateFeatureValues(o.zipf, o.weight_std, o.real_fraction);
}

struct Model {
  std::vector<double> w;  // w[f * classes + c]
  std::vector<int64_t> feature_of_rank;
  std::vector<uint8_t> is_real;
};

// Counts over the samples of one file.
struct Tally {
  int64_t correct = 0;             // argmax_c s_c == label
  std::vector<int64_t> per_class;  // label counts
};

// Writes `n` samples drawn from `rng` and tallies them into `tally`.
std::string WriteSamples(const MulticlassOptions& o, const Model& m, const ZipfSampler& zipf,
                         int64_t n, SplitMix64 rng, Tally* tally) {
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(n * o.nnz) * 9);
  std::vector<int64_t> feats;
  std::vector<double> vals, s(static_cast<size_t>(o.classes));
  const int64_t lo = std::max<int64_t>(1, o.nnz / 2), hi = o.nnz + o.nnz / 2;
  tally->per_class.assign(static_cast<size_t>(o.classes), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
    DrawFeatures(k, zipf, m.feature_of_rank, rng, &feats);
    DrawValues(feats, m.is_real, rng, &vals);
    std::fill(s.begin(), s.end(), 0.0);
    for (size_t t = 0; t < feats.size(); ++t) {
      for (int64_t c = 0; c < o.classes; ++c) s[c] += vals[t] * m.w[feats[t] * o.classes + c];
    }
    // argmax (first on ties), then a label drawn from softmax(s).
    const int64_t best = std::max_element(s.begin(), s.end()) - s.begin();
    const double top = s[best];  // s[best] itself is overwritten below
    double total = 0.0;
    for (double& v : s) total += (v = std::exp(v - top));
    double u = rng.Uniform() * total;
    int64_t label = 0;
    while (label + 1 < o.classes && u >= s[label]) u -= s[label++];
    tally->correct += label == best;
    ++tally->per_class[label];
    fmt::format_to(fmt::appender(buf), "{}", label);
    AppendFeatures(feats, vals, &m.is_real, &buf);
    buf.push_back('\n');
  }
  return fmt::to_string(buf);
}

}  // namespace

StatusOr<GenOutput> MakeMulticlass(const MulticlassOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  Model m;
  m.w.resize(static_cast<size_t>(o.dim * o.classes));
  m.is_real.resize(static_cast<size_t>(o.dim));
  SplitMix64 weights(HashCoords(o.seed, kWeights));
  for (double& w : m.w) w = o.weight_std * weights.Normal();
  for (int64_t f = 0; f < o.dim; ++f) {
    m.is_real[f] = UnitDouble(HashCoords(o.seed, kKinds, f)) < o.real_fraction;
  }
  m.feature_of_rank = SeededPermutation(o.dim, HashCoords(o.seed, kFeaturePerm));
  ZipfSampler zipf(o.dim, o.zipf);

  Tally train, test;
  GenOutput out;
  out.files.push_back(
      {o.out, WriteSamples(o, m, zipf, o.count, SplitMix64(HashCoords(o.seed, kTrain)), &train)});
  out.files.push_back({o.test_out, WriteSamples(o, m, zipf, o.test_count,
                                                SplitMix64(HashCoords(o.seed, kTest)), &test)});
  const int64_t majority =
      std::max_element(train.per_class.begin(), train.per_class.end()) - train.per_class.begin();
  const double test_count = static_cast<double>(o.test_count);
  out.summary = {
      fmt::format("count: {}", o.count),
      fmt::format("test count: {}", o.test_count),
      fmt::format("dim: {}", o.dim),
      fmt::format("classes: {}", o.classes),
      fmt::format("nnz: {}", o.nnz),
      fmt::format("zipf: {}", o.zipf),
      fmt::format("planted model train accuracy: {:.4f}",
                  static_cast<double>(train.correct) / static_cast<double>(o.count)),
      fmt::format("planted model test accuracy: {:.4f}", test.correct / test_count),
      fmt::format("majority class test accuracy: {:.4f}", test.per_class[majority] / test_count),
  };
  return out;
}

StatusOr<GenReport> GenerateMulticlass(const MulticlassOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeMulticlass(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
