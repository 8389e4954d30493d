// The cost model against real runs (analysis/cost.h, exec/cost_probe.h):
// `rigel explain --cost --json` predicts each epoch's bytes per strategy
// before anything runs, and a run on 2 workers and 2 servers logs what it
// moved. docs/planner.md promises bytes within 10% of the measured; these
// tests fail at twice that. Seconds are compared in bench/planner, not here
// (a test never holds an absolute time).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

const std::string kExamples = std::string(RIGEL_SOURCE_DIR) + "/examples/";

// The median over the epochs after the first of each "bytes" entry.
std::map<std::string, double> MeasuredBytes(const std::string& log) {
  std::map<std::string, std::vector<double>> seen;
  std::istringstream in(log);
  int epoch = 0;
  std::vector<nlohmann::json> epochs;
  for (std::string line; std::getline(in, line);) epochs.push_back(nlohmann::json::parse(line));
  for (const nlohmann::json& e : epochs) {
    if (epoch++ == 0 && epochs.size() > 1) continue;
    for (const auto& [k, v] : e.at("bytes").items()) seen[k].push_back(v.get<double>());
  }
  std::map<std::string, double> out;
  for (auto& [k, v] : seen) {
    std::sort(v.begin(), v.end());
    out[k] = v[v.size() / 2];
  }
  return out;
}

struct Case {
  const char* program;
  std::vector<std::string> sets;
};

class PredictedBytes : public ::testing::TestWithParam<Case> {};

TEST_P(PredictedBytes, AreWithinTwiceTheDocumentedBoundOfARun) {
  const Case& c = GetParam();
  const std::string dir = testing::MakeTempDir("rigel-planner-test");
  const std::string program = kExamples + c.program;
  std::vector<std::string> explain = {"explain",   program, "--workers", "2",
                                      "--servers", "2",     "--cost",    "--json"};
  std::vector<std::string> run = {"run",       program,     "--workers",  "2",
                                  "--servers", "2",         "--log-json", dir + "/log.jsonl",
                                  "--run-dir", dir + "/run"};
  for (const std::string& s : c.sets) {
    explain.insert(explain.end(), {"--set", s});
    run.insert(run.end(), {"--set", s});
  }
  testing::RigelResult e = testing::RunRigel(explain, dir);
  ASSERT_EQ(e.rc, 0) << e.err;
  testing::RigelResult r = testing::RunRigel(run, dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json predicted = nlohmann::json::parse(e.out).at("steady").at("bytes");
  const std::map<std::string, double> measured = MeasuredBytes(testing::Slurp(dir + "/log.jsonl"));
  ASSERT_FALSE(measured.empty());
  for (const auto& [what, bytes] : measured) {
    if (bytes < 1024) continue;  // a few changed rows more or less
    ASSERT_TRUE(predicted.contains(what)) << what << " was measured, not predicted: " << e.out;
    const double p = predicted.at(what).get<double>();
    EXPECT_NEAR(p / bytes, 1.0, 0.2)
        << c.program << " " << what << ": predicted " << p << ", measured " << bytes;
  }
  for (const auto& [what, bytes] : predicted.items()) {
    if (bytes.get<double>() >= 1024) {
      EXPECT_TRUE(measured.count(what)) << what << " was predicted, not measured: " << e.out;
    }
  }
}

// R[i] += A[i, j]: the 1-D cut keeping R local is listed with the other
// legal schedules, predicted fastest and moving no more bytes than any, and
// `rigel plan --cost` writes it with its prediction, which a run accepts.
TEST(PlanByCost, RowSumsListTheirCandidatesAndTheCutWins) {
  const std::string dir = testing::MakeTempDir("rigel-planner-test");
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/rowsum.rgl";
  testing::RigelResult e = testing::RunRigel(
      {"explain", program, "--workers", "2", "--servers", "2", "--cost", "--json"}, dir);
  ASSERT_EQ(e.rc, 0) << e.err;
  const nlohmann::json cost = nlohmann::json::parse(e.out);
  std::map<std::string, nlohmann::json> by;
  for (const nlohmann::json& c : cost.at("candidates")) by[c.at("schedule")] = c;
  ASSERT_TRUE(by.count("model_parallel_1d by i (R local)")) << e.out;
  ASSERT_TRUE(by.count("data_parallel (R reduce)")) << e.out;
  const nlohmann::json& cut = by["model_parallel_1d by i (R local)"];
  EXPECT_TRUE(cut.at("in_plan").get<bool>());
  for (const auto& [name, c] : by) {
    if (name == cut.at("schedule")) continue;
    EXPECT_LT(cut.at("seconds").get<double>(), c.at("seconds").get<double>()) << name;
    EXPECT_LE(cut.at("moved_bytes").get<double>(), c.at("moved_bytes").get<double>()) << name;
  }
  testing::RigelResult p = testing::RunRigel(
      {"plan", program, "--workers", "2", "--cost", "-o", dir + "/plan.json"}, dir);
  ASSERT_EQ(p.rc, 0) << p.err;
  const nlohmann::json plan = nlohmann::json::parse(testing::Slurp(dir + "/plan.json"));
  EXPECT_EQ(plan.at("loops")[0].at("schedule").at("kind"), "model_parallel_1d");
  EXPECT_GT(plan.at("prediction").at("seconds").get<double>(), 0);
  EXPECT_EQ(plan.at("prediction").at("bytes").at("local").get<double>(), 2500 * 4);
  testing::RigelResult r =
      testing::RunRigel({"run", program, "--workers", "2", "--servers", "2", "--plan",
                         dir + "/plan.json", "--run-dir", dir + "/run"},
                        dir);
  EXPECT_EQ(r.rc, 0) << r.err;
}

// A trial run stops after the epochs asked, serially and distributed, with
// one log line per epoch run and the program's prints up to there.
TEST(PlanByCost, StopAfterEpochsEndsARunAsIfTheProgramEndedThere) {
  const std::string dir = testing::MakeTempDir("rigel-planner-test");
  for (const char* workers : {"", "2"}) {
    std::vector<std::string> args = {"run", kExamples + "mf.rgl", "--stop-after-epochs",
                                     "2",   "--log-json",         dir + "/log.jsonl"};
    if (*workers) args.insert(args.end(), {"--workers", workers, "--run-dir", dir + "/run"});
    testing::RigelResult r = testing::RunRigel(args, dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("epoch 1 test_rmse"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("epoch 2 test_rmse"), std::string::npos) << r.out;
    std::istringstream log(testing::Slurp(dir + "/log.jsonl"));
    int lines = 0;
    for (std::string line; std::getline(log, line);) ++lines;
    EXPECT_EQ(lines, 2) << workers;
  }
}

// `rigel tune` measures Rigel's plan and the candidates within its budget,
// says how each did, and writes a plan a run accepts; `rigel calibrate`
// writes every constant.
TEST(PlanByCost, TuneTriesThePlansAndCalibrateWritesTheConstants) {
  const std::string dir = testing::MakeTempDir("rigel-planner-test");
  testing::RigelResult t = testing::RunRigel(
      {"tune", kExamples + "kmeans.rgl", "--budget", "20", "--rounds", "2", "-o",
       dir + "/tuned.json", "--save-constants", dir + "/refit.json", "--work-dir", dir + "/trials"},
      dir);
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("Rigel's plan"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("loop 0 as model_parallel_1d by n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("fastest: "), std::string::npos) << t.out;
  const nlohmann::json plan = nlohmann::json::parse(testing::Slurp(dir + "/tuned.json"));
  EXPECT_EQ(plan.at("loops").size(), 2u);
  testing::RigelResult r = testing::RunRigel(
      {"run", kExamples + "kmeans.rgl", "--workers", "2", "--plan", dir + "/tuned.json",
       "--stop-after-epochs", "2", "--run-dir", dir + "/run"},
      dir);
  EXPECT_EQ(r.rc, 0) << r.err;
  testing::RigelResult c = testing::RunRigel(
      {"calibrate", "--epochs", "3", "-o", dir + "/k.json", "--work-dir", dir + "/cal"}, dir);
  ASSERT_EQ(c.rc, 0) << c.err;
  for (const std::string& f : {dir + "/k.json", dir + "/refit.json"}) {
    const nlohmann::json k = nlohmann::json::parse(testing::Slurp(f));
    EXPECT_EQ(k.size(), 8u) << k.dump();
    for (const auto& [name, v] : k.items()) EXPECT_GE(v.get<double>(), 0) << name;
    EXPECT_GT(k.at("round_trip_s").get<double>(), 0) << f;
  }
  // explain reads the file it names.
  testing::RigelResult e = testing::RunRigel({"explain", kExamples + "kmeans.rgl", "--cost",
                                              "--constants", dir + "/k.json", "--workers", "2"},
                                             dir);
  ASSERT_EQ(e.rc, 0) << e.err;
  EXPECT_NE(e.out.find("constants: " + dir + "/k.json"), std::string::npos) << e.out;
}

INSTANTIATE_TEST_SUITE_P(Programs, PredictedBytes,
                         ::testing::Values(Case{"mf.rgl", {"EPOCHS=3"}}, Case{"bias.rgl", {}},
                                           Case{"dense_lr.rgl", {"EPOCHS=4"}},
                                           Case{"sparse_lr.rgl", {"EPOCHS=4"}},
                                           Case{"softmax.rgl", {"EPOCHS=4"}}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = i.param.program;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace rigel
