// Subcommands of the `rigel` binary. Each Add*Command registers one CLI11
// subcommand on `app`; when it runs, its callback stores the process exit
// status (0 success, 1 user error, 2 usage error) in *exit_code. Errors are
// printed to stderr by the command itself. Not thread-safe (process setup).
#ifndef RIGEL_CLI_COMMANDS_H_
#define RIGEL_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace rigel::cli {

void AddCheckCommand(CLI::App& app, int* exit_code);
void AddDumpIrCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddGenCommand(CLI::App& app, int* exit_code);
void AddKeygenCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);
void AddPlanCommand(CLI::App& app, int* exit_code);
void AddPlotCommand(CLI::App& app, int* exit_code);
void AddCalibrateCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);
void AddDevicesCommand(CLI::App& app, int* exit_code);
void AddIndexCommand(CLI::App& app, int* exit_code);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_COMMANDS_H_
