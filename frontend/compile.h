// The frontend pipeline: text -> tokens -> AST -> checked loop IR.
#ifndef RIGEL_FRONTEND_COMPILE_H_
#define RIGEL_FRONTEND_COMPILE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"

namespace rigel::frontend {

struct CompileOptions {
  // `--set NAME=VALUE` overrides: NAME is a const (VALUE an int or float) or
  // DATA.path (VALUE a path, relative to the current directory).
  std::vector<std::pair<std::string, std::string>> sets;
};

// Parses, checks and lowers `text` (named `filename` in messages). Returns
// InvalidArgument whose message is every diagnostic rendered
// ("FILE:LINE:COL: error: ..." with source line and caret) when the program
// has errors; never crashes on any input. Thread-safe (no shared state).
StatusOr<ir::Program> CompileText(std::string_view text, const std::string& filename,
                                  const CompileOptions& opts);

// Reads `path` and compiles it; NotFound/IoError if it cannot be read.
StatusOr<ir::Program> CompileFile(const std::string& path, const CompileOptions& opts);

// Splits "NAME=VALUE" into its parts; InvalidArgument if there is no '='.
StatusOr<std::pair<std::string, std::string>> ParseSetFlag(const std::string& flag);

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_COMPILE_H_
