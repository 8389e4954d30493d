// data/part_load.h: a file read in parts, one per worker, each worker reading
// only its byte range, gives every element to exactly one worker, and the
// parts together are the whole load (elements, shape attributes, vocabulary,
// warnings), for every loader, with 1 to 4 workers (and up to 7 in memory),
// on files whose lines straddle every cut: lines longer than a part and than
// the file reader's 64 KiB, CRLF, no final newline, blank lines, headers.
#include "data/part_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/line_split.h"

namespace rigel::data {
namespace {

// Line ends: mostly "\n", some "\r\n"; blank lines in between.
std::string Eol(std::mt19937& rng) {
  std::string e = rng() % 4 == 0 ? "\r\n" : "\n";
  if (rng() % 7 == 0) e += rng() % 2 ? "\n" : "  \r\n";
  return e;
}

// A file of `lines` lines for `kind`, with one line far longer than 64 KiB
// (libsvm: many features; tokens: many words; dense_csv: no, its lines
// are as wide as the first) and no final newline when `open_end`.
std::string Generate(DataKind kind, int lines, bool header, bool open_end, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string t;
  if (header) t += kind == DataKind::kTriples ? "user,item,rating\n" : "y,a,b,c\n";
  // Word frequencies with ties, so that the order of first appearance
  // decides ids.
  const std::vector<std::string> words = {"the", "of", "and",          "to",          "a", "in",
                                          "is",  "it", "na\xc3\xafve", "caf\xc3\xa9", "x", "y"};
  for (int l = 0; l < lines; ++l) {
    const bool long_line = l == lines / 3;
    switch (kind) {
      case DataKind::kTriples:
        t += std::to_string(rng() % 50) + "," + std::to_string(rng() % 40) + "," +
             std::to_string(static_cast<int>(rng() % 9)) + ".5";
        break;
      case DataKind::kLibsvm: {
        t += rng() % 2 ? "+1" : "-1";
        const int feats = long_line ? 12000 : static_cast<int>(rng() % 6);
        for (int f = 0; f < feats; ++f) {
          t += " " + std::to_string(1 + f * 3 + static_cast<int>(rng() % 3)) + ":0.25";
        }
        break;
      }
      case DataKind::kTokens: {
        const int n = long_line ? 20000 : static_cast<int>(rng() % 9);
        for (int w = 0; w < n; ++w) t += (w ? " " : "") + words[rng() % words.size()];
        break;
      }
      case DataKind::kDenseCsv:
        t += std::to_string(rng() % 2) + "," + std::to_string(rng() % 10) + ".5,-1," +
             std::to_string(rng() % 100);
        break;
      default:
        break;
    }
    if (l + 1 < lines || !open_end) t += Eol(rng);
  }
  return t;
}

struct Case {
  std::string name;
  LoadSpec spec;
  std::string text;
};

std::vector<Case> Cases() {
  std::vector<Case> c;
  for (bool open_end : {false, true}) {
    const std::string end = open_end ? " without a final newline" : "";
    c.push_back({"triples" + end, LoadSpec::Of(TriplesOptions{}),
                 Generate(DataKind::kTriples, 300, false, open_end, 1)});
    c.push_back({"triples with a header" + end, LoadSpec::Of(TriplesOptions{.skip_header = true}),
                 Generate(DataKind::kTriples, 300, true, open_end, 2)});
    c.push_back({"libsvm" + end, LoadSpec::Of(LibsvmOptions{}),
                 Generate(DataKind::kLibsvm, 200, false, open_end, 3)});
    c.push_back({"tokens" + end, LoadSpec::Of(TokensOptions{.min_count = 2}),
                 Generate(DataKind::kTokens, 200, false, open_end, 4)});
    c.push_back({"tokens lines=true" + end,
                 LoadSpec::Of(TokensOptions{.min_count = 1, .lines = true}),
                 Generate(DataKind::kTokens, 200, false, open_end, 5)});
    c.push_back({"dense_csv with a header" + end,
                 LoadSpec::Of(DenseCsvOptions{.label = 0, .sep = ',', .skip_header = true}),
                 Generate(DataKind::kDenseCsv, 300, true, open_end, 6)});
  }
  // Blank lines before the header, so that the header lies past the first
  // part's start, and documents that are blank lines at the file's end.
  c.push_back({"triples, header after blank lines",
               LoadSpec::Of(TriplesOptions{.skip_header = true}),
               std::string(40, '\n') + "i,j,v\n0,1,2\n3,4,5\n"});
  c.push_back({"tokens lines=true ending in blank lines",
               LoadSpec::Of(TokensOptions{.min_count = 1, .lines = true}),
               "b a\n\na b c\r\n\n\n\n"});
  // Ties decided by first appearance in the file, not in the part.
  c.push_back({"tokens whose ties a later part sees the other way", LoadSpec::Of(TokensOptions{}),
               "b a\nc\nc\na b\n"});
  return c;
}

// The element columns of `d` between elements [from, from + n) equal `part`'s.
void ExpectSameElements(const Dataset& whole, int64_t from, const Dataset& part) {
  ASSERT_LE(from + part.count, whole.count);
  const auto slice = [&](const auto& v, int64_t per) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if (v.empty()) return std::vector<T>{};
    return std::vector<T>(v.begin() + from * per, v.begin() + (from + part.count) * per);
  };
  switch (whole.kind) {
    case DataKind::kTriples:
      EXPECT_EQ(slice(whole.ti, 1), part.ti);
      EXPECT_EQ(slice(whole.tj, 1), part.tj);
      EXPECT_EQ(slice(whole.tv, 1), part.tv);
      break;
    case DataKind::kLibsvm:
      EXPECT_EQ(slice(whole.labels, 1), part.labels);
      ASSERT_EQ(part.feat_offset.size(), static_cast<size_t>(part.count) + 1);
      for (int64_t e = 0; e < part.count; ++e) {
        const int64_t w0 = whole.feat_offset[from + e], w1 = whole.feat_offset[from + e + 1];
        const int64_t p0 = part.feat_offset[e], p1 = part.feat_offset[e + 1];
        ASSERT_EQ(w1 - w0, p1 - p0) << "element " << from + e;
        EXPECT_TRUE(std::equal(whole.feat_index.begin() + w0, whole.feat_index.begin() + w1,
                               part.feat_index.begin() + p0));
        EXPECT_TRUE(std::equal(whole.feat_value.begin() + w0, whole.feat_value.begin() + w1,
                               part.feat_value.begin() + p0));
      }
      break;
    case DataKind::kDenseCsv:
      EXPECT_EQ(slice(whole.labels, 1), part.labels);
      EXPECT_EQ(slice(whole.x, whole.dim), part.x);
      break;
    case DataKind::kTokens:
      EXPECT_EQ(slice(whole.tokens, 1), part.tokens);
      EXPECT_EQ(slice(whole.token_doc, 1), part.token_doc);
      break;
    default:
      FAIL() << "no element columns";
  }
}

void ExpectSameShape(const Dataset& whole, const Dataset& part) {
  EXPECT_EQ(part.kind, whole.kind);
  EXPECT_EQ(part.rows, whole.rows);
  EXPECT_EQ(part.cols, whole.cols);
  EXPECT_EQ(part.dim, whole.dim);
  EXPECT_EQ(part.vocab, whole.vocab);
  EXPECT_EQ(part.words, whole.words);
  EXPECT_EQ(part.word_counts, whole.word_counts);
  EXPECT_EQ(part.lines, whole.lines);
  EXPECT_EQ(part.docs, whole.docs);
}

class PartLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rigel_part_load_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// As a job's workers will: each reads its byte range of the file and counts
// its lines, the places come from every part's counts, each parses its part,
// the facts are merged, and each finishes its part.
TEST_F(PartLoadTest, EveryElementIsLoadedByExactlyOneWorkerReadingOnlyItsRange) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    const std::string path = (dir_ / ("data" + std::to_string(c) + ".txt")).string();
    ASSERT_TRUE(WriteFileAtomically(path, tc.text).ok());
    StatusOr<Dataset> whole = LoadInParts(tc.text, path, tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name << ": " << whole.status().ToString();
    for (int workers = 1; workers <= 4; ++workers) {
      SCOPED_TRACE(tc.name + ", " + std::to_string(workers) + " workers");
      std::vector<std::string> texts;
      std::vector<PartShape> shapes;
      int64_t bytes = 0;
      for (int w = 0; w < workers; ++w) {
        StatusOr<ByteRange> r = SplitFileLines(path, w, workers);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        StatusOr<std::string> t = ReadFileRange(path, *r);
        ASSERT_TRUE(t.ok()) << t.status().ToString();
        bytes += r->size();
        texts.push_back(std::move(*t));
        shapes.push_back(ShapeOf(texts.back()));
      }
      EXPECT_EQ(bytes, static_cast<int64_t>(tc.text.size()));
      const std::vector<PartPlace> places = PlaceParts(shapes);
      std::vector<ParsedPart> parsed;
      std::vector<const PartFacts*> facts;
      parsed.reserve(static_cast<size_t>(workers));
      for (int w = 0; w < workers; ++w) {
        StatusOr<ParsedPart> p = ParsePart(texts[w], path, tc.spec, places[w]);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        parsed.push_back(std::move(*p));
        facts.push_back(&parsed.back().facts);
      }
      StatusOr<DataFacts> merged = MergeParts(path, tc.spec, facts);
      ASSERT_TRUE(merged.ok()) << merged.status().ToString();
      EXPECT_EQ(merged->count, whole->count);
      EXPECT_EQ(merged->warnings, whole->warnings);
      int64_t next = 0;  // the parts tile [0, count) in order
      for (int w = 0; w < workers; ++w) {
        const Dataset part = FinishPart(*merged, w, std::move(parsed[w]));
        EXPECT_EQ(merged->first_element[w], next) << "worker " << w;
        ExpectSameShape(*whole, part);
        ExpectSameElements(*whole, next, part);
        next += part.count;
      }
      EXPECT_EQ(next, whole->count);
    }
  }
}

// In memory, with up to 7 parts (more parts than some files have lines): the
// concatenated parts have the whole load's digest and warnings.
TEST_F(PartLoadTest, PartsTogetherHaveTheWholeLoadsDigest) {
  for (const Case& tc : Cases()) {
    StatusOr<Dataset> whole = LoadInParts(tc.text, "f", tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name << ": " << whole.status().ToString();
    for (int parts = 2; parts <= 7; ++parts) {
      SCOPED_TRACE(tc.name + ", " + std::to_string(parts) + " parts");
      StatusOr<Dataset> split = LoadInParts(tc.text, "f", tc.spec, parts);
      ASSERT_TRUE(split.ok()) << split.status().ToString();
      EXPECT_EQ(DatasetDigest(*split), DatasetDigest(*whole));
      EXPECT_EQ(split->warnings, whole->warnings);
    }
  }
}

// The whole load the tests compare with is the loaders' own.
TEST_F(PartLoadTest, OnePartIsTheLoadersResult) {
  const std::string text = Generate(DataKind::kTokens, 50, false, true, 9);
  StatusOr<Dataset> a = ParseTokens(text, "t", {.min_count = 2});
  StatusOr<Dataset> b = LoadInParts(text, "t", LoadSpec::Of(TokensOptions{.min_count = 2}), 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(DatasetDigest(*a), DatasetDigest(*b));
  // "b" and "a" occur twice each, "c" twice: ids follow first appearance.
  StatusOr<Dataset> t = LoadInParts("b a\nc\nc\na b\n", "t", LoadSpec::Of(TokensOptions{}), 4);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->words, (std::vector<std::string>{"b", "a", "c"}));
}

// A dense_csv part that starts with a line of another width: the message is
// the whole load's, at that line.
TEST_F(PartLoadTest, ADenseCsvPartOfAnotherWidthFailsAsTheWholeLoad) {
  const std::string text = "1,2,3\n4,5,6\n7,8,9\n1,2\n3,4\n5,6\n";
  StatusOr<Dataset> whole = ParseDenseCsv(text, "d.csv", {});
  ASSERT_FALSE(whole.ok());
  for (int parts = 2; parts <= 6; ++parts) {
    StatusOr<Dataset> split = LoadInParts(text, "d.csv", LoadSpec::Of(DenseCsvOptions{}), parts);
    ASSERT_FALSE(split.ok()) << parts;
    EXPECT_EQ(split.status().message(), whole.status().message()) << parts;
  }
  // Merged without the second parse, the line at fault is still named.
  std::vector<ParsedPart> parsed;
  for (const char* t : {"1,2,3\n", "1,2\n"}) {
    StatusOr<ParsedPart> p = ParseDenseCsvPart(t, "d.csv", {}, {});
    ASSERT_TRUE(p.ok());
    parsed.push_back(std::move(*p));
  }
  parsed[1].facts.cols_line = 2;
  StatusOr<DataFacts> m =
      MergeParts("d.csv", LoadSpec::Of(DenseCsvOptions{}), {&parsed[0].facts, &parsed[1].facts});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "d.csv:2: error: 2 columns, where line 1 has 3 (every line must have as many)");
}

}  // namespace
}  // namespace rigel::data
