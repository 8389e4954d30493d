// planner_tune [--quick] [--budget S] [--work-dir DIR] [--programs A,B]: issue 31's measured
// lines about choosing plans, on 2 workers and 2 servers.
//
// "planner_default", per program: `rigel tune --trials 100` runs Rigel's
// plan and every one-loop variant the planner lists (and, for a program with
// relaxed loops, Rigel's plan with other relaxed settings), in turns, within
// the budget; from tune's table, Rigel's measured epoch over the fastest
// plan's among those tune may choose (same numbers as Rigel's plan, or
// within the quality rule of a serial run for a relaxed program), over all
// of them and over the schedules alone ("_schedule"). Goal: at most 1.05.
//
// "planner_default_head_to_head", per program with plans tune may choose
// besides Rigel's: all of them in alternating runs of about 2 s (their mean
// epochs), Rigel's plan over the fastest of them (all, and schedules alone),
// and Rigel's plan against itself, the machine's run-to-run spread. Goal: at
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
using rigel::bench::MeanLaterEpochSeconds;
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
  // Rigel's plan is never "not chosen" (a line names it only as the prefix
  // of "Rigel's plan with --batch ...").
  for (size_t k = 1; k < tried.size(); ++k) {
    tried[k].differs = out.find("not chosen: " + tried[k].plan) != std::string::npos;
  }
  return tried;
}

// Rigel's plan with other relaxed settings (cli/plan_cost.h,
// SettingsVariants), not another schedule: it may print other numbers
// within the quality rule, where every schedule computes Rigel's.
bool IsSettings(const std::string& plan) { return plan.rfind("Rigel's plan with ", 0) == 0; }

// The index of the least of `seconds` among those `allowed`; 0 (Rigel's
// plan) when none is less than seconds[0].
size_t Least(const std::vector<double>& seconds, const std::vector<bool>& allowed) {
  size_t best = 0;
  for (size_t k = 1; k < seconds.size(); ++k) {
    if (allowed[k] && seconds[k] < seconds[best]) best = k;
  }
  return best;
}

// "fastest_plan", "fastest_epoch_s" and "default_over_fastest" over every
// plan in `names` (index 0 Rigel's) that `usable` allows, and the same with
// "_schedule" over those that are not other settings.
void Fastest(const std::vector<std::string>& names, const std::vector<double>& seconds,
             const std::vector<bool>& usable, nlohmann::json* j) {
  std::vector<bool> schedules = usable;
  for (size_t k = 0; k < names.size(); ++k) schedules[k] = usable[k] && !IsSettings(names[k]);
  const size_t all = Least(seconds, usable), sched = Least(seconds, schedules);
  (*j)["fastest_plan"] = names[all];
  (*j)["fastest_epoch_s"] = seconds[all];
  (*j)["default_over_fastest"] = seconds[0] / seconds[all];
  (*j)["fastest_schedule_plan"] = names[sched];
  (*j)["default_over_fastest_schedule"] = seconds[0] / seconds[sched];
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
  std::vector<std::string> run = {bin, "run", p.path, "--workers", "2", "--servers", "2"};
  run.insert(run.end(), {"--plan", plan.string(), "--log-json", base.string() + ".jsonl",
                         "--run-dir", base.string() + ".run"});
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

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// Rigel's plan against every plan in `others`, head to head: `rounds`
// rounds in which Rigel's plan runs twice and every other plan once, each
// round starting one plan later, in runs of about 2 s each (as many epochs as
// `epoch_s` gives, 5 to 400), each run's mean later epoch. tune's own figure
// is the least of several measurements of 3 epochs, which favours whichever
// plan drew a quick spell of the machine; here every plan runs as long, side
// by side, and Rigel's plan against itself (its first run of each round over
// its second) says how far apart two measurements of one plan come out.
int HeadToHead(const std::string& bin, PlannerProgram p, double epoch_s, const fs::path& dir,
               const std::vector<std::pair<std::string, fs::path>>& others, int rounds) {
  const int epochs = std::clamp(static_cast<int>(2.0 / std::max(epoch_s, 1e-4)), p.epochs, 400);
  for (std::string& s : p.sets) {
    if (s.rfind("EPOCHS=", 0) == 0 || s.rfind("ITERS=", 0) == 0) {
      s = s.substr(0, s.find('=') + 1) + std::to_string(epochs);
    }
  }
  // plans[0] and plans[1]: Rigel's plan; then the others.
  std::vector<fs::path> plans = {dir / "trial-0-0.plan.json", dir / "trial-0-0.plan.json"};
  for (const auto& [name, plan] : others) plans.push_back(plan);
  std::vector<std::vector<double>> mean_s(plans.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < plans.size(); ++k) {
      const size_t which = (k + static_cast<size_t>(r)) % plans.size();
      const fs::path base = dir / ("h2h-" + std::to_string(r) + "-" + std::to_string(which));
      const std::string log = RunPlan(bin, p, plans[which], {}, base);
      if (log.empty()) return 1;
      mean_s[which].push_back(MeanLaterEpochSeconds(log));
    }
  }
  std::vector<double> rigels = mean_s[0];
  rigels.insert(rigels.end(), mean_s[1].begin(), mean_s[1].end());
  const double rigels_s = Mean(rigels);
  nlohmann::json j;
  j["figure"] = "planner_default_head_to_head";
  j["program"] = p.name;
  j["rounds"] = rounds;
  j["epochs_per_run"] = epochs;
  j["default_epoch_s"] = rigels_s;
  j["default_over_itself"] = Mean(mean_s[0]) / Mean(mean_s[1]);
  std::vector<std::string> names = {"Rigel's plan"};
  std::vector<double> seconds = {rigels_s};
  nlohmann::json each = nlohmann::json::array();
  for (size_t k = 0; k < others.size(); ++k) {
    const double s_k = Mean(mean_s[k + 2]);
    each.push_back({{"plan", others[k].first}, {"epoch_s", s_k}, {"default_over", rigels_s / s_k}});
    names.push_back(others[k].first);
    seconds.push_back(s_k);
  }
  j["plans"] = each;
  Fastest(names, seconds, std::vector<bool>(names.size(), true), &j);
  j["goal"] = 1.05;
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
    std::vector<std::string> tune = {bin,
                                     "tune",
                                     p.path,
                                     "--workers",
                                     "2",
                                     "--servers",
                                     "2",
                                     "--trials",
                                     "100",
                                     "--budget",
                                     std::to_string(budget),
                                     "--work-dir",
                                     dir.string(),
                                     "-o",
                                     tuned.string()};
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
    // The fastest plan tune could choose: one whose numbers hold.
    std::vector<std::string> names;
    std::vector<double> seconds;
    std::vector<bool> usable;
    for (const Tried& t : tried) {
      names.push_back(t.plan);
      seconds.push_back(t.measured_s);
      usable.push_back(!t.differs);
    }
    nlohmann::json j;
    j["figure"] = "planner_default";
    j["program"] = p.name;
    j["plans"] = tried.size();
    j["default_epoch_s"] = tried[0].measured_s;
    Fastest(names, seconds, usable, &j);
    int differ = 0;
    for (const Tried& t : tried) differ += t.differs;
    j["plans_not_chosen"] = differ;
    const std::string out = ReadFile(dir / "tune.out");
    const size_t wrote = out.find("fastest: ");
    j["tune_wrote"] =
        wrote == std::string::npos ? "" : out.substr(wrote + 9, out.find(", ", wrote) - wrote - 9);
    j["goal"] = 1.05;
    std::cout << j.dump() << std::endl;
    std::vector<std::pair<std::string, fs::path>> others;
    for (size_t k = 1; k < tried.size(); ++k) {
      if (tried[k].differs) continue;
      others.emplace_back(tried[k].plan, dir / ("trial-" + std::to_string(k) + "-0.plan.json"));
    }
    if (!others.empty()) {
      failures += HeadToHead(bin, p, tried[0].measured_s, dir, others, quick ? 2 : 5);
    }
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
