// Data sets: the iteration spaces of `parallel for` loops, loaded into
// contiguous columns (struct of arrays) so executors can scan them without
// per-element allocation.
//
// Loaders read a whole file and parse it in one pass over the bytes (no
// line-by-line iostreams). Every malformed input is an InvalidArgument Status
// whose message has the form "PATH:LINE:COL: error: expected X, found Y";
// a missing file is NotFound ("PATH: no such file"). Nothing is returned on
// error. Numeric values must be finite f32 numbers: "nan", "inf" and values
// that overflow f32 ("1e999") are errors. A tokens file must be UTF-8 text
// without NUL bytes. A file that loads but is likely a mistake adds a line to
// Dataset::warnings (see kFarIndexMin). Loaders are pure functions of their
// input and thread-safe.
#ifndef RIGEL_DATA_DATASET_H_
#define RIGEL_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "data/feature_sketch.h"

namespace rigel::data {

enum class DataKind { kTriples, kLibsvm, kTokens, kDenseCsv, kGrid, kRange };

// Returns "triples", "libsvm", ... as written in programs.
const char* DataKindName(DataKind kind);

// Draws token ids from the unigram distribution raised to the power 0.75
// (word2vec's negative sampling) in O(1) per draw (Walker's alias method).
// Immutable after construction; Sample() is thread-safe.
class NegativeSampler {
 public:
  NegativeSampler() = default;
  // `counts[id]` is the corpus frequency of token `id`; ids with count 0 are
  // never drawn. Requires at least one non-zero count.
  explicit NegativeSampler(const std::vector<int64_t>& counts);
  // Maps a 64-bit hash (see common/hash.h) to a token id. Pure function.
  // Inline: the kernel's JIT (kernel/jit/) compiles it into loop bodies.
  int32_t Sample(uint64_t hash) const;
  bool empty() const { return prob_.empty(); }

 private:
  std::vector<float> prob_;     // alias-method acceptance probability per bucket
  std::vector<int32_t> alias_;  // alias token per bucket
};

inline int32_t NegativeSampler::Sample(uint64_t hash) const {
  // High 32 bits pick the bucket (multiply-shift, no modulo bias worth
  // noting), low 32 bits decide between the bucket's two outcomes.
  const uint64_t n = prob_.size();
  const size_t bucket = static_cast<size_t>(((hash >> 32) * n) >> 32);
  const float u = static_cast<float>(hash & 0xffffffffULL) * 0x1.0p-32f;
  return u < prob_[bucket] ? static_cast<int32_t>(bucket) : alias_[bucket];
}

// Where a data set's elements came from, so that a message about element e
// can name the file and line it was read from (data/element_origin.h).
// Filled by the loaders and SplitDataset; costs nothing per element.
struct DataOrigin {
  // triples, dense_csv: the file's first non-blank line is a header.
  bool header = false;
  // One entry per split that made this data set, in the order applied:
  // element e of the result is the e-th element of the data set before the
  // split that SplitDataset put in part `part` (0 train, 1 test).
  struct Split {
    int part = 0;
    double test = 0;
    uint64_t seed = 0;
    int64_t parent_count = 0;
  };
  std::vector<Split> splits;
};

// One loaded (or implicit) data set. Only the columns of its kind are filled.
// Split parts keep the shape attributes (rows, cols, dim, vocab) of the data
// set they were split from, so parameters sized by the parent fit both parts.
struct Dataset {
  DataKind kind = DataKind::kRange;
  std::string path;   // file it came from; empty for grid/range
  int64_t count = 0;  // number of elements (iterations)
  // Known by its facts only (data/data_index.h ShapeOnly): the count and the
  // shape attributes below, no element columns; `digest` is the whole load's
  // DatasetDigest (empty for a split part of such a data set). The scheduler
  // holds these when an index lets it skip loading a file.
  bool shape_only = false;
  std::string digest;
  // Of a shape-only data set: what a whole load's columns would take
  // (ColumnBytes), its libsvm feature entries and the distinct ids they name
  // over all elements and over the first half (data/feature_sketch.h; -1
  // unknown).
  int64_t column_bytes = 0;
  int64_t feature_entries = 0;
  DistinctCounts distinct_features;
  DataOrigin origin;  // for messages that name an element's line
  // Held in part (data/held.h): a worker of data-parallel loops holds only
  // the elements its blocks read (exec/hold_plan.h). `count` and the
  // shape attributes stay the whole data set's, elements keep their global
  // numbers, and the columns hold the elements of `held` in its order:
  // element e's values are at column position Local(e).
  struct HeldRange {
    int64_t first = 0;  // global number of the range's first element
    int64_t count = 0;
    int64_t local = 0;  // its column position
  };
  bool in_part = false;
  std::vector<HeldRange> held;  // sorted by `first`, disjoint; only when in_part
  // Held by a mask instead of ranges (`held` then empty): the elements a
  // loop cut by its coordinates runs lie scattered through the file
  // (exec/hold_plan.h HeldFilter). Bit e of held_mask says whether element
  // e is held; held_rank[w] counts the held elements before word w, so
  // Local is O(1) at 2 bits per element of the whole data set.
  bool held_masked = false;
  std::vector<uint64_t> held_mask;
  std::vector<int64_t> held_rank;
  // The largest range of `held`, which Local checks first (whole: all).
  int64_t held_first = 0;
  int64_t held_span = INT64_MAX;
  int64_t held_local = 0;
  // Element e's column position; -1 when this data set holds it in part
  // and e is not among its elements. Whole data sets: e.
  int64_t Local(int64_t e) const {
    const uint64_t u = static_cast<uint64_t>(e) - static_cast<uint64_t>(held_first);
    if (u < static_cast<uint64_t>(held_span)) return static_cast<int64_t>(u) + held_local;
    return LocalSlow(e);
  }
  int64_t LocalSlow(int64_t e) const;
  // Elements in the columns: count, or those of `held`.
  int64_t HeldCount() const;
  // What the loader found suspicious but loaded: full lines
  // "PATH:LINE: warning: MESSAGE" (no newline), for the caller to show.
  // Split parts have none (their parent had them); not part of the digest.
  std::vector<std::string> warnings;

  // triples: element e is (ti[e], tj[e], tv[e]); rows = max i + 1, cols = max j + 1.
  // grid(N, M): rows = N, cols = M, count = N * M, no columns.
  std::vector<int32_t> ti, tj;
  std::vector<float> tv;
  int64_t rows = 0, cols = 0;

  // libsvm: sample n has label labels[n] (as LibsvmOptions::labels says) and
  // features feat_index/feat_value in
  // [feat_offset[n], feat_offset[n+1]); dim = max index + 1 (after base shift).
  // dense_csv: labels[n] and the row x[n*dim .. n*dim+dim).
  std::vector<float> labels;
  std::vector<int64_t> feat_offset;
  std::vector<int32_t> feat_index;
  std::vector<float> feat_value;
  std::vector<float> x;
  int64_t dim = 0;

  // tokens: position t holds token id tokens[t]. Ids are dense in [0, vocab),
  // ordered by descending frequency (ties: first appearance); words with fewer
  // than min_count occurrences are removed from the stream (as word2vec does).
  std::vector<int32_t> tokens;
  // tokens(..., lines=true): each line is a document; token t lies on line
  // token_doc[t] (0-based, blank lines count), and `docs` is the number of
  // lines. Empty otherwise.
  bool lines = false;
  std::vector<int32_t> token_doc;
  int64_t docs = 0;
  std::vector<std::string> words;    // words[id]
  std::vector<int64_t> word_counts;  // word_counts[id]
  int64_t vocab = 0;
  // The distinct words before rare ones were removed, in the whole file and
  // in its first half (data/feature_sketch.h DistinctInShare; -1 unknown).
  DistinctCounts distinct_words;
  NegativeSampler negatives;
};

struct TriplesOptions {
  char sep = ',';
  int64_t base = 0;
  bool skip_header = false;
  // extra="ignore": columns after the third (MovieLens' timestamps) are
  // skipped; by default a fourth column is an error.
  bool ignore_extra = false;
};
// How libsvm labels are read: libsvm(..., labels="auto" | "pm1" | "keep").
enum class LibsvmLabels {
  // If every label is -1 or +1, they become 0 and 1; if no label is -1, all
  // are kept as read (0/1 files, classes 1..K, regression targets). A file
  // with -1 among labels other than +1 is an error at the first label that
  // does not fit what the rest imply: the first label neither -1 nor +1 when
  // the file has at least as many -1 labels as such labels, else the first -1.
  kAuto,
  kPm1,   // every label must be -1 or +1 (else an error at its line); 0 and 1
  kKeep,  // every finite label is kept as read
};
// The text a libsvm-kind data set is read from: libsvm's "label idx:val ..."
// lines, or the Criteo display-advertising layout, whose samples become the
// same (label, sparse features) rows (criteo(...), docs/dsl.md).
enum class LibsvmFormat { kLibsvm, kCriteo };
// The Criteo layout: a 0/1 label, then 13 integer and 26 categorical fields,
// tab-separated; a missing value is an empty field.
inline constexpr int kCriteoIntegers = 13;
inline constexpr int kCriteoCategoricals = 26;
struct LibsvmOptions {
  int64_t base = 1;
  LibsvmLabels labels = LibsvmLabels::kAuto;
  LibsvmFormat format = LibsvmFormat::kLibsvm;
  // criteo: each categorical value is hashed into `buckets` buckets, of one
  // range all 26 fields share or (shared_buckets false) of a range per field.
  int64_t buckets = int64_t{1} << 20;
  bool shared_buckets = true;
};
// criteo: the features a sample may have (its .dim): 13 integer fields, then
// the buckets of one shared range or of 26 ranges.
inline int64_t CriteoDim(const LibsvmOptions& o) {
  return kCriteoIntegers + o.buckets * (o.shared_buckets ? 1 : kCriteoCategoricals);
}
// InvalidArgument ("buckets must be between 1 and N ...") unless buckets is
// at least 1 and CriteoDim(o) fits in int32 (feature indices are int32).
Status CheckCriteoOptions(const LibsvmOptions& o);
struct TokensOptions {
  int64_t min_count = 1;
  bool lines = false;  // each line a document (Dataset::token_doc)
};
struct DenseCsvOptions {
  int64_t label = 0;  // column holding the label
  char sep = ',';
  bool skip_header = false;
};

// An index far beyond the rest of the file, one stray index (a typo, a
// hashed id) that would size every parameter over .dim, .rows or .cols: the
// largest libsvm feature index, or the largest index of a triples column, m
// (after the base shift), when m > kFarIndexMin and m > kFarIndexRatio * s,
// s the next largest distinct index of the same kind (0 if there is none).
// The file loads, with a warning naming the line m is first on and the MB
// one f32 per feature (row, column) then takes: (m + 1) * 4 bytes.
inline constexpr int64_t kFarIndexMin = 1'000'000;
inline constexpr int64_t kFarIndexRatio = 1000;

// Parsers over in-memory text; `path` is used only in error messages.
StatusOr<Dataset> ParseTriples(std::string_view text, const std::string& path,
                               const TriplesOptions& opts);
StatusOr<Dataset> ParseLibsvm(std::string_view text, const std::string& path,
                              const LibsvmOptions& opts);
StatusOr<Dataset> ParseTokens(std::string_view text, const std::string& path,
                              const TokensOptions& opts);
StatusOr<Dataset> ParseDenseCsv(std::string_view text, const std::string& path,
                                const DenseCsvOptions& opts);

// File loaders: read `path` and parse it. An empty file is an error.
StatusOr<Dataset> LoadTriples(const std::string& path, const TriplesOptions& opts);
StatusOr<Dataset> LoadLibsvm(const std::string& path, const LibsvmOptions& opts);
StatusOr<Dataset> LoadTokens(const std::string& path, const TokensOptions& opts);
StatusOr<Dataset> LoadDenseCsv(const std::string& path, const DenseCsvOptions& opts);

// A data set of `d`'s kind, file, origin and shape attributes (vocabulary
// and negative sampler included) with no elements, whole.
Dataset EmptyLike(const Dataset& d);

// Implicit spaces. grid(N, M) iterates (i, j) row-major; range(N) iterates i.
// Callers validate sizes: N, M >= 0 and N * M must fit int64 (checked).
Dataset MakeGrid(int64_t n, int64_t m);
Dataset MakeRange(int64_t n);

// Deterministic hold-out: element e goes to the test part iff
// UnitDouble(HashCoords(seed, e)) < test_fraction (common/hash.h). Both parts
// keep the elements' original order. Works for triples, libsvm, dense_csv and
// tokens (tokens are split in contiguous tail: the last test_fraction of the
// stream, since windows need neighbours). Returns {train, test}. A data set
// held in part gives parts held in part (data/held.h SplitHeld).
StatusOr<std::pair<Dataset, Dataset>> SplitDataset(const Dataset& d, double test_fraction,
                                                   uint64_t seed);

// The order of an `ordered` loop over `d`: lexicographic in the element's
// coordinates, elements with equal coordinates in file order. Only triples
// can be out of that order (a file need not be sorted; the other kinds'
// coordinates are their element numbers): for them, the permutation (a
// stable sort by (i, j)), or an empty vector when the file is already in
// order; empty for every other kind. O(count log count).
std::vector<int64_t> OrderedElements(const Dataset& d);

// A fingerprint of a loaded data set's contents: "xxh64:<16 hex digits>,
// <count> elements", over its kind, shape attributes and every column (of a
// shape-only data set, or one held in part: the digest it carries). Two
// processes that read the same file with the same options get the same
// string; processes of one job compare them (they index elements by number).
std::string DatasetDigest(const Dataset& d);

// The bytes the element columns and vocabulary of `d` take (of a
// shape-only data set: what its whole load's take), and its libsvm feature
// entries.
int64_t ColumnBytes(const Dataset& d);
int64_t FeatureEntries(const Dataset& d);

// The split's rules, for code that must retrace a split (element_origin.h):
// element e of a triples, libsvm or dense_csv data set goes to the test part
// iff InTestPart; a tokens test part is the last TokensTestCount positions.
bool InTestPart(uint64_t seed, int64_t e, double test_fraction);
int64_t TokensTestCount(int64_t count, double test_fraction);

}  // namespace rigel::data

#endif  // RIGEL_DATA_DATASET_H_
