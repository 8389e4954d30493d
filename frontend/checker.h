// Semantic checking and lowering of a parsed program into the loop IR, in one
// pass: names, arities, types and vector widths are checked while the IR is
// built, and every error goes to Diagnostics (the IR is meaningless then).
// Not thread-safe per instance; independent instances may run concurrently.
#ifndef RIGEL_FRONTEND_CHECKER_H_
#define RIGEL_FRONTEND_CHECKER_H_

#include <memory>

#include "frontend/ast.h"
#include "frontend/compile.h"
#include "frontend/diagnostics.h"
#include "ir/ir.h"

namespace rigel::frontend {

ir::Program CheckAndLower(const ast::Program& prog, std::shared_ptr<const SourceFile> source,
                          const CompileOptions& opts, Diagnostics* diags);

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_CHECKER_H_
