// Tests for the data loaders, implicit spaces, splits and the negative sampler.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/hash.h"
#include "data/dataset.h"

namespace rigel::data {
namespace {

// Expects `r` to be an InvalidArgument error with exactly `message`.
template <typename T>
void ExpectError(const StatusOr<T>& r, const std::string& message) {
  ASSERT_FALSE(r.ok()) << "expected error: " << message;
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), message);
}

// A file in a fresh temp dir, removed with it.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    dir_ = std::filesystem::temp_directory_path() /
           ("rigel_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "data.txt").string();
    EXPECT_TRUE(WriteFileAtomically(path_, contents).ok());
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string path_;
};

Dataset MustTriples(const std::string& text, TriplesOptions opts = {}) {
  auto r = ParseTriples(text, "r.csv", opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Dataset{};
}

TEST(Triples, ParsesBaseShift) {
  Dataset d = MustTriples("1,1,5\n2,3,1.5\n", {.base = 1});
  EXPECT_EQ(d.kind, DataKind::kTriples);
  EXPECT_EQ(d.path, "r.csv");
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.ti, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(d.tj, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(d.tv, (std::vector<float>{5.0f, 1.5f}));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.cols, 3);
}

TEST(Triples, ToleratesBlanksCrlfBlankLinesAndMissingFinalNewline) {
  Dataset d = MustTriples(" 0 , 1 ,\t2.5 \r\n\r\n\n  \t\n3,4,-1e-3\r\n+7,0,+2");
  EXPECT_EQ(d.ti, (std::vector<int32_t>{0, 3, 7}));
  EXPECT_EQ(d.tj, (std::vector<int32_t>{1, 4, 0}));
  EXPECT_EQ(d.tv, (std::vector<float>{2.5f, -1e-3f, 2.0f}));
  EXPECT_EQ(d.rows, 8);
  EXPECT_EQ(d.cols, 5);
}

TEST(Triples, OtherSeparators) {
  Dataset tabs = MustTriples("0\t1\t2\n3\t4\t5\n", {.sep = '\t'});
  EXPECT_EQ(tabs.count, 2);
  Dataset spaces = MustTriples("0   1 2\n3 4  5\n", {.sep = ' '});
  EXPECT_EQ(spaces.tj, (std::vector<int32_t>{1, 4}));
  Dataset semis = MustTriples("0;1;2\n", {.sep = ';'});
  EXPECT_EQ(semis.tv, (std::vector<float>{2.0f}));
}

TEST(Triples, SkipsHeader) {
  Dataset d = MustTriples("\nuser,item,rating\n0,0,1\n", {.skip_header = true});
  EXPECT_EQ(d.count, 1);
  ExpectError(ParseTriples("user,item,rating\n0,0,1\n", "r.csv", {}),
              "r.csv:1:1: error: expected a number for column 1 (i), found 'user'");
}

TEST(Triples, NonNumber) {
  ExpectError(ParseTriples("0,1,2\n0,abc,1\n", "data/r.csv", {}),
              "data/r.csv:2:3: error: expected a number for column 2 (j), found 'abc'");
  ExpectError(ParseTriples("0,1,x2\n", "r.csv", {}),
              "r.csv:1:5: error: expected a number for column 3 (v), found 'x2'");
  ExpectError(ParseTriples("0,,1\n", "r.csv", {}),
              "r.csv:1:3: error: expected a number for column 2 (j), found ','");
  ExpectError(ParseTriples("0,1.5,1\n", "r.csv", {}),
              "r.csv:1:3: error: expected an integer for column 2 (j), found '1.5'");
  ExpectError(ParseTriples("0,1,1e99\n", "r.csv", {}),
              "r.csv:1:5: error: expected a number for column 3 (v) that fits in f32 (at most "
              "3.4e38 in magnitude), found '1e99'");
}

TEST(Triples, MissingFieldAndExtraField) {
  ExpectError(ParseTriples("0,1,2\n3,4\n", "r.csv", {}),
              "r.csv:2:4: error: expected column 3 (v), found end of line");
  ExpectError(ParseTriples("0,1,2\n3,4,\r\n", "r.csv", {}),
              "r.csv:2:5: error: expected column 3 (v), found end of line");
  ExpectError(ParseTriples("3", "r.csv", {}),
              "r.csv:1:2: error: expected column 2 (j), found end of line");
  ExpectError(ParseTriples("0 1,2\n", "r.csv", {}),
              "r.csv:1:3: error: expected ',' after column 1 (i), found '1'");
  ExpectError(ParseTriples("0,1,2,3\n", "r.csv", {}),
              "r.csv:1:6: error: expected end of line after column 3 (v) (a file with more "
              "columns needs triples(..., extra=\"ignore\")), found ','");
}

TEST(Triples, LineNumbersCountCrlfAndBlankLines) {
  ExpectError(ParseTriples("0,0,1\r\n\r\n0,x,1\r\n", "r.csv", {}),
              "r.csv:3:3: error: expected a number for column 2 (j), found 'x'");
}

TEST(Triples, IndexBelowBaseAndOverflow) {
  ExpectError(ParseTriples("1,1,1\n1,0,3\n", "r.csv", {.base = 1}),
              "r.csv:2:3: error: index 0 is below base 1");
  ExpectError(ParseTriples("-1,0,3\n", "r.csv", {}), "r.csv:1:1: error: index -1 is below base 0");
  ExpectError(ParseTriples("0,3000000000,1\n", "r.csv", {}),
              "r.csv:1:3: error: expected an index for column 2 (j) that fits in int32, "
              "found '3000000000'");
  ExpectError(ParseTriples("99999999999999999999,0,1\n", "r.csv", {}),
              "r.csv:1:1: error: expected an index for column 1 (i) that fits in int32, "
              "found '99999999999999999999'");
  // 2147483648 - 1 fits after the shift.
  EXPECT_EQ(MustTriples("2147483648,1,1\n", {.base = 1}).ti[0], 2147483647);
}

TEST(Triples, EmptyFile) {
  ExpectError(ParseTriples("", "r.csv", {}), "r.csv: error: empty file");
  ExpectError(ParseTriples("\n \r\n\t\n", "r.csv", {}), "r.csv: error: empty file");
  ExpectError(ParseTriples("i,j,v\n", "r.csv", {.skip_header = true}), "r.csv: error: empty file");
}

TEST(Triples, LoadsFilesAndReportsMissingOnes) {
  TempFile f("0,1,2\n");
  auto r = LoadTriples(f.path(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, f.path());
  EXPECT_EQ(r->count, 1);
  auto missing = LoadTriples("/nonexistent/r.csv", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/r.csv: no such file");
  TempFile bad("0,1,2\n0,q,2\n");
  ExpectError(LoadTriples(bad.path(), {}),
              bad.path() + ":2:3: error: expected a number for column 2 (j), found 'q'");
  TempFile empty("");
  ExpectError(LoadTriples(empty.path(), {}), empty.path() + ": error: empty file");
}

// Values are bit-identical to std::from_chars, whichever internal path reads them.
TEST(Triples, ValuesMatchFromChars) {
  // Edge cases (exponents, long mantissas, 2^24 + 1, subnormal) plus random decimals.
  std::vector<std::string> vs = {"1e-3",         "1E5",           ".5",       "5.",
                                 "-0.0",         "123456789.123", "16777217", "0.1",
                                 "3.4028235e38", "1e-45",         "-7"};
  SplitMix64 rng(3);
  for (int k = 0; k < 20000; ++k) {
    const std::string digits = std::to_string(rng.Below(100000000) >> rng.Below(27));
    const size_t dot = rng.Below(digits.size() + 2);  // past the end: no '.'
    std::string v = rng.Below(2) ? "-" : "";
    v.append(digits, 0, dot);
    if (dot < digits.size()) v.append(1, '.').append(digits, dot);
    vs.push_back(v);
  }
  std::string text;
  for (const std::string& v : vs) text += "0,0," + v + "\n";
  Dataset d = MustTriples(text);
  ASSERT_EQ(d.tv.size(), vs.size());
  for (size_t k = 0; k < vs.size(); ++k) {
    float want;
    auto r = std::from_chars(vs[k].data(), vs[k].data() + vs[k].size(), want);
    if (r.ec != std::errc()) want = std::strtof(vs[k].c_str(), nullptr);  // subnormal
    EXPECT_EQ(std::bit_cast<uint32_t>(d.tv[k]), std::bit_cast<uint32_t>(want)) << vs[k];
  }
}

Dataset MustLibsvm(const std::string& text, LibsvmOptions opts = {}) {
  auto r = ParseLibsvm(text, "t.svm", opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Dataset{};
}

TEST(Libsvm, MapsPlusMinusOneLabelsAndShiftsIndices) {
  Dataset d = MustLibsvm("+1 1:0.5 3:1\n-1 2:2\n");
  EXPECT_EQ(d.kind, DataKind::kLibsvm);
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.labels, (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(d.feat_offset, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(d.feat_index, (std::vector<int32_t>{0, 2, 1}));
  EXPECT_EQ(d.feat_value, (std::vector<float>{0.5f, 1.0f, 2.0f}));
  EXPECT_EQ(d.dim, 3);
}

TEST(Libsvm, KeepsOtherLabels) {
  EXPECT_EQ(MustLibsvm("2 1:1\n-1 1:1\n", {.labels = LibsvmLabels::kKeep}).labels,
            (std::vector<float>{2.0f, -1.0f}));
  EXPECT_EQ(MustLibsvm("3 1:1\n1 1:1\n2 1:1\n").labels, (std::vector<float>{3.0f, 1.0f, 2.0f}));
  EXPECT_EQ(MustLibsvm("+1 1:1\n-1 1:1\n", {.labels = LibsvmLabels::kKeep}).labels,
            (std::vector<float>{1.0f, -1.0f}));
  EXPECT_EQ(MustLibsvm("+1 1:1\n-1 1:1\n", {.labels = LibsvmLabels::kPm1}).labels,
            (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(MustLibsvm("0 1:1\n1 1:1\n").labels, (std::vector<float>{0.0f, 1.0f}));
  EXPECT_EQ(MustLibsvm("1 1:1\n1 1:1\n").labels, (std::vector<float>{1.0f, 1.0f}));
}

TEST(Libsvm, EmptyRowsUnsortedIndicesTrailingBlanksAndCrlf) {
  Dataset d = MustLibsvm("1\r\n-1 9:1 4:2.5 \r\n\r\n1 \t2:1e2\t\n-1", {.base = 0});
  EXPECT_EQ(d.count, 4);
  EXPECT_EQ(d.feat_offset, (std::vector<int64_t>{0, 0, 2, 3, 3}));
  EXPECT_EQ(d.feat_index, (std::vector<int32_t>{9, 4, 2}));
  EXPECT_EQ(d.feat_value, (std::vector<float>{1.0f, 2.5f, 100.0f}));
  EXPECT_EQ(d.dim, 10);
  EXPECT_EQ(d.labels, (std::vector<float>{1.0f, 0.0f, 1.0f, 0.0f}));
}

TEST(Libsvm, Errors) {
  ExpectError(ParseLibsvm("1 1:1\nabc 1:1\n", "t.svm", {}),
              "t.svm:2:1: error: expected a number for the label, found 'abc'");
  ExpectError(ParseLibsvm("1 3 4:1\n", "t.svm", {}),
              "t.svm:1:4: error: expected ':' after the feature index, found ' '");
  ExpectError(ParseLibsvm("1 3:x\n", "t.svm", {}),
              "t.svm:1:5: error: expected a number for the feature value, found 'x'");
  ExpectError(ParseLibsvm("1 3:\n", "t.svm", {}),
              "t.svm:1:5: error: expected a number for the feature value, found end of line");
  ExpectError(ParseLibsvm("1 a:1\n", "t.svm", {}),
              "t.svm:1:3: error: expected a feature index, found 'a:1'");
  ExpectError(ParseLibsvm("1 1:1\r\n-1 2:1 0:1\r\n", "t.svm", {}),
              "t.svm:2:8: error: index 0 is below base 1");
  ExpectError(ParseLibsvm("1 5000000000:1\n", "t.svm", {}),
              "t.svm:1:3: error: expected a feature index that fits in int32, found "
              "'5000000000:1'");
  ExpectError(ParseLibsvm("1 1:1 2:1x\n", "t.svm", {}),
              "t.svm:1:9: error: expected a number for the feature value, found '1x'");
  ExpectError(ParseLibsvm(" \n\n", "t.svm", {}), "t.svm: error: empty file");
  auto missing = LoadLibsvm("/nonexistent/t.svm", {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Libsvm, LoadsFile) {
  TempFile f("-1 3:1 11:1\n+1 5:0.25\n");
  auto r = LoadLibsvm(f.path(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dim, 11);
  EXPECT_EQ(r->labels, (std::vector<float>{0.0f, 1.0f}));
}

#ifdef RIGEL_SOURCE_DIR
TEST(Libsvm, LoadsA9aWhenPresent) {
  const std::string path = std::string(RIGEL_SOURCE_DIR) + "/../shared/data/a9a";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  auto r = LoadLibsvm(path, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->count, 32561);
  EXPECT_EQ(r->dim, 123);
  for (float l : r->labels) EXPECT_TRUE(l == 0.0f || l == 1.0f);
}
#endif

TEST(Tokens, VocabOrderedByCountThenFirstAppearance) {
  auto r = ParseTokens("b a c a\tb d\r\n", "c.txt", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, DataKind::kTokens);
  EXPECT_EQ(r->words, (std::vector<std::string>{"b", "a", "c", "d"}));
  EXPECT_EQ(r->word_counts, (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(r->tokens, (std::vector<int32_t>{0, 1, 2, 1, 0, 3}));
  EXPECT_EQ(r->vocab, 4);
  EXPECT_EQ(r->count, 6);
  EXPECT_FALSE(r->negatives.empty());
}

TEST(Tokens, MinCountRemovesRareWordsFromStream) {
  auto r = ParseTokens("x b a\n\n  c a b d a\n", "c.txt", {.min_count = 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->word_counts, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r->tokens, (std::vector<int32_t>{1, 0, 0, 1, 0}));
  EXPECT_EQ(r->count, 5);
  EXPECT_EQ(r->vocab, 2);
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_LT(r->negatives.Sample(Mix64(k)), 2);
}

// lines=true: each line a document; blank lines count, rare words leave the
// stream but not their line, and a last line without '\n' counts.
TEST(Tokens, LinesNumberDocumentsFromZero) {
  auto r = ParseTokens("x b a\n\n  c a b d a\r\nb", "c.txt", {.min_count = 2, .lines = true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->lines);
  EXPECT_EQ(r->tokens, (std::vector<int32_t>{0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(r->token_doc, (std::vector<int32_t>{0, 0, 2, 2, 2, 3}));
  EXPECT_EQ(r->docs, 4);
  auto trailing = ParseTokens("a b\n\nb\n", "c.txt", {.lines = true});
  ASSERT_TRUE(trailing.ok());
  EXPECT_EQ(trailing->docs, 3);
  EXPECT_EQ(trailing->token_doc, (std::vector<int32_t>{0, 0, 2}));
  // Without lines=true nothing about lines is kept.
  auto plain = ParseTokens("a b\nb\n", "c.txt", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->lines);
  EXPECT_TRUE(plain->token_doc.empty());
  EXPECT_EQ(plain->docs, 0);
}

// A split of a lines corpus keeps the line numbers of the file in both parts
// (a document the cut falls in is in both) and the parent's document count.
TEST(Tokens, SplitOfALinesCorpusKeepsLineNumbers) {
  auto r = ParseTokens("a b c\nd e\nf g h i\n", "c.txt", {.lines = true});
  ASSERT_TRUE(r.ok());
  auto parts = SplitDataset(*r, 0.3, 1);  // the last round(9 * 0.3) = 3 positions
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  EXPECT_EQ(parts->first.token_doc, (std::vector<int32_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(parts->second.token_doc, (std::vector<int32_t>{2, 2, 2}));
  EXPECT_EQ(parts->first.docs, 3);
  EXPECT_EQ(parts->second.docs, 3);
  EXPECT_TRUE(parts->second.lines);
}

TEST(Tokens, Errors) {
  ExpectError(ParseTokens(" \n\t\r\n", "c.txt", {}), "c.txt: error: empty file");
  ExpectError(ParseTokens("a b c", "c.txt", {.min_count = 2}),
              "c.txt: error: no word occurs at least min_count (2) times");
  TempFile f("hello world hello\n");
  auto r = LoadTokens(f.path(), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->words[0], "hello");
  EXPECT_EQ(LoadTokens("/nonexistent/c.txt", {}).status().code(), StatusCode::kNotFound);
}

TEST(DenseCsv, LabelColumnAndRowMajorX) {
  auto r = ParseDenseCsv("0.5,1,2\n1.5, 0 ,3\r\n", "d.csv", {.label = 1});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, DataKind::kDenseCsv);
  EXPECT_EQ(r->count, 2);
  EXPECT_EQ(r->dim, 2);
  EXPECT_EQ(r->labels, (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(r->x, (std::vector<float>{0.5f, 2.0f, 1.5f, 3.0f}));
}

TEST(DenseCsv, HeaderAndSpaceSeparator) {
  auto r = ParseDenseCsv("y a b\n1  2 3\n0 4 5 \n", "d.csv", {.sep = ' ', .skip_header = true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->labels, (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(r->x, (std::vector<float>{2.0f, 3.0f, 4.0f, 5.0f}));
}

TEST(DenseCsv, InconsistentColumnsAndBadFields) {
  ExpectError(ParseDenseCsv("1,2,3\n4,5\n", "d.csv", {}),
              "d.csv:2:4: error: expected column 3 of 3 (as on line 1), found end of line");
  ExpectError(ParseDenseCsv("\n1,2\n3,4,5\n", "d.csv", {}),
              "d.csv:3:4: error: expected end of line (2 columns, as on line 2), found ','");
  ExpectError(ParseDenseCsv("1,2\n", "d.csv", {.label = 3}),
              "d.csv:1:4: error: expected column 4 (the label), found end of line");
  ExpectError(ParseDenseCsv("1,2\n3,x\n", "d.csv", {}),
              "d.csv:2:3: error: expected a number for column 2, found 'x'");
  ExpectError(ParseDenseCsv("1,2,\n", "d.csv", {}),
              "d.csv:1:5: error: expected a number for column 3, found end of line");
  ExpectError(ParseDenseCsv("1,2 3\n", "d.csv", {}),
              "d.csv:1:5: error: expected ',' or end of line, found '3'");
  ExpectError(ParseDenseCsv("a,b\n", "d.csv", {.skip_header = true}), "d.csv: error: empty file");
  TempFile f("1,2\n3,4\n");
  auto r = LoadDenseCsv(f.path(), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dim, 1);
}

TEST(DenseCsv, WideLineOverManyBlankLinesReservesInProportionToTheText) {
  // 2.5 MB: 500k columns, then 1.5M blank lines. Sizing x by lines x columns
  // reserved 3 TB here (bad_alloc; under ASan, an allocation-size-too-big crash).
  std::string text;
  for (int k = 0; k < 500000; ++k) text += "1,";
  text += "1" + std::string(1500000, '\n');
  auto r = ParseDenseCsv(text, "d.csv", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->count, 1);
  EXPECT_EQ(r->dim, 500000);
}

TEST(Spaces, GridRangeAndKindNames) {
  Dataset g = MakeGrid(3, 4);
  EXPECT_EQ(g.kind, DataKind::kGrid);
  EXPECT_EQ(g.rows, 3);
  EXPECT_EQ(g.cols, 4);
  EXPECT_EQ(g.count, 12);
  Dataset r = MakeRange(7);
  EXPECT_EQ(r.kind, DataKind::kRange);
  EXPECT_EQ(r.count, 7);
  const char* names[] = {"triples", "libsvm", "tokens", "dense_csv", "grid", "range"};
  for (int k = 0; k < 6; ++k) EXPECT_STREQ(DataKindName(static_cast<DataKind>(k)), names[k]);
}

// n triples (e % 50, e % 70, e), so tv identifies the element.
Dataset NumberedTriples(int n) {
  std::string text;
  for (int e = 0; e < n; ++e) {
    text += std::to_string(e % 50) + "," + std::to_string(e % 70) + "," + std::to_string(e) + "\n";
  }
  return MustTriples(text);
}

TEST(SpacesDeathTest, GridCountOverflowIsCaughtNotWrapped) {
  // 2^32 x 2^32 wrapped to a count of 0; callers must reject such sizes first.
  EXPECT_DEATH(MakeGrid(int64_t{1} << 32, int64_t{1} << 32), "n \\* m overflows int64");
  EXPECT_EQ(MakeGrid(int64_t{1} << 31, int64_t{1} << 31).count, int64_t{1} << 62);
}

TEST(Split, FollowsTheHashRuleDisjointCoveringAndOrdered) {
  Dataset d = NumberedTriples(2000);
  auto r = SplitDataset(d, 0.2, 7);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& [train, test] = *r;
  EXPECT_EQ(train.count + test.count, d.count);
  EXPECT_EQ(train.count, static_cast<int64_t>(train.ti.size()));
  EXPECT_EQ(test.count, static_cast<int64_t>(test.tv.size()));
  EXPECT_NEAR(static_cast<double>(test.count) / d.count, 0.2, 0.04);
  size_t a = 0, b = 0;
  for (int64_t e = 0; e < d.count; ++e) {
    const bool in_test = UnitDouble(HashCoords(7, static_cast<uint64_t>(e))) < 0.2;
    const Dataset& part = in_test ? test : train;
    size_t& k = in_test ? b : a;
    ASSERT_LT(k, part.tv.size());
    EXPECT_EQ(part.tv[k], static_cast<float>(e));  // original order, every element once
    EXPECT_EQ(part.ti[k], d.ti[e]);
    EXPECT_EQ(part.tj[k], d.tj[e]);
    ++k;
  }
  EXPECT_EQ(a, train.tv.size());
  EXPECT_EQ(b, test.tv.size());
}

TEST(Split, DeterministicPerSeed) {
  Dataset d = NumberedTriples(500);
  auto r1 = SplitDataset(d, 0.3, 11);
  auto r2 = SplitDataset(d, 0.3, 11);
  auto r3 = SplitDataset(d, 0.3, 12);
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
  EXPECT_EQ(r1->second.tv, r2->second.tv);
  EXPECT_EQ(r1->first.tv, r2->first.tv);
  EXPECT_NE(r1->second.tv, r3->second.tv);
}

TEST(Split, PartsKeepParentShape) {
  Dataset d = MustTriples("0,0,1\n1,1,1\n2,2,1\n99,199,1\n");
  auto r = SplitDataset(d, 0.5, 3);
  ASSERT_TRUE(r.ok());
  for (const Dataset* p : {&r->first, &r->second}) {
    EXPECT_EQ(p->kind, DataKind::kTriples);
    EXPECT_EQ(p->path, d.path);
    EXPECT_EQ(p->rows, 100);
    EXPECT_EQ(p->cols, 200);
  }
  auto all_train = SplitDataset(d, 0.0, 3);
  auto all_test = SplitDataset(d, 1.0, 3);
  ASSERT_TRUE(all_train.ok() && all_test.ok());
  EXPECT_EQ(all_train->first.count, 4);
  EXPECT_EQ(all_train->second.count, 0);
  EXPECT_EQ(all_test->second.count, 4);
}

TEST(Split, LibsvmRebuildsOffsets) {
  std::string text;
  for (int n = 0; n < 300; ++n) {
    text += (n % 2 ? "+1" : "-1");
    for (int f = 0; f < n % 5; ++f) {
      text += ' ';
      text += std::to_string(n + f + 1);
      text += ':';
      text += std::to_string(n);
    }
    text += "\n";
  }
  Dataset d = MustLibsvm(text);
  auto r = SplitDataset(d, 0.25, 5);
  ASSERT_TRUE(r.ok());
  int64_t seen[2] = {0, 0};
  for (int64_t n = 0; n < d.count; ++n) {
    const int which = UnitDouble(HashCoords(5, static_cast<uint64_t>(n))) < 0.25;
    const Dataset& p = which ? r->second : r->first;
    const int64_t k = seen[which]++;
    EXPECT_EQ(p.labels[k], d.labels[n]);
    ASSERT_EQ(p.feat_offset[k + 1] - p.feat_offset[k], d.feat_offset[n + 1] - d.feat_offset[n]);
    for (int64_t f = 0; f < d.feat_offset[n + 1] - d.feat_offset[n]; ++f) {
      EXPECT_EQ(p.feat_index[p.feat_offset[k] + f], d.feat_index[d.feat_offset[n] + f]);
      EXPECT_EQ(p.feat_value[p.feat_offset[k] + f], d.feat_value[d.feat_offset[n] + f]);
    }
  }
  for (int w = 0; w < 2; ++w) {
    const Dataset& p = w ? r->second : r->first;
    EXPECT_EQ(p.count, seen[w]);
    EXPECT_EQ(static_cast<int64_t>(p.feat_offset.size()), p.count + 1);
    EXPECT_EQ(p.feat_offset.back(), static_cast<int64_t>(p.feat_index.size()));
    EXPECT_EQ(p.dim, d.dim);
  }
}

TEST(Split, DenseCsvCopiesRows) {
  auto d = ParseDenseCsv("0,1,2\n1,3,4\n0,5,6\n1,7,8\n", "d.csv", {});
  ASSERT_TRUE(d.ok());
  auto r = SplitDataset(*d, 0.5, 9);
  ASSERT_TRUE(r.ok());
  for (const Dataset* p : {&r->first, &r->second}) {
    EXPECT_EQ(p->dim, 2);
    ASSERT_EQ(p->x.size(), static_cast<size_t>(p->count * 2));
    for (int64_t k = 0; k < p->count; ++k) {
      // Row (l, 2m+1, 2m+2): x[1] = x[0] + 1 survives the copy.
      EXPECT_EQ(p->x[2 * k + 1], p->x[2 * k] + 1);
    }
  }
  EXPECT_EQ(r->first.count + r->second.count, 4);
}

TEST(Split, TokensTakeTheTailAndKeepVocab) {
  auto d = ParseTokens("a b c a b c a b c d", "c.txt", {});
  ASSERT_TRUE(d.ok());
  auto r = SplitDataset(*d, 0.3, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first.count, 7);
  EXPECT_EQ(r->second.count, 3);
  EXPECT_EQ(r->first.tokens, std::vector<int32_t>(d->tokens.begin(), d->tokens.begin() + 7));
  EXPECT_EQ(r->second.tokens, std::vector<int32_t>(d->tokens.begin() + 7, d->tokens.end()));
  for (const Dataset* p : {&r->first, &r->second}) {
    EXPECT_EQ(p->vocab, 4);
    EXPECT_EQ(p->words, d->words);
    EXPECT_EQ(p->word_counts, d->word_counts);
    EXPECT_FALSE(p->negatives.empty());
  }
}

TEST(Split, RejectsBadFractionAndImplicitSpaces) {
  Dataset d = NumberedTriples(10);
  ExpectError(SplitDataset(d, 1.5, 1), "split: test fraction 1.500000 is not in [0, 1]");
  EXPECT_FALSE(SplitDataset(d, -0.1, 1).ok());
  EXPECT_FALSE(SplitDataset(d, std::nan(""), 1).ok());
  EXPECT_EQ(SplitDataset(MakeGrid(2, 2), 0.5, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(NegativeSampler, FollowsCountsToThePower075) {
  const std::vector<int64_t> counts = {1000, 100, 10, 0, 1, 500};
  NegativeSampler s(counts);
  double total = 0;
  for (int64_t c : counts) total += std::pow(static_cast<double>(c), 0.75);
  constexpr int kDraws = 2000000;
  std::vector<int> hits(counts.size(), 0);
  for (uint64_t k = 0; k < kDraws; ++k) {
    const int32_t id = s.Sample(HashCoords(42, k));
    ASSERT_GE(id, 0);
    ASSERT_LT(id, static_cast<int32_t>(counts.size()));
    ++hits[id];
  }
  EXPECT_EQ(hits[3], 0);  // zero count: never drawn
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = std::pow(static_cast<double>(counts[i]), 0.75) / total;
    EXPECT_NEAR(static_cast<double>(hits[i]) / kDraws, expected, 0.002 + 0.02 * expected)
        << "id " << i;
  }
}

TEST(NegativeSampler, DeterministicAndSingleWord) {
  NegativeSampler s({3, 0, 7});
  NegativeSampler t({3, 0, 7});
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_EQ(s.Sample(Mix64(k)), t.Sample(Mix64(k)));
  NegativeSampler one({0, 5});
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_EQ(one.Sample(Mix64(k)), 1);
  EXPECT_TRUE(NegativeSampler().empty());
}

}  // namespace
}  // namespace rigel::data
