// The reference programs run end to end through `rigel run` and learn what
// their generated data say they should (figures from the generators' .info
// files), and a9a reaches liblinear-like accuracy. Runs the real binary.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/rigel_runner.h"

namespace {

using rigel::testing::RigelResult;

RigelResult Rigel(const std::string& args) { return rigel::testing::RunRigel(args); }

// Values printed after `key` on each output line, in order.
std::vector<double> Series(const std::string& out, const std::string& key) {
  std::vector<double> v;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w == key && words >> w) v.push_back(std::stod(w));
    }
  }
  return v;
}

double InfoValue(const std::string& file, const std::string& name) {
  std::ifstream in(std::string(RIGEL_SOURCE_DIR) + "/examples/data/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ": ", 0) == 0) return std::stod(line.substr(name.size() + 2));
  }
  ADD_FAILURE() << "no '" << name << "' in " << file;
  return 0;
}

TEST(Examples, MfReachesNoiseFloorWithinTenPercent) {
  RigelResult r = Rigel("run examples/mf.rgl");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<double> rmse = Series(r.out, "test_rmse");
  ASSERT_EQ(rmse.size(), 20u) << r.out;
  double floor = InfoValue("ratings.csv.info", "noise floor RMSE");
  EXPECT_LE(rmse.back(), 1.10 * floor) << r.out;
  EXPECT_LT(rmse.back(), rmse.front());
}

TEST(Examples, SparseLrReachesNinetyPercentOfPlantedAccuracy) {
  RigelResult r = Rigel("run examples/sparse_lr.rgl");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<double> acc = Series(r.out, "test_accuracy");
  ASSERT_FALSE(acc.empty()) << r.out;
  EXPECT_GE(acc.back(), 0.9 * InfoValue("train.svm.info", "planted model test accuracy"));
}

TEST(Examples, SparseLrOnA9aReaches84Percent) {
  std::string a9a = std::string(RIGEL_SOURCE_DIR) + "/../shared/data/a9a";
  if (!std::ifstream(a9a)) GTEST_SKIP() << "real data not present at " << a9a;
  RigelResult r = Rigel("run examples/sparse_lr.rgl --set train.path=" + a9a +
                        " --set test.path=" + a9a + ".t");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<double> acc = Series(r.out, "test_accuracy");
  ASSERT_FALSE(acc.empty());
  EXPECT_GE(acc.back(), 0.84) << r.out;
}

TEST(Examples, Word2vecLossFallsEpochOverEpoch) {
  // A smaller window and fewer negatives keep this quick; the loss must still fall.
  RigelResult r = Rigel("run examples/word2vec.rgl --set EPOCHS=3 --set WINDOW=2 --set NEG=2");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<double> loss = Series(r.out, "loss");
  ASSERT_EQ(loss.size(), 3u) << r.out;
  EXPECT_LT(loss[1], loss[0]);
  EXPECT_LT(loss[2], loss[1]);
}

// A serial run logs the per-epoch JSON of a distributed one (--log-json),
// and -v times every loop run to the microsecond.
TEST(Examples, SerialRunLogsEveryEpochAsJson) {
  const std::string log = ::testing::TempDir() + "/serial_epochs.jsonl";
  RigelResult r = Rigel("run examples/mf.rgl --set EPOCHS=3 -v --log-json " + log);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(log);
  std::vector<nlohmann::json> epochs;
  for (std::string line; std::getline(in, line);) epochs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(epochs.size(), 3u);
  const double ratings = InfoValue("ratings.csv.info", "count");
  for (size_t k = 0; k < epochs.size(); ++k) {
    const nlohmann::json& e = epochs[k];
    EXPECT_EQ(e["epoch"], k);
    EXPECT_EQ(e["epochs"], 3);
    EXPECT_EQ(e["workers"], 1);
    EXPECT_EQ(e["servers"], 0);
    // One run of the training loop and one of the test loop per epoch:
    // together every rating once.
    EXPECT_EQ(e["updates"].get<double>(), ratings) << e.dump();
    EXPECT_GT(e["compute_s"].get<double>(), 0.0) << e.dump();
    EXPECT_LE(e["compute_s"].get<double>(), e["epoch_s"].get<double>()) << e.dump();
    EXPECT_GT(e["cpu_s"].get<double>(), 0.0) << e.dump();
    // This process has held at least its own program text and data.
    EXPECT_GT(e["peak_bytes"].value("process", int64_t{0}), 1 << 20) << e.dump();
    EXPECT_TRUE(e["bytes"].empty()) << e.dump();
  }
  EXPECT_GE(epochs[2]["elapsed_s"].get<double>(), epochs[1]["elapsed_s"].get<double>());
  // "loop 0 (line 15): N iterations in 0.012345 s (...)"
  size_t at = r.out.find(" iterations in ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string secs = r.out.substr(at + 15, r.out.find(' ', at + 15) - at - 15);
  EXPECT_EQ(secs.size() - secs.find('.') - 1, 6u) << secs;

  RigelResult bad = Rigel("run examples/mf.rgl --set EPOCHS=1 --log-json /nonexistent/dir/log");
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("--log-json /nonexistent/dir/log: cannot write here (the directory "
                         "/nonexistent/dir does not exist)"),
            std::string::npos)
      << bad.out;
}

TEST(Examples, OtherExamplesRun) {
  for (const char* ex : {"bias", "dense_lr", "wavefront"}) {
    RigelResult r = Rigel(std::string("run examples/") + ex + ".rgl");
    EXPECT_EQ(r.code, 0) << ex << ": " << r.out;
    EXPECT_FALSE(r.out.empty()) << ex;
  }
}

TEST(Examples, TwoRunsPrintTheSameBytes) {
  for (const char* args : {"run examples/mf.rgl --set EPOCHS=3",
                           "run examples/word2vec.rgl --set EPOCHS=1 --set WINDOW=1 --set NEG=1 "
                           "--seed 5"}) {
    RigelResult a = Rigel(args), b = Rigel(args);
    ASSERT_EQ(a.code, 0) << a.out;
    EXPECT_EQ(a.out, b.out) << args;
  }
}

TEST(Examples, BadProgramExitsOneWithLocation) {
  std::string path = testing::TempDir() + "/bad.rgl";
  std::ofstream(path) << "const K = 2\nparam W: f32[4, K] = zeros()\naccum s: f32\n"
                         "parallel for i in range(4) { s = W[i, 0.5] }\n";
  RigelResult r = Rigel("check " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(path + ":4:30: error: accumulator 's' can only be updated with +="),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(path + ":4:39: error: parameter 'W' indexed with a float"),
            std::string::npos)
      << r.out;
  RigelResult missing = Rigel("run " + path + ".nope");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;
}

}  // namespace
