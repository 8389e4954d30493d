// `rigel explain` and `rigel plan`: the analysis of a program's parallel
// loops, as words or as the plan document the runtime executes.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "common/file.h"

namespace rigel::cli {
namespace {

struct PlanArgs {
  std::string path;
  std::vector<std::string> sets;
  int workers = 4;
  std::string plan_path;  // explain --plan
  std::string out_path;   // plan -o
  bool json = false;
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
  cmd->callback([args, exit_code, workers] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    auto plan = GetPlan(*prog, *args, workers->count() > 0, exit_code);
    if (!plan) return;
    std::cout << (args->json ? analysis::PlanToJson(*prog, *plan)
                             : analysis::Explain(*prog, *plan));
  });
}

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "write the execution plan (JSON) of a program");
  AddPlanArgs(cmd, args.get());
  cmd->add_option("-o,--output", args->out_path, "file to write; standard output when absent");
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    auto plan = GetPlan(*prog, *args, false, exit_code);
    if (!plan) return;
    std::string text = analysis::PlanToJson(*prog, *plan);
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
