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
#include "data/data_index.h"
#include "data/dataset.h"
#include "data/held.h"
#include "data/held_load.h"
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
  // A corpus on one line (as the Gutenberg corpus), cut between words.
  {
    std::string one;
    for (int k = 0; k < 3000; ++k) one += "w" + std::to_string(k % 41) + (k % 5 ? " " : "  \t");
    c.push_back({"tokens on one line", LoadSpec::Of(TokensOptions{.min_count = 3}), one});
  }
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

// data/held.h and data/held_load.h: a worker that holds only some elements.

// Element e of `whole` equals element e of `held` (at its column position).
void ExpectSameElementAt(const Dataset& whole, int64_t e, const Dataset& held) {
  const int64_t l = held.Local(e);
  ASSERT_GE(l, 0) << "element " << e << " is not held";
  switch (whole.kind) {
    case DataKind::kTriples:
      EXPECT_EQ(whole.ti[e], held.ti[l]);
      EXPECT_EQ(whole.tj[e], held.tj[l]);
      EXPECT_EQ(whole.tv[e], held.tv[l]);
      break;
    case DataKind::kLibsvm: {
      EXPECT_EQ(whole.labels[e], held.labels[l]);
      const int64_t w0 = whole.feat_offset[e], w1 = whole.feat_offset[e + 1];
      const int64_t h0 = held.feat_offset[l], h1 = held.feat_offset[l + 1];
      ASSERT_EQ(w1 - w0, h1 - h0) << "element " << e;
      EXPECT_TRUE(std::equal(whole.feat_index.begin() + w0, whole.feat_index.begin() + w1,
                             held.feat_index.begin() + h0));
      EXPECT_TRUE(std::equal(whole.feat_value.begin() + w0, whole.feat_value.begin() + w1,
                             held.feat_value.begin() + h0));
      break;
    }
    case DataKind::kDenseCsv:
      EXPECT_EQ(whole.labels[e], held.labels[l]);
      EXPECT_TRUE(std::equal(whole.x.begin() + e * whole.dim, whole.x.begin() + (e + 1) * whole.dim,
                             held.x.begin() + l * held.dim));
      break;
    case DataKind::kTokens:
      EXPECT_EQ(whole.tokens[e], held.tokens[l]);
      if (whole.lines) {
        EXPECT_EQ(whole.token_doc[e], held.token_doc[l]);
      }
      break;
    default:
      FAIL() << "no element columns";
  }
}

// Exactly the elements `in` says are held, each as the whole load has it.
void ExpectHoldsThese(const Dataset& whole, const std::vector<bool>& in, const Dataset& held) {
  ASSERT_TRUE(held.in_part);
  EXPECT_EQ(held.count, whole.count);
  ExpectSameShape(whole, held);
  int64_t n = 0;
  for (int64_t e = -2; e < whole.count + 2; ++e) {
    if (e >= 0 && e < whole.count && in[static_cast<size_t>(e)]) {
      ++n;
      ExpectSameElementAt(whole, e, held);
    } else {
      EXPECT_EQ(held.Local(e), -1) << "element " << e << " is held";
    }
  }
  EXPECT_EQ(held.HeldCount(), n);
}

// Exactly the elements of `ranges` are held, each as the whole load has it.
void ExpectHolds(const Dataset& whole, const std::vector<ElementRange>& ranges,
                 const Dataset& held) {
  std::vector<bool> in(static_cast<size_t>(whole.count));
  for (const ElementRange& r : NormalizeRanges(ranges, whole.count)) {
    for (int64_t e = r.first; e < r.end; ++e) in[static_cast<size_t>(e)] = true;
  }
  ExpectHoldsThese(whole, in, held);
}

// A worker's block and a few elements elsewhere (as the planner's samples).
std::vector<ElementRange> SomeRanges(int64_t count, int w, int workers) {
  std::vector<ElementRange> r = {{count * w / workers, count * (w + 1) / workers}};
  for (int64_t e = w; e < count; e += 37) r.push_back({e, e + 1 + w});
  return r;
}

TEST_F(PartLoadTest, AWorkerHoldsExactlyTheElementsItNamesReadingOnlyTheirChunks) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    const std::string path = (dir_ / ("held" + std::to_string(c) + ".txt")).string();
    ASSERT_TRUE(WriteFileAtomically(path, tc.text).ok());
    StatusOr<Dataset> whole = LoadInParts(tc.text, path, tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name << ": " << whole.status().ToString();
    for (int chunks : {1, 2, 3, 5}) {
      StatusOr<ScannedFile> scan = ScanFile(path, tc.spec, chunks);
      ASSERT_TRUE(scan.ok()) << tc.name << ": " << scan.status().ToString();
      const Dataset shape = ShapeOfScan(path, tc.spec, *scan);
      EXPECT_TRUE(shape.shape_only);
      EXPECT_EQ(shape.count, whole->count) << tc.name;
      ExpectSameShape(*whole, shape);
      EXPECT_EQ(shape.warnings, whole->warnings) << tc.name;
      for (int workers = 1; workers <= 4; ++workers) {
        for (int w = 0; w < workers; ++w) {
          SCOPED_TRACE(tc.name + ", " + std::to_string(chunks) + " chunks, worker " +
                       std::to_string(w) + " of " + std::to_string(workers));
          const std::vector<ElementRange> ranges = SomeRanges(whole->count, w, workers);
          StatusOr<Dataset> held = LoadHeld(path, tc.spec, *scan, ranges);
          ASSERT_TRUE(held.ok()) << held.status().ToString();
          ExpectHolds(*whole, ranges, *held);
        }
      }
      // Nothing held: the shape, no elements.
      StatusOr<Dataset> none = LoadHeld(path, tc.spec, *scan, {});
      ASSERT_TRUE(none.ok()) << none.status().ToString();
      ExpectHolds(*whole, {}, *none);
    }
  }
}

// Keeps every element whose number is 2 or 3 mod 5, and (triples) every
// one whose i is a multiple of 3: a choice by value, as a worker of a loop
// cut by coordinates makes (exec/hold_plan.h HeldFilter). Counts what it saw.
class SomeByValue : public ElementFilter {
 public:
  bool Keep(const Dataset& chunk, int64_t local, int64_t e) override {
    EXPECT_EQ(e, seen_) << "elements shown out of order";
    seen_ = e + 1;
    if (chunk.kind == DataKind::kTriples && chunk.ti[static_cast<size_t>(local)] % 3 == 0) {
      return true;
    }
    return e % 5 == 2 || e % 5 == 3;
  }
  int64_t seen() const { return seen_; }

 private:
  int64_t seen_ = 0;
};

// A filter sees every element of the file once, in order; what it keeps
// and what the ranges name are held, by a mask. Split, each part holds the
// elements of the whole part that were held, numbered as the whole split
// numbers them.
TEST_F(PartLoadTest, AFilterKeepsTheElementsItChoosesByValueAndTheirSplitPartsFollow) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    const std::string path = (dir_ / ("kept" + std::to_string(c) + ".txt")).string();
    ASSERT_TRUE(WriteFileAtomically(path, tc.text).ok());
    StatusOr<Dataset> whole = LoadInParts(tc.text, path, tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name;
    for (int chunks : {1, 3}) {
      SCOPED_TRACE(tc.name + ", " + std::to_string(chunks) + " chunks");
      StatusOr<ScannedFile> scan = ScanFile(path, tc.spec, chunks);
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      const std::vector<ElementRange> ranges = {{0, 2}};
      SomeByValue keep;
      StatusOr<Dataset> held = LoadHeld(path, tc.spec, *scan, ranges, &keep);
      ASSERT_TRUE(held.ok()) << held.status().ToString();
      EXPECT_EQ(keep.seen(), whole->count);
      EXPECT_TRUE(held->held_masked);
      std::vector<bool> in(static_cast<size_t>(whole->count));
      for (int64_t e = 0; e < whole->count; ++e) {
        const bool by_value =
            whole->kind == DataKind::kTriples && whole->ti[static_cast<size_t>(e)] % 3 == 0;
        in[static_cast<size_t>(e)] = e < 2 || e % 5 == 2 || e % 5 == 3 || by_value;
      }
      ExpectHoldsThese(*whole, in, *held);
      StatusOr<std::pair<Dataset, Dataset>> whole_parts = SplitDataset(*whole, 0.3, 11);
      StatusOr<std::pair<Dataset, Dataset>> held_parts = SplitDataset(*held, 0.3, 11);
      ASSERT_TRUE(whole_parts.ok() && held_parts.ok());
      for (int part = 0; part < 2; ++part) {
        const Dataset& w = part == 0 ? whole_parts->first : whole_parts->second;
        const Dataset& h = part == 0 ? held_parts->first : held_parts->second;
        EXPECT_TRUE(h.held_masked);
        // Element n of the part is the parent's element at its position.
        std::vector<bool> part_in;
        for (int64_t e = 0; e < whole->count; ++e) {
          const bool in_test = whole->kind == DataKind::kTokens
                                   ? e >= whole->count - TokensTestCount(whole->count, 0.3)
                                   : InTestPart(11, e, 0.3);
          if (in_test == (part == 1)) part_in.push_back(in[static_cast<size_t>(e)]);
        }
        ASSERT_EQ(static_cast<int64_t>(part_in.size()), w.count);
        ExpectHoldsThese(w, part_in, h);
      }
    }
  }
}

// An index's chunks (data_index.h) stand for a scan: the same elements
// held, with tokens' ids found by word.
TEST_F(PartLoadTest, AnIndexsChunksGiveTheElementsAScanGives) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    const std::string path = (dir_ / ("indexed" + std::to_string(c) + ".txt")).string();
    ASSERT_TRUE(WriteFileAtomically(path, tc.text).ok());
    StatusOr<Dataset> whole = LoadInParts(tc.text, path, tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name;
    StatusOr<IndexEntry> entry = BuildIndexEntry(path, tc.spec);
    ASSERT_TRUE(entry.ok()) << tc.name << ": " << entry.status().ToString();
    ASSERT_FALSE(entry->chunks.empty());
    ASSERT_TRUE(WriteIndexEntry(path, *entry).ok());
    StatusOr<std::optional<IndexEntry>> read = ReadCurrentIndexEntry(path, tc.spec);
    ASSERT_TRUE(read.ok() && read->has_value()) << tc.name;
    EXPECT_EQ((*read)->chunks.size(), entry->chunks.size());
    const ScannedFile scan = ScanOfIndex(**read);
    for (int w = 0; w < 3; ++w) {
      SCOPED_TRACE(tc.name + ", worker " + std::to_string(w));
      const std::vector<ElementRange> ranges = SomeRanges(whole->count, w, 3);
      StatusOr<Dataset> held = LoadHeld(path, tc.spec, scan, ranges);
      ASSERT_TRUE(held.ok()) << held.status().ToString();
      ExpectHolds(*whole, ranges, *held);
    }
  }
}

// What the scheduler sends the workers (exec/executor.h scan_facts): a scan
// as an index entry's text. Read back, it gives the elements a scan gives,
// the whole load's facts, and it is refused for other loader options.
TEST_F(PartLoadTest, AScanSentAsAnIndexEntryGivesTheElementsAScanGives) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    const std::string path = (dir_ / ("sent" + std::to_string(c) + ".txt")).string();
    ASSERT_TRUE(WriteFileAtomically(path, tc.text).ok());
    StatusOr<Dataset> whole = LoadInParts(tc.text, path, tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name;
    for (int chunks : {1, 3}) {
      SCOPED_TRACE(tc.name + ", " + std::to_string(chunks) + " chunks");
      StatusOr<ScannedFile> scan = ScanFile(path, tc.spec, chunks);
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      const std::string text = IndexEntryText(EntryOfScan(tc.spec, *scan));
      StatusOr<IndexEntry> entry = IndexEntryFromText(text, tc.spec, "the sent facts");
      ASSERT_TRUE(entry.ok()) << entry.status().ToString();
      EXPECT_TRUE(entry->digest.empty());
      const Dataset shape = ShapeOnly(*entry, path);
      EXPECT_EQ(shape.count, whole->count);
      EXPECT_EQ(shape.dim, whole->dim);
      EXPECT_EQ(shape.rows, whole->rows);
      EXPECT_EQ(shape.cols, whole->cols);
      EXPECT_EQ(shape.words, whole->words);
      EXPECT_EQ(shape.word_counts, whole->word_counts);
      // The whole load's columns, within the rare words a scan still counts.
      EXPECT_GE(shape.column_bytes, ColumnBytes(*whole) / 2);
      EXPECT_LE(shape.column_bytes, 2 * ColumnBytes(*whole) + 64);
      EXPECT_EQ(shape.feature_entries, FeatureEntries(*whole));
      const ScannedFile sent = ScanOfIndex(*entry);
      for (int w = 0; w < 3; ++w) {
        const std::vector<ElementRange> ranges = SomeRanges(whole->count, w, 3);
        StatusOr<Dataset> held = LoadHeld(path, tc.spec, sent, ranges);
        ASSERT_TRUE(held.ok()) << held.status().ToString();
        ExpectHolds(*whole, ranges, *held);
      }
      LoadSpec other = tc.spec;
      other.tokens.min_count += 1;
      other.libsvm.base = other.libsvm.base == 0 ? 1 : 0;
      other.triples.sep = other.triples.sep == ',' ? ';' : ',';
      other.dense_csv.label += 1;
      StatusOr<IndexEntry> refused = IndexEntryFromText(text, other, "the sent facts");
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(refused.status().message().find("the sent facts: the facts are of a file read "
                                                "with the loader options"),
                std::string::npos)
          << refused.status().message();
    }
  }
}

TEST_F(PartLoadTest, AScanGivesTheWholeLoadsErrorAndAChangedFileIsRefused) {
  const std::string path = (dir_ / "bad.svm").string();
  const std::string text = "+1 1:1\n-1 2:1\n+1 3:x\n-1 4:1\n";
  ASSERT_TRUE(WriteFileAtomically(path, text).ok());
  StatusOr<Dataset> whole = LoadInParts(text, path, LoadSpec::Of(LibsvmOptions{}), 1);
  ASSERT_FALSE(whole.ok());
  for (int chunks : {1, 2, 4}) {
    StatusOr<ScannedFile> scan = ScanFile(path, LoadSpec::Of(LibsvmOptions{}), chunks);
    ASSERT_FALSE(scan.ok());
    EXPECT_EQ(scan.status().ToString(), whole.status().ToString());
  }
  // Scanned, then changed: its chunks hold other elements than the scan found.
  ASSERT_TRUE(WriteFileAtomically(path, "+1 1:1\n-1 2:1\n+1 3:1\n-1 4:1\n").ok());
  StatusOr<ScannedFile> scan = ScanFile(path, LoadSpec::Of(LibsvmOptions{}), 2);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_TRUE(WriteFileAtomically(path, "+1 1:1\n-1 2:1 3:1 4:1 5:1 6:1\n\n+1 3:1\n").ok());
  StatusOr<Dataset> held = LoadHeld(path, LoadSpec::Of(LibsvmOptions{}), *scan, {{0, 4}});
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.status().code(), StatusCode::kFailedPrecondition) << held.status().ToString();
  EXPECT_NE(held.status().message().find("changed after it was scanned"), std::string::npos)
      << held.status().ToString();
  // The same size and ends, another middle: a chunk parses otherwise.
  const std::string same_ends = "+1 1:1\n-1 2:1\n+1 3:1\n-1 4:1\n";
  ASSERT_TRUE(WriteFileAtomically(path, same_ends).ok());
  scan = ScanFile(path, LoadSpec::Of(LibsvmOptions{}), 2);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_TRUE(WriteFileAtomically(path, "+1 1:1\n-1 2:1\n\n\n 3:1\n-1 4:1\n").ok());
  scan->fingerprint = *FingerprintFile(path);  // as if the checksums missed the change
  held = LoadHeld(path, LoadSpec::Of(LibsvmOptions{}), *scan, {{0, 4}});
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.status().code(), StatusCode::kFailedPrecondition) << held.status().ToString();
  EXPECT_NE(held.status().message().find("changed while it was read"), std::string::npos)
      << held.status().ToString();
}

TEST_F(PartLoadTest, ASplitOfHeldElementsHoldsThePartsElementsWithTheirNumbers) {
  const std::vector<Case> cases = Cases();
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& tc = cases[c];
    StatusOr<Dataset> whole = LoadInParts(tc.text, "mem", tc.spec, 1);
    ASSERT_TRUE(whole.ok()) << tc.name;
    for (int w = 0; w < 3; ++w) {
      SCOPED_TRACE(tc.name + ", worker " + std::to_string(w));
      const std::vector<ElementRange> ranges = SomeRanges(whole->count, w, 3);
      std::vector<const Dataset*> src = {&*whole};
      StatusOr<Dataset> held = HoldOnly(src, ranges);
      ASSERT_TRUE(held.ok()) << held.status().ToString();
      ExpectHolds(*whole, ranges, *held);
      auto parts = SplitDataset(*whole, 0.3, 11);
      auto held_parts = SplitDataset(*held, 0.3, 11);
      ASSERT_TRUE(parts.ok() && held_parts.ok());
      const Dataset* wp[2] = {&parts->first, &parts->second};
      const Dataset* hp[2] = {&held_parts->first, &held_parts->second};
      int64_t held_total = 0;
      for (int p = 0; p < 2; ++p) {
        EXPECT_EQ(hp[p]->count, wp[p]->count);
        ASSERT_EQ(hp[p]->origin.splits.size(), wp[p]->origin.splits.size());
        held_total += hp[p]->HeldCount();
        for (int64_t e = 0; e < wp[p]->count; ++e) {
          if (hp[p]->Local(e) >= 0) ExpectSameElementAt(*wp[p], e, *hp[p]);
        }
        // The parent ranges of the part's held ranges hold them.
        std::vector<ElementRange> mine;
        for (const Dataset::HeldRange& h : hp[p]->held)
          mine.push_back({h.first, h.first + h.count});
        const std::vector<ElementRange> up =
            ParentRanges(whole->kind, whole->count, 0.3, 11, p, mine);
        ASSERT_EQ(up.size(), mine.size());
        for (size_t k = 0; k < up.size(); ++k) {
          // The part's elements [first, end) are exactly its elements in `up`.
          int64_t seen = 0, first_in = -1;
          std::vector<int64_t> numbers;
          const int64_t cut = whole->count - TokensTestCount(whole->count, 0.3);
          for (int64_t e = 0; e < whole->count; ++e) {
            const bool test = whole->kind == DataKind::kTokens ? e >= cut : InTestPart(11, e, 0.3);
            if (test != (p == 1)) continue;
            if (e >= up[k].first && e < up[k].end) {
              if (first_in < 0) first_in = seen;
              numbers.push_back(seen);
            }
            ++seen;
          }
          ASSERT_FALSE(numbers.empty());
          EXPECT_EQ(numbers.front(), mine[k].first);
          EXPECT_EQ(numbers.back(), mine[k].end - 1);
          EXPECT_EQ(static_cast<int64_t>(numbers.size()), mine[k].end - mine[k].first);
        }
      }
      EXPECT_EQ(held_total, held->HeldCount());
    }
  }
}

TEST(HeldTest, RangesAreClippedSortedAndMerged) {
  EXPECT_EQ(NormalizeRanges({{5, 9}, {-3, 2}, {8, 12}, {20, 20}, {14, 30}, {12, 13}}, 25),
            (std::vector<ElementRange>{{0, 2}, {5, 13}, {14, 25}}));
  EXPECT_EQ(RangesCount({{0, 2}, {5, 13}}), 10);
}

// A bad byte far along a one-line corpus read in parts cut between words is
// reported at the whole load's line and column.
TEST_F(PartLoadTest, AOneLineCorpusCutBetweenWordsReportsTheWholeLoadsColumn) {
  std::string text;
  for (int k = 0; k < 500; ++k) text += "word" + std::to_string(k) + " ";
  text = "first line\n" + text + std::string(1, '\0') + " tail\n";
  const LoadSpec spec = LoadSpec::Of(TokensOptions{});
  StatusOr<Dataset> whole = LoadInParts(text, "c.txt", spec, 1);
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.status().message().find("c.txt:2:"), std::string::npos)
      << whole.status().ToString();
  for (int parts = 2; parts <= 6; ++parts) {
    StatusOr<Dataset> cut = LoadInParts(text, "c.txt", spec, parts);
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.status().ToString(), whole.status().ToString()) << parts << " parts";
  }
}

}  // namespace
}  // namespace rigel::data
