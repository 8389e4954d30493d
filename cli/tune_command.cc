// `rigel tune`: trial runs of the plans the cost model ranks best. It
// predicts every plan that differs from Rigel's in one loop's schedule (the
// legal candidates; none trades quality for speed, docs/planner.md) and, for
// a program with relaxed loops, Rigel's plan with one relaxed setting
// changed (these do trade quality, so every trial of such a program is held
// to DSL.md version 3's rule against a serial run: cli/quality_rule.h), runs
// the most promising ones on a local cluster for a few epochs each, in
// rounds, within a time budget, refits the machine constants from what it
// measured (analysis::FitConstants), and writes the plan that ran fastest
// for `rigel run --plan`. It says what it tried, what each cost, and how far
// the predictions were from the measurements before and after the refit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/plan.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "cli/constants_file.h"
#include "cli/plan_cost.h"
#include "cli/quality_rule.h"
#include "cli/trial_run.h"
#include "common/file.h"
#include "exec/cost_probe.h"

namespace rigel::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A plan replaces Rigel's only when it ran this much faster: trials of a
// few epochs differ by more than a few percent on a busy machine.
constexpr double kClearlyFaster = 0.95;
// Rounds when the budget decides.
constexpr int kMaxRounds = 20;

struct TuneArgs {
  std::string path;
  std::vector<std::string> sets;
  int workers = 2;
  int servers = 2;
  double budget_s = 60;
  int epochs = 3;  // per trial; the first is not measured
  int trials = 4;  // plans at most, Rigel's first, then the predicted best
  int rounds = 0;  // trials of each plan, in turn (their median counts); 0: what the budget allows

  std::string out;
  std::string constants;
  std::string save_constants;
  std::string work_dir;
};

struct Trial {
  size_t variant = 0;
  double predicted_s = 0;
  double wall_s = 0;           // the longest trial, start to end
  std::vector<double> rounds;  // each trial's median epoch after the first
  double measured_s = 0;       // the median of the rounds
  double refit_s = 0;
  std::vector<analysis::Observation> obs;
  std::map<std::string, double> printed;  // the last epoch's printed numbers (first round)
  // Why the plan cannot be chosen, in words; empty: it can. A program with
  // no relaxed loop: its printed numbers differ from Rigel's plan's. One
  // with relaxed loops: they are outside the quality rule against a serial
  // run of as many epochs (cli/quality_rule.h).
  std::string differs;
};

// Every candidate computes what Rigel's plan computes, in another order:
// printed numbers may differ by float rounding, no more. A plan whose
// numbers differ by more is never chosen (and is a bug to report).
constexpr double kSameNumbers = 1e-3;

// "" when `got` prints what `want` prints within kSameNumbers, else the first
// difference in words.
std::string Differs(const std::map<std::string, double>& want,
                    const std::map<std::string, double>& got) {
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end()) return name + " not printed";
    if (std::abs(it->second - w) > kSameNumbers * std::max(1.0, std::abs(w))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s %.6g against %.6g", name.c_str(), it->second, w);
      return buf;
    }
  }
  return "";
}

std::string Describe(const PlanVariant& v) {
  if (v.loop >= 0) return "loop " + std::to_string(v.loop) + " as " + v.schedule;
  return v.plan.settings.any() ? "Rigel's plan with " + v.plan.settings.Flags() : "Rigel's plan";
}

// The command line of a run of the program (`plan` empty: serially) for
// `epochs` epochs (0: the whole run), logging to base + ".jsonl".
std::vector<std::string> RunArgs(const TuneArgs& a, const std::string& plan, int epochs,
                                 const std::string& base) {
  std::vector<std::string> args = {"run", a.path, "--log-json", base + ".jsonl"};
  if (!plan.empty()) {
    args.insert(args.end(),
                {"--workers", std::to_string(a.workers), "--servers", std::to_string(a.servers),
                 "--plan", plan, "--run-dir", base + ".run"});
  }
  if (epochs > 0) args.insert(args.end(), {"--stop-after-epochs", std::to_string(epochs)});
  for (const std::string& s : a.sets) args.insert(args.end(), {"--set", s});
  return args;
}

// Runs variant `v` for a.epochs epochs; adds a round to t's measurements.
Status RunTrial(const TuneArgs& a, const std::string& dir, const ir::Program& prog,
                const PlanVariant& v, const exec::ProbeResult& counted, size_t index, Trial* t) {
  const std::string base =
      dir + "/trial-" + std::to_string(index) + "-" + std::to_string(t->rounds.size());
  RIGEL_RETURN_IF_ERROR(
      WriteFileAtomically(base + ".plan.json", analysis::PlanToJson(prog, v.plan)));
  const std::vector<std::string> args = RunArgs(a, base + ".plan.json", a.epochs, base);
  if (const int rc = RunSelf(args, base + ".out"); rc != 0) {
    return Internal("the trial of " + Describe(v) + " failed (exit " + std::to_string(rc) +
                    "); see " + base + ".out");
  }
  const std::vector<double> secs = EpochSeconds(base + ".jsonl");
  std::vector<double> later(secs.begin() + std::min<size_t>(1, secs.size()), secs.end());
  if (later.empty()) later = secs;
  if (t->rounds.empty()) t->printed = LastPrinted(base + ".jsonl");
  t->rounds.push_back(Median(later));
  t->measured_s = TrimmedMean(t->rounds);
  for (size_t e = 1; e < secs.size() && e < counted.epochs.size(); ++e) {
    t->obs.push_back({counted.epochs[e].runs, a.servers, secs[e]});
  }
  return Status::Ok();
}

// A serial run of the program: what it printed last, how many epochs the
// whole run has, and how long the run took.
struct SerialRun {
  std::map<std::string, double> printed;
  int whole_epochs = 0;
  double wall_s = 0;
};

// Runs the program serially for `epochs` epochs (0: the whole run).
StatusOr<SerialRun> RunSerial(const TuneArgs& a, const std::string& base, int epochs) {
  const auto start = Clock::now();
  if (const int rc = RunSelf(RunArgs(a, "", epochs, base), base + ".out"); rc != 0) {
    return Internal("the serial run failed (exit " + std::to_string(rc) + "); see " + base +
                    ".out");
  }
  SerialRun r;
  r.printed = LastPrinted(base + ".jsonl");
  r.whole_epochs = WholeEpochs(base + ".jsonl");
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

// Rounds over every plan in turn, so that a slow spell of the machine falls
// on all of them, each round starting one plan later than the last, so that
// no plan always runs first; no trial starts that would end past the budget,
// and a plan that got no trial is dropped.
Status RunRounds(const TuneArgs& a, const std::string& dir, const ir::Program& prog,
                 const std::vector<PlanVariant>& variants,
                 const std::vector<exec::ProbeResult>& counted, const Clock::time_point start,
                 std::vector<Trial>* trials) {
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double longest = 0;
  const int rounds = a.rounds > 0 ? a.rounds : kMaxRounds;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < trials->size(); ++k) {
      if ((r > 0 || k > 0) && elapsed() + longest > a.budget_s) {
        std::cerr << "rigel tune: the budget of " << a.budget_s << " s is spent in round " << r + 1
                  << "\n";
        if (r == 0) trials->resize(k);
        return Status::Ok();
      }
      const size_t plan = (k + static_cast<size_t>(r)) % trials->size();
      Trial& t = (*trials)[plan];
      if (r == 0) std::cerr << "rigel tune: trying " << Describe(variants[t.variant]) << "\n";
      const double before = elapsed();
      RIGEL_RETURN_IF_ERROR(
          RunTrial(a, dir, prog, variants[t.variant], counted[t.variant], plan, &t));
      longest = std::max(longest, elapsed() - before);
      t.wall_s = std::max(t.wall_s, elapsed() - before);
    }
  }
  return Status::Ok();
}

int Fail(const Status& st) {
  std::cerr << "rigel tune: " << st.message() << "\n";
  return 1;
}

// The fastest trial that may be chosen: one whose numbers hold (`differs`
// empty) and that ran clearly faster than Rigel's plan (trial 0); else 0.
size_t Fastest(const std::vector<Trial>& trials) {
  size_t best = 0;
  for (size_t i = 1; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    if (t.differs.empty() && t.measured_s < trials[best].measured_s &&
        t.measured_s < kClearlyFaster * trials[0].measured_s) {
      best = i;
    }
  }
  return best;
}

// Prints the trials and writes the plan that ran fastest; returns the exit
// code. `serial`: a relaxed program's serial run of as many epochs as a
// trial (null: the program's trials are held to Rigel's plan's numbers).
// `whole`: why a trial with relaxed settings may not be chosen after a run
// of the whole program ("" when it may).
int Report(const TuneArgs& a, const ir::Program& prog, const std::vector<PlanVariant>& variants,
           std::vector<Trial>* trials, const analysis::CostConstants& refit,
           Clock::time_point start, const std::string& dir, const SerialRun* serial,
           const std::function<std::string(const Trial&)>& whole) {
  // After a trial's few epochs a relaxed run may still trail the serial
  // run by more than the rule allows at its end (fm: Rigel's plan 3 points
  // below after 3 of 5 epochs). Then the others are held to Rigel's plan's
  // numbers by the same margins, and the whole-run check below holds a
  // setting to the serial run.
  const bool rigels_outside =
      serial != nullptr && !OutsideQualityRule(serial->printed, (*trials)[0].printed).empty();
  for (size_t i = 0; i < trials->size(); ++i) {
    Trial& t = (*trials)[i];
    if (serial == nullptr) {
      t.differs = Differs((*trials)[0].printed, t.printed);
    } else if (std::string why = OutsideQualityRule(serial->printed, t.printed); !why.empty()) {
      const bool as_rigels =
          i > 0 && rigels_outside && OutsideQualityRule((*trials)[0].printed, t.printed).empty();
      if (!as_rigels) t.differs = "after " + std::to_string(a.epochs) + " epochs, " + why;
    }
    t.refit_s = MedianPrediction(t.obs, refit);
  }
  // A setting that won its trials is run whole beside a whole serial run
  // before it is written: a few epochs need not show where a relaxed run ends.
  size_t best = Fastest(*trials);
  std::string checked;
  while (best != 0 && variants[(*trials)[best].variant].plan.settings.any()) {
    checked = whole((*trials)[best]);
    if (checked.empty()) break;
    (*trials)[best].differs = checked;
    best = Fastest(*trials);
  }
  std::printf("%-60s %11s %11s %11s %6s\n", "plan (epochs after the first)", "predicted_s",
              "measured_s", "refit_s", "rounds");
  for (const Trial& t : *trials) {
    std::printf("%-60s %11.5f %11.5f %11.5f %6zu\n",
                Describe(variants[t.variant]).substr(0, 60).c_str(), t.predicted_s, t.measured_s,
                t.refit_s, t.rounds.size());
  }
  for (size_t i = 0; i < trials->size(); ++i) {
    const Trial& t = (*trials)[i];
    if (t.differs.empty()) continue;
    const std::string name = Describe(variants[t.variant]);
    if (serial == nullptr) {
      std::printf(
          "not chosen: %s printed other numbers than Rigel's plan after %d epochs (%s): its "
          "schedule runs the elements in another order, and tune chooses only among plans that "
          "print what Rigel's plan prints\n",
          name.c_str(), a.epochs, t.differs.c_str());
    } else if (i == 0) {
      std::printf(
          "outside the quality rule: Rigel's plan itself, %s (DSL.md version 3: within 2 points "
          "of accuracy or 2%% of loss of the serial run, at the end of a run); tune holds the "
          "others' trials to Rigel's plan's numbers by the same margins, and a setting's whole "
          "run to the serial run's\n",
          t.differs.c_str());
    } else {
      std::printf(
          "not chosen: %s: %s (DSL.md version 3: within 2 points of accuracy or 2%% of loss of "
          "the serial run)\n",
          name.c_str(), t.differs.c_str());
    }
  }
  const Trial& w = (*trials)[best];
  if (best != 0 && variants[w.variant].plan.settings.any() && serial != nullptr &&
      serial->whole_epochs > a.epochs) {
    std::printf("checked: %s over the whole run (%d epochs) is within the quality rule\n",
                Describe(variants[w.variant]).c_str(), serial->whole_epochs);
  }
  const std::string out = a.out.empty() ? fs::path(a.path).stem().string() + ".plan.json" : a.out;
  if (Status st = WriteFileAtomically(out, analysis::PlanToJson(prog, variants[w.variant].plan));
      !st.ok()) {
    return Fail(st);
  }
  std::printf(
      "fastest: %s, %.5f s per epoch (Rigel's plan: %.5f s, %.2fx; another plan must be 5%% "
      "faster); wrote %s for `rigel run --plan`\n",
      Describe(variants[w.variant]).c_str(), w.measured_s, (*trials)[0].measured_s,
      (*trials)[0].measured_s / w.measured_s, out.c_str());
  if (!a.save_constants.empty()) {
    if (Status st = WriteFileAtomically(a.save_constants, analysis::ConstantsToJson(refit));
        !st.ok()) {
      return Fail(st);
    }
    std::printf("wrote the refitted constants to %s\n", a.save_constants.c_str());
  }
  std::printf("%.1f s in all; trials in %s\n",
              std::chrono::duration<double>(Clock::now() - start).count(), dir.c_str());
  return 0;
}

int Tune(const TuneArgs& a) {
  const auto start = Clock::now();
  int code = 0;
  auto prog = CompileProgram(a.path, a.sets, &code);
  if (!prog) return code;
  auto plan = analysis::MakePlan(*prog, {a.workers});
  if (!plan.ok()) return Fail(plan.status());
  std::string source;
  auto constants = LoadConstants(a.constants, &source);
  if (!constants.ok()) return Fail(constants.status());
  std::string dir = a.work_dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/rigel-tune-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Fail(IoError("cannot make a work directory under /tmp"));
    dir = tmpl;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  // A relaxed program's trials are held to the quality rule against a serial
  // run of as many epochs; one that prints no measure of quality is held to
  // Rigel's plan's numbers as an exact one is, and gets no settings to try.
  SerialRun serial;
  if (ProgramRelaxes(*prog)) {
    std::cerr << "rigel tune: running the program serially for " << a.epochs
              << " epochs, the quality every trial is held to\n";
    auto got = RunSerial(a, dir + "/serial", a.epochs);
    if (!got.ok()) return Fail(got.status());
    serial = *std::move(got);
  }
  std::vector<PlanVariant> variants = PlanVariants(*prog, *plan);
  const bool measured = HasQualityMeasure(serial.printed);
  if (measured) {
    for (PlanVariant& v : SettingsVariants(*plan)) variants.push_back(std::move(v));
  }
  std::vector<analysis::Plan> plans;
  for (const PlanVariant& v : variants) plans.push_back(v.plan);
  exec::ProbeOptions po;
  po.workers = a.workers;
  po.servers = a.servers;
  po.epochs = a.epochs;
  po.constants = *constants;
  std::cerr << "rigel tune: predicting " << variants.size() << " plan(s) (constants: " << source
            << ")\n";
  auto counted = exec::ProbeCosts(*prog, plans, po);
  if (!counted.ok()) return Fail(counted.status());
  // Rigel's plan is always tried (the others are measured against it), then
  // the predicted fastest; a setting that changes nothing here is not.
  std::vector<size_t> order;
  for (size_t i = 0; i < variants.size(); ++i) {
    if (i > 0 && variants[i].loop < 0 && NoEffect((*counted)[i].steady, (*counted)[0].steady)) {
      continue;
    }
    order.push_back(i);
  }
  std::stable_sort(order.begin() + 1, order.end(), [&](size_t x, size_t y) {
    return (*counted)[x].steady.seconds < (*counted)[y].steady.seconds;
  });
  std::vector<Trial> trials;
  for (size_t k = 0; k < order.size() && static_cast<int>(k) < a.trials; ++k) {
    Trial t;
    t.variant = order[k];
    t.predicted_s = (*counted)[order[k]].steady.seconds;
    trials.push_back(std::move(t));
  }
  if (Status st = RunRounds(a, dir, *prog, variants, *counted, start, &trials); !st.ok()) {
    return Fail(st);
  }
  // Plans are compared over the rounds every one of them completed.
  size_t complete = SIZE_MAX;
  for (const Trial& t : trials) complete = std::min(complete, t.rounds.size());
  for (Trial& t : trials) {
    t.rounds.resize(complete);
    t.measured_s = TrimmedMean(t.rounds);
  }
  std::vector<analysis::Observation> obs;
  for (const Trial& t : trials) obs.insert(obs.end(), t.obs.begin(), t.obs.end());
  analysis::CostConstants refit = *constants;
  if (obs.size() >= 2) {
    auto f = analysis::FitConstants(obs, *constants);
    if (f.ok()) refit = *f;
  }
  std::optional<SerialRun> serial_whole;
  auto whole = [&](const Trial& t) -> std::string {
    const int epochs = serial.whole_epochs;
    if (epochs <= a.epochs) return "";  // the trials ran the whole program
    const double scale = static_cast<double>(epochs) / a.epochs;
    const double need = (serial_whole ? 0 : serial.wall_s * scale) + t.wall_s * scale;
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    if (spent + need > a.budget_s) {
      return "no budget left to check it over the whole run (about " +
             std::to_string(static_cast<int>(std::ceil(need))) + " s more)";
    }
    std::cerr << "rigel tune: checking " << Describe(variants[t.variant])
              << " over the whole run, beside a whole serial run\n";
    if (!serial_whole) {
      auto got = RunSerial(a, dir + "/serial-whole", 0);
      if (!got.ok()) return std::string(got.status().message());
      serial_whole = *std::move(got);
    }
    const std::string base = dir + "/whole-" + std::to_string(t.variant);
    if (Status st = WriteFileAtomically(base + ".plan.json",
                                        analysis::PlanToJson(*prog, variants[t.variant].plan));
        !st.ok()) {
      return std::string(st.message());
    }
    if (const int rc = RunSelf(RunArgs(a, base + ".plan.json", 0, base), base + ".out"); rc != 0) {
      return "its whole run failed (exit " + std::to_string(rc) + "; see " + base + ".out)";
    }
    const std::string why = OutsideQualityRule(serial_whole->printed, LastPrinted(base + ".jsonl"));
    return why.empty() ? "" : "over the whole run (" + std::to_string(epochs) + " epochs), " + why;
  };
  return Report(a, *prog, variants, &trials, refit, start, dir, measured ? &serial : nullptr,
                whole);
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "run the plans the cost model predicts fastest for a few epochs each on a local cluster, "
      "refit the constants, and write the plan that ran fastest (docs/planner.md)");
  cmd->add_option("program", args->path, "the .rgl program")->required();
  cmd->add_option("--set", args->sets, "override a const or a data path; repeatable")->take_all();
  cmd->add_option("--workers,-P", args->workers, "workers of the local cluster")
      ->default_val(2)
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--servers", args->servers, "servers of the local cluster")
      ->default_val(2)
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--budget", args->budget_s,
                  "seconds for the predictions and trials; no trial starts that would end past it")
      ->default_val(60)
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--epochs", args->epochs, "epochs per trial (the first is not measured)")
      ->default_val(3)
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--trials", args->trials, "plans to try at most, Rigel's first")
      ->default_val(4)
      ->check(CLI::Range(1, 100));
  cmd->add_option("--rounds", args->rounds,
                  "trials of each plan, in turn; their median counts (0: as many as the budget "
                  "allows, up to 20)")
      ->default_val(0)
      ->check(CLI::Range(0, 1000));
  cmd->add_option("-o,--output", args->out,
                  "where to write the fastest plan (default PROGRAM.plan.json here)");
  cmd->add_option("--constants", args->constants,
                  "machine constants to predict with (default as `rigel explain --cost`)");
  cmd->add_option("--save-constants", args->save_constants,
                  "write the constants refitted to the trials here");
  cmd->add_option("--work-dir", args->work_dir, "where the trials' plans and logs go");
  cmd->callback([args, exit_code] { *exit_code = Tune(*args); });
}

}  // namespace rigel::cli
