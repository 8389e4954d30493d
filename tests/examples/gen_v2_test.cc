// Tests of the generators with a planted truth for k-means, softmax
// regression, factorization machines and LDA (clusters, multiclass, fm, docs):
// determinism, file formats parsed here independently of the loaders, the
// planted figures, and option validation.
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
using testing_util::ToInt;
using testing_util::Figure;

// Same options give the same files and summary.
void ExpectSame(const GenOutput& a, const GenOutput& b) {
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].path, b.files[i].path);
    EXPECT_TRUE(a.files[i].contents == b.files[i].contents) << "different bytes in " << i;
  }
  EXPECT_EQ(a.summary, b.summary);
}

// Parses libsvm lines `LABEL idx:val ...` with 1-based, ascending, distinct
// indices <= dim; returns the labels (integers) and checks each line has
// between min_nnz and max_nnz features. `binary`: every value is "1".
std::vector<int64_t> ParseLibsvm(std::string_view text, int64_t dim, int64_t min_nnz,
                                 int64_t max_nnz, bool binary) {
  std::vector<int64_t> labels;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> f = Split(line, ' ');
    EXPECT_TRUE(IsUnsigned(f[0])) << line;
    labels.push_back(ToInt(f[0]));
    const int64_t nnz = static_cast<int64_t>(f.size()) - 1;
    EXPECT_TRUE(nnz >= min_nnz && nnz <= max_nnz) << line;
    int64_t prev = 0;
    for (size_t t = 1; t < f.size(); ++t) {
      std::vector<std::string_view> kv = Split(f[t], ':');
      EXPECT_EQ(kv.size(), 2u) << line;
      if (kv.size() != 2) return labels;
      EXPECT_TRUE(IsUnsigned(kv[0])) << line;
      const int64_t index = ToInt(kv[0]);
      EXPECT_GT(index, prev) << "indices must be 1-based, ascending, distinct: " << line;
      EXPECT_LE(index, dim) << line;
      prev = index;
      if (binary || kv[1] == "1") {
        EXPECT_EQ(kv[1], "1") << line;
      } else {
        EXPECT_TRUE(IsFixed(kv[1], 3)) << line;
        const double x = ToDouble(kv[1]);
        EXPECT_TRUE(x >= 0.1 && x <= 2.0) << line;
      }
    }
  }
  return labels;
}

// ---------------------------------------------------------------- clusters

TEST(ClustersTest, DefaultsAreDeterministicWellFormedAndPlanted) {
  ClustersOptions o;
  o.out = "clusters.csv";
  StatusOr<GenOutput> a = MakeClusters(o), b = MakeClusters(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ExpectSame(*a, *b);
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_EQ(a->files[1].path, "clusters.csv.centres");
  EXPECT_LE(a->files[0].contents.size(), 8u << 20);

  std::vector<std::vector<double>> centres;
  for (std::string_view line : Lines(a->files[1].contents)) {
    std::vector<std::string_view> f = Split(line, ',');
    ASSERT_EQ(static_cast<int64_t>(f.size()), o.dim) << line;
    centres.emplace_back();
    for (std::string_view x : f) {
      ASSERT_TRUE(IsFixed(x, 6)) << line;
      ASSERT_LE(std::abs(ToDouble(x)), o.separation) << line;
      centres.back().push_back(ToDouble(x));
    }
  }
  ASSERT_EQ(static_cast<int64_t>(centres.size()), o.k);
  double min_gap = HUGE_VAL;
  for (int64_t c = 0; c < o.k; ++c) {
    for (int64_t e = 0; e < c; ++e) {
      double d = 0.0;
      for (int64_t i = 0; i < o.dim; ++i) d += std::pow(centres[c][i] - centres[e][i], 2);
      min_gap = std::min(min_gap, std::sqrt(d));
    }
  }
  EXPECT_NEAR(Figure(*a, "min centre distance"), min_gap, 1e-4);
  EXPECT_GE(min_gap, 2.0 * o.spread * std::sqrt(static_cast<double>(o.dim)));

  std::vector<std::string_view> lines = Lines(a->files[0].contents);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), o.count);
  std::vector<int64_t> per_cluster(o.k);
  double inertia = 0.0;
  for (std::string_view line : lines) {
    std::vector<std::string_view> f = Split(line, ',');
    ASSERT_EQ(static_cast<int64_t>(f.size()), o.dim + 1) << line;
    ASSERT_TRUE(IsUnsigned(f[0])) << line;
    const int64_t c = ToInt(f[0]);
    ASSERT_LT(c, o.k) << line;
    ++per_cluster[c];
    for (int64_t i = 0; i < o.dim; ++i) {
      ASSERT_TRUE(IsFixed(f[i + 1], 4)) << line;
      ASSERT_NE(f[i + 1], "-0.0000");
      inertia += std::pow(ToDouble(f[i + 1]) - centres[c][i], 2);
    }
  }
  for (int64_t n : per_cluster) EXPECT_NEAR(n, o.count / o.k, 0.2 * o.count / o.k);
  inertia /= o.count;
  EXPECT_NEAR(Figure(*a, "planted inertia"), inertia, 1e-3);
  EXPECT_NEAR(inertia, o.dim * o.spread * o.spread, 0.05 * o.dim * o.spread * o.spread);
  EXPECT_EQ(Figure(*a, "count"), o.count);
  EXPECT_EQ(Figure(*a, "dim"), o.dim);
  EXPECT_EQ(Figure(*a, "k"), o.k);

  o.seed = 2;
  StatusOr<GenOutput> c = MakeClusters(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->files[0].contents, c->files[0].contents);
  EXPECT_NE(a->files[1].contents, c->files[1].contents);
}

TEST(ClustersTest, SpreadOptionIsHonouredAndFilesAreWritten) {
  const std::string dir = TempDir("clusters");
  ClustersOptions o;
  o.out = dir + "/c.csv";
  o.count = 5000;
  o.dim = 3;
  o.k = 4;
  o.spread = 0.5;
  StatusOr<GenReport> r = GenerateClusters(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->paths, (std::vector<std::string>{o.out, o.out + ".centres", o.out + ".info"}));
  StatusOr<std::string> info = ReadFileToString(o.out + ".info");
  ASSERT_TRUE(info.ok());
  StatusOr<double> inertia = SummaryValue(*info, "planted inertia");
  ASSERT_TRUE(inertia.ok());
  EXPECT_NEAR(*inertia, 3 * 0.25, 0.05 * 3 * 0.25);
  StatusOr<std::string> data = ReadFileToString(o.out);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, MakeClusters(o)->files[0].contents);
  fs::remove_all(dir);
}

TEST(ClustersTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("clusters_bad");
  ClustersOptions o;
  o.out = dir + "/c.csv";
  o.k = 0;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.k = 3;
  o.dim = 0;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.dim = 2;
  o.spread = -1;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.spread = 1;
  o.separation = 0;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.separation = NAN;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.separation = 5;
  o.count = 0;
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  o.count = 10;
  o.out = "";
  EXPECT_EQ(GenerateClusters(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// -------------------------------------------------------------- multiclass

TEST(MulticlassTest, DefaultsAreDeterministicWellFormedAndLearnable) {
  MulticlassOptions o;
  o.out = "train.svm";
  o.test_out = "test.svm";
  StatusOr<GenOutput> a = MakeMulticlass(o), b = MakeMulticlass(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ExpectSame(*a, *b);
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_NE(a->files[0].contents, a->files[1].contents);
  std::vector<std::vector<int64_t>> per_class(2, std::vector<int64_t>(o.classes));
  for (int part = 0; part < 2; ++part) {
    EXPECT_LE(a->files[part].contents.size(), 8u << 20);
    std::vector<int64_t> labels =
        ParseLibsvm(a->files[part].contents, o.dim, o.nnz / 2, o.nnz + o.nnz / 2, false);
    ASSERT_EQ(static_cast<int64_t>(labels.size()), part == 0 ? o.count : o.test_count);
    for (int64_t label : labels) {
      ASSERT_LT(label, o.classes);
      ++per_class[part][label];
    }
  }
  // Every class occurs often enough to be learned, none dominates.
  for (int64_t n : per_class[0]) {
    EXPECT_GT(n, o.count / o.classes / 20);
    EXPECT_LT(n, o.count / o.classes * 3);
  }
  const int64_t majority =
      std::max_element(per_class[0].begin(), per_class[0].end()) - per_class[0].begin();
  const double majority_accuracy = static_cast<double>(per_class[1][majority]) / o.test_count;
  EXPECT_NEAR(Figure(*a, "majority class test accuracy"), majority_accuracy, 1e-4);
  const double planted = Figure(*a, "planted model test accuracy");
  EXPECT_GT(planted, majority_accuracy + 0.3);
  EXPECT_LT(planted, 0.95);  // labels are sampled: the task is not trivial
  EXPECT_EQ(Figure(*a, "classes"), o.classes);
  EXPECT_EQ(Figure(*a, "test count"), o.test_count);

  o.seed = 2;
  StatusOr<GenOutput> c = MakeMulticlass(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->files[0].contents, c->files[0].contents);
  EXPECT_NE(a->files[1].contents, c->files[1].contents);
}

TEST(MulticlassTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("multiclass_bad");
  MulticlassOptions o;
  o.out = dir + "/train.svm";
  o.test_out = dir + "/test.svm";
  o.classes = 1;
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  o.classes = 3;
  o.nnz = o.dim;  // more than dim / 3
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  o.nnz = 4;
  o.real_fraction = 1.5;
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  o.real_fraction = 0;
  o.weight_std = -1;
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  o.weight_std = 1;
  o.test_out = o.out;
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  o.test_out = "";
  EXPECT_EQ(GenerateMulticlass(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------- fm

TEST(FmTest, DefaultsAreDeterministicWellFormedAndNeedInteractions) {
  FmOptions o;
  o.out = "train.fm";
  o.test_out = "test.fm";
  StatusOr<GenOutput> a = MakeFm(o), b = MakeFm(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ExpectSame(*a, *b);
  ASSERT_EQ(a->files.size(), 2u);
  int64_t positives = 0;
  for (int part = 0; part < 2; ++part) {
    EXPECT_LE(a->files[part].contents.size(), 8u << 20);
    std::vector<int64_t> labels = ParseLibsvm(a->files[part].contents, o.dim, o.nnz, o.nnz, true);
    ASSERT_EQ(static_cast<int64_t>(labels.size()), part == 0 ? o.count : o.test_count);
    for (int64_t label : labels) {
      ASSERT_LE(label, 1);
      positives += label;
    }
  }
  EXPECT_NEAR(Figure(*a, "positive fraction"),
              static_cast<double>(positives) / (o.count + o.test_count), 1e-4);
  const double planted = Figure(*a, "planted model test accuracy");
  const double linear = Figure(*a, "planted linear part test accuracy");
  EXPECT_GT(planted, linear + 0.05) << "the pairwise term must matter";
  EXPECT_LT(planted, 0.95);
  EXPECT_EQ(Figure(*a, "factors"), o.factors);

  o.seed = 2;
  StatusOr<GenOutput> c = MakeFm(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->files[0].contents, c->files[0].contents);
  EXPECT_NE(a->files[1].contents, c->files[1].contents);
}

TEST(FmTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("fm_bad");
  FmOptions o;
  o.out = dir + "/train.fm";
  o.test_out = dir + "/test.fm";
  o.nnz = 1;
  EXPECT_EQ(GenerateFm(o).status().code(), StatusCode::kInvalidArgument);
  o.nnz = 8;
  o.factors = 0;
  EXPECT_EQ(GenerateFm(o).status().code(), StatusCode::kInvalidArgument);
  o.factors = 2;
  o.factor_std = -1;
  EXPECT_EQ(GenerateFm(o).status().code(), StatusCode::kInvalidArgument);
  o.factor_std = 1;
  o.dim = 20;  // nnz > dim / 3
  EXPECT_EQ(GenerateFm(o).status().code(), StatusCode::kInvalidArgument);
  o.dim = 100;
  o.out = "";
  EXPECT_EQ(GenerateFm(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// -------------------------------------------------------------------- docs

// Parses the .topics file: per topic, word id -> probability, checking the
// format, decreasing probabilities and a sum of 1.
std::vector<std::map<int64_t, double>> ParseTopics(std::string_view text, const DocsOptions& o) {
  std::vector<std::map<int64_t, double>> topics;
  for (std::string_view line : Lines(text)) {
    topics.emplace_back();
    double sum = 0.0, prev = 1.0;
    for (std::string_view pair : Split(line, ' ')) {
      std::vector<std::string_view> kv = Split(pair, ':');
      EXPECT_EQ(kv.size(), 2u) << line;
      if (kv.size() != 2) return topics;
      EXPECT_TRUE(kv[0].size() >= 2 && kv[0][0] == 'w' && IsUnsigned(kv[0].substr(1))) << pair;
      EXPECT_TRUE(IsFixed(kv[1], 6)) << pair;
      const int64_t word = ToInt(kv[0].substr(1));
      const double p = ToDouble(kv[1]);
      EXPECT_LT(word, o.vocab);
      EXPECT_GT(p, 0.0) << pair;
      EXPECT_LE(p, prev) << "probabilities must decrease: " << line;
      EXPECT_EQ(topics.back().count(word), 0u) << "repeated word " << pair;
      topics.back()[word] = p;
      prev = p;
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-3) << line;
    EXPECT_EQ(static_cast<int64_t>(topics.back().size()), o.topic_words);
  }
  return topics;
}

TEST(DocsTest, DefaultsAreDeterministicWellFormedAndTopical) {
  DocsOptions o;
  o.out = "docs.txt";
  StatusOr<GenOutput> a = MakeDocs(o), b = MakeDocs(o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  ExpectSame(*a, *b);
  ASSERT_EQ(a->files.size(), 2u);
  EXPECT_EQ(a->files[1].path, "docs.txt.topics");
  EXPECT_LE(a->files[0].contents.size(), 8u << 20);

  std::vector<std::map<int64_t, double>> topics = ParseTopics(a->files[1].contents, o);
  ASSERT_EQ(static_cast<int64_t>(topics.size()), o.topics);
  // vocab >= topics * topic_words here, so every word has one topic.
  std::vector<int64_t> topic_of(o.vocab, -1);
  for (int64_t t = 0; t < o.topics; ++t) {
    for (const auto& [word, p] : topics[t]) {
      EXPECT_EQ(topic_of[word], -1) << "topics overlap at w" << word;
      topic_of[word] = t;
    }
  }

  std::vector<std::string_view> lines = Lines(a->files[0].contents);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), o.docs);
  std::vector<int64_t> counts(o.vocab);
  int64_t tokens = 0, focused = 0;
  for (std::string_view line : lines) {
    ASSERT_FALSE(line.empty());
    std::vector<std::string_view> words = Split(line, ' ');
    const int64_t len = static_cast<int64_t>(words.size());
    ASSERT_GE(len, o.doc_len / 2) << line;
    ASSERT_LE(len, o.doc_len + o.doc_len / 2) << line;
    std::vector<int64_t> per_topic(o.topics);
    for (std::string_view word : words) {
      ASSERT_TRUE(word.size() >= 2 && word[0] == 'w' && IsUnsigned(word.substr(1))) << word;
      const int64_t id = ToInt(word.substr(1));
      ASSERT_LT(id, o.vocab);
      ASSERT_GE(topic_of[id], 0) << "w" << id << " is in no topic";
      ++counts[id];
      ++per_topic[topic_of[id]];
    }
    tokens += len;
    // alpha = 0.1 over 20 topics: one topic holds half of many documents
    // (about 46% with the defaults; an even mixture would give none).
    focused += *std::max_element(per_topic.begin(), per_topic.end()) * 2 >= len;
  }
  EXPECT_EQ(Figure(*a, "tokens"), tokens);
  EXPECT_EQ(Figure(*a, "vocab"),
            std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; }));
  EXPECT_EQ(Figure(*a, "docs"), o.docs);
  EXPECT_EQ(Figure(*a, "topics"), o.topics);
  EXPECT_GE(focused, o.docs * 4 / 10);

  o.seed = 2;
  StatusOr<GenOutput> c = MakeDocs(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->files[0].contents, c->files[0].contents);
  EXPECT_NE(a->files[1].contents, c->files[1].contents);
}

TEST(DocsTest, SmallVocabularyWrapsTopicsAndWritesFiles) {
  const std::string dir = TempDir("docs");
  DocsOptions o;
  o.out = dir + "/docs.txt";
  o.docs = 50;
  o.topics = 5;
  o.vocab = 30;
  o.topic_words = 10;
  o.doc_len = 1;
  o.alpha = 0.01;  // tiny alpha: Gamma draws underflow without the log trick
  StatusOr<GenReport> r = GenerateDocs(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->paths, (std::vector<std::string>{o.out, o.out + ".topics", o.out + ".info"}));
  StatusOr<std::string> data = ReadFileToString(o.out), topic_text = ReadFileToString(r->paths[1]);
  ASSERT_TRUE(data.ok() && topic_text.ok());
  std::vector<std::map<int64_t, double>> topics = ParseTopics(*topic_text, o);
  ASSERT_EQ(topics.size(), 5u);
  std::vector<std::string_view> lines = Lines(*data);
  ASSERT_EQ(lines.size(), 50u);
  for (std::string_view line : lines) {
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(Split(line, ' ').size(), 1u) << line;  // doc_len 1: one word each
  }
  fs::remove_all(dir);
}

TEST(DocsTest, RejectsBadOptionsWithoutWriting) {
  const std::string dir = TempDir("docs_bad");
  DocsOptions o;
  o.out = dir + "/docs.txt";
  o.alpha = 0;
  EXPECT_EQ(GenerateDocs(o).status().code(), StatusCode::kInvalidArgument);
  o.alpha = 0.1;
  o.topic_words = o.vocab + 1;
  EXPECT_EQ(GenerateDocs(o).status().code(), StatusCode::kInvalidArgument);
  o.topic_words = 10;
  o.doc_len = 0;
  EXPECT_EQ(GenerateDocs(o).status().code(), StatusCode::kInvalidArgument);
  o.doc_len = 10;
  o.topics = 0;
  EXPECT_EQ(GenerateDocs(o).status().code(), StatusCode::kInvalidArgument);
  o.topics = 2;
  o.out = "";
  EXPECT_EQ(GenerateDocs(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rigel::examples
