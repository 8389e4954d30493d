// What `rigel explain --cost` and `rigel plan --cost` compute: a plan's
// predicted epochs (exec/cost_probe.h) and those of every legal alternative
// of each of its loops (analysis::LoopCandidates, the plan's other loops
// kept), and the plan made of each loop's fastest predicted candidate.
// Not thread-safe (reads the environment for the constants).
#ifndef RIGEL_CLI_PLAN_COST_H_
#define RIGEL_CLI_PLAN_COST_H_

#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/plan.h"
#include "common/status.h"
#include "exec/cost_probe.h"
#include "ir/ir.h"

namespace rigel::cli {

struct CandidateCost {
  int loop = -1;         // -1: the plan with other relaxed settings (SettingsVariants)
  std::string schedule;  // "model_parallel_1d by i"; for loop -1, "--batch 1024"
  bool in_plan = false;  // the plan's own schedule for the loop
  analysis::Prediction steady;
  bool chosen = false;  // the fastest plan runs the loop this way (and not in_plan)
};

// The plan (first, loop -1) and every plan that differs from it in one
// loop's schedule (analysis::LoopCandidates), with that loop and the
// schedule in words ("model_parallel_1d by i (R local)").
struct PlanVariant {
  analysis::Plan plan;
  int loop = -1;
  std::string schedule;
};
std::vector<PlanVariant> PlanVariants(const ir::Program& prog, const analysis::Plan& plan);

// Whether a loop of the program relaxes a parameter (DSL.md version 3).
bool ProgramRelaxes(const ir::Program& prog);

// The plan with each relaxed setting changed alone towards fewer exchanges
// (loop -1, schedule empty, plan.settings set): twice the largest mini-batch
// Rigel chooses by itself, twice its push bound, and a staleness bound of 2
// (analysis/relaxed.h). Each trades quality for speed: `rigel tune` holds
// their trials to DSL.md version 3's rule, and --cost never chooses one.
std::vector<PlanVariant> SettingsVariants(const analysis::Plan& plan);

// Whether a settings variant predicted `setting` changes nothing the model
// sees of a plan predicted `plan` (the same seconds and bytes): a push bound
// of a program with no row cache, say. Such a variant is neither listed nor
// tried.
bool NoEffect(const analysis::Prediction& setting, const analysis::Prediction& plan);

struct PlanCost {
  exec::ProbeOptions options;
  std::string constants;  // where the constants came from (cli/constants_file.h)
  exec::ProbeResult plan;
  std::vector<CandidateCost> candidates;  // loops with more than one, in loop order
  analysis::Plan fastest;                 // each loop's fastest predicted candidate
  analysis::Prediction fastest_steady;    // its later epochs
};

// Errors: the constants file's, and the probe's (loading, cuts, slices).
StatusOr<PlanCost> CostPlan(const ir::Program& prog, const analysis::Plan& plan,
                            exec::ProbeOptions options, const std::string& constants_flag);

// `plan_json` (analysis::PlanToJson of cost.fastest) with a "prediction"
// object: the constants' source, workers, servers and the fastest plan's
// predicted later epoch (seconds, bytes by strategy). Readers of plans
// ignore it (analysis::ParsePlan).
std::string PlanWithPrediction(const std::string& plan_json, const PlanCost& cost);

// The figures as words (under `rigel explain`'s report) or one JSON object.
std::string CostReport(const ir::Program& prog, const PlanCost& cost, bool json);

// "1 worker and 2 servers": the cluster a report is about, in words.
std::string ClusterWords(int workers, int servers);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_PLAN_COST_H_
