// FindElementLine / ElementNote: the file line an element was read from,
// through headers, blank lines, splits (nested too) and min_count.
#include "data/element_origin.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rigel::data {
namespace {

class ElementOriginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rigel-element-origin-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

TEST_F(ElementOriginTest, TriplesSkipHeaderAndBlankLines) {
  std::string path = Write("r.csv", "i,j,v\n\n0,0,1\n  \n1,1,2\r\n2,2,3\n");
  auto d = LoadTriples(path, {',', 0, true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const int64_t want[] = {3, 5, 6};
  for (int64_t e = 0; e < 3; ++e) {
    auto at = FindElementLine(*d, e);
    ASSERT_TRUE(at.ok()) << at.status().message();
    EXPECT_EQ(at->line, want[e]) << "element " << e;
  }
  EXPECT_EQ(FindElementLine(*d, 1)->text, "1,1,2");
  EXPECT_EQ(ElementNote(*d, "r", 2, "while running"),
            path + ":6: note: while running element 2 of data set 'r': 2,2,3\n");
  EXPECT_EQ(FindElementLine(*d, 3).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ElementOriginTest, SplitPartsAndNestedSplitsNameTheParentsLine) {
  std::string text;
  for (int k = 0; k < 200; ++k) text += std::to_string(k) + " 1:" + std::to_string(k) + "\n";
  auto d = LoadLibsvm(Write("s.svm", text), {});
  ASSERT_TRUE(d.ok());
  auto parts = SplitDataset(*d, 0.3, 7);
  ASSERT_TRUE(parts.ok());
  auto inner = SplitDataset(parts->first, 0.5, 9);
  ASSERT_TRUE(inner.ok());
  // The label is the line's number - 1: each element must come back to it.
  for (const Dataset* part : {&parts->first, &parts->second, &inner->first, &inner->second}) {
    ASSERT_GT(part->count, 10);
    for (int64_t e = 0; e < part->count; e += 7) {
      auto at = FindElementLine(*part, e);
      ASSERT_TRUE(at.ok()) << at.status().message();
      EXPECT_EQ(at->line, static_cast<int64_t>(part->labels[e]) + 1);
    }
  }
}

TEST_F(ElementOriginTest, TokensCountOnlyKeptWordsAndFollowTheSplitTail) {
  std::string path = Write("c.txt", "a b rare\nb a\n\nc a b c\n");
  auto d = LoadTokens(path, {2});  // every word but "rare" occurs twice or more
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->count, 8);
  EXPECT_EQ(FindElementLine(*d, 1)->line, 1);  // b
  EXPECT_EQ(FindElementLine(*d, 2)->line, 2);  // b (rare is gone)
  EXPECT_EQ(FindElementLine(*d, 4)->line, 4);  // c
  auto parts = SplitDataset(*d, 0.25, 1);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->second.count, 2);
  EXPECT_EQ(FindElementLine(parts->second, 0)->line, 4);
  EXPECT_EQ(FindElementLine(parts->second, 0)->text, "c a b c");
}

TEST_F(ElementOriginTest, ChangedFileAndSpacesWithoutFilesAreSaidPlainly) {
  std::string path = Write("r.csv", "0,0,1\n1,1,2\n");
  auto d = LoadTriples(path, {});
  ASSERT_TRUE(d.ok());
  Write("r.csv", "0,0,1\n");
  auto at = FindElementLine(*d, 1);
  EXPECT_EQ(at.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ElementNote(*d, "r", 1, "while running").find("its line is unknown"),
            std::string::npos);
  EXPECT_EQ(ElementNote(MakeGrid(2, 2), "g", 1, "while running"), "");
  EXPECT_EQ(FindElementLine(MakeRange(3), 0).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rigel::data
