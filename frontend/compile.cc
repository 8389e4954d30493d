#include "frontend/compile.h"

#include "common/file.h"
#include "frontend/checker.h"
#include "frontend/parser.h"

namespace rigel::frontend {

StatusOr<ir::Program> CompileText(std::string_view text, const std::string& filename,
                                  const CompileOptions& opts) {
  auto source = std::make_shared<const SourceFile>(filename, std::string(text));
  Diagnostics diags(source.get());
  ast::Program tree = Parse(*source, &diags);
  // Checking a tree with syntax errors would mostly repeat them; the parser
  // already recovered and reported every independent syntax error.
  if (diags.has_errors()) return InvalidArgument(diags.Render());
  ir::Program prog = CheckAndLower(tree, source, opts, &diags);
  if (diags.has_errors()) return InvalidArgument(diags.Render());
  // Overrides that matched nothing are typos the user wants to hear about.
  for (const auto& [name, value] : opts.sets) {
    bool found = false;
    size_t dot = name.find('.');
    std::string base = dot == std::string::npos ? name : name.substr(0, dot);
    if (dot != std::string::npos) {
      if (name.substr(dot) != ".path") {
        return InvalidArgument("--set " + name + "=" + value +
                               ": only data paths can be set this way (NAME.path=FILE)");
      }
      for (const auto& d : prog.data) {
        if (d.name != base || d.split_parent < 0) continue;
        return InvalidArgument("--set " + name + "=" + value + ": '" + base + "' is split from '" +
                               prog.data[d.split_parent].name + "'; set " +
                               prog.data[d.split_parent].name + ".path instead");
      }
      for (const auto& d : prog.data) found |= d.name == base && !d.path.empty();
    } else {
      for (const auto& c : prog.consts) found |= c.first == name;
    }
    if (!found) {
      return InvalidArgument("--set " + name + "=" + value + ": " + filename + " has no " +
                             (dot == std::string::npos ? "const" : "file-backed data set") +
                             " named '" + base + "'");
    }
  }
  return prog;
}

StatusOr<ir::Program> CompileFile(const std::string& path, const CompileOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return CompileText(text, path, opts);
}

StatusOr<std::pair<std::string, std::string>> ParseSetFlag(const std::string& flag) {
  size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--set expects NAME=VALUE, got '" + flag + "'");
  }
  return std::make_pair(flag.substr(0, eq), flag.substr(eq + 1));
}

}  // namespace rigel::frontend
