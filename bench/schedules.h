// What the two files of the schedules bench share: bench/schedules.cc makes
// the data and the plans and reports the figures; bench/schedules_runs.cc runs
// processes (`rigel`, the serial executor, a local cluster) and reads what
// they print. Not thread-safe: the bench runs one thing at a time.
#ifndef RIGEL_BENCH_SCHEDULES_H_
#define RIGEL_BENCH_SCHEDULES_H_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bench/proc.h"

namespace rigel::bench::schedules {

using bench::Clock;
using bench::Join;
using bench::ProcResult;
using bench::ReadFile;
using bench::Run;
using bench::Secs;
using bench::Tail;

struct Options {
  bool quick = false;
  bool keep = false;
  int epochs = 10;         // rmse runs and the serial reference
  int scaling_epochs = 6;  // epoch_time runs
  int rounds = 3;          // of the epoch_time runs
  int timeout_s = 0;       // per run; 0: 60 s + 30 s per epoch
  std::string figure;      // only this figure (rmse, epoch_time, checkpoint); empty: all
  std::filesystem::path work_dir, bin_dir, source_dir;
};

struct DataSpec {
  int64_t rows, cols, count;
};

struct EpochPoint {
  int epoch = 0;
  double test_rmse = NAN, elapsed_s = NAN, epoch_s = NAN;
  double compute_s = NAN, comm_s = NAN, wait_s = NAN, mbytes = NAN;
  double cpu_s = NAN;  // CPU seconds of the job's processes in the epoch
};

struct RunResult {
  bool ok = false;
  std::vector<EpochPoint> epochs;
  double wall_s = 0;  // of the whole process (start-up and loading included)
};

// One curve of the "rmse" figure.
struct Curve {
  const char* schedule;
  RunResult r;
  int workers, servers;
};

// One row of the "epoch_time" figure: its runs over the rounds, and per
// round its steady epoch time over the serial executor's.
struct Row {
  std::string mode;
  int workers, servers;
  std::vector<RunResult> runs;
  std::vector<double> ratios;
};

// The median of `v` (NAN when empty), and of a run's epochs after the first.
double Median(std::vector<double> v);
double Steady(const RunResult& r, double EpochPoint::*field);

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {}
  int Main();

 private:
  using json = nlohmann::ordered_json;

  std::filesystem::path Bin(const char* name) const { return o_.bin_dir / name; }
  // The work and run directories, the data and the plans; false after
  // reporting why not.
  bool Setup();
  bool MakeData();
  bool MakePlans();
  // `rigel args...` with its output in runs_/tag.out and runs_/tag.err.
  ProcResult Rigel(std::vector<std::string> args, const std::string& tag);
  // args with the data path set.
  std::vector<std::string> WithData(std::vector<std::string> args) const;
  // Emits the "plan" figure of a plan file.
  bool DescribePlan(const std::filesystem::path& plan_file, const std::string& schedule,
                    const std::string& via);
  // The data-parallel plan as an edit of `plan2d`: true if `rigel explain
  // --plan` accepts it, else its refusal is kept in refusal_.
  bool TryEditedPlan(const std::filesystem::path& plan2d);
  // The data-parallel plan from a copy of the program (`text`) with `relax W, H`.
  bool MakeRelaxedProgram(std::string text);
  std::vector<std::string> Sets(int epochs) const {
    return {"--set", "ratings.path=" + data_.string(), "--set", "EPOCHS=" + std::to_string(epochs)};
  }
  RunResult Serial(const std::string& name, int epochs);
  // `extra`: more scheduler flags.
  RunResult Cluster(const std::string& name, const std::filesystem::path& program,
                    const std::filesystem::path& plan, int workers, int servers, int epochs,
                    const std::vector<std::string>& extra = {});
  void Fail(const std::string& what, const std::filesystem::path& dir, const ProcResult& r,
            const std::filesystem::path& err);
  static std::vector<std::pair<int, double>> ParseRmse(const std::string& out);
  // The figures, and the table on stderr.
  void EmitSetup(unsigned cores);
  std::vector<Curve> RmseRuns();
  void EmitRmse(const Curve& c);
  std::vector<Row> ScalingRuns();
  void EmitEpochTime(const Row& row, unsigned cores);
  // 3. Checkpoint overhead (bench/schedules_checkpoint.cc).
  void CheckpointRuns();
  void PrintTable(const std::vector<Curve>& curves, const std::vector<Row>& rows, unsigned cores,
                  Clock::time_point start);
  void Emit(const json& j);

  Options o_;
  DataSpec spec_{};
  std::filesystem::path data_, runs_, mf_, mf_dp_, plan_dp_;
  std::string dp_via_, refusal_;
  json data_info_ = json::object();
  bool failed_ = false;
  bool record_commands_ = true;
  std::vector<std::string> commands_;
};

}  // namespace rigel::bench::schedules

#endif  // RIGEL_BENCH_SCHEDULES_H_
