// data/feature_sketch.h: distinct feature ids counted exactly while few,
// within a few percent when many, the same whether a file is loaded whole,
// scanned in chunks or known from its index; and the share of them a part
// of the elements names.
#include "data/feature_sketch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include "common/file.h"
#include "data/data_index.h"
#include "data/dataset.h"
#include "data/held_load.h"

namespace rigel::data {
namespace {

TEST(DistinctSketch, CountsExactlyBelowItsSizeAndWithinAFewPercentAbove) {
  DistinctSketch few;
  for (int rep = 0; rep < 3; ++rep) {
    for (int64_t id = 0; id < 1000; ++id) few.Add(id * 7);
  }
  EXPECT_EQ(few.Estimate(), 1000);
  for (int64_t n : {5'000, 100'000, 2'000'000}) {
    DistinctSketch many;
    for (int rep = 0; rep < 2; ++rep) {
      for (int64_t id = 0; id < n; ++id) many.Add(id * 13 + 5);
    }
    EXPECT_NEAR(static_cast<double>(many.Estimate()), static_cast<double>(n), 0.1 * n) << n;
  }
}

TEST(DistinctSketch, MergingPartsCountsTheirUnionOnce) {
  DistinctSketch a, b, both;
  for (int64_t id = 0; id < 60'000; ++id) {
    a.Add(id);
    both.Add(id);
  }
  for (int64_t id = 30'000; id < 90'000; ++id) {
    b.Add(id);
    both.Add(id);
  }
  a.Merge(b);
  EXPECT_EQ(a.Estimate(), both.Estimate());
  EXPECT_NEAR(static_cast<double>(a.Estimate()), 90'000.0, 9'000.0);
}

TEST(DistinctInShare, FollowsHowTheIdsGrewFromHalfToAll) {
  // Doubling the elements doubled the ids: a quarter names a quarter.
  EXPECT_EQ(DistinctInShare({40'000, 20'000}, 0.25), 10'000);
  // The second half named nothing new: any share names them all.
  EXPECT_EQ(DistinctInShare({1'000, 1'000}, 0.1), 1'000);
  // Heaps' law between: 2^b = 1.5, so a quarter names 1.5^-2 of them.
  EXPECT_NEAR(static_cast<double>(DistinctInShare({90'000, 60'000}, 0.25)), 40'000.0, 1.0);
  EXPECT_EQ(DistinctInShare({90'000, 60'000}, 1.0), 90'000);
  EXPECT_EQ(DistinctInShare({-1, -1}, 0.5), -1);
  EXPECT_EQ(DistinctInShare({500, -1}, 0.5), 500);  // no half: at most all
}

class DistinctCountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rigel_feature_sketch_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// 400 elements; element n names features n % 50 and 100 + n: 50 ids shared
// by all, and one of its own. The first half names 50 + 200 ids.
TEST_F(DistinctCountsTest, ALoadAScanAndAnIndexCountTheSameIds) {
  std::string text;
  for (int n = 0; n < 400; ++n) {
    text += "1 " + std::to_string(n % 50 + 1) + ":1 " + std::to_string(101 + n) + ":2\n";
  }
  const std::string path = (dir_ / "s.svm").string();
  ASSERT_TRUE(WriteFileAtomically(path, text).ok());
  const LoadSpec spec = LoadSpec::Of(LibsvmOptions{});
  StatusOr<Dataset> whole = LoadFile(path, spec);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  const DistinctCounts counts = DistinctFeatures(*whole);
  EXPECT_EQ(counts.distinct, 450);
  EXPECT_EQ(counts.first_half, 250);
  // Scanned in 4 chunks, the first half is the first 2 chunks.
  StatusOr<ScannedFile> scan = ScanFile(path, spec, 4);
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  EXPECT_EQ(scan->distinct.distinct, 450);
  EXPECT_NEAR(static_cast<double>(scan->distinct.first_half), 250.0, 10.0);
  const Dataset shape = ShapeOfScan(path, spec, *scan);
  EXPECT_EQ(DistinctFeatures(shape).distinct, 450);
  // An index keeps them; its split parts name their share.
  StatusOr<IndexEntry> e = BuildIndexEntry(path, spec);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(WriteIndexEntry(path, *e).ok());
  StatusOr<std::optional<IndexEntry>> read = ReadCurrentIndexEntry(path, spec);
  ASSERT_TRUE(read.ok() && read->has_value());
  const Dataset facts = ShapeOnly(**read, path);
  EXPECT_EQ(DistinctFeatures(facts).distinct, 450);
  EXPECT_EQ(DistinctFeatures(facts).first_half, 250);
  auto parts = SplitDataset(facts, 0.5, 3);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(DistinctFeatures(parts->first).distinct,
            DistinctInShare(counts, static_cast<double>(parts->first.count) / 400.0));
  // Data without features has no count.
  EXPECT_EQ(DistinctFeatures(Dataset{}).distinct, -1);
}

}  // namespace
}  // namespace rigel::data
