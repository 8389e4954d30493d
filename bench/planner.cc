// planner [--quick] [--runs N] [--work-dir DIR]: the cost model's
// predictions (`rigel explain --cost --json`) against runs on 2 workers and
// 2 servers of the same programs (`rigel run --log-json`), one JSON line per
// program: predicted and measured epoch seconds (the median over runs of
// each run's median epoch after the first) and bytes moved per epoch, their
// ratios, and the goals of issue 31 (1.25 on seconds, 1.1 on bytes). The
// table in docs/planner.md comes from it.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/proc.h"
#include "bench/planner_programs.h"
#include "bench/run_log.h"

namespace fs = std::filesystem;
using rigel::bench::LaterEpochs;
using rigel::bench::Median;
using rigel::bench::ReadFile;
using rigel::bench::Run;

namespace {

double Moved(const nlohmann::json& epoch) {
  double b = 0;
  for (const auto& [k, v] : epoch.at("bytes").items()) b += k == "local.kept" ? 0 : v.get<double>();
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int runs = 3;
  fs::path work = fs::temp_directory_path() / "rigel-bench-planner";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--work-dir") && i + 1 < argc) {
      work = argv[++i];
    } else {
      std::cerr << "usage: planner [--quick] [--runs N] [--work-dir DIR]\n";
      return 2;
    }
  }
  if (quick) runs = 1;
  const std::string src = RIGEL_SOURCE_DIR, bin = std::string(RIGEL_BIN_DIR) + "/rigel";
  std::vector<rigel::bench::PlannerProgram> programs = rigel::bench::PlannerPrograms(src);
  if (quick) programs.resize(3);
  fs::create_directories(work);
  int failures = 0;
  for (const rigel::bench::PlannerProgram& p : programs) {
    std::vector<std::string> sets;
    for (const std::string& s : p.sets) sets.insert(sets.end(), {"--set", s});
    std::vector<std::string> explain = {bin,         "explain", p.path,   "--workers", "2",
                                        "--servers", "2",       "--cost", "--json",
                                        "--epochs",  std::to_string(p.epochs)};
    explain.insert(explain.end(), sets.begin(), sets.end());
    const fs::path out = work / (p.name + ".cost.json"), err = work / (p.name + ".err");
    auto e = Run(explain, out, err, 600);
    if (e.rc != 0) {
      std::cerr << "planner: " << p.name << ": explain --cost failed: " << ReadFile(err);
      ++failures;
      continue;
    }
    const nlohmann::json steady = nlohmann::json::parse(ReadFile(out)).at("steady");
    std::vector<double> seconds, bytes;
    std::map<std::string, std::vector<double>> by_strategy;
    for (int k = 0; k < runs; ++k) {
      const fs::path log = work / (p.name + "." + std::to_string(k) + ".jsonl");
      fs::remove(log);
      std::vector<std::string> run = {bin,
                                      "run",
                                      p.path,
                                      "--workers",
                                      "2",
                                      "--servers",
                                      "2",
                                      "--log-json",
                                      log.string(),
                                      "--run-dir",
                                      (work / (p.name + ".run")).string()};
      run.insert(run.end(), sets.begin(), sets.end());
      auto r = Run(run, work / (p.name + ".out"), err, 900);
      if (r.rc != 0) {
        std::cerr << "planner: " << p.name << ": run failed: " << ReadFile(err);
        ++failures;
        break;
      }
      std::vector<double> s, b;
      std::map<std::string, std::vector<double>> st;
      for (const nlohmann::json& epoch : LaterEpochs(ReadFile(log))) {
        s.push_back(epoch.at("epoch_s").get<double>());
        b.push_back(Moved(epoch));
        for (const auto& [name, v] : epoch.at("bytes").items()) st[name].push_back(v.get<double>());
      }
      seconds.push_back(Median(s));
      bytes.push_back(Median(b));
      for (auto& [name, v] : st) by_strategy[name].push_back(Median(v));
    }
    if (seconds.empty()) continue;
    nlohmann::json j;
    j["figure"] = "planner_prediction";
    j["program"] = p.name;
    j["workers"] = 2;
    j["servers"] = 2;
    j["runs"] = seconds.size();
    j["predicted_epoch_s"] = steady.at("seconds");
    j["measured_epoch_s"] = Median(seconds);
    j["epoch_s_ratio"] = steady.at("seconds").get<double>() / Median(seconds);
    j["predicted_bytes"] = steady.at("moved_bytes");
    j["measured_bytes"] = Median(bytes);
    j["bytes_ratio"] = Median(bytes) > 0 ? steady.at("moved_bytes").get<double>() / Median(bytes)
                                         : (steady.at("moved_bytes").get<double>() > 0 ? 0.0 : 1.0);
    for (auto& [name, v] : by_strategy) {
      j["measured_by_strategy"][name] = Median(v);
      j["predicted_by_strategy"][name] = steady.at("bytes").value(name, 0.0);
    }
    j["goal"] = 1.25;  // on epoch_s_ratio, both ways
    j["bytes_goal"] = 1.1;
    std::cout << j.dump() << std::endl;
  }
  return failures == 0 ? 0 : 1;
}
