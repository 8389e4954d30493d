// Compiling a program for a CLI command, with errors printed the way every
// command prints them. Not thread-safe (writes to std::cerr).
#ifndef RIGEL_CLI_COMPILE_PROGRAM_H_
#define RIGEL_CLI_COMPILE_PROGRAM_H_

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace rigel::cli {

// Compiles `path` with the `--set NAME=VALUE` overrides in `sets`. On error
// prints the diagnostics (or the file error) to stderr, sets *exit_code (2
// for a malformed --set, 1 otherwise) and returns null.
std::unique_ptr<ir::Program> CompileProgram(const std::string& path,
                                            const std::vector<std::string>& sets, int* exit_code);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_COMPILE_PROGRAM_H_
