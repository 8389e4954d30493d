// Data-set kinds, the negative sampler, implicit spaces and hold-out splits.
// The file loaders live in load_*.cc.
#include "data/dataset.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/hash.h"
#include "data/feature_sketch.h"
#include "data/held.h"

namespace rigel::data {

const char* DataKindName(DataKind kind) {
  switch (kind) {
    case DataKind::kTriples:
      return "triples";
    case DataKind::kLibsvm:
      return "libsvm";
    case DataKind::kTokens:
      return "tokens";
    case DataKind::kDenseCsv:
      return "dense_csv";
    case DataKind::kGrid:
      return "grid";
    case DataKind::kRange:
      return "range";
  }
  return "unknown";
}

// Vose's variant of Walker's alias method: every bucket holds at most two
// outcomes, its own id (with probability prob_[b]) and alias_[b].
NegativeSampler::NegativeSampler(const std::vector<int64_t>& counts) {
  const size_t n = counts.size();
  std::vector<double> w(n);
  double total = 0;
  size_t heaviest = 0;
  for (size_t i = 0; i < n; ++i) {
    RIGEL_CHECK_MSG(counts[i] >= 0, "negative token count");
    w[i] = std::pow(static_cast<double>(counts[i]), 0.75);
    total += w[i];
    if (w[i] > w[heaviest]) heaviest = i;
  }
  RIGEL_CHECK_MSG(total > 0, "NegativeSampler needs at least one non-zero count");

  prob_.assign(n, 0.0f);
  // Buckets whose mass is not fully assigned (rounding leftovers) fall back to
  // a token that may be drawn, never to a zero-count one.
  alias_.assign(n, static_cast<int32_t>(heaviest));
  std::vector<double> scaled(n);
  std::vector<int32_t> small, large;
  small.reserve(n);
  large.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = w[i] * static_cast<double>(n) / total;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<int32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    int32_t s = small.back();
    small.pop_back();
    int32_t l = large.back();
    prob_[s] = static_cast<float>(scaled[s]);
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What remains is (up to rounding) exactly one bucket's worth each.
  for (int32_t l : large) prob_[l] = 1.0f;
  for (int32_t s : small) prob_[s] = w[s] > 0 ? 1.0f : 0.0f;
}

Dataset MakeGrid(int64_t n, int64_t m) {
  Dataset d;
  d.kind = DataKind::kGrid;
  d.rows = n;
  d.cols = m;
  // Wrapping would silently run a different number of iterations.
  const bool overflow = __builtin_mul_overflow(n, m, &d.count);
  RIGEL_CHECK_MSG(!overflow, "MakeGrid: n * m overflows int64");
  return d;
}

Dataset MakeRange(int64_t n) {
  Dataset d;
  d.kind = DataKind::kRange;
  d.count = n;
  return d;
}

Dataset EmptyLike(const Dataset& d) {
  Dataset p;
  p.kind = d.kind;
  p.path = d.path;
  p.shape_only = d.shape_only;
  p.origin = d.origin;
  p.rows = d.rows;
  p.cols = d.cols;
  p.dim = d.dim;
  p.vocab = d.vocab;
  p.distinct_words = d.distinct_words;
  p.lines = d.lines;
  p.docs = d.docs;
  p.words = d.words;
  p.word_counts = d.word_counts;
  p.negatives = d.negatives;
  return p;
}

int64_t Dataset::LocalSlow(int64_t e) const {
  if (!in_part) return e;
  if (held_masked) {
    const uint64_t w = static_cast<uint64_t>(e) >> 6;
    if (e < 0 || w >= held_mask.size()) return -1;
    const uint64_t bits = held_mask[w];
    const uint64_t bit = uint64_t{1} << (e & 63);
    if ((bits & bit) == 0) return -1;
    return held_rank[w] + std::popcount(bits & (bit - 1));
  }
  auto it = std::upper_bound(held.begin(), held.end(), e,
                             [](int64_t x, const HeldRange& r) { return x < r.first; });
  if (it == held.begin()) return -1;
  --it;
  return e - it->first < it->count ? it->local + (e - it->first) : -1;
}

int64_t Dataset::HeldCount() const {
  if (!in_part) return count;
  if (held_masked)
    return held_rank.empty() ? 0 : held_rank.back() + std::popcount(held_mask.back());
  int64_t n = 0;
  for (const HeldRange& r : held) n += r.count;
  return n;
}

namespace {

// Copies element e of `d` (triples, libsvm or dense_csv) to the end of `p`.
void AppendElement(const Dataset& d, int64_t e, Dataset* p) {
  AppendColumnsAt(d, e, p);
  ++p->count;
}

// Reserves `n` elements (and `feats` libsvm features) in a part.
void ReserveElements(DataKind kind, int64_t n, int64_t feats, int64_t dim, Dataset* p) {
  const size_t un = static_cast<size_t>(n);
  switch (kind) {
    case DataKind::kTriples:
      p->ti.reserve(un);
      p->tj.reserve(un);
      p->tv.reserve(un);
      break;
    case DataKind::kLibsvm:
      p->labels.reserve(un);
      p->feat_offset.reserve(un + 1);
      p->feat_offset.push_back(0);
      p->feat_index.reserve(static_cast<size_t>(feats));
      p->feat_value.reserve(static_cast<size_t>(feats));
      break;
    case DataKind::kDenseCsv:
      p->labels.reserve(un);
      p->x.reserve(un * static_cast<size_t>(dim));
      break;
    default:
      break;
  }
}

}  // namespace

std::vector<int64_t> OrderedElements(const Dataset& d) {
  if (d.kind != DataKind::kTriples) return {};
  RIGEL_CHECK_MSG(!d.in_part, "OrderedElements of a data set held in part");
  auto before = [&](int64_t a, int64_t b) {
    return d.ti[a] != d.ti[b] ? d.ti[a] < d.ti[b] : d.tj[a] < d.tj[b];
  };
  bool sorted = true;
  for (int64_t e = 1; e < d.count && sorted; ++e) sorted = !before(e, e - 1);
  if (sorted) return {};
  std::vector<int64_t> order(static_cast<size_t>(d.count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

std::string DatasetDigest(const Dataset& d) {
  // Held in part: only the whole file's digest, when the loader knew it.
  if (d.shape_only || d.in_part) return d.digest;
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  auto add = [st](const auto& v) {
    if (!v.empty()) XXH64_update(st, v.data(), v.size() * sizeof(v[0]));
  };
  const int64_t shape[] = {
      static_cast<int64_t>(d.kind), d.count, d.rows, d.cols, d.dim, d.vocab, d.docs};
  XXH64_update(st, shape, sizeof shape);
  add(d.ti);
  add(d.tj);
  add(d.tv);
  add(d.labels);
  add(d.feat_offset);
  add(d.feat_index);
  add(d.feat_value);
  add(d.x);
  add(d.tokens);
  add(d.token_doc);
  add(d.word_counts);
  for (const std::string& w : d.words) XXH64_update(st, w.c_str(), w.size() + 1);
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  char buf[64];
  std::snprintf(buf, sizeof buf, "xxh64:%016llx, ", static_cast<unsigned long long>(h));
  return buf + std::to_string(d.count) + " elements";
}

namespace {

template <typename T>
int64_t VectorBytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.size() * sizeof(T));
}

}  // namespace

int64_t ColumnBytes(const Dataset& d) {
  if (d.shape_only) return d.column_bytes;
  int64_t b = VectorBytes(d.ti) + VectorBytes(d.tj) + VectorBytes(d.tv) + VectorBytes(d.labels) +
              VectorBytes(d.feat_offset) + VectorBytes(d.feat_index) + VectorBytes(d.feat_value) +
              VectorBytes(d.x) + VectorBytes(d.tokens) + VectorBytes(d.token_doc) +
              VectorBytes(d.word_counts);
  // A word: its string object and characters, its count, the sampler's two
  // entries.
  for (const std::string& w : d.words) {
    b += static_cast<int64_t>(sizeof(std::string) + (w.size() > 15 ? w.size() + 1 : 0) + 8);
  }
  return b;
}

int64_t FeatureEntries(const Dataset& d) {
  return d.shape_only ? d.feature_entries : static_cast<int64_t>(d.feat_index.size());
}

bool InTestPart(uint64_t seed, int64_t e, double test_fraction) {
  return UnitDouble(HashCoords(seed, static_cast<uint64_t>(e))) < test_fraction;
}

int64_t TokensTestCount(int64_t count, double test_fraction) {
  return std::llround(static_cast<double>(count) * test_fraction);
}

StatusOr<std::pair<Dataset, Dataset>> SplitDataset(const Dataset& d, double test_fraction,
                                                   uint64_t seed) {
  if (!(test_fraction >= 0.0 && test_fraction <= 1.0)) {
    return InvalidArgument("split: test fraction " + std::to_string(test_fraction) +
                           " is not in [0, 1]");
  }
  if (d.in_part) return SplitHeld(d, test_fraction, seed);
  Dataset train = EmptyLike(d);
  Dataset test = EmptyLike(d);
  train.origin.splits.push_back({0, test_fraction, seed, d.count});
  test.origin.splits.push_back({1, test_fraction, seed, d.count});
  if (d.shape_only) {
    // Facts only: the parts' counts, by the same rules, and no digest (the
    // parent's covers them).
    int64_t n_test = 0;
    if (d.kind == DataKind::kTokens) {
      n_test = TokensTestCount(d.count, test_fraction);
    } else {
      for (int64_t e = 0; e < d.count; ++e) n_test += InTestPart(seed, e, test_fraction);
    }
    train.count = d.count - n_test;
    test.count = n_test;
    const DistinctCounts distinct = DistinctFeatures(d);
    for (Dataset* p : {&train, &test}) {
      p->shape_only = true;
      p->digest.clear();
      // The parts share the columns in proportion to their elements.
      const double share = d.count > 0 ? static_cast<double>(p->count) / d.count : 0;
      p->column_bytes = static_cast<int64_t>(share * static_cast<double>(d.column_bytes));
      p->feature_entries = static_cast<int64_t>(share * static_cast<double>(d.feature_entries));
      p->distinct_features = {DistinctInShare(distinct, share),
                              DistinctInShare(distinct, share / 2)};
    }
    return std::make_pair(std::move(train), std::move(test));
  }
  switch (d.kind) {
    case DataKind::kTokens: {
      // Contiguous tail: skip-gram windows need their neighbours, so the test
      // part is the last round(count * test_fraction) positions.
      const int64_t n_test = TokensTestCount(d.count, test_fraction);
      const int64_t cut = d.count - n_test;
      train.tokens.assign(d.tokens.begin(), d.tokens.begin() + cut);
      test.tokens.assign(d.tokens.begin() + cut, d.tokens.end());
      if (d.lines) {
        // Line numbers stay those of the file (the parts keep `docs`), so a
        // document cut by the split keeps its number in both parts.
        train.token_doc.assign(d.token_doc.begin(), d.token_doc.begin() + cut);
        test.token_doc.assign(d.token_doc.begin() + cut, d.token_doc.end());
      }
      train.count = cut;
      test.count = n_test;
      return std::make_pair(std::move(train), std::move(test));
    }
    case DataKind::kTriples:
    case DataKind::kLibsvm:
    case DataKind::kDenseCsv:
      break;
    default:
      return InvalidArgument(std::string("split: cannot split a ") + DataKindName(d.kind) +
                             " data set (only triples, libsvm, dense_csv and tokens)");
  }
  // First pass decides and sizes, second copies, so columns are allocated once.
  std::vector<uint8_t> in_test(static_cast<size_t>(d.count));
  int64_t n_test = 0, feats_test = 0;
  for (int64_t e = 0; e < d.count; ++e) {
    in_test[e] = InTestPart(seed, e, test_fraction);
    if (in_test[e]) {
      ++n_test;
      if (d.kind == DataKind::kLibsvm) feats_test += d.feat_offset[e + 1] - d.feat_offset[e];
    }
  }
  const int64_t feats_total =
      d.kind == DataKind::kLibsvm && !d.feat_offset.empty() ? d.feat_offset.back() : 0;
  ReserveElements(d.kind, d.count - n_test, feats_total - feats_test, d.dim, &train);
  ReserveElements(d.kind, n_test, feats_test, d.dim, &test);
  for (int64_t e = 0; e < d.count; ++e) AppendElement(d, e, in_test[e] ? &test : &train);
  return std::make_pair(std::move(train), std::move(test));
}

}  // namespace rigel::data
