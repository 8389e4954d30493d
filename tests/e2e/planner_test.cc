// The cost model against real runs (analysis/cost.h, exec/cost_probe.h):
// `rigel explain --cost --json` predicts each epoch's bytes per strategy
// before anything runs, and a run on 2 workers and 2 servers logs what it
// moved. docs/planner.md promises bytes within 10% of the measured; these
// tests fail at twice that. Seconds are compared in bench/planner, not here
// (a test never holds an absolute time).
#include <gtest/gtest.h>

#include <algorithm>
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
