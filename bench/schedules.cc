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
//  - figure "checkpoint": the 2-D plan on 2 workers and 2 servers with a
//    checkpoint after every epoch against the same run without, in pairs
//    whose order alternates (bench/schedules_checkpoint.cc); `--figure NAME`
//    runs one figure alone.
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
#include "bench/schedules.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace rigel::bench::schedules {
namespace {

using json = nlohmann::ordered_json;

// `x` rounded to `digits` significant digits, so the JSON stays readable.
double Round(double x, int digits = 5) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return std::strtod(buf, nullptr);
}

bool WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// Over a row's runs: the median of each run's steady-state figure.
std::vector<double> OverRuns(const Row& row, double EpochPoint::*field) {
  std::vector<double> v;
  for (const RunResult& r : row.runs) v.push_back(Steady(r, field));
  return v;
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median over the epochs after the first (all of them if there is one).
double Steady(const RunResult& r, double EpochPoint::*field) {
  std::vector<double> v;
  for (size_t e = r.epochs.size() > 1 ? 1 : 0; e < r.epochs.size(); ++e) {
    v.push_back(r.epochs[e].*field);
  }
  return Median(v);
}

void Bench::Emit(const json& j) {
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

bool Bench::Setup() {
  std::error_code ec;
  fs::create_directories(o_.work_dir, ec);
  if (ec) {
    std::fprintf(stderr, "schedules: cannot make %s: %s\n", o_.work_dir.c_str(),
                 ec.message().c_str());
    return false;
  }
  runs_ = o_.work_dir / ("runs-" + std::to_string(::getpid()));
  fs::create_directories(runs_);
  return MakeData() && MakePlans();
}

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

ProcResult Bench::Rigel(std::vector<std::string> args, const std::string& tag) {
  args.insert(args.begin(), Bin("rigel").string());
  commands_.push_back(Join(args));
  return Run(args, runs_ / (tag + ".out"), runs_ / (tag + ".err"), 120);
}

std::vector<std::string> Bench::WithData(std::vector<std::string> args) const {
  args.push_back("--set");
  args.push_back("ratings.path=" + data_.string());
  return args;
}

bool Bench::DescribePlan(const fs::path& plan_file, const std::string& schedule,
                         const std::string& via) {
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

  // The plan Rigel chooses, for 2 workers (what the rmse runs use).
  fs::path plan2d = runs_ / "plan_2d.json";
  ProcResult r =
      Rigel(WithData({"plan", mf_.string(), "--workers", "2", "-o", plan2d.string()}), "plan_2d");
  if (r.rc != 0) {
    std::fprintf(stderr, "schedules: rigel plan failed:\n%s",
                 ReadFile(runs_ / "plan_2d.err").c_str());
    return false;
  }
  if (!DescribePlan(plan2d, "conflict_free_2d", "automatic")) return false;
  if (TryEditedPlan(plan2d)) return DescribePlan(plan_dp_, "data_parallel", dp_via_);
  return MakeRelaxedProgram(std::move(text));
}

// First try: the same plan, loop 0 edited to data-parallel.
bool Bench::TryEditedPlan(const fs::path& plan2d) {
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
  ProcResult r =
      Rigel(WithData({"explain", mf_.string(), "--workers", "2", "--plan", edited.string()}),
            "explain_dp");
  if (r.rc == 0) {
    dp_via_ = "plan_file";
    mf_dp_ = mf_;
    plan_dp_ = edited;
    return true;
  }
  refusal_ = ReadFile(runs_ / "explain_dp.err");
  while (!refusal_.empty() && (refusal_.back() == '\n' || refusal_.back() == ' ')) {
    refusal_.pop_back();
  }
  std::fprintf(stderr, "schedules: the edited plan is refused (%s); using `relax W, H` instead\n",
               refusal_.c_str());
  return false;
}

// Second: the program with `relax W, H` on its training loop.
bool Bench::MakeRelaxedProgram(std::string text) {
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
  ProcResult r = Rigel(
      WithData({"plan", mf_dp_.string(), "--workers", "2", "-o", auto_dp.string()}), "plan_relax");
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
  return DescribePlan(auto_dp, "data_parallel", dp_via_);
}

int Bench::Main() {
  auto t_start = Clock::now();
  const unsigned cores = std::thread::hardware_concurrency();
  if (!Setup()) return 1;
  EmitSetup(cores);
  std::vector<Curve> curves;
  std::vector<Row> rows;
  if (o_.figure.empty() || o_.figure == "rmse") curves = RmseRuns();
  for (const Curve& c : curves) EmitRmse(c);
  if (o_.figure.empty() || o_.figure == "epoch_time") rows = ScalingRuns();
  for (const Row& row : rows) EmitEpochTime(row, cores);
  PrintTable(curves, rows, cores, t_start);
  if (o_.figure.empty() || o_.figure == "checkpoint") CheckpointRuns();
  if (failed_) {
    std::fprintf(stderr, "schedules: some runs failed; their logs are kept in %s\n", runs_.c_str());
    return 1;
  }
  std::error_code ec;
  if (!o_.keep) fs::remove_all(runs_, ec);
  return 0;
}

void Bench::EmitSetup(unsigned cores) {
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
}

// 1. RMSE per epoch: serial reference, 2-D and forced data-parallel.
std::vector<Curve> Bench::RmseRuns() {
  std::vector<Curve> curves;
  curves.push_back({"serial", Serial("serial", o_.epochs), 1, 0});
  curves.push_back({"conflict_free_2d", Cluster("cf2d_w2_s2", mf_, {}, 2, 2, o_.epochs), 2, 2});
  curves.push_back({"data_parallel", Cluster("dp_w2_s2", mf_dp_, plan_dp_, 2, 2, o_.epochs), 2, 2});
  return curves;
}

void Bench::EmitRmse(const Curve& c) {
  if (!c.r.ok) return;
  for (const EpochPoint& p : c.r.epochs) {
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
std::vector<Row> Bench::ScalingRuns() {
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
  return rows;
}

void Bench::EmitEpochTime(const Row& row, unsigned cores) {
  if (row.runs.empty()) return;
  std::vector<double> es = OverRuns(row, &EpochPoint::epoch_s), first, wall;
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
    j["compute_s"] = Round(Median(OverRuns(row, &EpochPoint::compute_s)), 4);
    j["comm_s"] = Round(Median(OverRuns(row, &EpochPoint::comm_s)), 4);
    j["wait_s"] = Round(Median(OverRuns(row, &EpochPoint::wait_s)), 4);
  }
  j["final_test_rmse"] = Round(row.runs[0].epochs.back().test_rmse, 6);
  j["process_wall_s"] = Round(Median(wall), 4);
  j["cores"] = cores;
  Emit(j);
}

void Bench::PrintTable(const std::vector<Curve>& curves, const std::vector<Row>& rows,
                       unsigned cores, Clock::time_point start) {
  std::fprintf(stderr, "schedules: MF, %lld ratings over %lld x %lld, K=16, %u core(s)%s\n",
               static_cast<long long>(spec_.count), static_cast<long long>(spec_.rows),
               static_cast<long long>(spec_.cols), cores, o_.quick ? ", --quick" : "");
  std::fprintf(stderr, "  forced data-parallel via %s\n", dp_via_.c_str());
  std::fprintf(stderr, "  %-18s %9s %12s %12s\n", "schedule (W=2,S=2)", "epochs", "final rmse",
               "s/epoch");
  for (const Curve& c : curves) {
    if (!c.r.ok) continue;
    std::fprintf(stderr, "  %-18s %9zu %12.5f %12.3f\n", c.schedule, c.r.epochs.size(),
                 c.r.epochs.back().test_rmse, Steady(c.r, &EpochPoint::epoch_s));
  }
  std::fprintf(stderr, "  %-18s %9s %12s %12s   (medians of %d round(s))\n", "2-D epoch time",
               "workers", "s/epoch", "vs serial", o_.rounds);
  for (const Row& row : rows) {
    if (row.runs.empty()) continue;
    std::fprintf(stderr, "  %-18s %9d %12.3f %12.2f\n", row.mode.c_str(), row.workers,
                 Median(OverRuns(row, &EpochPoint::epoch_s)), Median(row.ratios));
  }
  std::fprintf(stderr, "  commands:\n");
  for (const auto& c : commands_) std::fprintf(stderr, "    %s\n", c.c_str());
  std::fprintf(stderr, "  total %.1f s\n", Secs(start));
}

namespace {

int Usage() {
  std::fprintf(
      stderr,
      "usage: schedules [--quick] [--epochs N] [--scaling-epochs N] [--rounds N]\n"
      "                 [--timeout SECONDS] [--work-dir DIR] [--bin-dir DIR]\n"
      "                 [--source-dir DIR] [--keep] [--figure rmse|epoch_time|checkpoint]\n");
  return 2;
}

}  // namespace
}  // namespace rigel::bench::schedules

using rigel::bench::schedules::Bench;
using rigel::bench::schedules::Options;
using rigel::bench::schedules::Usage;

int main(int argc, char** argv) {
  Options o;
  bool epochs_set = false, scaling_set = false, rounds_set = false;
  // Rigel's binaries beside build/bench/ (a moved build tree), else where
  // this one was built.
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path beside = ec ? fs::path() : self.parent_path().parent_path() / "bin";
  o.bin_dir = !beside.empty() && fs::exists(beside / "rigel") ? beside : fs::path(RIGEL_BIN_DIR);
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
    } else if (a == "--figure") {
      auto v = value();
      if (!v || (*v != "rmse" && *v != "epoch_time" && *v != "checkpoint")) return Usage();
      o.figure = *v;
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
