// bench/schedules: matrix factorisation (examples/mf.rgl) on a local cluster
// started by scripts/rigel-launch, as separate processes on this machine.
//
//  - figure "rmse": test RMSE and elapsed seconds after every epoch for the
//    plan Rigel chooses (conflict-free 2-D: W local, H rotating) and for a
//    forced data-parallel plan with W and H relaxed and kept on the parameter
//    servers, both with 2 workers and 2 servers; the serial executor
//    (`rigel run`) is given as the reference curve.
//  - figure "epoch_time": seconds per epoch of the 2-D plan with 1, 2 and 4
//    workers (servers = min(workers, 2)) against the serial executor, in 3
//    rounds (1 with --quick) that each run all four back to back; the ratio
//    to the serial executor is taken within a round, and its median reported
//    (this shared VM's speed drifts by tens of percent over minutes).
//
// The forced plan is made first as a plan file (`rigel plan`, loop 0 edited to
// data_parallel with W and H relaxed on "ps"), checked with `rigel explain
// --plan`, the same check the scheduler makes; if that check refuses it, the
// bench runs a copy of the program with `relax W, H` on its training loop
// instead, with its automatic plan. The "plan" figures say which was used.
//
// Data: planted ratings from `rigel gen ratings` (1.1M over 20000 x 20000,
// rank 4, the examples' row bias 0.5; --quick: 200k over 5000 x 5000), made
// once in the work directory and reused. Seconds are the scheduler's
// --log-json epoch times (from the moment every worker has loaded its data),
// and for the serial executor the per-loop timings of `rigel run -v`: neither
// counts process start-up or data loading. Per-epoch figures are medians over
// the epochs after the first (the first one also creates the parameters).
//
// Every figure is one JSON line on stdout; a table goes to stderr. A run
// still going after --timeout seconds (default 60 + 30 per epoch) is stopped
// with its whole process group. Exit 1 if a run failed or was stopped (its
// logs are kept and named on stderr; the other runs go on), 2 on bad usage.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double Secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// `x` rounded to `digits` significant digits, so the JSON stays readable.
double Round(double x, int digits = 5) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return std::strtod(buf, nullptr);
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// The last `lines` lines of a file (all of it if shorter).
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

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += Quote(a);
  }
  return s;
}

struct ProcResult {
  int rc = -1;  // exit status; 128 + signal if killed
  bool timed_out = false;
  double wall_s = 0;
};

// Runs argv with stdin from /dev/null and stdout/stderr into files, in a new
// process group (so a timeout stops the launcher and everything it started).
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

struct Options {
  bool quick = false;
  bool keep = false;
  int epochs = 10;         // rmse runs and the serial reference
  int scaling_epochs = 6;  // epoch_time runs
  int rounds = 3;          // of the epoch_time runs
  int timeout_s = 0;       // per run; 0: 60 s + 30 s per epoch
  fs::path work_dir, bin_dir, source_dir;
};

struct DataSpec {
  int64_t rows, cols, count;
};

struct EpochPoint {
  int epoch = 0;
  double test_rmse = NAN, elapsed_s = NAN, epoch_s = NAN;
  double compute_s = NAN, comm_s = NAN, wait_s = NAN, mbytes = NAN;
};

struct RunResult {
  bool ok = false;
  std::vector<EpochPoint> epochs;
  double wall_s = 0;  // of the whole process (start-up and loading included)
};

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {}
  int Main();

 private:
  fs::path Bin(const char* name) const { return o_.bin_dir / name; }
  bool MakeData();
  bool MakePlans();
  std::vector<std::string> Sets(int epochs) const {
    return {"--set", "ratings.path=" + data_.string(), "--set", "EPOCHS=" + std::to_string(epochs)};
  }
  RunResult Serial(const std::string& name, int epochs);
  RunResult Cluster(const std::string& name, const fs::path& program, const fs::path& plan,
                    int workers, int servers, int epochs);
  void Fail(const std::string& what, const fs::path& dir, const ProcResult& r, const fs::path& err);
  static std::vector<std::pair<int, double>> ParseRmse(const std::string& out);
  void Emit(const json& j) {
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
  }

  Options o_;
  DataSpec spec_{};
  fs::path data_, runs_, mf_, mf_dp_, plan_dp_;
  std::string dp_via_, refusal_;
  json data_info_ = json::object();
  bool failed_ = false;
  bool record_commands_ = true;
  std::vector<std::string> commands_;
};

bool Bench::MakeData() {
  spec_ = o_.quick ? DataSpec{5000, 5000, 200000} : DataSpec{20000, 20000, 1100000};
  std::string stem = "ratings_" + std::to_string(spec_.rows) + "x" + std::to_string(spec_.cols) +
                     "_" + std::to_string(spec_.count);
  data_ = o_.work_dir / (stem + ".csv");
  fs::path info = o_.work_dir / (stem + ".csv.info");
  // The .info is moved into place after the data: its presence means a
  // complete file from an earlier run.
  if (!fs::exists(info) || !fs::exists(data_)) {
    // Made in this run's directory and moved into place, so that a
    // concurrent run never reads a half-written file.
    fs::path tmp = runs_ / data_.filename();
    std::vector<std::string> argv = {Bin("rigel").string(),
                                     "gen",
                                     "ratings",
                                     "--out",
                                     tmp.string(),
                                     "--rows",
                                     std::to_string(spec_.rows),
                                     "--cols",
                                     std::to_string(spec_.cols),
                                     "--count",
                                     std::to_string(spec_.count),
                                     "--row-bias",
                                     "0.5"};
    commands_.push_back(Join(argv));
    ProcResult r = Run(argv, runs_ / "gen.out", runs_ / "gen.err", 300);
    if (r.rc != 0) {
      std::fprintf(stderr, "schedules: `%s` failed (exit %d):\n%s", Join(argv).c_str(), r.rc,
                   ReadFile(runs_ / "gen.err").c_str());
      return false;
    }
    std::error_code ec;
    fs::rename(tmp, data_, ec);
    if (!ec) fs::rename(tmp.string() + ".info", info, ec);
    if (ec) {
      std::fprintf(stderr, "schedules: cannot move the data to %s: %s\n", data_.c_str(),
                   ec.message().c_str());
      return false;
    }
  } else {
    commands_.push_back("(reused " + data_.string() + ")");
  }
  std::istringstream in(ReadFile(info));
  std::string line;
  while (std::getline(in, line)) {
    size_t c = line.find(':');
    if (c == std::string::npos) continue;
    std::string k = line.substr(0, c), v = line.substr(c + 1);
    for (char& ch : k) ch = ch == ' ' ? '_' : ch;
    data_info_[k] = std::strtod(v.c_str(), nullptr);
  }
  return true;
}

// The 2-D program is a copy of examples/mf.rgl (its data path is given with
// --set); the data-parallel one is a plan file for it if the plan check
// accepts relaxations the program does not declare, else a copy with
// `relax W, H`.
bool Bench::MakePlans() {
  std::string text = ReadFile(o_.source_dir / "examples/mf.rgl");
  if (text.empty()) {
    std::fprintf(stderr, "schedules: cannot read %s\n",
                 (o_.source_dir / "examples/mf.rgl").c_str());
    return false;
  }
  mf_ = runs_ / "mf.rgl";
  WriteFile(mf_, text);
  auto rigel = [&](std::vector<std::string> args, const std::string& tag) {
    args.insert(args.begin(), Bin("rigel").string());
    commands_.push_back(Join(args));
    return Run(args, runs_ / (tag + ".out"), runs_ / (tag + ".err"), 120);
  };
  auto with_sets = [&](std::vector<std::string> a) {
    a.push_back("--set");
    a.push_back("ratings.path=" + data_.string());
    return a;
  };
  auto describe = [&](const fs::path& plan_file, const std::string& schedule,
                      const std::string& via) -> bool {
    json plan = json::parse(ReadFile(plan_file), nullptr, false);
    if (plan.is_discarded() || !plan.contains("loops") || plan["loops"].empty()) {
      std::fprintf(stderr, "schedules: %s is not a plan\n", plan_file.c_str());
      return false;
    }
    const json& l = plan["loops"][0];
    json j = {{"bench", "schedules"},
              {"figure", "plan"},
              {"schedule", schedule},
              {"via", via},
              {"loop0_kind", l["schedule"]["kind"]},
              {"relaxed", l["relaxed"]}};
    for (const char* p : {"W", "H"}) {
      const json& pp = l["params"][p];
      std::string s = pp["strategy"].get<std::string>();
      if (pp.contains("shard")) s += "/" + pp["shard"].get<std::string>();
      j[p] = s;
    }
    Emit(j);
    return true;
  };

  // The plan Rigel chooses, for 2 workers (what the rmse runs use).
  fs::path plan2d = runs_ / "plan_2d.json";
  ProcResult r =
      rigel(with_sets({"plan", mf_.string(), "--workers", "2", "-o", plan2d.string()}), "plan_2d");
  if (r.rc != 0) {
    std::fprintf(stderr, "schedules: rigel plan failed:\n%s",
                 ReadFile(runs_ / "plan_2d.err").c_str());
    return false;
  }
  if (!describe(plan2d, "conflict_free_2d", "automatic")) return false;

  // First try: the same plan, loop 0 edited to data-parallel.
  json plan = json::parse(ReadFile(plan2d));
  json& l0 = plan["loops"][0];
  l0["relaxed"] = json::array({"W", "H"});
  l0["schedule"] = {{"kind", "data_parallel"}, {"partition", "count"}};
  for (const char* p : {"W", "H"}) {
    json& pp = l0["params"][p];
    pp["strategy"] = "ps";
    pp["shard"] = "range";
    pp.erase("keyed_by");
  }
  fs::path edited = runs_ / "plan_dp_edited.json";
  WriteFile(edited, plan.dump(2) + "\n");
  r = rigel(with_sets({"explain", mf_.string(), "--workers", "2", "--plan", edited.string()}),
            "explain_dp");
  if (r.rc == 0) {
    dp_via_ = "plan_file";
    mf_dp_ = mf_;
    plan_dp_ = edited;
    return describe(edited, "data_parallel", dp_via_);
  }
  refusal_ = ReadFile(runs_ / "explain_dp.err");
  while (!refusal_.empty() && (refusal_.back() == '\n' || refusal_.back() == ' ')) {
    refusal_.pop_back();
  }
  std::fprintf(stderr, "schedules: the edited plan is refused (%s); using `relax W, H` instead\n",
               refusal_.c_str());

  // Second: the program with `relax W, H` on its training loop.
  const std::string from = "parallel for (i, j, v) in train {";
  size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    std::fprintf(stderr, "schedules: examples/mf.rgl has no single line '%s' to relax\n",
                 from.c_str());
    return false;
  }
  text.replace(at, from.size(), "parallel for (i, j, v) in train relax W, H {");
  mf_dp_ = runs_ / "mf_relax.rgl";
  WriteFile(mf_dp_, text);
  dp_via_ = "program_relax";
  fs::path auto_dp = runs_ / "plan_relax.json";
  r = rigel(with_sets({"plan", mf_dp_.string(), "--workers", "2", "-o", auto_dp.string()}),
            "plan_relax");
  if (r.rc != 0) {
    std::fprintf(stderr, "schedules: rigel plan failed:\n%s",
                 ReadFile(runs_ / "plan_relax.err").c_str());
    return false;
  }
  json ap = json::parse(ReadFile(auto_dp), nullptr, false);
  if (ap.is_discarded() || ap["loops"][0]["schedule"]["kind"] != "data_parallel") {
    std::fprintf(stderr, "schedules: %s does not make loop 0 data-parallel\n", mf_dp_.c_str());
    return false;
  }
  return describe(auto_dp, "data_parallel", dp_via_);
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

// Median over the epochs after the first (all of them if there is one).
double Steady(const RunResult& r, double EpochPoint::*field) {
  std::vector<double> v;
  for (size_t e = r.epochs.size() > 1 ? 1 : 0; e < r.epochs.size(); ++e) {
    v.push_back(r.epochs[e].*field);
  }
  return Median(v);
}

int Bench::Main() {
  auto t_start = Clock::now();
  const unsigned cores = std::thread::hardware_concurrency();
  std::error_code ec;
  fs::create_directories(o_.work_dir, ec);
  if (ec) {
    std::fprintf(stderr, "schedules: cannot make %s: %s\n", o_.work_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  runs_ = o_.work_dir / ("runs-" + std::to_string(::getpid()));
  fs::create_directories(runs_);
  if (!MakeData() || !MakePlans()) return 1;

  json setup = {{"bench", "schedules"},
                {"figure", "setup"},
                {"quick", o_.quick},
                {"ratings", spec_.count},
                {"rows", spec_.rows},
                {"cols", spec_.cols},
                {"K", 16},
                {"epochs", o_.epochs},
                {"scaling_epochs", o_.scaling_epochs},
                {"rounds", o_.rounds},
                {"batch", 512},
                {"noise_floor_rmse", Round(data_info_.value("noise_floor_RMSE", NAN))},
                {"data_parallel_via", dp_via_},
                {"cores", cores}};
  if (!refusal_.empty()) setup["plan_file_refused"] = refusal_;
  Emit(setup);

  // 1. RMSE per epoch: serial reference, 2-D and forced data-parallel.
  RunResult serial = Serial("serial", o_.epochs);
  RunResult cf = Cluster("cf2d_w2_s2", mf_, {}, 2, 2, o_.epochs);
  RunResult dp = Cluster("dp_w2_s2", mf_dp_, plan_dp_, 2, 2, o_.epochs);
  struct Curve {
    const char* schedule;
    const RunResult* r;
    int workers, servers;
  };
  std::vector<Curve> curves = {
      {"serial", &serial, 1, 0}, {"conflict_free_2d", &cf, 2, 2}, {"data_parallel", &dp, 2, 2}};
  for (const Curve& c : curves) {
    if (!c.r->ok) continue;
    for (const EpochPoint& p : c.r->epochs) {
      json j = {{"bench", "schedules"},
                {"figure", "rmse"},
                {"schedule", c.schedule},
                {"workers", c.workers},
                {"servers", c.servers},
                {"epoch", p.epoch},
                {"elapsed_s", Round(p.elapsed_s)},
                {"epoch_s", Round(p.epoch_s)},
                {"test_rmse", Round(p.test_rmse, 6)}};
      if (!std::isnan(p.mbytes)) {
        j["mbytes"] = Round(p.mbytes, 4);
        j["compute_s"] = Round(p.compute_s, 4);
        j["comm_s"] = Round(p.comm_s, 4);
        j["wait_s"] = Round(p.wait_s, 4);
      }
      Emit(j);
    }
  }

  // 2. Seconds per epoch of the 2-D plan over 1, 2 and 4 workers, in rounds:
  // each round runs the serial executor and the three clusters back to back
  // (in reverse order on odd rounds), and each ratio is taken within a round,
  // so that the drift of a shared machine's speed hits both sides alike.
  struct Row {
    std::string mode;
    int workers, servers;
    std::vector<RunResult> runs;
    std::vector<double> ratios;
  };
  std::vector<Row> rows = {{"serial", 1, 0, {}, {}},
                           {"distributed", 1, 1, {}, {}},
                           {"distributed", 2, 2, {}, {}},
                           {"distributed", 4, 2, {}, {}}};
  for (int round = 0; round < o_.rounds; ++round) {
    std::vector<RunResult> got(rows.size());
    for (size_t k = 0; k < rows.size(); ++k) {
      size_t i = round % 2 ? rows.size() - 1 - k : k;
      const Row& row = rows[i];
      std::string tag = "_r" + std::to_string(round);
      if (row.mode == "serial") {
        got[i] = Serial("scale_serial" + tag, o_.scaling_epochs);
      } else {
        got[i] = Cluster(
            "scale_w" + std::to_string(row.workers) + "_s" + std::to_string(row.servers) + tag, mf_,
            {}, row.workers, row.servers, o_.scaling_epochs);
      }
    }
    record_commands_ = false;  // the later rounds repeat the same commands
    double ref = got[0].ok ? Steady(got[0], &EpochPoint::epoch_s) : NAN;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!got[i].ok) continue;
      if (!std::isnan(ref)) rows[i].ratios.push_back(Steady(got[i], &EpochPoint::epoch_s) / ref);
      rows[i].runs.push_back(std::move(got[i]));
    }
  }
  // Over a row's runs: the median of each run's steady-state figure.
  auto over_runs = [](const Row& row, double EpochPoint::*field) {
    std::vector<double> v;
    for (const RunResult& r : row.runs) v.push_back(Steady(r, field));
    return v;
  };
  for (const Row& row : rows) {
    if (row.runs.empty()) continue;
    std::vector<double> es = over_runs(row, &EpochPoint::epoch_s), first, wall;
    for (const RunResult& r : row.runs) {
      first.push_back(r.epochs[0].epoch_s);
      wall.push_back(r.wall_s);
    }
    json j = {{"bench", "schedules"},
              {"figure", "epoch_time"},
              {"mode", row.mode},
              {"schedule", row.mode == "serial" ? "serial" : "conflict_free_2d"},
              {"workers", row.workers},
              {"servers", row.servers},
              {"epoch_s", Round(Median(es), 4)},
              {"epoch_s_min", Round(*std::min_element(es.begin(), es.end()), 4)},
              {"epoch_s_max", Round(*std::max_element(es.begin(), es.end()), 4)},
              {"first_epoch_s", Round(Median(first), 4)},
              {"ratio_vs_serial", Round(Median(row.ratios), 4)},
              {"better", "lower"},
              {"rounds", row.runs.size()}};
    if (row.mode != "serial") {
      j["compute_s"] = Round(Median(over_runs(row, &EpochPoint::compute_s)), 4);
      j["comm_s"] = Round(Median(over_runs(row, &EpochPoint::comm_s)), 4);
      j["wait_s"] = Round(Median(over_runs(row, &EpochPoint::wait_s)), 4);
    }
    j["final_test_rmse"] = Round(row.runs[0].epochs.back().test_rmse, 6);
    j["process_wall_s"] = Round(Median(wall), 4);
    j["cores"] = cores;
    Emit(j);
  }

  // The table.
  std::fprintf(stderr, "schedules: MF, %lld ratings over %lld x %lld, K=16, %u core(s)%s\n",
               static_cast<long long>(spec_.count), static_cast<long long>(spec_.rows),
               static_cast<long long>(spec_.cols), cores, o_.quick ? ", --quick" : "");
  std::fprintf(stderr, "  forced data-parallel via %s\n", dp_via_.c_str());
  std::fprintf(stderr, "  %-18s %9s %12s %12s\n", "schedule (W=2,S=2)", "epochs", "final rmse",
               "s/epoch");
  for (const Curve& c : curves) {
    if (!c.r->ok) continue;
    std::fprintf(stderr, "  %-18s %9zu %12.5f %12.3f\n", c.schedule, c.r->epochs.size(),
                 c.r->epochs.back().test_rmse, Steady(*c.r, &EpochPoint::epoch_s));
  }
  std::fprintf(stderr, "  %-18s %9s %12s %12s   (medians of %d round(s))\n", "2-D epoch time",
               "workers", "s/epoch", "vs serial", o_.rounds);
  for (const Row& row : rows) {
    if (row.runs.empty()) continue;
    std::fprintf(stderr, "  %-18s %9d %12.3f %12.2f\n", row.mode.c_str(), row.workers,
                 Median(over_runs(row, &EpochPoint::epoch_s)), Median(row.ratios));
  }
  std::fprintf(stderr, "  commands:\n");
  for (const auto& c : commands_) std::fprintf(stderr, "    %s\n", c.c_str());
  std::fprintf(stderr, "  total %.1f s\n", Secs(t_start));

  if (failed_) {
    std::fprintf(stderr, "schedules: some runs failed; their logs are kept in %s\n", runs_.c_str());
    return 1;
  }
  if (!o_.keep) fs::remove_all(runs_, ec);
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: schedules [--quick] [--epochs N] [--scaling-epochs N] [--rounds N]\n"
               "                 [--timeout SECONDS] [--work-dir DIR] [--bin-dir DIR]\n"
               "                 [--source-dir DIR] [--keep]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool epochs_set = false, scaling_set = false, rounds_set = false;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  o.bin_dir = ec ? fs::path(RIGEL_BIN_DIR) : self.parent_path();
  o.source_dir = RIGEL_SOURCE_DIR;
  o.work_dir = fs::temp_directory_path() / "rigel_bench_schedules";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    auto number = [&](int* out) {
      auto v = value();
      if (!v) return false;
      char* end = nullptr;
      long n = std::strtol(v->c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 1000) return false;
      *out = static_cast<int>(n);
      return true;
    };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--epochs") {
      if (!number(&o.epochs)) return Usage();
      epochs_set = true;
    } else if (a == "--timeout") {
      if (!number(&o.timeout_s)) return Usage();
    } else if (a == "--rounds") {
      if (!number(&o.rounds)) return Usage();
      rounds_set = true;
    } else if (a == "--scaling-epochs") {
      if (!number(&o.scaling_epochs)) return Usage();
      scaling_set = true;
    } else if (a == "--work-dir" || a == "--bin-dir" || a == "--source-dir") {
      auto v = value();
      if (!v) return Usage();
      fs::path p = fs::absolute(*v);
      (a == "--work-dir" ? o.work_dir : a == "--bin-dir" ? o.bin_dir : o.source_dir) = p;
    } else {
      return Usage();
    }
  }
  if (o.quick) {
    if (!epochs_set) o.epochs = 4;
    if (!scaling_set) o.scaling_epochs = 3;
    if (!rounds_set) o.rounds = 1;
  }
  return Bench(std::move(o)).Main();
}
