// data/data_index.h: an index records a file's facts and is used only while
// the file is unchanged and only for the options it was built with; a
// shape-only data set says what the whole load says without its elements.
#include "data/data_index.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/file.h"
#include "data/dataset.h"

namespace rigel::data {
namespace {

class DataIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rigel_data_index_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(DataIndexTest, AnIndexHasTheWholeLoadsFactsAndIsUsedWhileTheFileIsUnchanged) {
  const std::string path = Write("c.txt", "b a b\nc a b\n\nd b\n");
  const LoadSpec spec = LoadSpec::Of(TokensOptions{.min_count = 2, .lines = true});
  StatusOr<std::optional<IndexEntry>> none = ReadCurrentIndexEntry(path, spec);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());  // no index yet: not an error

  StatusOr<IndexEntry> built = BuildIndexEntry(path, spec);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_TRUE(WriteIndexEntry(path, *built).ok());
  EXPECT_TRUE(std::filesystem::exists(IndexPathFor(path)));

  StatusOr<Dataset> whole = LoadFile(path, spec);
  ASSERT_TRUE(whole.ok());
  StatusOr<std::optional<IndexEntry>> read = ReadCurrentIndexEntry(path, spec);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  const Dataset shape = ShapeOnly(**read, path);
  EXPECT_TRUE(shape.shape_only);
  EXPECT_EQ(shape.count, whole->count);
  EXPECT_EQ(shape.vocab, whole->vocab);
  EXPECT_EQ(shape.words, whole->words);
  EXPECT_EQ(shape.word_counts, whole->word_counts);
  EXPECT_EQ(shape.docs, whole->docs);
  EXPECT_TRUE(shape.tokens.empty());
  EXPECT_EQ(DatasetDigest(shape), DatasetDigest(*whole));
  EXPECT_EQ(ColumnBytes(shape), ColumnBytes(*whole));

  // Other options: no entry for them, and a second entry keeps the first.
  const LoadSpec other = LoadSpec::Of(TokensOptions{.min_count = 1});
  StatusOr<std::optional<IndexEntry>> miss = ReadCurrentIndexEntry(path, other);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
  StatusOr<IndexEntry> second = BuildIndexEntry(path, other);
  ASSERT_TRUE(second.ok() && WriteIndexEntry(path, *second).ok());
  EXPECT_TRUE(ReadCurrentIndexEntry(path, spec)->has_value());
  EXPECT_TRUE(ReadCurrentIndexEntry(path, other)->has_value());

  // The file changes: the index is no longer current.
  std::ofstream(path, std::ios::app) << "e e\n";
  StatusOr<std::optional<IndexEntry>> stale = ReadCurrentIndexEntry(path, spec);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->has_value());
}

TEST_F(DataIndexTest, FingerprintsTellContentsApart) {
  const std::string big(3 << 20, 'x');  // longer than both checked MiBs
  const std::string a = Write("a.txt", big + "1\n");
  const std::string b = Write("b.txt", big + "2\n");
  const std::string c = Write("c.txt", big + "1\n");
  StatusOr<FileFingerprint> fa = FingerprintFile(a), fb = FingerprintFile(b),
                            fc = FingerprintFile(c);
  ASSERT_TRUE(fa.ok() && fb.ok() && fc.ok());
  EXPECT_FALSE(fa->SameContents(*fb));  // the last MiB differs
  EXPECT_TRUE(fa->SameContents(*fc));
  EXPECT_EQ(fa->size, static_cast<int64_t>(big.size() + 2));
  EXPECT_EQ(FingerprintFile((dir_ / "none").string()).status().code(), StatusCode::kNotFound);
}

TEST_F(DataIndexTest, ABrokenIndexIsAnErrorNamingItAndAnotherVersionIsIgnored) {
  const std::string path = Write("r.csv", "0,1,2\n");
  const LoadSpec spec = LoadSpec::Of(TriplesOptions{});
  Write("r.csv.rigel-index", "{\"rigel_index\": 2, \"entries\": 3}");
  StatusOr<std::optional<IndexEntry>> bad = ReadCurrentIndexEntry(path, spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "r.csv.rigel-index: entries: expected a list, found a number (3)"),
            std::string::npos)
      << bad.status().message();
  Write("r.csv.rigel-index", "{\"rigel_index\": 99, \"entries\": 3}");
  StatusOr<std::optional<IndexEntry>> other = ReadCurrentIndexEntry(path, spec);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  // Writing replaces an index of another version.
  StatusOr<IndexEntry> e = BuildIndexEntry(path, spec);
  ASSERT_TRUE(e.ok() && WriteIndexEntry(path, *e).ok());
  EXPECT_TRUE(ReadCurrentIndexEntry(path, spec)->has_value());
}

// A shape-only data set splits into parts with the real parts' counts.
TEST_F(DataIndexTest, AShapeOnlySplitHasTheRealPartsCounts) {
  std::string text;
  for (int k = 0; k < 500; ++k)
    text += (k % 2 ? "+1 " : "-1 ") + std::to_string(k % 7 + 1) + ":1\n";
  const std::string path = Write("s.svm", text);
  const LoadSpec spec = LoadSpec::Of(LibsvmOptions{});
  StatusOr<IndexEntry> e = BuildIndexEntry(path, spec);
  ASSERT_TRUE(e.ok());
  StatusOr<Dataset> whole = LoadFile(path, spec);
  ASSERT_TRUE(whole.ok());
  auto real = SplitDataset(*whole, 0.3, 11);
  auto shape = SplitDataset(ShapeOnly(*e, path), 0.3, 11);
  ASSERT_TRUE(real.ok() && shape.ok());
  EXPECT_EQ(shape->first.count, real->first.count);
  EXPECT_EQ(shape->second.count, real->second.count);
  EXPECT_EQ(shape->first.dim, real->first.dim);
  EXPECT_TRUE(shape->first.shape_only && shape->first.digest.empty());
  EXPECT_EQ(FeatureEntries(ShapeOnly(*e, path)), FeatureEntries(*whole));
}

}  // namespace
}  // namespace rigel::data
