// `rigel check`, `rigel dump-ir` and `rigel run`: the commands that take a
// program file. Errors go to stderr exactly as the frontend renders them.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/compile_program.h"
#include "frontend/compile.h"
#include "worker/executor.h"

namespace rigel::cli {
namespace {

// Flag values of one subcommand. Shared by the parser (which fills them) and
// the callback (which owns a reference), so they live as long as the App.
struct ProgramArgs {
  std::string path;
  std::vector<std::string> sets;
  bool bytecode = false;
  uint64_t seed = 0;
  bool verbose = false;
};

void AddProgramArgs(CLI::App* cmd, ProgramArgs* args) {
  cmd->add_option("program", args->path, "the .rgl program")->required();
  cmd->add_option("--set", args->sets,
                  "override a const (NAME=VALUE) or a data path (DATA.path=FILE); repeatable")
      ->take_all();
}

}  // namespace

std::unique_ptr<frontend::ir::Program> CompileProgram(const std::string& path,
                                                      const std::vector<std::string>& sets,
                                                      int* exit_code) {
  frontend::CompileOptions opts;
  for (const std::string& s : sets) {
    auto kv = frontend::ParseSetFlag(s);
    if (!kv.ok()) {
      std::cerr << "rigel: " << kv.status().message() << "\n";
      *exit_code = 2;  // a malformed flag is a usage error
      return nullptr;
    }
    opts.sets.push_back(*kv);
  }
  auto prog = frontend::CompileFile(path, opts);
  if (!prog.ok()) {
    *exit_code = 1;
    const Status& st = prog.status();
    // Diagnostics already carry "FILE:LINE:COL: error:"; file errors do not.
    std::cerr << (st.code() == StatusCode::kInvalidArgument ? "" : "rigel: ") << st.message();
    if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
    return nullptr;
  }
  return std::make_unique<frontend::ir::Program>(std::move(prog).value());
}

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand("check", "parse and check a program; nothing runs");
  AddProgramArgs(cmd, args.get());
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    std::cout << args->path << ": ok (" << prog->loops.size() << " parallel loop"
              << (prog->loops.size() == 1 ? "" : "s") << ", " << prog->params.size() << " parameter"
              << (prog->params.size() == 1 ? "" : "s") << ")\n";
  });
}

void AddDumpIrCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand("dump-ir", "print a program's loop IR");
  AddProgramArgs(cmd, args.get());
  cmd->add_flag("--bytecode", args->bytecode,
                "also load the data and print each loop's compiled bytecode");
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    std::cout << frontend::ir::Print(*prog);
    if (!args->bytecode) return;
    auto ex = worker::SerialExecutor::Create(*prog, {});
    if (!ex.ok()) {
      std::cerr << ex.status().message();
      *exit_code = 1;
      return;
    }
    for (size_t l = 0; l < prog->loops.size(); ++l) {
      std::cout << "bytecode loop " << l << "\n"
                << (*ex)->kernel(static_cast<int>(l)).Disassemble();
    }
  });
}

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProgramArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run a program (serially, in this process)");
  AddProgramArgs(cmd, args.get());
  cmd->add_option("--seed", args->seed, "seed of rand(), randint() and negative()")->default_val(0);
  cmd->add_flag("-v,--verbose", args->verbose, "report data loading and per-loop timing on stderr");
  cmd->callback([args, exit_code] {
    auto prog = CompileProgram(args->path, args->sets, exit_code);
    if (!prog) return;
    worker::ExecutorOptions opts;
    opts.seed = args->seed;
    opts.log = args->verbose ? &std::cerr : nullptr;
    // Progress lines rewrite themselves with '\r': only on a terminal.
    if (isatty(STDERR_FILENO)) opts.progress = &std::cerr;
    auto ex = worker::SerialExecutor::Create(*prog, opts);
    Status st = ex.ok() ? (*ex)->Run() : ex.status();
    if (!st.ok()) {
      std::cerr << st.message();
      if (st.message().empty() || st.message().back() != '\n') std::cerr << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace rigel::cli
