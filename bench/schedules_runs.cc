// The schedules bench (bench/schedules.cc): running processes and reading what they print.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bench/schedules.h"

namespace rigel::bench::schedules {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::vector<std::pair<int, double>> Bench::ParseRmse(const std::string& out) {
  std::vector<std::pair<int, double>> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    int e = 0;
    double x = 0;
    if (std::sscanf(line.c_str(), "epoch %d test_rmse %lf", &e, &x) == 2) v.emplace_back(e, x);
  }
  return v;
}

void Bench::Fail(const std::string& what, const fs::path& dir, const ProcResult& r,
                 const fs::path& err) {
  failed_ = true;
  std::fprintf(stderr, "schedules: %s failed (%s %d after %.1f s); logs in %s\n", what.c_str(),
               r.timed_out ? "timed out, exit" : "exit", r.rc, r.wall_s, dir.c_str());
  std::fprintf(stderr, "%s", Tail(err, 8).c_str());
  if (fs::exists(dir / "scheduler.log")) {
    std::fprintf(stderr, "-- scheduler.log:\n%s", Tail(dir / "scheduler.log", 8).c_str());
  }
}

RunResult Bench::Serial(const std::string& name, int epochs) {
  RunResult res;
  fs::path dir = runs_ / name;
  fs::create_directories(dir);
  std::vector<std::string> argv = {Bin("rigel").string(), "run", "-v", mf_.string()};
  for (auto& s : Sets(epochs)) argv.push_back(s);
  if (record_commands_) commands_.push_back(Join(argv));
  ProcResult r =
      Run(argv, dir / "out", dir / "err", o_.timeout_s > 0 ? o_.timeout_s : 60 + 10.0 * epochs);
  res.wall_s = r.wall_s;
  auto rmse = ParseRmse(ReadFile(dir / "out"));
  // -v: "loop L (line N): K iterations in S s (...)", one per loop run; an
  // epoch is the run of every loop once (the training loop, then the test).
  std::vector<std::pair<int, double>> loops;
  std::istringstream in(ReadFile(dir / "err"));
  std::string line;
  int nloops = 0;
  while (std::getline(in, line)) {
    int l = 0, ln = 0;
    long long k = 0;
    double s = 0;
    if (std::sscanf(line.c_str(), "loop %d (line %d): %lld iterations in %lf s", &l, &ln, &k, &s) ==
        4) {
      loops.emplace_back(l, s);
      nloops = std::max(nloops, l + 1);
    }
  }
  if (r.rc != 0 || static_cast<int>(rmse.size()) != epochs || nloops == 0 ||
      static_cast<int>(loops.size()) != nloops * epochs) {
    Fail("the serial run '" + name + "'", dir, r, dir / "err");
    return res;
  }
  double t = 0;
  for (int e = 0; e < epochs; ++e) {
    EpochPoint p;
    p.epoch = rmse[e].first;
    p.test_rmse = rmse[e].second;
    p.epoch_s = 0;
    for (int l = 0; l < nloops; ++l) p.epoch_s += loops[e * nloops + l].second;
    t += p.epoch_s;
    p.elapsed_s = t;
    res.epochs.push_back(p);
  }
  res.ok = true;
  return res;
}

RunResult Bench::Cluster(const std::string& name, const fs::path& program, const fs::path& plan,
                         int workers, int servers, int epochs,
                         const std::vector<std::string>& extra) {
  RunResult res;
  fs::path dir = runs_ / name;
  fs::create_directories(dir);
  fs::path log = dir / "log.json";
  std::vector<std::string> argv = {(o_.source_dir / "scripts/rigel-launch").string(),
                                   "--bin-dir",
                                   o_.bin_dir.string(),
                                   "--program",
                                   program.string(),
                                   "--servers",
                                   std::to_string(servers),
                                   "--workers",
                                   std::to_string(workers),
                                   "--run-dir",
                                   dir.string()};
  std::vector<std::string> sargs = Sets(epochs);
  sargs.insert(sargs.end(), {"--log-json", log.string()});
  if (!plan.empty()) sargs.insert(sargs.end(), {"--plan", plan.string()});
  sargs.insert(sargs.end(), extra.begin(), extra.end());
  for (const auto& a : sargs) argv.insert(argv.end(), {"--scheduler-arg", a});
  if (record_commands_) commands_.push_back(Join(argv));
  ProcResult r = Run(argv, dir / "launch.out", dir / "launch.err",
                     o_.timeout_s > 0 ? o_.timeout_s : 60 + 30.0 * epochs);
  res.wall_s = r.wall_s;
  auto rmse = ParseRmse(ReadFile(dir / "launch.out"));
  std::vector<json> log_lines;
  {
    std::istringstream in(ReadFile(log));
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded()) log_lines.push_back(std::move(j));
    }
  }
  if (r.rc != 0 || static_cast<int>(rmse.size()) != epochs ||
      static_cast<int>(log_lines.size()) != epochs) {
    Fail("the run '" + name + "' (" + std::to_string(rmse.size()) + " of " +
             std::to_string(epochs) + " epochs printed, " + std::to_string(log_lines.size()) +
             " logged)",
         dir, r, dir / "launch.err");
    return res;
  }
  for (int e = 0; e < epochs; ++e) {
    const json& j = log_lines[e];
    EpochPoint p;
    p.epoch = rmse[e].first;
    p.test_rmse = rmse[e].second;
    p.elapsed_s = j.value("elapsed_s", NAN);
    p.epoch_s = j.value("epoch_s", NAN);
    p.compute_s = j.value("compute_s", NAN);
    p.comm_s = j.value("comm_s", NAN);
    p.wait_s = j.value("wait_s", NAN);
    p.cpu_s = j.value("cpu_s", NAN);
    double b = 0;
    if (j.contains("bytes")) {
      for (const auto& [k, v] : j["bytes"].items()) b += k == "local.kept" ? 0 : v.get<double>();
    }
    p.mbytes = b / 1e6;
    res.epochs.push_back(p);
  }
  res.ok = true;
  return res;
}

}  // namespace rigel::bench::schedules
