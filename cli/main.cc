// The `rigel` command: thin main, all work is in the cli library.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "common/config.h"

int main(int argc, char** argv) {
  CLI::App app{"Rigel: automatic parallelisation of ML training loops"};
  app.set_version_flag("--version", std::string("rigel ") + RIGEL_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  rigel::cli::AddCheckCommand(app, &exit_code);
  rigel::cli::AddDumpIrCommand(app, &exit_code);
  rigel::cli::AddExplainCommand(app, &exit_code);
  rigel::cli::AddPlanCommand(app, &exit_code);
  rigel::cli::AddRunCommand(app, &exit_code);
  rigel::cli::AddGenCommand(app, &exit_code);
  rigel::cli::AddKeygenCommand(app, &exit_code);
  rigel::cli::AddPlotCommand(app, &exit_code);
  rigel::cli::AddCalibrateCommand(app, &exit_code);
  rigel::cli::AddTuneCommand(app, &exit_code);
  rigel::cli::AddDevicesCommand(app, &exit_code);
  rigel::cli::AddIndexCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2 (CLI11 has its
    // own codes per error kind, which scripts should not need to know).
    return app.exit(e) == 0 ? 0 : 2;
  }
  // What a command wrote to a redirected standard output (`rigel explain
  // --json > f` on a full disk) is an output like any file: its loss is an
  // error, not exit 0 (as coreutils' close_stdout).
  errno = 0;
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // The reason is known only when this last flush failed; an earlier
    // write's errno is gone by now.
    const int err = errno;
    std::cerr << "rigel: cannot write the standard output: "
              << (err != 0 ? std::strerror(err) : "a write to it failed (a full disk?)") << "\n";
    return exit_code != 0 ? exit_code : 1;
  }
  return exit_code;
}
