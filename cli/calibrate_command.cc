// `rigel calibrate`: measures the cost model's machine constants here. It
// generates small data sets, runs five example programs (2-D, 1-D, relaxed
// rows through the caches, all-reduce, sums through the servers) on a local
// cluster, counts the same epochs with the cost probe, and fits the
// constants to the measured epochs (analysis::FitConstants). It prints each
// program's predicted epoch before and after the fit against the measured
// one, and writes the constants where `rigel explain --cost` reads them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/plan.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "cli/constants_file.h"
#include "cli/trial_run.h"
#include "common/file.h"
#include "examples/generators.h"
#include "exec/cost_probe.h"

namespace rigel::cli {
namespace {

namespace fs = std::filesystem;

struct CalibrateArgs {
  int workers = 2;
  int servers = 2;
  int epochs = 6;
  std::string out;
  std::string work_dir;
  bool keep = false;
};

struct Program {
  std::string name, file;
  std::vector<std::string> sets;
};

// The small data sets the programs read, in `dir`.
Status MakeData(const std::string& dir) {
  examples::RatingsOptions r;
  r.out = dir + "/ratings.csv";
  r.count = 200000;
  RIGEL_RETURN_IF_ERROR(examples::GenerateRatings(r).status());
  examples::SparseOptions s;
  s.out = dir + "/train.svm";
  s.test_out = dir + "/test.svm";
  s.count = 30000;
  s.test_count = 5000;
  RIGEL_RETURN_IF_ERROR(examples::GenerateSparse(s).status());
  examples::DenseOptions d;
  d.out = dir + "/dense.csv";
  RIGEL_RETURN_IF_ERROR(examples::GenerateDense(d).status());
  examples::ClustersOptions c;
  c.out = dir + "/points.csv";
  return examples::GenerateClusters(c).status();
}

std::vector<Program> Programs(const std::string& dir, int epochs) {
  const std::string ex = std::string(RIGEL_SOURCE_DIR) + "/examples/";
  const std::string e = "EPOCHS=" + std::to_string(epochs);
  return {
      {"mf", ex + "mf.rgl", {e, "ratings.path=" + dir + "/ratings.csv"}},
      {"bias", ex + "bias.rgl", {e, "ratings.path=" + dir + "/ratings.csv"}},
      {"sparse_lr",
       ex + "sparse_lr.rgl",
       {e, "train.path=" + dir + "/train.svm", "test.path=" + dir + "/test.svm"}},
      {"dense_lr", ex + "dense_lr.rgl", {e, "d.path=" + dir + "/dense.csv"}},
      {"kmeans",
       ex + "kmeans.rgl",
       {"ITERS=" + std::to_string(epochs), "pts.path=" + dir + "/points.csv"}},
  };
}

struct Measured {
  std::string name;
  std::vector<analysis::Observation> obs;
};

// Counts and runs one program; appends its epochs after the first.
Status Measure(const CalibrateArgs& a, const std::string& dir, const Program& p, Measured* m) {
  int code = 0;
  auto prog = CompileProgram(p.file, p.sets, &code);
  if (!prog) return InvalidArgument(p.file + " does not compile (above)");
  RIGEL_ASSIGN_OR_RETURN(analysis::Plan plan, analysis::MakePlan(*prog, {a.workers}));
  exec::ProbeOptions po;
  po.workers = a.workers;
  po.servers = a.servers;
  po.epochs = a.epochs;
  RIGEL_ASSIGN_OR_RETURN(exec::ProbeResult counted, exec::ProbeCost(*prog, plan, po));
  const std::string log = dir + "/" + p.name + ".jsonl";
  std::vector<std::string> args = {"run",        p.file,
                                   "--workers",  std::to_string(a.workers),
                                   "--servers",  std::to_string(a.servers),
                                   "--log-json", log,
                                   "--run-dir",  dir + "/" + p.name + ".run"};
  for (const std::string& s : p.sets) args.insert(args.end(), {"--set", s});
  const int rc = RunSelf(args, dir + "/" + p.name + ".out");
  if (rc != 0) {
    return Internal("the run of " + p.name + " failed (exit " + std::to_string(rc) + "); see " +
                    dir + "/" + p.name + ".out");
  }
  const std::vector<double> secs = EpochSeconds(log);
  for (size_t e = 1; e < secs.size() && e < counted.epochs.size(); ++e) {
    m->obs.push_back({counted.epochs[e].runs, a.servers, secs[e]});
  }
  return Status::Ok();
}

void Report(const std::vector<Measured>& all, const analysis::CostConstants& before,
            const analysis::CostConstants& after) {
  std::printf("%-10s %12s %12s %12s\n", "program", "measured_s", "defaults_s", "fitted_s");
  for (const Measured& m : all) {
    std::vector<double> meas;
    for (const analysis::Observation& o : m.obs) meas.push_back(o.measured_s);
    std::printf("%-10s %12.5f %12.5f %12.5f\n", m.name.c_str(), Median(meas),
                MedianPrediction(m.obs, before), MedianPrediction(m.obs, after));
  }
}

int Calibrate(const CalibrateArgs& a) {
  std::string dir = a.work_dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/rigel-calibrate-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::cerr << "rigel calibrate: cannot make a work directory under /tmp\n";
      return 1;
    }
    dir = tmpl;
  } else {
    fs::create_directories(dir);
  }
  std::cerr << "rigel calibrate: data and logs in " << dir << "\n";
  if (Status st = MakeData(dir); !st.ok()) {
    std::cerr << "rigel calibrate: " << st.message() << "\n";
    return 1;
  }
  std::vector<Measured> all;
  std::vector<analysis::Observation> obs;
  for (const Program& p : Programs(dir, a.epochs)) {
    std::cerr << "rigel calibrate: " << p.name << " on " << a.workers << " workers and "
              << a.servers << " servers\n";
    Measured m{p.name, {}};
    if (Status st = Measure(a, dir, p, &m); !st.ok()) {
      std::cerr << "rigel calibrate: " << st.message() << "\n";
      return 1;
    }
    obs.insert(obs.end(), m.obs.begin(), m.obs.end());
    all.push_back(std::move(m));
  }
  const analysis::CostConstants before;
  auto fitted = analysis::FitConstants(obs, before);
  if (!fitted.ok()) {
    std::cerr << "rigel calibrate: " << fitted.status().message() << "\n";
    return 1;
  }
  Report(all, before, *fitted);
  const std::string out = a.out.empty() ? DefaultConstantsPath() : a.out;
  std::error_code ec;
  fs::create_directories(fs::path(out).parent_path(), ec);
  if (Status st = WriteFileAtomically(out, analysis::ConstantsToJson(*fitted)); !st.ok()) {
    std::cerr << "rigel calibrate: " << st.message() << "\n";
    return 1;
  }
  std::cout << "wrote " << out << ":\n" << analysis::ConstantsToJson(*fitted);
  if (!a.keep && a.work_dir.empty()) fs::remove_all(dir, ec);
  return 0;
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "measure the cost model's machine constants here (docs/planner.md): run five example "
      "programs on a local cluster and fit the constants to their epochs");
  cmd->add_option("--workers,-P", args->workers, "workers of the local cluster")
      ->default_val(2)
      ->check(CLI::Range(1, 64));
  cmd->add_option("--servers", args->servers, "servers of the local cluster")
      ->default_val(2)
      ->check(CLI::Range(1, 64));
  cmd->add_option("--epochs", args->epochs, "epochs each program runs (the first is not fitted)")
      ->default_val(6)
      ->check(CLI::Range(2, 100));
  cmd->add_option("-o,--output", args->out,
                  "where to write the constants (default: " + DefaultConstantsPath() + ")");
  cmd->add_option("--work-dir", args->work_dir, "where the data and logs go (kept)");
  cmd->add_flag("--keep", args->keep, "keep the temporary data and logs");
  cmd->callback([args, exit_code] { *exit_code = Calibrate(*args); });
}

}  // namespace rigel::cli
