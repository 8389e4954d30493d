// data/line_split.h: every line of a file lands in exactly one part, the one
// where it starts, for 1 to 7 parts, on the shapes that make cutting hard
// (lines longer than a part and than the file reader's 64 KiB chunk, CRLF,
// no final newline, blank lines, files shorter than the number of parts),
// and the file functions agree with the in-memory one.
#include "data/line_split.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace rigel::data {
namespace {

// The lines of `text` with their first bytes: '\n' ends a line, and a last
// line without one is a line.
struct Line {
  int64_t start;
  std::string text;
};
std::vector<Line> Lines(const std::string& text) {
  std::vector<Line> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out.push_back({static_cast<int64_t>(at), text.substr(at, end - at)});
    at = end;
  }
  return out;
}

std::vector<std::string> Texts() {
  std::vector<std::string> t = {"",
                                "a",
                                "a\n",
                                "\n",
                                "\n\n\n\n\n",
                                "ab\r\ncd\r\n\r\nef",
                                "1,2,3\n4,5,6\n7,8,9",
                                "x\n" + std::string(200000, 'y') + "\nz\n",
                                std::string(150000, 'q')};
  std::mt19937 rng(7);
  for (int k = 0; k < 40; ++k) {
    std::string s;
    const int lines = static_cast<int>(rng() % 30);
    for (int l = 0; l < lines; ++l) {
      s += std::string(rng() % 25, static_cast<char>('a' + rng() % 26));
      if (rng() % 4 == 0) s += '\r';
      s += '\n';
    }
    if (rng() % 2 == 0) s += "tail";  // no final newline
    t.push_back(s);
  }
  return t;
}

// A file of its own per test: CTest runs the tests as processes side by side.
std::string WriteFile(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/line_split_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid()) + ".txt";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(LineSplit, EveryLineLandsInThePartWhereItStartsAndTheFileAgrees) {
  for (const std::string& text : Texts()) {
    const std::string path = WriteFile(text);
    const int64_t size = static_cast<int64_t>(text.size());
    for (int parts = 1; parts <= 7; ++parts) {
      SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(parts) + " parts");
      std::vector<Line> seen;
      int64_t next = 0;
      for (int part = 0; part < parts; ++part) {
        auto r = SplitLines(text, part, parts);
        ASSERT_TRUE(r.ok()) << r.status().message();
        auto f = SplitFileLines(path, part, parts);
        ASSERT_TRUE(f.ok()) << f.status().message();
        EXPECT_EQ(*f, *r) << "part " << part;
        EXPECT_EQ(r->begin, next) << "part " << part << " does not follow the one before";
        next = r->end;
        auto bytes = ReadFileRange(path, *r);
        ASSERT_TRUE(bytes.ok()) << bytes.status().message();
        EXPECT_EQ(*bytes,
                  text.substr(static_cast<size_t>(r->begin), static_cast<size_t>(r->size())));
        for (Line l : Lines(*bytes)) {
          l.start += r->begin;
          // A line belongs to the part whose nominal bytes hold its start.
          EXPECT_GE(l.start, NominalCut(size, part, parts)) << "part " << part;
          EXPECT_LT(l.start, NominalCut(size, part + 1, parts)) << "part " << part;
          seen.push_back(l);
        }
      }
      EXPECT_EQ(next, size);
      const std::vector<Line> whole = Lines(text);
      ASSERT_EQ(seen.size(), whole.size());
      for (size_t k = 0; k < whole.size(); ++k) {
        EXPECT_EQ(seen[k].start, whole[k].start);
        EXPECT_EQ(seen[k].text, whole[k].text);
      }
    }
  }
}

// A corpus on one line (and any text) cut between words: the parts cover it,
// each begins after a blank, no word is cut, and a word lands in the part
// whose nominal bytes hold its start.
TEST(LineSplit, WordCutsCutNoWordEvenOnOneLine) {
  std::vector<std::string> texts = Texts();
  std::string one_line;
  for (int k = 0; k < 4000; ++k) one_line += (k % 7 ? "w" : "word") + std::to_string(k) + " ";
  texts.push_back(one_line);
  texts.push_back(std::string(100000, 'x') + " y\tz");  // a word longer than the 64 KiB reads
  for (const std::string& text : texts) {
    const std::string path = WriteFile(text);
    const int64_t size = static_cast<int64_t>(text.size());
    for (int parts = 1; parts <= 7; ++parts) {
      SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(parts) + " parts");
      int64_t next = 0;
      for (int part = 0; part < parts; ++part) {
        auto r = SplitWords(text, part, parts);
        ASSERT_TRUE(r.ok()) << r.status().message();
        auto f = SplitFileWords(path, part, parts);
        ASSERT_TRUE(f.ok()) << f.status().message();
        EXPECT_EQ(*f, *r) << "part " << part;
        EXPECT_EQ(r->begin, next);
        next = r->end;
        if (r->size() == 0) continue;
        const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
        // Starts after a blank (or at the start), and the word it starts
        // with begins in its nominal bytes.
        if (r->begin > 0) {
          EXPECT_TRUE(blank(text[static_cast<size_t>(r->begin - 1)]));
        }
        int64_t w = r->begin;
        while (w < r->end && blank(text[static_cast<size_t>(w)])) ++w;
        if (w < r->end) {
          EXPECT_GE(w, NominalCut(size, part, parts));
        }
      }
      EXPECT_EQ(next, size);
    }
  }
}

TEST(LineSplit, NominalCutsAreExactForLargeFiles) {
  const int64_t size = (int64_t{1} << 62) + 5;  // size * parts would overflow
  EXPECT_EQ(NominalCut(size, 0, 3), 0);
  EXPECT_EQ(NominalCut(size, 3, 3), size);
  EXPECT_EQ(NominalCut(size, 1, 3), size / 3);
  EXPECT_EQ(NominalCut(10, 1, 4), 2);
  EXPECT_EQ(NominalCut(10, 3, 4), 7);
}

TEST(LineSplit, BadPartsAndMissingFilesAreRefusedNamingThem) {
  EXPECT_EQ(SplitLines("a\n", 0, 0).status().code(), StatusCode::kInvalidArgument);
  auto beyond = SplitLines("a\n", 3, 3);
  EXPECT_EQ(beyond.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(beyond.status().message().find("part 3"), std::string::npos)
      << beyond.status().message();
  EXPECT_EQ(SplitLines("a\n", -1, 3).status().code(), StatusCode::kInvalidArgument);
  const std::string missing = ::testing::TempDir() + "/no-such-data.txt";
  auto m = SplitFileLines(missing, 0, 2);
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find(missing), std::string::npos) << m.status().message();
  const std::string path = WriteFile("abc\n");
  EXPECT_EQ(ReadFileRange(path, {0, 10}).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadFileRange(path, {3, 1}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rigel::data
