// A table of bad data files, each read by every loader it applies to: the
// file is written to a temp dir and loaded from there, and the exact message
// (path, line, column and what was expected) or warning is checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/part_load.h"

namespace rigel::data {
namespace {

// A loader with its options, named for failure messages.
struct Loader {
  std::string name;
  std::function<StatusOr<Dataset>(const std::string& path)> load;
  LoadSpec spec;  // the same loader, for a load in parts (data/part_load.h)
};

Loader Triples(TriplesOptions o = {}, std::string name = "triples") {
  return {name, [o](const std::string& p) { return LoadTriples(p, o); }, LoadSpec::Of(o)};
}
Loader Libsvm(LibsvmOptions o = {}, std::string name = "libsvm") {
  return {name, [o](const std::string& p) { return LoadLibsvm(p, o); }, LoadSpec::Of(o)};
}
Loader Tokens(TokensOptions o = {}) {
  return {"tokens", [o](const std::string& p) { return LoadTokens(p, o); }, LoadSpec::Of(o)};
}
Loader DenseCsv(DenseCsvOptions o = {}, std::string name = "dense_csv") {
  return {name, [o](const std::string& p) { return LoadDenseCsv(p, o); }, LoadSpec::Of(o)};
}

// One bad file read by one loader. `want` is the message without the path
// in front: ":LINE:COL: error: ..." or ": error: ..." for an error, or
// ":LINE: warning: ..." for a file that loads with that one warning.
struct Row {
  std::string file;  // what is wrong with it
  std::string contents;
  Loader loader;
  std::string want;
};

const std::vector<Row>& Table() {
  static const std::vector<Row> rows = {
      // 0. A separator that is a line end, whatever the file holds.
      {"line end separator", "0\n1\n2\n", Triples({.sep = '\n'}, "triples sep=\\n"),
       ": error: the field separator cannot be a line end (one entry per line)"},
      {"line end separator", "1\r2\n", DenseCsv({.sep = '\r'}, "dense_csv sep=\\r"),
       ": error: the field separator cannot be a line end (one entry per line)"},
      // 1. NaN in a value field.
      {"nan value", "0,0,1\n1,1,nan\n", Triples(),
       ":2:5: error: expected a finite number for column 3 (v), found 'nan'"},
      {"nan value", "+1 1:1\n-1 2:nan 3:1\n", Libsvm(),
       ":2:6: error: expected a finite number for the feature value, found 'nan'"},
      {"nan value", "1,2,3\n0,NaN,1\n", DenseCsv(),
       ":2:3: error: expected a finite number for column 2, found 'NaN'"},
      {"nan label", "+1 1:1\n\nnan 1:1\n", Libsvm(),
       ":3:1: error: expected a finite number for the label, found 'nan'"},
      {"nan label", "+1 1:1\n\nnan 1:1\n", Libsvm({.labels = LibsvmLabels::kKeep}, "libsvm keep"),
       ":3:1: error: expected a finite number for the label, found 'nan'"},
      // 2. Infinities, in every spelling from_chars takes.
      {"infinite value", "0,0,1\r\n2,3,-inf\r\n", Triples(),
       ":2:5: error: expected a finite number for column 3 (v), found '-inf'"},
      {"infinite value", "-1 1:inf\n", Libsvm(),
       ":1:6: error: expected a finite number for the feature value, found 'inf'"},
      {"infinite value", "1,Infinity,2\n", DenseCsv(),
       ":1:3: error: expected a finite number for column 2, found 'Infinity'"},
      {"infinite label", "1 1:1\n+INF 2:1\n", Libsvm(),
       ":2:1: error: expected a finite number for the label, found '+INF'"},
      // 3. Values that overflow f32 (1e999 overflows double too).
      {"overflowing value", "0,0,1\n0,1,1e999\n", Triples(),
       ":2:5: error: expected a number for column 3 (v) that fits in f32 (at most 3.4e38 in "
       "magnitude), found '1e999'"},
      {"overflowing value", "1 4:-1e39\n", Libsvm(),
       ":1:5: error: expected a number for the feature value that fits in f32 (at most 3.4e38 "
       "in magnitude), found '-1e39'"},
      {"overflowing value", "1e999,1\n", DenseCsv(),
       ":1:1: error: expected a number for column 1 that fits in f32 (at most 3.4e38 in "
       "magnitude), found '1e999'"},
      // 4. A header line read without skip_header.
      {"header line", "user,item,rating\n0,0,1\n", Triples(),
       ":1:1: error: expected a number for column 1 (i), found 'user'"},
      {"header line", "y x1 x2\n1 2 3\n", DenseCsv({.sep = ' '}),
       ":1:1: error: expected a number for column 1, found 'y'"},
      {"header line", "label features\n1 1:1\n", Libsvm(),
       ":1:1: error: expected a number for the label, found 'label'"},
      // 5. A file written with another separator than the one in use.
      {"';' for ','", "0;1;2.5\n", Triples(),
       ":1:2: error: expected ',' after column 1 (i), found ';1;2.5'"},
      {"';' for ','", "1;2;3\n", DenseCsv(),
       ":1:2: error: expected ',' or end of line, found ';2;3'"},
      {"',' for a tab", "0\t1\t2\n3,4,5\n", Triples({.sep = '\t'}, "triples sep=tab"),
       ":2:2: error: expected a tab after column 1 (i), found ',4,5'"},
      {"',' for a space", "1 0.5 2\n0,1,2\n", DenseCsv({.sep = ' '}, "dense_csv sep=space"),
       ":2:2: error: expected a space or end of line, found ',1,2'"},
      {"spaces for ','", "0 1 2.5\n", Triples(),
       ":1:3: error: expected ',' after column 1 (i), found '1'"},
      {"a csv file", "0,1,2.5\n", Libsvm(),
       ":1:1: error: expected a number for the label, found '0,1,2.5'"},
      // 6. Empty files (nothing, blanks only, only the header).
      {"empty", "", Triples(), ": error: empty file"},
      {"empty", "", Libsvm(), ": error: empty file"},
      {"empty", "", Tokens(), ": error: empty file"},
      {"empty", "", DenseCsv(), ": error: empty file"},
      {"blank lines only", " \n\t\r\n\n", Triples(), ": error: empty file"},
      {"blank lines only", " \n\t\r\n\n", Libsvm(), ": error: empty file"},
      {"blank lines only", " \n\t\r\n\n", Tokens(), ": error: empty file"},
      {"blank lines only", " \n\t\r\n\n", DenseCsv(), ": error: empty file"},
      {"header only", "i,j,v\n", Triples({.skip_header = true}, "triples skip_header"),
       ": error: empty file"},
      // 7. A missing value.
      {"missing value", "0,1,2\n3,,4\n", Triples(),
       ":2:3: error: expected a number for column 2 (j), found ','"},
      {"missing value", "0,1,2\n3,4,\n", Triples(),
       ":2:5: error: expected column 3 (v), found end of line"},
      {"missing value", "1,2,3\n4,,6\n", DenseCsv(),
       ":2:3: error: expected a number for column 2, found ','"},
      {"missing value", "1 2:1\n-1 3: 4:1\n", Libsvm(),
       ":2:6: error: expected a number for the feature value, found ' '"},
      {"missing label", "1 2:1\n3:1 4:1\n", Libsvm(),
       ":2:1: error: expected a number for the label, found '3:1'"},
      // 8. Indices below base (negative ones too).
      {"negative index", "0,0,1\n-1,2,1\n", Triples(), ":2:1: error: index -1 is below base 0"},
      {"index below base", "1,1,1\n2,0,1\n", Triples({.base = 1}, "triples base=1"),
       ":2:3: error: index 0 is below base 1"},
      {"index below base", "1 1:1\n-1 2:1 0:1\n", Libsvm(), ":2:8: error: index 0 is below base 1"},
      {"negative index", "1 -3:1\n", Libsvm({.base = 0}, "libsvm base=0"),
       ":1:3: error: index -3 is below base 0"},
      // 9. A truncated last line (no final newline).
      {"truncated last line", "0,0,1\n1,1", Triples(),
       ":2:4: error: expected column 3 (v), found end of line"},
      {"truncated last line", "1 1:1\n-1 2", Libsvm(),
       ":2:5: error: expected ':' after the feature index, found end of line"},
      {"truncated last line", "1,2,3\n4,5", DenseCsv(),
       ":2:4: error: expected column 3 of 3 (as on line 1), found end of line"},
      // 10. Binary junk: a gzip-compressed file read as text.
      {"gzip file", std::string("\x1f\x8b\x08\x00\x12\x34 \n", 8), Triples(),
       ":1:1: error: expected a number for column 1 (i), found '\\x1F\\x8B\\x08\\x00\\x124'"},
      {"gzip file", std::string("\x1f\x8b\x08\x00\x12\x34 \n", 8), Libsvm(),
       ":1:1: error: expected a number for the label, found '\\x1F\\x8B\\x08'"},
      {"gzip file", std::string("\x1f\x8b\x08\x00\x12\x34 \n", 8), DenseCsv(),
       ":1:1: error: expected a number for column 1, found '\\x1F\\x8B\\x08\\x00\\x124'"},
      {"gzip file", std::string("\x1f\x8b\x08\x00\x12\x34 \n", 8), Tokens(),
       ":1:2: error: expected UTF-8 text, found '\\x8B\\x08'"},
      // 11. Text that is not UTF-8 (Latin-1, UTF-16) or holds NUL bytes.
      {"latin-1 text", "the caf\xe9 is open\n", Tokens(),
       ":1:8: error: expected UTF-8 text, found '\\xE9'"},
      {"latin-1 text", "0,1,caf\xe9\n", Triples(),
       ":1:5: error: expected a number for column 3 (v), found 'caf\\xE9'"},
      {"utf-16 text", std::string("\377\376a\0 \0b\0", 8), Tokens(),
       ":1:1: error: expected UTF-8 text, found '\\xFF\\xFEa'"},
      {"utf-16 text", std::string("\377\3761\0,\0002\0", 8), DenseCsv(),
       ":1:1: error: expected a number for column 1, found '\\xFF\\xFE1\\x00'"},
      {"nul byte", std::string("one two\nthree\0four\n", 19), Tokens(),
       ":2:6: error: expected UTF-8 text, found '\\x00'"},
      // 12. libsvm labels that do not fit one mapping.
      {"stray label 2 in a -1/+1 file", "+1 1:1\n-1 2:1\n2 3:1\n-1 1:1\n", Libsvm(),
       ":3:1: error: expected -1 or +1 for the label, like the file's 2 labels -1 "
       "(labels=\"keep\" reads labels as they are), found '2'"},
      {"stray label 0 in a -1/+1 file", "-1 1:1\n 0 2:1\n+1 3:1\n", Libsvm(),
       ":2:2: error: expected -1 or +1 for the label, like the file's 1 label -1 "
       "(labels=\"keep\" reads labels as they are), found '0'"},
      {"stray label -1 in a 0/1 file", "0 1:1\n1 1:1\n0 2:1\n-1 2:1\n0 3:1\n", Libsvm(),
       ":4:1: error: expected a label other than -1, like the file's 3 labels that are neither "
       "-1 nor +1 (labels=\"keep\" reads labels as they are), found '-1'"},
      {"stray label 0 in a -1/+1 file", "+1 1:1\r\n-1 2:1\r\n0 3:1\r\n",
       Libsvm({.labels = LibsvmLabels::kPm1}, "libsvm labels=pm1"),
       ":3:1: error: expected -1 or +1 for the label (labels=\"pm1\"), found '0'"},
      {"a 0/1 file", "1 1:1\n0 1:1\n", Libsvm({.labels = LibsvmLabels::kPm1}, "libsvm labels=pm1"),
       ":2:1: error: expected -1 or +1 for the label (labels=\"pm1\"), found '0'"},
      // 13. Wrong shape: extra or missing columns, fractional indices.
      {"four columns", "0,1,2\n0,1,2,1234567890\n", Triples(),
       ":2:6: error: expected end of line after column 3 (v) (a file with more columns needs "
       "triples(..., extra=\"ignore\")), found ','"},
      {"ragged rows", "1,2,3\n4,5,6,7\n", DenseCsv(),
       ":2:6: error: expected end of line (3 columns, as on line 1), found ','"},
      {"fractional index", "0,1.5,2\n", Triples(),
       ":1:3: error: expected an integer for column 2 (j), found '1.5'"},
      {"fractional index", "1 2.5:1\n", Libsvm(),
       ":1:3: error: expected a feature index, found '2.5:1'"},
      {"few words", "a b c a\n", Tokens({.min_count = 3}),
       ": error: no word occurs at least min_count (3) times"},
      // 14. An index far beyond the rest: loads, with a warning.
      {"far feature index", "1 1:1 3:1\n-1 150:1\n\n1 50000000:1 2:1\n-1 50000000:1\n", Libsvm(),
       ":4: warning: feature index 50000000 is far beyond the file's other feature indices (the "
       "next largest is 150): .dim = 50000000, so one f32 per feature takes 200.0 MB"},
      {"far row index", "0,1,1\n3,199,1\n50000000,2,1\n", Triples(),
       ":3: warning: row index 50000000 is far beyond the file's other row indices (the next "
       "largest is 3): .rows = 50000001, so one f32 per row takes 200.0 MB"},
      {"far column index", "1,1,1\n1,2000000,1\n2,5,1\n", Triples({.base = 1}, "triples base=1"),
       ":2: warning: column index 2000000 is far beyond the file's other column indices (the "
       "next largest is 5): .cols = 2000000, so one f32 per column takes 8.0 MB"},
      {"one far index alone", "1 3000000:1\n", Libsvm({.base = 0}, "libsvm base=0"),
       ":1: warning: feature index 3000000 is far beyond the file's other feature indices "
       "(there are none): .dim = 3000001, so one f32 per feature takes 12.0 MB"},
  };
  return rows;
}

// `d`, the row's file read from `path`, failed with the row's message or
// loaded with its one warning.
void ExpectAsTheRowSays(const Row& row, const std::string& path, const StatusOr<Dataset>& d) {
  if (row.want.find(": warning: ") != std::string::npos) {
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->warnings, std::vector<std::string>{path + row.want});
    return;
  }
  ASSERT_FALSE(d.ok()) << "loaded, expected: " << row.want;
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(), path + row.want);
}

class BadDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rigel_bad_data_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(size_t k, const std::string& contents) {
    const std::string path = (dir_ / ("bad" + std::to_string(k) + ".txt")).string();
    EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(BadDataTest, EveryBadFileSaysWhereAndWhatWasExpected) {
  const std::vector<Row>& rows = Table();
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& row = rows[k];
    SCOPED_TRACE("row " + std::to_string(k) + ": " + row.file + " read by " + row.loader.name);
    const std::string path = Write(k, row.contents);
    ExpectAsTheRowSays(row, path, row.loader.load(path));
  }
}

// Read in 2 to 5 parts (as a job's workers read it), every bad file gives
// the whole load's message or warning: the parts' lines are the file's.
TEST_F(BadDataTest, EveryBadFileSaysTheSameReadInParts) {
  const std::vector<Row>& rows = Table();
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& row = rows[k];
    for (int parts = 2; parts <= 5; ++parts) {
      SCOPED_TRACE("row " + std::to_string(k) + ": " + row.file + " read by " + row.loader.name +
                   " in " + std::to_string(parts) + " parts");
      ExpectAsTheRowSays(row, "bad.txt",
                         LoadInParts(row.contents, "bad.txt", row.loader.spec, parts));
    }
  }
}

// The table covers every loader and at least 12 distinct bad files.
TEST_F(BadDataTest, TableCoversEveryLoader) {
  std::vector<std::string> files, loaders;
  for (const Row& row : Table()) {
    files.push_back(row.file);
    loaders.push_back(row.loader.name);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  EXPECT_GE(files.size(), 12u);
  for (const char* l : {"triples", "libsvm", "tokens", "dense_csv"}) {
    EXPECT_NE(std::find(loaders.begin(), loaders.end(), l), loaders.end()) << l;
  }
}

// Near the far-index rule's edges nothing is said: the largest index at most
// kFarIndexMin, or at most kFarIndexRatio times the next largest.
TEST_F(BadDataTest, NoWarningForIndicesThatAreNotFar) {
  auto at_min = LoadTriples(Write(0, "0,0,1\n1000000,1,1\n"), {});
  ASSERT_TRUE(at_min.ok()) << at_min.status().ToString();
  EXPECT_TRUE(at_min->warnings.empty());
  EXPECT_EQ(at_min->rows, 1000001);
  auto near = LoadLibsvm(Write(1, "1 2501:1\n-1 2000001:1\n"), {});
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  EXPECT_TRUE(near->warnings.empty());
  // Past the ratio it warns: 2000000 > 1000 * 1999 (after the base shift).
  auto past = LoadLibsvm(Write(2, "1 2000:1\n-1 2000001:1\n"), {});
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ(past->warnings.size(), 1u);
  // Split parts do not repeat their parent's warnings.
  auto parts = SplitDataset(*past, 0.5, 1);
  ASSERT_TRUE(parts.ok());
  EXPECT_TRUE(parts->first.warnings.empty() && parts->second.warnings.empty());
}

// What "auto" keeps loading as before: -1/+1 files as 0/1, and files without
// -1 (0/1, classes 1..K, real-valued targets) as written; UTF-8 corpora.
TEST_F(BadDataTest, GoodFilesStillLoad) {
  auto pm1 = LoadLibsvm(Write(0, "+1 1:1\n-1 2:1\n-1 2:1\n"), {});
  ASSERT_TRUE(pm1.ok()) << pm1.status().ToString();
  EXPECT_EQ(pm1->labels, (std::vector<float>{1, 0, 0}));
  auto multi = LoadLibsvm(Write(1, "3 1:1\n1 2:1\n2 2:1\n0 1:1\n"), {});
  ASSERT_TRUE(multi.ok()) << multi.status().ToString();
  EXPECT_EQ(multi->labels, (std::vector<float>{3, 1, 2, 0}));
  auto real = LoadLibsvm(Write(2, "0.5 1:1\n-2.25 2:1\n"), {});
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(real->labels, (std::vector<float>{0.5f, -2.25f}));
  auto keep = LoadLibsvm(Write(3, "2 1:1\n-1 2:1\n"), {.labels = LibsvmLabels::kKeep});
  ASSERT_TRUE(keep.ok()) << keep.status().ToString();
  EXPECT_EQ(keep->labels, (std::vector<float>{2, -1}));
  auto words = LoadTokens(Write(4, "na\xc3\xafve caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82\n"), {});
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  EXPECT_EQ(words->vocab, 4);
  auto tiny = LoadTriples(Write(5, "0,0,1e-45\n0,1,-0\n"), {});
  ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
}

// Every libsvm file the examples and the shared data ship loads under the
// default labels="auto" exactly as under "keep", or mapped from -1/+1.
TEST_F(BadDataTest, ShippedLibsvmFilesLoadAsBefore) {
#ifdef RIGEL_SOURCE_DIR
  const std::string root = RIGEL_SOURCE_DIR;
  int seen = 0;
  for (const std::string rel :
       {"/examples/data/train.svm", "/examples/data/test.svm", "/examples/data/fm.svm",
        "/examples/data/fm_test.svm", "/examples/data/multi.svm", "/examples/data/multi_test.svm",
        "/../shared/data/a9a", "/../shared/data/a9a.t"}) {
    const std::string path = root + rel;
    if (!std::filesystem::exists(path)) continue;
    ++seen;
    SCOPED_TRACE(path);
    auto automatic = LoadLibsvm(path, {});
    auto kept = LoadLibsvm(path, {.labels = LibsvmLabels::kKeep});
    ASSERT_TRUE(automatic.ok()) << automatic.status().ToString();
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_TRUE(automatic->warnings.empty());
    bool pm1 = true;
    for (float l : kept->labels) pm1 = pm1 && (l == 1 || l == -1);
    std::vector<float> want = kept->labels;
    if (pm1) {
      for (float& l : want) l = l > 0 ? 1.0f : 0.0f;
    }
    EXPECT_EQ(automatic->labels, want);
  }
  if (seen == 0) GTEST_SKIP() << "no shipped libsvm file present (made by the build)";
#else
  GTEST_SKIP() << "RIGEL_SOURCE_DIR not defined";
#endif
}

}  // namespace
}  // namespace rigel::data
