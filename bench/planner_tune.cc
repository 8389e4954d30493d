// planner_tune [--quick] [--budget S] [--work-dir DIR] [--programs A,B]: issue 31's measured
// lines about choosing plans, on 2 workers and 2 servers.
//
// "planner_default", per program: `rigel tune --trials 100` runs Rigel's
// plan and every one-loop variant the planner lists, in turns, within the
// budget; from tune's table, Rigel's measured epoch over the fastest plan's
// among those that printed Rigel's numbers (tune chooses no other). Goal: at
// most 1.05.
//
// "planner_tuned_vs_before", for kmeans and the row sums: the plan tune
// wrote against the plan Rigel chose before issue 31, side by side in
// alternating runs (their median epochs), and whether both printed the same
// numbers. Before issue 31 kmeans' assignment loop, which writes only sums,
// was cut into mini-batches of 512 (now one step: analysis::StepBatch), and
// the row sums ran data-parallel with R summed through the servers in
// mini-batches of 512 (now 1-D by i, R local): the same plans with
// `--batch 512`. Goal: at least 1.3.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/planner_programs.h"
#include "bench/proc.h"
#include "bench/run_log.h"

namespace fs = std::filesystem;
using rigel::bench::LastPrinted;
using rigel::bench::LaterEpochSeconds;
using rigel::bench::Median;
using rigel::bench::PlannerProgram;
using rigel::bench::ReadFile;
using rigel::bench::Run;

namespace {

// What tune measured, from its table (cli/tune_command.cc): per plan tried,
// in its order (Rigel's first), the description and measured_s (the median
// over the rounds every plan completed of its median later epoch), and
// whether it printed other numbers than Rigel's plan (never chosen).
struct Tried {
  std::string plan;
  double measured_s = 0;
  bool differs = false;
};

std::vector<Tried> ReadTune(const std::string& out) {
  std::vector<Tried> tried;
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line) && line.size() > 60 && line.rfind("not chosen", 0) != 0 &&
         line.rfind("fastest", 0) != 0) {
    std::istringstream nums(line.substr(60));
    double predicted = 0, measured = 0;
    if (!(nums >> predicted >> measured)) break;
    std::string plan = line.substr(0, 60);
    plan.erase(plan.find_last_not_of(' ') + 1);
    tried.push_back({plan, measured, false});
  }
  for (Tried& t : tried) {
    t.differs = out.find("not chosen: " + t.plan) != std::string::npos;
  }
  return tried;
}

// Whether two runs' last printed numbers agree within 1e-3 relative.
bool SamePrinted(const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) return false;
    if (std::abs(v - it->second) > 1e-3 * std::max(1.0, std::abs(v))) return false;
  }
  return true;
}

// One run of `p` with `plan` and `extra` flags; its log's text ("" on failure).
std::string RunPlan(const std::string& bin, const PlannerProgram& p, const fs::path& plan,
                    const std::vector<std::string>& extra, const fs::path& base) {
  std::vector<std::string> run = {bin,         "run",       p.path,      "--workers",
                                  "2",         "--servers", "2",         "--plan",
                                  plan.string(), "--log-json", base.string() + ".jsonl",
                                  "--run-dir", base.string() + ".run"};
  for (const std::string& s : p.sets) run.insert(run.end(), {"--set", s});
  run.insert(run.end(), extra.begin(), extra.end());
  fs::remove(base.string() + ".jsonl");
  auto r = Run(run, base.string() + ".out", base.string() + ".err", 600);
  if (r.rc != 0) {
    std::cerr << "planner_tune: " << p.name << ": run failed: " << ReadFile(base.string() + ".err");
    return "";
  }
  return ReadFile(base.string() + ".jsonl");
}

// The plan tune tried whose first loop is data-parallel (the row sums'
// schedule before issue 31); empty if none.
fs::path DataParallelPlan(const fs::path& dir) {
  for (int k = 0;; ++k) {
    const fs::path plan = dir / ("trial-" + std::to_string(k) + "-0.plan.json");
    if (!fs::exists(plan)) return {};
    nlohmann::json j = nlohmann::json::parse(ReadFile(plan), nullptr, false);
    if (j.is_object() && j["loops"][0]["schedule"]["kind"] == "data_parallel") return plan;
  }
}

int CompareWithBefore(const std::string& bin, const PlannerProgram& p, const fs::path& tuned,
                      const fs::path& before, const fs::path& dir, int rounds) {
  std::vector<double> now_s, before_s;
  std::string now_log, before_log;
  for (int r = 0; r < rounds; ++r) {
    now_log = RunPlan(bin, p, tuned, {}, dir / ("now-" + std::to_string(r)));
    before_log = RunPlan(bin, p, before, {"--batch", "512"}, dir / ("before-" + std::to_string(r)));
    if (now_log.empty() || before_log.empty()) return 1;
    now_s.push_back(LaterEpochSeconds(now_log));
    before_s.push_back(LaterEpochSeconds(before_log));
  }
  nlohmann::json j;
  j["figure"] = "planner_tuned_vs_before";
  j["program"] = p.name;
  j["rounds"] = rounds;
  j["tuned_epoch_s"] = Median(now_s);
  j["before_epoch_s"] = Median(before_s);
  j["speedup"] = Median(before_s) / Median(now_s);
  // The row sums print nothing: both plans are exact schedules, whose
  // results equal the serial run's (tests/e2e/distributed_test.cc checks R).
  const auto printed = LastPrinted(now_log);
  if (printed.empty() && LastPrinted(before_log).empty()) {
    j["same_printed"] = nullptr;
  } else {
    j["same_printed"] = SamePrinted(printed, LastPrinted(before_log));
  }
  j["goal"] = 1.3;
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  double budget = 60;
  fs::path work = fs::temp_directory_path() / "rigel-bench-planner-tune";
  std::string only;  // ",mf,bias," from --programs: those alone
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) {
      budget = std::max(5.0, std::atof(argv[++i]));
    } else if (!std::strcmp(argv[i], "--work-dir") && i + 1 < argc) {
      work = argv[++i];
    } else if (!std::strcmp(argv[i], "--programs") && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else {
      std::cerr << "usage: planner_tune [--quick] [--budget S] [--work-dir DIR] [--programs A,B]\n";
      return 2;
    }
  }
  if (quick) budget = std::min(budget, 15.0);
  const std::string bin = std::string(RIGEL_BIN_DIR) + "/rigel";
  std::vector<PlannerProgram> programs = rigel::bench::PlannerPrograms(RIGEL_SOURCE_DIR);
  if (quick) programs = {programs[2], programs.back()};  // kmeans, the row sums
  if (!only.empty()) {
    std::erase_if(programs, [&](const PlannerProgram& p) {
      return only.find("," + p.name + ",") == std::string::npos;
    });
  }
  int failures = 0;
  for (const PlannerProgram& p : programs) {
    const fs::path dir = work / p.name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path tuned = dir / "tuned.plan.json";
    std::vector<std::string> tune = {bin,         "tune",     p.path,  "--workers",
                                     "2",         "--servers", "2",     "--trials",
                                     "100",       "--budget", std::to_string(budget),
                                     "--work-dir", dir.string(), "-o",    tuned.string()};
    for (const std::string& s : p.sets) tune.insert(tune.end(), {"--set", s});
    auto t = Run(tune, dir / "tune.out", dir / "tune.err", budget * 3 + 120);
    if (t.rc != 0) {
      std::cerr << "planner_tune: " << p.name << ": tune failed: " << ReadFile(dir / "tune.err")
                << ReadFile(dir / "tune.out");
      ++failures;
      continue;
    }
    const std::vector<Tried> tried = ReadTune(ReadFile(dir / "tune.out"));
    if (tried.empty()) {
      std::cerr << "planner_tune: " << p.name << ": tune printed no trial\n";
      ++failures;
      continue;
    }
    // The fastest plan tune could choose: one that printed Rigel's numbers.
    size_t fastest = 0;
    for (size_t k = 0; k < tried.size(); ++k) {
      if (!tried[k].differs && tried[k].measured_s < tried[fastest].measured_s) fastest = k;
    }
    nlohmann::json j;
    j["figure"] = "planner_default";
    j["program"] = p.name;
    j["plans"] = tried.size();
    j["default_epoch_s"] = tried[0].measured_s;
    j["fastest_epoch_s"] = tried[fastest].measured_s;
    j["fastest_plan"] = tried[fastest].plan;
    j["default_over_fastest"] = tried[0].measured_s / tried[fastest].measured_s;
    int differ = 0;
    for (const Tried& t : tried) differ += t.differs;
    j["plans_printing_other_numbers"] = differ;
    j["tune_wrote"] = ReadFile(dir / "tune.out").find("fastest: Rigel's plan") != std::string::npos
                          ? "Rigel's plan"
                          : "another plan";
    j["goal"] = 1.05;
    std::cout << j.dump() << std::endl;
    if (p.name == "kmeans") {
      failures += CompareWithBefore(bin, p, tuned, dir / "trial-0-0.plan.json", dir, quick ? 3 : 5);
    } else if (p.name == "rowsum") {
      const fs::path dp = DataParallelPlan(dir);
      if (dp.empty()) {
        std::cerr << "planner_tune: rowsum: tune tried no data-parallel plan\n";
        ++failures;
      } else {
        failures += CompareWithBefore(bin, p, tuned, dp, dir, quick ? 3 : 5);
      }
    }
  }
  return failures == 0 ? 0 : 1;
}
