#include "exec/vectors_file.h"

#include <fmt/format.h>

#include "common/file.h"

namespace rigel::exec {

StatusOr<std::vector<VectorsRequest>> ParseSaveVectors(const ir::Program& prog,
                                                       const std::vector<std::string>& specs) {
  std::vector<VectorsRequest> out;
  for (const std::string& spec : specs) {
    const std::string what = "--save-vectors " + spec;
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return InvalidArgument(what + ": expected PARAM=FILE");
    }
    const std::string name = spec.substr(0, eq);
    VectorsRequest r;
    r.path = spec.substr(eq + 1);
    for (size_t p = 0; p < prog.params.size(); ++p) {
      if (prog.params[p].name == name) r.param = static_cast<int>(p);
    }
    if (r.param < 0) return InvalidArgument(what + ": the program has no parameter '" + name + "'");
    // Rows numbered by a vocabulary are named by its words, others by id.
    const ir::ParamDecl& decl = prog.params[r.param];
    const ir::DExpr& rows = prog.exprs[decl.rows];
    if (rows.kind == ir::DExpr::kDataAttr && rows.str == "vocab" &&
        prog.data[rows.index].kind == data::DataKind::kTokens) {
      r.data = rows.index;
    }
    // A 1-D parameter by row id would be a column of numbers, not vectors.
    if (r.data < 0 && decl.width == 0) {
      return InvalidArgument(what + ": '" + name + "' is 1-D with " +
                             ir::PrintExpr(prog, decl.rows) +
                             " rows; only a 2-D parameter, or one with one row per word "
                             "(CORPUS.vocab rows, CORPUS a tokens data set), can be saved as "
                             "vectors (--save-params saves every parameter)");
    }
    out.push_back(std::move(r));
  }
  return out;
}

Status WriteVectors(const std::string& path, const data::Dataset* words, const SavedParam& p) {
  const std::string what = "--save-vectors " + p.name + ": ";
  if (static_cast<int64_t>(p.values.size()) != p.rows * p.width) {
    return InvalidArgument(what + std::to_string(p.values.size()) + " values for " +
                           std::to_string(p.rows) + " rows of " + std::to_string(p.width));
  }
  if (words != nullptr && p.rows != static_cast<int64_t>(words->words.size())) {
    return InvalidArgument(what + std::to_string(p.rows) + " rows of " + std::to_string(p.width) +
                           " for a vocabulary of " + std::to_string(words->words.size()) +
                           " words");
  }
  fmt::memory_buffer out;
  fmt::format_to(fmt::appender(out), "{} {}\n", p.rows, p.width);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (words == nullptr) {
      fmt::format_to(fmt::appender(out), "{}", r);
    } else {
      const std::string& w = words->words[r];
      // A blank in a word would shift every column after it for a reader.
      if (w.empty() || w.find_first_of(" \t\n") != std::string::npos) {
        return InvalidArgument(what + "word " + std::to_string(r) + " ('" + w +
                               "') holds a blank and cannot be written");
      }
      out.append(w);
    }
    for (int64_t k = 0; k < p.width; ++k) {
      // {} is the shortest text that reads back as the same float.
      fmt::format_to(fmt::appender(out), " {}", p.values[r * p.width + k]);
    }
    out.push_back('\n');
  }
  return WriteFileAtomically(path, std::string(out.data(), out.size()));
}

}  // namespace rigel::exec
