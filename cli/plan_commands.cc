// `rigel explain` and `rigel plan`: the analysis of a program's parallel
// loops, as words or as the plan document the runtime executes.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/memory.h"
#include "analysis/plan.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "cli/constants_file.h"
#include "cli/plan_cost.h"
#include "common/file.h"
#include "exec/cost_probe.h"
#include "exec/executor.h"
#include "exec/memory_inputs.h"

namespace rigel::cli {
namespace {

struct PlanArgs {
  std::string path;
  std::vector<std::string> sets;
  int workers = 4;
  std::string plan_path;  // explain --plan
  std::string out_path;   // plan -o
  bool json = false;
  // explain --cost: the predicted epoch on --servers servers (exec/cost_probe.h).
  bool cost = false;
  bool memory = false;  // explain --memory (analysis/memory.h)
  exec::ProbeOptions probe;
  std::string constants;  // --constants FILE (cli/constants_file.h)
};

void AddPlanArgs(CLI::App* cmd, PlanArgs* args) {
  cmd->add_option("program", args->path, "the .rgl program")->required();
  cmd->add_option("--workers,-P", args->workers, "number of workers P the plan is made for")
      ->default_val(4)
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--set", args->sets,
                  "override a const (NAME=VALUE) or a data path (DATA.path=FILE); repeatable")
      ->take_all();
}

void PrintError(const Status& st) {
  std::cerr << "rigel: " << st.message();
  if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
}

// The plan for `args`: made by the analysis, or read from --plan and checked
// against the program. Null (with the error printed) on failure.
std::unique_ptr<analysis::Plan> GetPlan(const ir::Program& prog, const PlanArgs& args,
                                        bool workers_given, int* exit_code) {
  StatusOr<analysis::Plan> plan = InvalidArgument("");
  if (args.plan_path.empty()) {
    plan = analysis::MakePlan(prog, {args.workers});
  } else {
    auto text = ReadFileToString(args.plan_path);
    if (!text.ok()) {
      PrintError(text.status());
      *exit_code = 1;
      return nullptr;
    }
    plan = analysis::ParsePlan(*text, args.plan_path);
    if (plan.ok() && workers_given && plan->workers != args.workers) {
      plan = InvalidArgument(args.plan_path + " is a plan for " + std::to_string(plan->workers) +
                             " workers, but --workers says " + std::to_string(args.workers) +
                             "; edit the plan's \"workers\" or leave --workers out");
    }
    if (plan.ok()) plan = analysis::ValidatePlan(prog, std::move(plan).value(), args.plan_path);
  }
  if (!plan.ok()) {
    PrintError(plan.status());
    *exit_code = 1;
    return nullptr;
  }
  return std::make_unique<analysis::Plan>(std::move(plan).value());
}

// --cost and the run's options it predicts for (explain and plan).
void AddCostArgs(CLI::App* cmd, PlanArgs* args, const std::string& what) {
  cmd->add_flag("--cost", args->cost, what);
  exec::ProbeOptions& po = args->probe;
  cmd->add_option("--servers", po.servers, "servers the cost is predicted for")
      ->default_val(2)
      ->check(CLI::Range(1, 65536));
  cmd->add_option(
         "--epochs", po.epochs,
         "top-level iterations --cost counts (later epochs: the mean of all but the first)")
      ->default_val(3)
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--constants", args->constants,
                  "machine constants for --cost (`rigel calibrate` writes them; default: "
                  "$RIGEL_CONSTANTS, else " +
                      DefaultConstantsPath() +
                      " if it exists, else the "
                      "built-in defaults)");
  cmd->add_option("--seed", po.seed, "the run's --seed (random draws decide some rows)");
  cmd->add_option("--batch", po.batch, "the run's --batch (0: Rigel's choice)")->default_val(0);
  cmd->add_option("--staleness", po.staleness, "the run's --staleness (0: no row caches)")
      ->default_val(1);
  cmd->add_option("--push-bound", po.push_bound, "the run's --push-bound (0: Rigel's choice)")
      ->default_val(0);
}

// Loads the data (no parameter values) and estimates what each process of a
// job on --workers workers and --servers servers holds at its peak.
StatusOr<analysis::MemoryEstimate> EstimateMemory(const ir::Program& prog,
                                                  const analysis::Plan& plan,
                                                  const PlanArgs& args) {
  exec::ExecutorOptions eo;
  eo.seed = args.probe.seed;
  eo.allocate_params = false;
  std::ostringstream quiet;  // the data's warnings: the run says them
  eo.warnings = &quiet;
  RIGEL_ASSIGN_OR_RETURN(auto ex, exec::SerialExecutor::Create(prog, eo));
  analysis::MemoryInputs in = exec::MemoryInputsOf(prog, plan, plan.workers, /*parts=*/true, *ex);
  in.workers = plan.workers;
  in.servers = args.probe.servers;
  in.staleness = args.probe.staleness;
  return analysis::EstimateMemory(prog, plan, in);
}

}  // namespace

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "show how each parallel loop would run: accesses, dependences, schedule, strategies");
  AddPlanArgs(cmd, args.get());
  CLI::Option* workers = cmd->get_option("--workers");
  cmd->add_flag("--json", args->json, "print the plan (JSON) instead of the report");
  cmd->add_option("--plan", args->plan_path,
                  "explain this plan (from `rigel plan`, possibly edited) after checking it "
                  "against the program");
  AddCostArgs(cmd, args.get(),
              "also load the data, predict each epoch's seconds and bytes on --workers workers "
              "and --servers servers, and those of every other legal schedule of each loop "
              "(with --json: the predictions as JSON)");
  cmd->add_flag("--memory", args->memory,
                "also load the data and print what each process (worker, server, scheduler) "
                "is expected to hold at its peak on --workers workers and --servers servers, "
                "the largest parts first (docs/planner.md, \"Memory\"; with --json: as JSON)");
  cmd->callback([args, exit_code, workers] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    auto plan = GetPlan(*prog, *args, workers->count() > 0, exit_code);
    if (!plan) return;
    if (args->memory) {
      auto memory = EstimateMemory(*prog, *plan, *args);
      if (!memory.ok()) {
        PrintError(memory.status());
        *exit_code = 1;
        return;
      }
      if (args->json) {
        std::cout << analysis::MemoryJson(*memory) << "\n";
      } else {
        std::cout << analysis::Explain(*prog, *plan) << "\nexpected peak memory per process on "
                  << plan->workers << " workers and " << args->probe.servers
                  << " servers (docs/planner.md, \"Memory\"):\n"
                  << analysis::MemoryText(*memory, 6);
      }
      return;
    }
    if (args->cost) {
      auto cost = CostPlan(*prog, *plan, args->probe, args->constants);
      if (!cost.ok()) {
        PrintError(cost.status());
        *exit_code = 1;
        return;
      }
      if (!args->json) std::cout << analysis::Explain(*prog, *plan) << "\n";
      std::cout << CostReport(*prog, *cost, args->json);
      return;
    }
    std::cout << (args->json ? analysis::PlanToJson(*prog, *plan)
                             : analysis::Explain(*prog, *plan));
  });
}

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "write the execution plan (JSON) of a program");
  AddPlanArgs(cmd, args.get());
  cmd->add_option("-o,--output", args->out_path, "file to write; standard output when absent");
  AddCostArgs(cmd, args.get(),
              "load the data and write, for each loop, the legal schedule of least predicted "
              "time on --workers workers and --servers servers (`rigel explain --cost` lists "
              "them)");
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    auto plan = GetPlan(*prog, *args, false, exit_code);
    if (!plan) return;
    std::string text;
    if (args->cost) {
      auto cost = CostPlan(*prog, *plan, args->probe, args->constants);
      if (!cost.ok()) {
        PrintError(cost.status());
        *exit_code = 1;
        return;
      }
      *plan = cost->fastest;
      text = PlanWithPrediction(analysis::PlanToJson(*prog, *plan), *cost);
    } else {
      text = analysis::PlanToJson(*prog, *plan);
    }
    if (args->out_path.empty()) {
      std::cout << text;
      return;
    }
    Status st = WriteFileAtomically(args->out_path, text);
    if (!st.ok()) {
      PrintError(st);
      *exit_code = 1;
      return;
    }
    std::cerr << "rigel: wrote " << args->out_path << " (" << plan->loops.size() << " loop"
              << (plan->loops.size() == 1 ? "" : "s") << " for " << plan->workers << " worker"
              << (plan->workers == 1 ? "" : "s") << ":";
    for (const auto& lp : plan->loops) {
      std::cerr << " " << analysis::ScheduleKindName(lp.schedule.kind);
    }
    std::cerr << ")\n";
  });
}

}  // namespace rigel::cli
