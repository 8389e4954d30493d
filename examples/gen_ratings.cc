// `ratings`: planted low-rank matrix plus Gaussian noise, Zipf-skewed pairs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

// Independent streams, so changing how many values one part draws does not
// shift the others (e.g. a different count keeps the same factors).
enum Stream : uint64_t { kFactors = 1, kPairs, kNoise, kRowPerm, kColPerm, kRowBias };

Status Validate(const RatingsOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.rows < 1 || o.cols < 1 || o.count < 1 || o.rank < 1) {
    return InvalidArgument("rows, cols, count and rank must be positive");
  }
  constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();
  if (o.rows > kMaxIndex || o.cols > kMaxIndex) {
    return InvalidArgument("rows and cols must fit in 32 bits (loaders use int32)");
  }
  // Half the cells at most: beyond that, rejection of repeated pairs under a
  // skewed law takes very many draws, and the data stops being sparse anyway.
  if (static_cast<double>(o.count) >
      0.5 * static_cast<double>(o.rows) * static_cast<double>(o.cols)) {
    return InvalidArgument(
        fmt::format("count {} exceeds half of rows x cols ({} x {})", o.count, o.rows, o.cols));
  }
  if (!(o.noise >= 0) || !(o.zipf >= 0) || !(o.factor_std >= 0) || !std::isfinite(o.mu) ||
      !std::isfinite(o.noise) || !std::isfinite(o.zipf) || !std::isfinite(o.factor_std) ||
      !(o.row_bias_std >= 0) || !std::isfinite(o.row_bias_std)) {
    return InvalidArgument("noise, zipf and factor_std must be finite and >= 0");
  }
  return Status::Ok();
}

// Rounds to the 4 decimals the file keeps, so statistics describe the bytes
// written. Adding 0.0 turns -0.0 into 0.0 (no "-0.0000" in files).
double Round4(double v) { return std::nearbyint(v * 1e4) / 1e4 + 0.0; }

// Set of (i, j) cells already written. A bitmap is several times faster than
// a hash set (generation time is dominated by this lookup); very large shapes
// fall back to a hash set so memory stays proportional to count.
class PairSet {
 public:
  PairSet(int64_t rows, int64_t cols, int64_t count) : cols_(static_cast<uint64_t>(cols)) {
    const uint64_t cells = static_cast<uint64_t>(rows) * cols_;
    if (cells <= (uint64_t{1} << 30)) {
      bits_.assign((cells + 63) / 64, 0);
    } else {
      set_.reserve(static_cast<size_t>(count) * 2);
    }
  }
  // Adds (i, j); returns false if it was already present.
  bool Insert(int64_t i, int64_t j) {
    const uint64_t key = static_cast<uint64_t>(i) * cols_ + static_cast<uint64_t>(j);
    if (bits_.empty()) return set_.insert(key).second;
    uint64_t& word = bits_[key >> 6];
    const uint64_t bit = uint64_t{1} << (key & 63);
    if (word & bit) return false;
    word |= bit;
    return true;
  }

 private:
  uint64_t cols_;
  std::vector<uint64_t> bits_;
  std::unordered_set<uint64_t> set_;
};

}  // namespace

StatusOr<GenOutput> MakeRatings(const RatingsOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  const int64_t r = o.rank;

  std::vector<double> u(static_cast<size_t>(o.rows * r)), v(static_cast<size_t>(o.cols * r));
  SplitMix64 factors(HashCoords(o.seed, kFactors));
  for (double& x : u) x = o.factor_std * factors.Normal();
  for (double& x : v) x = o.factor_std * factors.Normal();
  std::vector<double> row_bias(static_cast<size_t>(o.rows), 0.0);
  SplitMix64 biases(HashCoords(o.seed, kRowBias));
  for (double& b : row_bias) b = o.row_bias_std * biases.Normal();

  // Popularity rank -> id, shuffled so popular rows are spread over the ids.
  std::vector<int64_t> row_of_rank = SeededPermutation(o.rows, HashCoords(o.seed, kRowPerm));
  std::vector<int64_t> col_of_rank = SeededPermutation(o.cols, HashCoords(o.seed, kColPerm));
  ZipfSampler row_zipf(o.rows, o.zipf), col_zipf(o.cols, o.zipf);

  SplitMix64 pairs(HashCoords(o.seed, kPairs));
  SplitMix64 noise(HashCoords(o.seed, kNoise));
  PairSet seen(o.rows, o.cols, o.count);

  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(o.count) * 18);
  std::vector<int64_t> row_count(static_cast<size_t>(o.rows), 0);
  int64_t max_i = 0, max_j = 0, written = 0, draws = 0;
  const int64_t max_draws = 50 * o.count + 1000;
  double noise_sq = 0.0, value_sq = 0.0;
  while (written < o.count) {
    if (++draws > max_draws) {
      return InvalidArgument(fmt::format(
          "only {} distinct pairs after {} draws; lower --count or --zipf", written, draws - 1));
    }
    int64_t i = row_of_rank[row_zipf.Sample(pairs.Uniform())];
    int64_t j = col_of_rank[col_zipf.Sample(pairs.Uniform())];
    if (!seen.Insert(i, j)) continue;  // repeated pair: a matrix has one value per cell
    double dot = 0.0;
    for (int64_t k = 0; k < r; ++k) dot += u[i * r + k] * v[j * r + k];
    double clean = o.mu + row_bias[i] + dot;
    double value = Round4(clean + o.noise * noise.Normal());
    noise_sq += (value - clean) * (value - clean);
    value_sq += value * value;
    fmt::format_to(fmt::appender(buf), "{},{},{:.4f}\n", i, j, value);
    ++row_count[i];
    max_i = std::max(max_i, i);
    max_j = std::max(max_j, j);
    ++written;
  }

  std::vector<int64_t> sorted = row_count;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(written);
  GenOutput out;
  out.files.push_back({o.out, fmt::to_string(buf)});
  out.summary = {
      fmt::format("rows: {}", max_i + 1),
      fmt::format("cols: {}", max_j + 1),
      fmt::format("count: {}", written),
      fmt::format("rank: {}", r),
      fmt::format("zipf: {}", o.zipf),
      fmt::format("max row count: {}", sorted.back()),
      fmt::format("median row count: {}", sorted[sorted.size() / 2]),
      fmt::format("zero predictor RMSE: {:.4f}", std::sqrt(value_sq / n)),
      fmt::format("noise floor RMSE: {:.4f}", std::sqrt(noise_sq / n)),
  };
  return out;
}

StatusOr<GenReport> GenerateRatings(const RatingsOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeRatings(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
