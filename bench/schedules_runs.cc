// The schedules bench (bench/schedules.cc): running processes and reading what they print.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/schedules.h"

extern char** environ;

namespace rigel::bench::schedules {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

double Secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last `lines` lines of a file (all of it if shorter).
namespace {

std::string Tail(const fs::path& p, int lines) {
  std::string s = ReadFile(p);
  size_t pos = s.size();
  if (pos > 0 && s[pos - 1] == '\n') --pos;  // the final newline ends the last line
  for (int n = 0; n < lines; ++n) {
    size_t nl = pos == 0 ? std::string::npos : s.rfind('\n', pos - 1);
    if (nl == std::string::npos) return s;
    pos = nl;
  }
  return s.substr(pos + 1);
}

std::string Quote(const std::string& a) {
  if (a.find_first_of(" \t'\"$\\") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += Quote(a);
  }
  return s;
}

ProcResult Run(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
               double timeout_s) {
  ProcResult r;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  auto t0 = Clock::now();
  int e = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (e != 0) {
    std::fprintf(stderr, "schedules: cannot start %s: %s\n", args[0], std::strerror(e));
    return r;
  }
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return r;
    if (!r.timed_out && Secs(t0) > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGTERM);  // the launcher's trap stops its cluster
      auto t1 = Clock::now();
      while (waitpid(pid, &status, WNOHANG) == 0 && Secs(t1) < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.wall_s = Secs(t0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

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
                         int workers, int servers, int epochs) {
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
