// Seeded synthetic data with a planted model for the reference programs in
// examples/ (`rigel gen`): ratings (mf.rgl, bias.rgl), sparse libsvm train and
// test files (sparse_lr.rgl), a token corpus (word2vec.rgl) and dense CSV
// (dense_lr.rgl). examples/README.md lists the kinds and their figures.
//
// Each Generate* returns "name: value" summary lines (noise floor, planted
// accuracy, ...) and, unless `write_info` is false, writes them to
// `<out>.info`. Same options, byte-identical files (all randomness from
// common/hash.h). Files are written atomically; missing parent folders are
// created. Errors: InvalidArgument for invalid options (nothing is written),
// IoError when writing fails. Thread-safe for distinct output paths.
#ifndef RIGEL_EXAMPLES_GENERATORS_H_
#define RIGEL_EXAMPLES_GENERATORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rigel::examples {

// One generated file, still in memory.
struct GenFile {
  std::string path;
  std::string contents;
};

// What a Make*() function produces: the files' contents and the summary.
struct GenOutput {
  std::vector<GenFile> files;        // data files, in the order they are written
  std::vector<std::string> summary;  // "name: value" lines
};

// What a Generate*() function did: the paths written (data files, then the
// .info file if any) and the summary lines.
struct GenReport {
  std::vector<std::string> paths;
  std::vector<std::string> summary;
};

// Draws ranks k in [0, n) with P(k) proportional to (k + 1)^-exponent.
// exponent 0 is uniform. Immutable after construction; Sample() is
// thread-safe. O(n) memory, O(log n) per draw.
class ZipfSampler {
 public:
  // Requires n >= 1 and exponent >= 0 (checked by callers).
  ZipfSampler(int64_t n, double exponent);
  // Maps a uniform u in [0, 1) to a rank.
  int64_t Sample(double u) const;
  // Probability of rank k.
  double Probability(int64_t k) const;
  int64_t size() const { return static_cast<int64_t>(cdf_.size()); }

 private:
  std::vector<double> cdf_;  // cdf_[k] = P(rank <= k); cdf_.back() == 1
};

// A seeded permutation of [0, n) (Fisher-Yates over SplitMix64(seed)).
std::vector<int64_t> SeededPermutation(int64_t n, uint64_t seed);

// ---------------------------------------------------------------- ratings
// rating(i, j) = mu + b_i + U_i . V_j + noise * N(0, 1), with U and V entries
// drawn from N(0, factor_std^2) and row offsets b_i from N(0, row_bias_std^2)
// (0 by default: mf.rgl has no bias term). Pairs (i, j) are distinct; i and j
// are drawn independently from Zipf(zipf) popularity over rows and columns.
// Lines are `i,j,v` (0-based, v with 4 decimals) in draw order (random).
// Summary: rows, cols (max index + 1 actually written), count, rank, zipf,
// "noise floor RMSE" (RMSE of written v against the noiseless model over all
// lines), "zero predictor RMSE", "max row count", "median row count".
//
// Defaults are tuned so mf.rgl (K = 16, lr 0.02, reg 0.05, 20 epochs, no
// bias) gets within a few percent of the noise floor (test RMSE 0.7313 against
// a floor of 0.6998 at epoch 20, ratio 1.045); see gen_learn_test.cc.
struct RatingsOptions {
  std::string out;  // required
  uint64_t seed = 1;
  int64_t rows = 2500;
  int64_t cols = 1200;
  int64_t count = 420000;
  int64_t rank = 4;
  double mu = 0.0;
  double factor_std = 0.8;
  double row_bias_std = 0.0;
  double noise = 0.7;
  double zipf = 0.8;
  bool write_info = true;
};
StatusOr<GenOutput> MakeRatings(const RatingsOptions& opts);
StatusOr<GenReport> GenerateRatings(const RatingsOptions& opts);

// ----------------------------------------------------------------- sparse
// Planted weights w_f ~ N(0, weight_std^2) over `dim` features. A sample has
// between nnz/2 and 3*nnz/2 distinct active features drawn by Zipf(zipf)
// popularity; a fixed `real_fraction` of the features are real-valued (value
// uniform in [0.1, 2], 3 decimals), the rest binary (value 1). The label is
// +1 with probability sigmoid(w . x), else -1. Lines: `LABEL idx:val ...`
// with 1-based ascending indices. Summary: train count, test count, dim, nnz,
// "positive fraction", "planted model test accuracy" (sign(w . x) vs the test
// labels).
struct SparseOptions {
  std::string out;       // train file; required
  std::string test_out;  // test file; required
  uint64_t seed = 1;
  int64_t count = 50000;       // train samples
  int64_t test_count = 10000;  // test samples
  int64_t dim = 5000;
  int64_t nnz = 16;
  double zipf = 0.8;
  double weight_std = 1.0;
  double real_fraction = 0.2;
  bool write_info = true;
};
StatusOr<GenOutput> MakeSparse(const SparseOptions& opts);
StatusOr<GenReport> GenerateSparse(const SparseOptions& opts);

// ----------------------------------------------------------------- corpus
// Words `w0` .. `w{vocab-1}`: the first `stop_words` are global stop words,
// the rest are split evenly among `topics`. The text is a sequence of
// segments, one per line, of 8..24 tokens; each segment picks a topic
// uniformly and draws each token from the stop words with probability
// `stop_fraction` (Zipf over stop words), else from its topic (Zipf(zipf)
// within the topic). Words of one topic therefore co-occur within a window.
// Summary: tokens, vocab (distinct words written), "vocab with count >= 5",
// topics, segments.
struct CorpusOptions {
  std::string out;  // required
  uint64_t seed = 1;
  int64_t vocab = 10000;
  int64_t tokens = 1000000;
  int64_t topics = 50;
  int64_t stop_words = 100;
  double stop_fraction = 0.25;
  double zipf = 1.0;
  bool write_info = true;
};
StatusOr<GenOutput> MakeCorpus(const CorpusOptions& opts);
StatusOr<GenReport> GenerateCorpus(const CorpusOptions& opts);

// ------------------------------------------------------------------ dense
// x ~ N(0, 1) per feature (4 decimals), planted w_k ~ N(0, (scale^2 / dim)),
// label 1 with probability sigmoid(w . x) else 0; lines `label,x0,...`.
// Summary: count, dim, "positive fraction", "planted accuracy" (sign(w . x)
// against the labels, over the whole file, with x as written).
struct DenseOptions {
  std::string out;  // required
  uint64_t seed = 1;
  int64_t count = 20000;
  int64_t dim = 32;
  double scale = 4.0;
  bool write_info = true;
};
StatusOr<GenOutput> MakeDense(const DenseOptions& opts);
StatusOr<GenReport> GenerateDense(const DenseOptions& opts);

// Writes every file of `out` atomically (creating missing parent folders) and,
// if `write_info`, the summary to `<first file>.info`. Returns the paths written and the summary.
// Stops at the first write error and returns it.
StatusOr<GenReport> WriteGenOutput(const GenOutput& out, bool write_info);

// Reads a figure from a summary (or .info file contents): the value after
// "name: " on the line that starts with `name`. NotFound if absent,
// InvalidArgument if the value is not a number. Pure function.
StatusOr<double> SummaryValue(const std::string& summary_text, const std::string& name);

}  // namespace rigel::examples

#endif  // RIGEL_EXAMPLES_GENERATORS_H_
