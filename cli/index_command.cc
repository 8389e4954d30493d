// `rigel index PROGRAM [--set NAME.path=FILE ...]`: for every data set the
// program reads from a file, loads it with the program's loader options and
// writes FILE.rigel-index (data/data_index.h): the whole-data facts a job's
// scheduler then reads instead of loading the file, while the file is
// unchanged. The loader options are the program's, which is why the program
// is named and not the file alone.
//
// Output: one line per data set on stdout ("wrote FILE.rigel-index: N
// elements, ..."); errors on stderr as the other commands print them, exit 1.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/compile_program.h"
#include "data/data_index.h"
#include "exec/executor.h"

namespace rigel::cli {
namespace {

struct IndexArgs {
  std::string path;
  std::vector<std::string> sets;
};

std::string Facts(const data::IndexEntry& e) {
  const data::Dataset& d = e.shape;
  std::string s = std::to_string(d.count) + " elements";
  switch (d.kind) {
    case data::DataKind::kTriples:
      s += ", rows " + std::to_string(d.rows) + ", cols " + std::to_string(d.cols);
      break;
    case data::DataKind::kLibsvm:
    case data::DataKind::kDenseCsv:
      s += ", dim " + std::to_string(d.dim);
      break;
    case data::DataKind::kTokens:
      s += ", vocab " + std::to_string(d.words.size());
      if (d.lines) s += ", docs " + std::to_string(d.docs);
      break;
    default:
      break;
  }
  return s;
}

int RunIndex(const IndexArgs& a) {
  int exit_code = 0;
  auto prog = CompileProgram(a.path, a.sets, &exit_code);
  if (!prog) return exit_code;
  int written = 0;
  for (const ir::DataDecl& d : prog->data) {
    if (d.split_parent >= 0 || d.path.empty()) continue;  // parts and implicit spaces
    const auto start = std::chrono::steady_clock::now();
    StatusOr<data::IndexEntry> e = data::BuildIndexEntry(d.path, exec::LoadSpecOf(d));
    Status st = e.ok() ? data::WriteIndexEntry(d.path, *e) : e.status();
    if (!st.ok()) {
      std::cerr << "rigel index: data set '" << d.name << "': " << st.message() << "\n";
      return 1;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "wrote " << data::IndexPathFor(d.path) << ": " << Facts(*e) << " ("
              << data::DataKindName(d.kind) << ", data set '" << d.name << "', " << secs << " s)\n";
    ++written;
  }
  if (written == 0) std::cout << "no data set of " << a.path << " is read from a file\n";
  return 0;
}

}  // namespace

void AddIndexCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<IndexArgs>();
  CLI::App* cmd = app.add_subcommand(
      "index",
      "write FILE.rigel-index beside each data file the program reads: the facts a job's "
      "scheduler then takes instead of loading the file, while it is unchanged");
  cmd->add_option("program", args->path, "the .rgl program (its loader options)")->required();
  cmd->add_option("--set", args->sets, "override a data path (DATA.path=FILE); repeatable")
      ->take_all();
  cmd->callback([args, exit_code] { *exit_code = RunIndex(*args); });
}

}  // namespace rigel::cli
