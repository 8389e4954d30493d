// Seeded synthetic data with a planted model for the reference programs in
// examples/ (`rigel gen`): ratings (mf.rgl, bias.rgl), sparse libsvm train and
// test files (sparse_lr.rgl), a token corpus (word2vec.rgl), dense CSV
// (dense_lr.rgl), and, with a planted truth each, Gaussian clusters (k-means),
// multiclass libsvm files (softmax regression), pairwise-interaction libsvm
// files (factorization machines), Criteo-layout click-through files (ctr) and
// a topic-model corpus (LDA).
// examples/README.md lists the kinds and their figures.
//
// Each Generate* returns "name: value" summary lines (noise floor, planted
// accuracy, ...) and, unless `write_info` is false, writes them to
// `<out>.info`. Same options, byte-identical files (all randomness from
// common/hash.h). Files are written atomically; missing parent folders are
// created. Errors: InvalidArgument for invalid options (nothing is written),
// IoError when writing fails. Thread-safe for distinct output paths.
#ifndef RIGEL_EXAMPLES_GENERATORS_H_
#define RIGEL_EXAMPLES_GENERATORS_H_

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/hash.h"
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

// The sparse rows of `sparse`, `multiclass` and `fm`. DrawFeatures sets
// `feats` to k distinct features, each feature_of_rank[zipf.Sample(u)] for a
// u from `rng` (a repeat is drawn again), ascending (k <= the feature count).
// DrawValues sets `vals` to 1 per binary feature and, per feature f with
// is_real[f], one draw uniform in [0.1, 2] rounded to 3 decimals.
// AppendFeatures writes " f+1:value" per feature (":1" for a binary one, 3
// decimals otherwise; is_real null: all binary).
// Option checks the libsvm generators share, each InvalidArgument with the
// message users see: both files named and distinct; dim within int32 and nnz
// at most dim / 3 (up to 3 * nnz / 2 distinct features are drawn by rejection
// of repeats); zipf and weight_std finite and >= 0, real_fraction in [0, 1].
Status ValidateTrainTest(const std::string& out, const std::string& test_out);
Status ValidateFeatureDraws(int64_t dim, int64_t nnz);
Status ValidateFeatureValues(double zipf, double weight_std, double real_fraction);

void DrawFeatures(int64_t k, const ZipfSampler& zipf, const std::vector<int64_t>& feature_of_rank,
                  SplitMix64& rng, std::vector<int64_t>* feats);
void DrawValues(const std::vector<int64_t>& feats, const std::vector<uint8_t>& is_real,
                SplitMix64& rng, std::vector<double>* vals);
void AppendFeatures(const std::vector<int64_t>& feats, const std::vector<double>& vals,
                    const std::vector<uint8_t>* is_real, fmt::memory_buffer* buf);

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

// --------------------------------------------------------------- clusters
// k centres with coordinates uniform in [-separation, separation] (6
// decimals); a centre closer than 2 * spread * sqrt(dim) to an earlier one is
// re-drawn (up to 100 times, then the farthest try is kept). Each point picks
// its cluster uniformly and is centre + spread * N(0, 1) per coordinate (4
// decimals). Lines `cluster,x0,...,x{dim-1}` (cluster id 0..k-1 in column 0,
// where dense_csv reads the label); the planted centres go to `<out>.centres`,
// one `x0,...,x{dim-1}` line per cluster. Summary: count, dim, k, "planted
// inertia" (mean squared distance of a point, as written, to its own centre,
// about dim * spread^2), "min centre distance".
struct ClustersOptions {
  std::string out;  // required; the centres go to <out>.centres
  uint64_t seed = 1;
  int64_t count = 20000;
  int64_t dim = 8;
  int64_t k = 10;
  double spread = 1.0;
  double separation = 6.0;
  bool write_info = true;
};
StatusOr<GenOutput> MakeClusters(const ClustersOptions& opts);
StatusOr<GenReport> GenerateClusters(const ClustersOptions& opts);

// ------------------------------------------------------------- multiclass
// Planted weights W[f][c] ~ N(0, weight_std^2) over `dim` features and
// `classes` classes. Features are drawn as for `sparse` (nnz/2 to 3*nnz/2
// distinct features by Zipf(zipf) popularity, a `real_fraction` of them
// real-valued in [0.1, 2] with 3 decimals, the rest 1). The label is drawn
// from softmax(s) with s_c = sum_f x_f W[f][c], so labels are noisy. Lines:
// `LABEL idx:val ...`, LABEL in 0..classes-1, 1-based ascending indices.
// Summary: count (train), test count, dim, classes, nnz, zipf, "planted model
// test accuracy" (argmax_c s_c, ties to the lowest class, vs the test labels),
// "majority class test accuracy" (the most frequent train label, predicted
// for every test sample).
struct MulticlassOptions {
  std::string out;       // train file; required
  std::string test_out;  // test file; required
  uint64_t seed = 1;
  int64_t count = 50000;       // train samples
  int64_t test_count = 10000;  // test samples
  int64_t dim = 200;
  int64_t classes = 10;
  int64_t nnz = 16;
  double zipf = 0.8;
  double weight_std = 1.0;
  double real_fraction = 0.2;
  bool write_info = true;
};
StatusOr<GenOutput> MakeMulticlass(const MulticlassOptions& opts);
StatusOr<GenReport> GenerateMulticlass(const MulticlassOptions& opts);

// --------------------------------------------------------------------- fm
// A planted order-2 factorization machine: y = w . x + sum_{i<j} <v_i, v_j>
// x_i x_j with w_f ~ N(0, linear_std^2) and v_f in R^factors, entries
// ~ N(0, 2 * factor_std / sqrt(factors * nnz * (nnz - 1) / 2)), so the
// pairwise term has standard deviation about 2 * factor_std whatever nnz and
// factors are, and dominates the linear one. A sample has exactly `nnz`
// distinct binary features (value 1) drawn by Zipf(zipf) popularity; the label
// is 1 with probability sigmoid(y), else 0. Lines `LABEL idx:1 ...`, 1-based
// ascending indices. Summary: count (train), test count, dim, nnz, factors,
// "positive fraction", "planted model test accuracy" (y > 0 vs the test
// labels), "planted linear part test accuracy" (w . x > 0 alone).
struct FmOptions {
  std::string out;       // train file; required
  std::string test_out;  // test file; required
  uint64_t seed = 1;
  int64_t count = 50000;       // train samples
  int64_t test_count = 10000;  // test samples
  int64_t dim = 1000;
  int64_t nnz = 8;
  int64_t factors = 4;
  double linear_std = 0.3;
  double factor_std = 1.0;
  double zipf = 0.5;
  bool write_info = true;
};
StatusOr<GenOutput> MakeFm(const FmOptions& opts);
StatusOr<GenReport> GenerateFm(const FmOptions& opts);

// -------------------------------------------------------------------- ctr
// Click-through data in the Criteo display-advertising layout: one sample per
// line, 40 tab-separated fields `label I1..I13 C1..C26`, label 0/1, I* counts
// (non-negative integers), C* categorical ids written as 8 lowercase hex
// digits; a missing value is an empty field. Each field is missing
// independently with probability `missing`. Count field i draws from
// Zipf(1) over 0..max_i, max_i from 10 (I1) to 1000 (I13). Categorical field
// k has CtrCardinalities(cardinality)[k] values, ranks drawn by Zipf(zipf);
// the id written is a keyed 32-bit bijection of the rank (hashes of seed,
// field and rank), so ids look anonymised, differ by field and never collide
// within one. The label is 1 with probability sigmoid(logit) of a planted
// factorization machine: logit = bias + sum of w(field, rank) over present
// categorical values + sum_i u_i * log1p(I_i) over present counts + the sum
// over pairs of present categorical values of <v(field, rank), v(field',
// rank')>, v in R^latent. w, u and v are normals hashed from their coordinates
// (never stored), scaled so the logit's spread gives a planted test AUC of
// about 0.75-0.8, and the bias is solved on a pilot sample for a positive rate
// of about 0.25. Memory is the Zipf tables (8 bytes a categorical value), the
// files and 16 bytes a test row (for the AUC). Summary: rows, "test rows",
// "train positive rate", "test positive rate", "planted model test log loss"
// (mean cross entropy of the true probabilities against the test labels),
// "planted model test AUC" (exact, ties counted half; nan when the test labels
// are all equal), "cardinality total", and the options (cardinality, zipf,
// missing, latent). Valid options: rows and test_rows >= 1, cardinality in
// [1, 10^8], zipf finite and >= 0, missing in [0, 1), latent in [1, 64].
inline constexpr int kCtrIntFields = 13;
inline constexpr int kCtrCatFields = 26;
struct CtrOptions {
  std::string out;       // train file; required
  std::string test_out;  // test file; required
  uint64_t seed = 0;
  int64_t rows = 100000;         // train samples
  int64_t test_rows = 20000;     // test samples
  int64_t cardinality = 100000;  // values of the largest categorical field
  double zipf = 1.1;             // Zipf exponent of the categorical values
  double missing = 0.05;         // probability that a field is empty
  int64_t latent = 4;            // width of the planted factors v
  bool write_info = true;
};
// The cardinality of each categorical field: field k (0-based) gets
// round(cardinality^((k + 1) / 26)), at least 4 and at most `cardinality`, so
// a few fields are tiny and the last has `cardinality` values. Pure function.
std::vector<int64_t> CtrCardinalities(int64_t cardinality);
StatusOr<GenOutput> MakeCtr(const CtrOptions& opts);
StatusOr<GenReport> GenerateCtr(const CtrOptions& opts);

// ------------------------------------------------------------------- docs
// An LDA corpus. Topic t owns `topic_words` words: slice t of a seeded
// permutation of the vocabulary (disjoint when vocab >= topics * topic_words,
// else the slices wrap around and overlap), with probabilities proportional
// to 1 / (rank + 1) within the topic and zero elsewhere. Each document draws
// theta ~ Dirichlet(alpha, ..., alpha), a length uniform in [doc_len/2,
// 3*doc_len/2] (at least 1), then per token a topic z ~ theta and a word
// ~ phi_z. One document per line, words `w{id}` separated by single spaces.
// The planted topics go to `<out>.topics`: one line per topic, `w{id}:prob`
// pairs (6 decimals) in decreasing probability. Summary: docs, tokens, vocab
// (distinct words written), topics, alpha, "topic words".
struct DocsOptions {
  std::string out;  // required; the topics go to <out>.topics
  uint64_t seed = 1;
  int64_t docs = 2000;
  int64_t topics = 20;
  int64_t vocab = 2000;
  int64_t doc_len = 100;
  double alpha = 0.05;
  int64_t topic_words = 50;
  bool write_info = true;
};
StatusOr<GenOutput> MakeDocs(const DocsOptions& opts);
StatusOr<GenReport> GenerateDocs(const DocsOptions& opts);

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
