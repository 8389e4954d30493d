// Tests of the Criteo-layout click-through generator (ctr): the layout parsed
// here field by field, determinism, the missing fraction, the positive rate,
// the fields' cardinalities and ids, the planted figures (and that the ids
// carry a signal a simple model finds), and option validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/file.h"
#include "examples/generators.h"
#include "tests/examples/gen_test_util.h"

namespace rigel::examples {
namespace {

namespace fs = std::filesystem;
using testing_util::Figure;
using testing_util::IsUnsigned;
using testing_util::Lines;
using testing_util::Split;
using testing_util::TempDir;
using testing_util::ToInt;

constexpr int kFields = 1 + kCtrIntFields + kCtrCatFields;

bool IsHexId(std::string_view s) {
  return s.size() == 8 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// One parsed file: labels, and per row the categorical ids (-1: empty).
struct Parsed {
  std::vector<int> labels;
  std::vector<std::vector<int64_t>> ids;   // ids[row][k]
  int64_t empty_ints = 0, empty_cats = 0;  // empty fields
  std::vector<int64_t> empty_per_cat = std::vector<int64_t>(kCtrCatFields, 0);
};

// Parses `label \t I1..I13 \t C1..C26` lines, checking every field's format.
Parsed ParseCtr(std::string_view text) {
  Parsed p;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> f = Split(line, '\t');
    EXPECT_EQ(f.size(), static_cast<size_t>(kFields)) << line;
    if (f.size() != static_cast<size_t>(kFields)) return p;
    EXPECT_TRUE(f[0] == "0" || f[0] == "1") << line;
    p.labels.push_back(f[0] == "1");
    for (int i = 1; i <= kCtrIntFields; ++i) {
      if (f[i].empty()) {
        ++p.empty_ints;
        continue;
      }
      EXPECT_TRUE(IsUnsigned(f[i])) << "I" << i << ": " << line;
      EXPECT_LE(ToInt(f[i]), 1000) << line;
    }
    std::vector<int64_t>& ids = p.ids.emplace_back(kCtrCatFields, -1);
    for (int k = 0; k < kCtrCatFields; ++k) {
      std::string_view c = f[1 + kCtrIntFields + k];
      if (c.empty()) {
        ++p.empty_cats;
        ++p.empty_per_cat[k];
        continue;
      }
      EXPECT_TRUE(IsHexId(c)) << "C" << k + 1 << ": " << line;
      ids[k] = static_cast<int64_t>(std::stoull(std::string(c), nullptr, 16));
    }
  }
  return p;
}

double PositiveRate(const Parsed& p) {
  return static_cast<double>(std::count(p.labels.begin(), p.labels.end(), 1)) /
         static_cast<double>(p.labels.size());
}

// AUC of `scores` against `labels` by counting ordered pairs (ties half).
double PairAuc(const std::vector<double>& scores, const std::vector<int>& labels) {
  std::vector<std::pair<double, int>> s;
  for (size_t i = 0; i < scores.size(); ++i) s.emplace_back(scores[i], labels[i]);
  std::sort(s.begin(), s.end());
  double negatives_below = 0, pairs = 0, positives = 0;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    double pos = 0, neg = 0;
    for (; j < s.size() && s[j].first == s[i].first; ++j) (s[j].second ? pos : neg) += 1;
    pairs += pos * (negatives_below + 0.5 * neg);
    negatives_below += neg;
    positives += pos;
    i = j;
  }
  return pairs / (positives * negatives_below);
}

// Test AUC of naive Bayes-style scores (the smoothed log odds of each
// (field, id) seen in `train`, summed): a signal in the ids, found without
// the planted model.
double CountingModelAuc(const Parsed& train, const Parsed& test) {
  std::unordered_map<int64_t, std::pair<double, double>> seen;  // key -> (positives, rows)
  for (size_t r = 0; r < train.ids.size(); ++r) {
    for (int k = 0; k < kCtrCatFields; ++k) {
      if (train.ids[r][k] < 0) continue;
      auto& [pos, n] = seen[(static_cast<int64_t>(k) << 32) | train.ids[r][k]];
      pos += train.labels[r];
      n += 1;
    }
  }
  const double base = PositiveRate(train), prior = 20.0;
  std::vector<double> scores;
  for (const std::vector<int64_t>& ids : test.ids) {
    double score = 0.0;
    for (int k = 0; k < kCtrCatFields; ++k) {
      auto it = ids[k] < 0 ? seen.end() : seen.find((static_cast<int64_t>(k) << 32) | ids[k]);
      if (it == seen.end()) continue;
      const double rate = (it->second.first + prior * base) / (it->second.second + prior);
      score += std::log(rate / (1 - rate)) - std::log(base / (1 - base));
    }
    scores.push_back(score);
  }
  return PairAuc(scores, test.labels);
}

void ExpectSame(const GenOutput& a, const GenOutput& b) {
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].path, b.files[i].path);
    EXPECT_TRUE(a.files[i].contents == b.files[i].contents) << "different bytes in " << i;
  }
  EXPECT_EQ(a.summary, b.summary);
}

TEST(CtrTest, CardinalitiesSpreadFromSmallToTheOption) {
  const std::vector<int64_t> cards = CtrCardinalities(100000);
  ASSERT_EQ(cards.size(), static_cast<size_t>(kCtrCatFields));
  EXPECT_EQ(cards.front(), 4);
  EXPECT_EQ(cards[12], 316);  // round(100000^(13/26))
  EXPECT_EQ(cards.back(), 100000);
  EXPECT_TRUE(std::is_sorted(cards.begin(), cards.end()));
  EXPECT_EQ(CtrCardinalities(10000000).back(), 10000000);
  for (int64_t c : CtrCardinalities(3)) EXPECT_EQ(c, 3);  // never above the option
}

TEST(CtrTest, DefaultsAreDeterministicWellFormedAndPlanted) {
  CtrOptions o;
  o.out = "train.tsv";
  o.test_out = "test.tsv";
  StatusOr<GenOutput> a = MakeCtr(o), b = MakeCtr(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ExpectSame(*a, *b);
  ASSERT_EQ(a->files.size(), 2u);
  const Parsed train = ParseCtr(a->files[0].contents), test = ParseCtr(a->files[1].contents);
  ASSERT_EQ(static_cast<int64_t>(train.labels.size()), o.rows);
  ASSERT_EQ(static_cast<int64_t>(test.labels.size()), o.test_rows);

  // The missing fraction, overall and per categorical field.
  const double cells = static_cast<double>(o.rows + o.test_rows);
  EXPECT_NEAR((train.empty_ints + test.empty_ints) / (cells * kCtrIntFields), o.missing, 0.003);
  EXPECT_NEAR((train.empty_cats + test.empty_cats) / (cells * kCtrCatFields), o.missing, 0.003);
  for (int k = 0; k < kCtrCatFields; ++k) {
    EXPECT_NEAR(train.empty_per_cat[k] / static_cast<double>(o.rows), o.missing, 0.01) << k;
  }

  // Positive rates: as written, as summarised, near Criteo's.
  EXPECT_NEAR(Figure(*a, "train positive rate"), PositiveRate(train), 1e-4);
  EXPECT_NEAR(Figure(*a, "test positive rate"), PositiveRate(test), 1e-4);
  EXPECT_GT(PositiveRate(train), 0.2);
  EXPECT_LT(PositiveRate(train), 0.3);

  // Distinct ids per field are at most its cardinality; the largest field is
  // Zipf-skewed (its top id about as frequent as rank 0's probability).
  const std::vector<int64_t> cards = CtrCardinalities(o.cardinality);
  for (int k = 0; k < kCtrCatFields; ++k) {
    std::map<int64_t, int64_t> counts;
    for (const auto& ids : train.ids) {
      if (ids[k] >= 0) ++counts[ids[k]];
    }
    EXPECT_LE(static_cast<int64_t>(counts.size()), cards[k]) << "field " << k;
    EXPECT_GE(counts.size(), std::min<size_t>(4, cards[k])) << "field " << k;
    if (k == kCtrCatFields - 1) {
      int64_t top = 0;
      for (const auto& [id, n] : counts) top = std::max(top, n);
      const double p0 = ZipfSampler(cards[k], o.zipf).Probability(0);
      EXPECT_NEAR(top / (o.rows * (1 - o.missing)), p0, 0.01);
    }
  }
  int64_t total = 0;
  for (int64_t c : cards) total += c;
  EXPECT_EQ(Figure(*a, "cardinality total"), total);

  // The planted model: a useful AUC, a log loss below the base rate's, and a
  // signal in the ids that counting finds on its own.
  const double auc = Figure(*a, "planted model test AUC");
  EXPECT_GT(auc, 0.65);
  EXPECT_LT(auc, 0.9);
  const double rate = PositiveRate(test);
  const double base_loss = -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  EXPECT_LT(Figure(*a, "planted model test log loss"), base_loss - 0.03);
  const double counting = CountingModelAuc(train, test);
  EXPECT_GT(counting, 0.6);
  EXPECT_LT(counting, auc + 0.01) << "nothing should beat the planted model";
}

TEST(CtrTest, SmallFieldsFillTheirCardinalityWithDistinctIds) {
  CtrOptions o;
  o.out = "train.tsv";
  o.test_out = "test.tsv";
  o.rows = 20000;
  o.test_rows = 1000;
  o.cardinality = 50;
  StatusOr<GenOutput> a = MakeCtr(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const Parsed train = ParseCtr(a->files[0].contents);
  const std::vector<int64_t> cards = CtrCardinalities(o.cardinality);
  std::vector<std::set<int64_t>> ids(kCtrCatFields);
  for (const auto& row : train.ids) {
    for (int k = 0; k < kCtrCatFields; ++k) {
      if (row[k] >= 0) ids[k].insert(row[k]);
    }
  }
  // Every rank shows up, and distinct ranks never share an id.
  for (int k = 0; k < kCtrCatFields; ++k) {
    EXPECT_EQ(static_cast<int64_t>(ids[k].size()), cards[k]) << "field " << k;
  }
  // Fields of the same cardinality get different ids.
  ASSERT_EQ(cards[0], cards[1]);
  EXPECT_NE(ids[0], ids[1]);
  int64_t total = 0;
  for (int64_t c : cards) total += c;
  EXPECT_EQ(Figure(*a, "cardinality total"), total);
}

TEST(CtrTest, MissingAndSeedOptionsAreHonoured) {
  CtrOptions o;
  o.out = "train.tsv";
  o.test_out = "test.tsv";
  o.rows = 5000;
  o.test_rows = 1000;
  o.missing = 0.3;
  StatusOr<GenOutput> a = MakeCtr(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const Parsed p = ParseCtr(a->files[0].contents);
  EXPECT_NEAR(p.empty_ints / (5000.0 * kCtrIntFields), 0.3, 0.01);
  EXPECT_NEAR(p.empty_cats / (5000.0 * kCtrCatFields), 0.3, 0.01);
  EXPECT_GT(PositiveRate(p), 0.2);
  EXPECT_LT(PositiveRate(p), 0.3);

  o.missing = 0;
  StatusOr<GenOutput> full = MakeCtr(o);
  ASSERT_TRUE(full.ok());
  const Parsed q = ParseCtr(full->files[0].contents);
  EXPECT_EQ(q.empty_ints, 0);
  EXPECT_EQ(q.empty_cats, 0);

  StatusOr<GenOutput> same = MakeCtr(o);
  ASSERT_TRUE(same.ok());
  ExpectSame(*full, *same);
  o.seed = 1;
  StatusOr<GenOutput> other = MakeCtr(o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(full->files[0].contents, other->files[0].contents);
  EXPECT_NE(full->files[1].contents, other->files[1].contents);
  // Another seed anonymises the same ranks differently: the top id of the
  // first field changes.
  const Parsed r = ParseCtr(other->files[0].contents);
  auto top_id = [](const Parsed& x) {
    std::map<int64_t, int64_t> counts;
    for (const auto& row : x.ids) ++counts[row[0]];
    return std::max_element(counts.begin(), counts.end(),
                            [](const auto& l, const auto& h) { return l.second < h.second; })
        ->first;
  };
  EXPECT_NE(top_id(q), top_id(r));
}

TEST(CtrTest, GenerateWritesBothFilesAndTheInfo) {
  const std::string dir = TempDir("ctr_files");
  CtrOptions o;
  o.out = dir + "/sub/train.tsv";
  o.test_out = dir + "/sub/test.tsv";
  o.rows = 300;
  o.test_rows = 200;
  StatusOr<GenReport> report = GenerateCtr(o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->paths.size(), 3u);
  StatusOr<GenOutput> made = MakeCtr(o);
  ASSERT_TRUE(made.ok());
  for (int part = 0; part < 2; ++part) {
    StatusOr<std::string> bytes = ReadFileToString(made->files[part].path);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(*bytes, made->files[part].contents);
  }
  StatusOr<std::string> info = ReadFileToString(o.out + ".info");
  ASSERT_TRUE(info.ok());
  StatusOr<double> rows = SummaryValue(*info, "test rows");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 200);
  fs::remove_all(dir);
}

TEST(CtrTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("ctr_bad");
  auto expect_refused = [&](const CtrOptions& o, const std::string& message) {
    StatusOr<GenReport> r = GenerateCtr(o);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status().ToString();
  };
  CtrOptions good;
  good.out = dir + "/train.tsv";
  good.test_out = dir + "/test.tsv";
  good.rows = 10;
  good.test_rows = 10;
  CtrOptions o = good;
  o.test_out = "";
  expect_refused(o, "--test-out are required");
  o.test_out = o.out;
  expect_refused(o, "are the same");
  o = good;
  o.rows = 0;
  expect_refused(o, "rows and test_rows must be positive");
  o = good;
  o.test_rows = -1;
  expect_refused(o, "rows and test_rows must be positive");
  o = good;
  o.cardinality = 0;
  expect_refused(o, "cardinality must be between 1 and");
  o.cardinality = 1000000000;
  expect_refused(o, "cardinality must be between 1 and");
  o = good;
  o.zipf = -0.5;
  expect_refused(o, "zipf must be finite and >= 0");
  o.zipf = std::nan("");
  expect_refused(o, "zipf must be finite and >= 0");
  o = good;
  o.missing = 1.0;
  expect_refused(o, "missing must be in [0, 1)");
  o.missing = -0.1;
  expect_refused(o, "missing must be in [0, 1)");
  o = good;
  o.latent = 0;
  expect_refused(o, "latent must be between 1 and 64");
  o.latent = 65;
  expect_refused(o, "latent must be between 1 and 64");
  EXPECT_TRUE(fs::is_empty(dir));
  // The same options, made valid, do write.
  ASSERT_TRUE(GenerateCtr(good).ok());
  EXPECT_FALSE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rigel::examples
