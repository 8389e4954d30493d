// Where the cost model's machine constants come from (docs/planner.md,
// "Constants"): the --constants FILE a command was given, else the file
// named by $RIGEL_CONSTANTS, else ~/.config/rigel/constants.json (or under
// $XDG_CONFIG_HOME) when it exists, else analysis::CostConstants' defaults.
// Not thread-safe (reads the environment).
#ifndef RIGEL_CLI_CONSTANTS_FILE_H_
#define RIGEL_CLI_CONSTANTS_FILE_H_

#include <string>

#include "analysis/cost.h"
#include "common/status.h"

namespace rigel::cli {

// The file `rigel calibrate` writes by default.
std::string DefaultConstantsPath();

// The constants to use and, in *source, where they came from ("defaults"
// or the file's path). Errors: a named file that cannot be read or parsed
// (ParseConstants' messages).
StatusOr<analysis::CostConstants> LoadConstants(const std::string& flag, std::string* source);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_CONSTANTS_FILE_H_
