// `rigel explain` and `rigel plan`: the analysis of a program's parallel
// loops, as words or as the plan document the runtime executes.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/memory.h"
#include "analysis/plan.h"
#include "analysis/sync/resolve.h"
#include "cli/commands.h"
#include "cli/compile_program.h"
#include "cli/constants_file.h"
#include "cli/plan_cost.h"
#include "cluster/defaults.h"
#include "cluster/job_options.h"
#include "common/file.h"
#include "exec/cost_probe.h"
#include "exec/executor.h"
#include "exec/memory_inputs.h"

namespace rigel::cli {
namespace {

struct PlanArgs {
  std::string path;
  std::vector<std::string> sets;
  int workers = cluster::kDefaultPlanWorkers;
  int servers = 0;        // 0: cluster::DefaultServers of the plan's workers
  std::string plan_path;  // explain --plan
  std::string out_path;   // plan -o
  bool json = false;
  // explain --cost: the predicted epoch on --servers servers (exec/cost_probe.h).
  bool cost = false;
  bool memory = false;  // explain --memory (analysis/memory.h)
  int epochs = 3;
  uint64_t seed = 0;
  // The run's options, by the flags `rigel run` takes (cluster/job_options.h).
  cluster::JobOptions job;
  std::vector<CLI::Option*> job_flags;
  std::string constants;  // --constants FILE (cli/constants_file.h)
  std::string jit;        // the run's --jit (empty: $RIGEL_JIT, else auto)

  int ServersFor(const analysis::Plan& plan) const {
    return servers > 0 ? servers : cluster::DefaultServers(plan.workers);
  }
};

void AddPlanArgs(CLI::App* cmd, PlanArgs* args) {
  cmd->add_option("program", args->path, "the .rgl program")->required();
  cmd->add_option("--workers,-P", args->workers, "number of workers P the plan is made for")
      ->default_val(cluster::kDefaultPlanWorkers)
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--servers", args->servers,
                  "servers --cost and --memory predict for (default: as `rigel run`, 1 for one "
                  "worker and 2 from two on)")
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
  cmd->add_option(
         "--epochs", args->epochs,
         "top-level iterations --cost counts (later epochs: the mean of all but the first)")
      ->default_val(3)
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--constants", args->constants,
                  "machine constants for --cost (`rigel calibrate` writes them; default: "
                  "$RIGEL_CONSTANTS, else " +
                      DefaultConstantsPath() +
                      " if it exists, else the "
                      "built-in defaults)");
  cmd->add_option("--seed", args->seed, "the run's --seed (random draws decide some rows)");
  cmd->add_option("--jit", args->jit,
                  "the run's --jit: the tier --cost times loop bodies in (auto: compiled once a "
                  "worker has interpreted a body as long as a compile takes; default $RIGEL_JIT, "
                  "else auto)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  // The run's own flags, with its defaults: what is predicted is what `rigel
  // run` with the same flags starts.
  args->job_flags = cluster::AddJobOptionFlags(cmd, &args->job);
}

// The job options the cost model and the memory model read; a given one
// that neither of the asked reports reads is said, not silently dropped.
const std::vector<std::string>& CostFlags() {
  static const std::vector<std::string> f = {"--batch", "--staleness", "--push-bound",
                                             "--scaled-merges"};
  return f;
}
const std::vector<std::string>& MemoryFlags() {
  static const std::vector<std::string> f = {"--data-parts", "--cache-mb", "--staleness",
                                             "--memory-limit"};
  return f;
}
void NoteUnreadFlags(const PlanArgs& args, bool cost, bool memory, const std::string& command) {
  for (const CLI::Option* o : args.job_flags) {
    if (o->count() == 0) continue;
    const std::string& name = o->get_name();
    auto in = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), name) != v.end();
    };
    if ((cost && in(CostFlags())) || (memory && in(MemoryFlags()))) continue;
    std::string reads;
    if (in(CostFlags())) reads = "--cost";
    // `rigel plan` has no --memory: there the memory flags change nothing.
    if (in(MemoryFlags()) && command == "explain") {
      reads += std::string(reads.empty() ? "" : " and ") + "--memory";
    }
    std::cerr << "rigel " << command << ": note: " << name << " changes "
              << (reads.empty() ? "no prediction this command makes" : "only " + reads)
              << "; it is taken as `rigel run` takes it and changes nothing here\n";
  }
}

exec::ProbeOptions ProbeOptionsFor(const PlanArgs& args, const analysis::Plan& plan) {
  exec::ProbeOptions po = exec::ProbeOptionsOf(args.job, plan.workers, args.ServersFor(plan));
  po.epochs = args.epochs;
  po.seed = args.seed;
  if (!args.jit.empty()) po.jit = *kernel::ParseJitMode(args.jit);  // checked by the flag
  return po;
}

// Loads the data (no parameter values) and estimates what each process of a
// job on --workers workers and --servers servers holds at its peak.
// The memory estimate of the job `args` describe, and how that job
// resolves the plan (which tables its workers hold in part), for the report.
StatusOr<analysis::MemoryEstimate> EstimateMemory(const ir::Program& prog,
                                                  const analysis::Plan& plan, const PlanArgs& args,
                                                  analysis::sync::Resolved* resolved) {
  exec::ExecutorOptions eo;
  eo.seed = args.seed;
  eo.allocate_params = false;
  std::ostringstream quiet;  // the data's warnings: the run says them
  eo.warnings = &quiet;
  RIGEL_ASSIGN_OR_RETURN(auto ex, exec::SerialExecutor::Create(prog, eo));
  const analysis::MemoryInputs in = exec::JobMemoryInputs(
      prog, plan, plan.workers, args.ServersFor(plan), args.job, /*save_params=*/false, *ex);
  *resolved = analysis::sync::Resolve(prog, plan, in);
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
    NoteUnreadFlags(*args, args->cost && !args->memory, args->memory, "explain");
    if (args->memory) {
      analysis::sync::Resolved resolved;
      auto memory = EstimateMemory(*prog, *plan, *args, &resolved);
      if (!memory.ok()) {
        PrintError(memory.status());
        *exit_code = 1;
        return;
      }
      if (args->json) {
        std::cout << analysis::MemoryJson(*memory) << "\n";
      } else {
        std::cout << analysis::Explain(*prog, *plan, resolved)
                  << "\nexpected peak memory per process on "
                  << ClusterWords(plan->workers, args->ServersFor(*plan))
                  << " (docs/planner.md, \"Memory\"):\n"
                  << analysis::MemoryText(*memory, 6);
      }
      // What the run would refuse, said as it would say it (exit 1).
      if (Status st = analysis::CheckMemoryLimit(*memory, args->job.memory_limit); !st.ok()) {
        PrintError(st);
        *exit_code = 1;
      } else if (args->job.memory_limit > 0 && !args->json) {
        std::cout << "every process fits --memory-limit "
                  << analysis::ShowBytes(args->job.memory_limit) << "\n";
      }
      return;
    }
    if (args->cost) {
      auto cost = CostPlan(*prog, *plan, ProbeOptionsFor(*args, *plan), args->constants);
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
    NoteUnreadFlags(*args, args->cost, false, "plan");
    std::string text;
    if (args->cost) {
      auto cost = CostPlan(*prog, *plan, ProbeOptionsFor(*args, *plan), args->constants);
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
