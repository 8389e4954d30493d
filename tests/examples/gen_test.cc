// Tests of the seeded data generators: determinism, file formats (checked by
// parsing the bytes here, independently of the frontend loaders), distinct
// pairs, visible Zipf skew, planted-model figures and option validation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/file.h"
#include "examples/generators.h"
#include "tests/examples/gen_test_util.h"

namespace rigel::examples {
namespace {

namespace fs = std::filesystem;
using testing_util::TempDir;
using testing_util::Lines;
using testing_util::Split;
using testing_util::IsUnsigned;
using testing_util::IsFixed;
using testing_util::ToDouble;
using testing_util::Figure;

// Ratio of the mean of the top 1% counts to the median count.
double HeadToMedian(std::vector<int64_t> counts) {
  std::sort(counts.rbegin(), counts.rend());
  const size_t head = std::max<size_t>(1, counts.size() / 100);
  double top = std::accumulate(counts.begin(), counts.begin() + head, 0.0) / head;
  return top / std::max<double>(1.0, static_cast<double>(counts[counts.size() / 2]));
}

TEST(ZipfSamplerTest, ProbabilitiesDecreaseAndSampleCoversRange) {
  ZipfSampler z(100, 0.8);
  double sum = 0.0;
  for (int64_t k = 0; k < 100; ++k) {
    sum += z.Probability(k);
    if (k > 0) {
      EXPECT_LT(z.Probability(k), z.Probability(k - 1));
    }
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_NEAR(z.Probability(0) / z.Probability(9), std::pow(10.0, 0.8), 1e-9);
  EXPECT_EQ(z.Sample(0.0), 0);
  EXPECT_EQ(z.Sample(std::nextafter(1.0, 0.0)), 99);
  ZipfSampler uniform(4, 0.0);
  EXPECT_EQ(uniform.Sample(0.26), 1);
  EXPECT_EQ(uniform.Sample(0.99), 3);
}

TEST(SeededPermutationTest, IsDeterministicPermutation) {
  std::vector<int64_t> a = SeededPermutation(1000, 5), b = SeededPermutation(1000, 5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, SeededPermutation(1000, 6));
  std::sort(a.begin(), a.end());
  for (int64_t i = 0; i < 1000; ++i) EXPECT_EQ(a[i], i);
}

TEST(SummaryValueTest, FindsAndRejects) {
  const std::string text = "rows: 12\nnoise floor RMSE: 0.5012\nbad: x\n";
  EXPECT_DOUBLE_EQ(*SummaryValue(text, "rows"), 12);
  EXPECT_DOUBLE_EQ(*SummaryValue(text, "noise floor RMSE"), 0.5012);
  EXPECT_EQ(SummaryValue(text, "cols").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(SummaryValue(text, "bad").status().code(), StatusCode::kInvalidArgument);
}

TEST(RatingsTest, DefaultsAreDeterministicDistinctSkewedAndWellFormed) {
  RatingsOptions o;
  o.out = "unused.csv";
  StatusOr<GenOutput> a = MakeRatings(o), b = MakeRatings(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->files.size(), 1u);
  EXPECT_TRUE(a->files[0].contents == b->files[0].contents) << "same options, different bytes";
  EXPECT_EQ(a->summary, b->summary);
  EXPECT_LE(a->files[0].contents.size(), 8u << 20);

  std::vector<std::string_view> lines = Lines(a->files[0].contents);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), o.count);
  std::vector<char> seen(o.rows * o.cols, 0);
  std::vector<int64_t> row_count(o.rows), col_count(o.cols);
  int64_t max_i = 0, max_j = 0;
  bool sorted_by_row = true;
  int64_t prev_i = -1;
  for (std::string_view line : lines) {
    std::vector<std::string_view> f = Split(line, ',');
    ASSERT_EQ(f.size(), 3u) << line;
    ASSERT_TRUE(IsUnsigned(f[0]) && IsUnsigned(f[1])) << line;
    ASSERT_TRUE(IsFixed(f[2], 4)) << line;
    ASSERT_NE(f[2], "-0.0000");
    int64_t i = std::atoll(std::string(f[0]).c_str()), j = std::atoll(std::string(f[1]).c_str());
    ASSERT_LT(i, o.rows);
    ASSERT_LT(j, o.cols);
    EXPECT_EQ(seen[i * o.cols + j]++, 0) << "repeated pair " << line;
    ++row_count[i];
    ++col_count[j];
    max_i = std::max(max_i, i);
    max_j = std::max(max_j, j);
    sorted_by_row = sorted_by_row && i >= prev_i;
    prev_i = i;
  }
  EXPECT_FALSE(sorted_by_row) << "lines should be in random order";
  EXPECT_EQ(Figure(*a, "rows"), max_i + 1);
  EXPECT_EQ(Figure(*a, "cols"), max_j + 1);
  EXPECT_EQ(Figure(*a, "count"), o.count);

  // Zipf skew: the most popular rows and columns have many times the median.
  const double row_skew = HeadToMedian(row_count), col_skew = HeadToMedian(col_count);
  EXPECT_GT(row_skew, 5.0);
  EXPECT_GT(col_skew, 5.0);
  // Popular ids are spread over the range, not packed at 0 (range partitions).
  int64_t first_half = std::accumulate(row_count.begin(), row_count.begin() + o.rows / 2, 0L);
  EXPECT_NEAR(static_cast<double>(first_half) / o.count, 0.5, 0.15);

  // The noise floor is the noise level; the signal is well above it.
  const double floor = Figure(*a, "noise floor RMSE");
  EXPECT_NEAR(floor, o.noise, 0.02 * o.noise);
  EXPECT_GT(Figure(*a, "zero predictor RMSE"), 1.8 * floor);
  std::printf("ratings: %zu bytes, head/median rows %.1f cols %.1f, noise floor %.4f\n",
              a->files[0].contents.size(), row_skew, col_skew, floor);
}

TEST(RatingsTest, SeedChangesDataAndNoiseOptionIsHonoured) {
  RatingsOptions o;
  o.out = "x.csv";
  o.rows = 300;
  o.cols = 200;
  o.count = 5000;
  o.noise = 0.25;
  o.mu = 3.0;
  StatusOr<GenOutput> a = MakeRatings(o);
  o.seed = 2;
  StatusOr<GenOutput> b = MakeRatings(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->files[0].contents, b->files[0].contents);
  EXPECT_NEAR(Figure(*a, "noise floor RMSE"), 0.25, 0.02);
  double sum = 0.0;
  for (std::string_view line : Lines(a->files[0].contents)) sum += ToDouble(Split(line, ',')[2]);
  EXPECT_NEAR(sum / o.count, 3.0, 0.2);

  // Row offsets add signal, not noise.
  o.row_bias_std = 2.0;
  StatusOr<GenOutput> c = MakeRatings(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(Figure(*c, "noise floor RMSE"), 0.25, 0.02);
  EXPECT_GT(Figure(*c, "zero predictor RMSE"), Figure(*b, "zero predictor RMSE") + 0.3);
}

TEST(RatingsTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("bad");
  RatingsOptions o;
  o.out = dir + "/r.csv";
  o.rows = 0;
  EXPECT_EQ(GenerateRatings(o).status().code(), StatusCode::kInvalidArgument);
  o.rows = 10;
  o.cols = 10;
  o.count = 80;  // more than half the cells
  EXPECT_EQ(GenerateRatings(o).status().code(), StatusCode::kInvalidArgument);
  o.count = 10;
  o.noise = -1;
  EXPECT_EQ(GenerateRatings(o).status().code(), StatusCode::kInvalidArgument);
  o.noise = 1;
  o.out = "";
  EXPECT_EQ(GenerateRatings(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir + "/r.csv"));
  fs::remove_all(dir);
}

TEST(GenerateTest, WritesFilesAndInfoAtomicallyAndCreatesFolders) {
  const std::string dir = TempDir("write");
  DenseOptions o;
  o.out = dir + "/sub/dense.csv";
  o.count = 100;
  StatusOr<GenReport> r = GenerateDense(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->paths, (std::vector<std::string>{o.out, o.out + ".info"}));
  StatusOr<std::string> data = ReadFileToString(o.out), info = ReadFileToString(o.out + ".info");
  ASSERT_TRUE(data.ok() && info.ok());
  EXPECT_EQ(*data, MakeDense(o)->files[0].contents);
  std::string expected;
  for (const std::string& line : r->summary) expected += line + "\n";
  EXPECT_EQ(*info, expected);
  EXPECT_TRUE(SummaryValue(*info, "planted accuracy").ok());

  o.out = dir + "/noinfo.csv";
  o.write_info = false;
  ASSERT_TRUE(GenerateDense(o).ok());
  EXPECT_FALSE(fs::exists(o.out + ".info"));
  // Only the final files remain: no temporaries left behind.
  int64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 3);
  fs::remove_all(dir);
}

TEST(SparseTest, DefaultsAreDeterministicWellFormedAndLearnable) {
  SparseOptions o;
  o.out = "train.svm";
  o.test_out = "test.svm";
  StatusOr<GenOutput> a = MakeSparse(o), b = MakeSparse(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_TRUE(a->files[0].contents == b->files[0].contents);
  EXPECT_TRUE(a->files[1].contents == b->files[1].contents);
  EXPECT_NE(a->files[0].contents, a->files[1].contents);
  std::vector<int64_t> feature_count(o.dim);
  int64_t positives = 0, max_index = 0;
  for (int part = 0; part < 2; ++part) {
    EXPECT_LE(a->files[part].contents.size(), 8u << 20);
    std::vector<std::string_view> lines = Lines(a->files[part].contents);
    ASSERT_EQ(static_cast<int64_t>(lines.size()), part == 0 ? o.count : o.test_count);
    for (std::string_view line : lines) {
      std::vector<std::string_view> f = Split(line, ' ');
      ASSERT_TRUE(f[0] == "+1" || f[0] == "-1") << line;
      positives += f[0] == "+1";
      ASSERT_GE(static_cast<int64_t>(f.size()) - 1, o.nnz / 2) << line;
      ASSERT_LE(static_cast<int64_t>(f.size()) - 1, o.nnz + o.nnz / 2) << line;
      int64_t prev = 0;
      for (size_t t = 1; t < f.size(); ++t) {
        std::vector<std::string_view> kv = Split(f[t], ':');
        ASSERT_EQ(kv.size(), 2u) << line;
        ASSERT_TRUE(IsUnsigned(kv[0])) << line;
        int64_t index = std::atoll(std::string(kv[0]).c_str());
        ASSERT_GT(index, prev) << "indices must be 1-based, ascending, distinct: " << line;
        ASSERT_LE(index, o.dim);
        prev = index;
        max_index = std::max(max_index, index);
        ++feature_count[index - 1];
        if (kv[1] != "1") {
          ASSERT_TRUE(IsFixed(kv[1], 3)) << line;
          double x = ToDouble(kv[1]);
          ASSERT_TRUE(x >= 0.1 && x <= 2.0) << line;
        }
      }
    }
  }
  EXPECT_EQ(max_index, o.dim);
  EXPECT_NEAR(Figure(*a, "positive fraction"),
              static_cast<double>(positives) / (o.count + o.test_count), 1e-4);
  EXPECT_GT(HeadToMedian(feature_count), 5.0);
  const double planted = Figure(*a, "planted model test accuracy");
  EXPECT_GT(planted, 0.8);
  EXPECT_LT(planted, 0.95);  // labels are noisy: the task is not trivial
}

TEST(CorpusTest, DefaultsAreDeterministicWellFormedAndTopical) {
  CorpusOptions o;
  o.out = "corpus.txt";
  StatusOr<GenOutput> a = MakeCorpus(o), b = MakeCorpus(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->files[0].contents == b->files[0].contents);
  EXPECT_LE(a->files[0].contents.size(), 8u << 20);
  std::vector<std::vector<int64_t>> segments;
  std::vector<int64_t> counts(o.vocab);
  int64_t tokens = 0;
  for (std::string_view line : Lines(a->files[0].contents)) {
    segments.emplace_back();
    for (std::string_view word : Split(line, ' ')) {
      ASSERT_TRUE(word.size() >= 2 && word[0] == 'w' && IsUnsigned(word.substr(1))) << word;
      int64_t id = std::atoll(std::string(word.substr(1)).c_str());
      ASSERT_LT(id, o.vocab);
      ++counts[id];
      segments.back().push_back(id);
      ++tokens;
    }
  }
  EXPECT_EQ(tokens, o.tokens);
  EXPECT_EQ(Figure(*a, "tokens"), o.tokens);
  EXPECT_EQ(Figure(*a, "vocab"),
            std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }));
  EXPECT_GE(Figure(*a, "vocab with count >= 5"), 0.95 * o.vocab);
  EXPECT_GT(HeadToMedian(counts), 10.0);

  // Planted co-occurrence: words sharing a segment with a topic word come
  // mostly from its topic and the stop words (~300 words), so the 300 most
  // frequent neighbours cover nearly all of them. Without topics the cover
  // would be the global mass of the 300 most frequent words (about half).
  std::vector<int64_t> by_freq(o.vocab);
  std::iota(by_freq.begin(), by_freq.end(), 0);
  std::stable_sort(by_freq.begin(), by_freq.end(),
                   [&](int64_t x, int64_t y) { return counts[x] > counts[y]; });
  int topical = 0;
  const int kProbe = 50;
  for (int r = 400; r < 400 + kProbe; ++r) {
    const int64_t w = by_freq[r];
    std::unordered_map<int64_t, int64_t> neighbours;
    int64_t total = 0;
    for (const auto& seg : segments) {
      if (std::find(seg.begin(), seg.end(), w) == seg.end()) continue;
      for (int64_t v : seg) {
        if (v != w) ++neighbours[v], ++total;
      }
    }
    std::vector<int64_t> c;
    for (const auto& [v, n] : neighbours) c.push_back(n);
    std::sort(c.rbegin(), c.rend());
    const double cover =
        std::accumulate(c.begin(), c.begin() + std::min<size_t>(300, c.size()), 0.0) / total;
    topical += cover > 0.9;
  }
  EXPECT_GE(topical, kProbe * 8 / 10);
}

TEST(DenseTest, DefaultsAreDeterministicWellFormedAndPlanted) {
  DenseOptions o;
  o.out = "dense.csv";
  StatusOr<GenOutput> a = MakeDense(o), b = MakeDense(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->files[0].contents == b->files[0].contents);
  EXPECT_LE(a->files[0].contents.size(), 8u << 20);
  std::vector<std::string_view> lines = Lines(a->files[0].contents);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), o.count);
  double sum = 0.0, sum_sq = 0.0;
  for (std::string_view line : lines) {
    std::vector<std::string_view> f = Split(line, ',');
    ASSERT_EQ(static_cast<int64_t>(f.size()), o.dim + 1) << line;
    ASSERT_TRUE(f[0] == "0" || f[0] == "1") << line;
    for (size_t k = 1; k < f.size(); ++k) {
      ASSERT_TRUE(IsFixed(f[k], 4)) << line;
      double x = ToDouble(f[k]);
      sum += x;
      sum_sq += x * x;
    }
  }
  const double n = static_cast<double>(o.count * o.dim);
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.03);
  const double planted = Figure(*a, "planted accuracy");
  EXPECT_GT(planted, 0.8);
  EXPECT_LT(planted, 0.95);
  EXPECT_NEAR(Figure(*a, "positive fraction"), 0.5, 0.05);
}

}  // namespace
}  // namespace rigel::examples
