// What `rigel calibrate` and `rigel tune` read from their trials
// (cli/trial_run.h): the epochs and printed numbers of a --log-json file,
// and the statistics that compare plans.
#include "cli/trial_run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rigel::cli {
namespace {

std::string WriteLog(const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rigel-trial-run-" + std::to_string(::testing::UnitTest::GetInstance()
                                                                     ->random_seed()) +
                             ".jsonl"))
                               .string();
  std::ofstream(path) << text;
  return path;
}

TEST(TrialRun, EpochSecondsSkipLinesThatAreNoEpochAndLastPrintedReadsTheLastLine) {
  const std::string path = WriteLog(
      "{\"epoch\": 0, \"epoch_s\": 0.5, \"printed\": {\"loss\": 2.5}}\n"
      "not json at all\n"
      "{\"epoch\": 1, \"bytes\": {}}\n"
      "{\"epoch\": 2, \"epoch_s\": 0.25, \"printed\": {\"loss\": 1.5, \"label\": \"x\"}}\n");
  EXPECT_EQ(EpochSeconds(path), (std::vector<double>{0.5, 0.25}));
  const std::map<std::string, double> printed = LastPrinted(path);
  ASSERT_EQ(printed.size(), 1u);  // numbers only
  EXPECT_EQ(printed.at("loss"), 1.5);
  std::filesystem::remove(path);
  EXPECT_TRUE(EpochSeconds(path).empty());
  EXPECT_TRUE(LastPrinted(path).empty());
}

// A small program's epochs on the 2-core VM fall into two speeds at random:
// one round changing side moves the median from one to the other, the
// trimmed mean by a fraction of the gap.
TEST(TrialRun, TheTrimmedMeanDropsATenthAtEachEndAndDoesNotJumpBetweenModes) {
  EXPECT_EQ(TrimmedMean({}), 0);
  EXPECT_EQ(TrimmedMean({4, 2}), 3);
  EXPECT_DOUBLE_EQ(TrimmedMean({10, 1, 2, 3, 4, 5, 6, 7, 8, 100}), 5.625);  // 1 and 100 dropped
  // 20 rounds: 11 fast and 9 slow, then 9 fast and 11 slow.
  std::vector<double> fewer_slow(11, 3.0), more_slow(9, 3.0);
  fewer_slow.insert(fewer_slow.end(), 9, 4.5);
  more_slow.insert(more_slow.end(), 11, 4.5);
  EXPECT_EQ(Median(fewer_slow), 3.0);
  EXPECT_EQ(Median(more_slow), 4.5);
  EXPECT_LT(TrimmedMean(more_slow) - TrimmedMean(fewer_slow), 0.4);
}

}  // namespace
}  // namespace rigel::cli
