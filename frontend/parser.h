// Recursive-descent parser for `.rgl` (grammar in docs/dsl.md).
//
// Syntax errors are reported to Diagnostics; the parser then skips to the
// next statement boundary and goes on, so one run reports every independent
// error. The returned tree is complete only when no error was reported.
#ifndef RIGEL_FRONTEND_PARSER_H_
#define RIGEL_FRONTEND_PARSER_H_

#include "frontend/ast.h"
#include "frontend/diagnostics.h"

namespace rigel::frontend {

ast::Program Parse(const SourceFile& source, Diagnostics* diags);

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_PARSER_H_
