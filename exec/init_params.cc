#include "exec/init_params.h"

#include <filesystem>
#include <system_error>

#include "exec/param_file.h"
#include "ir/param_init.h"

namespace rigel::exec {

StatusOr<std::vector<std::string>> UseInitParams(const std::string& path, ir::Program* prog) {
  StatusOr<std::vector<ParamEntry>> listed = ListParams(path);
  // "--init-params PATH: no such file": the flag that named it first.
  if (!listed.ok())
    return Status(listed.status().code(), "--init-params " + listed.status().message());
  std::vector<ParamEntry> entries = std::move(listed).value();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return IoError(path + ": cannot read its size: " + ec.message());
  const std::string what = "--init-params " + path + ": ";
  std::vector<bool> set(prog->params.size(), false);
  for (const ParamEntry& e : entries) {
    size_t p = 0;
    while (p < prog->params.size() && prog->params[p].name != e.name) ++p;
    if (p == prog->params.size()) {
      std::string names;
      for (const ir::ParamDecl& d : prog->params) names += (names.empty() ? "" : ", ") + d.name;
      return InvalidArgument(what + "'" + e.name + "' is not a parameter of the program (its " +
                             "parameters: " + (names.empty() ? "none" : names) + ")");
    }
    ir::ParamDecl& d = prog->params[p];
    const bool two_d = d.width > 0;
    const int64_t width = two_d ? d.width : 1;
    if (e.is_2d != two_d || e.width != width) {
      return InvalidArgument(
          what + "'" + e.name + "' is " +
          (e.is_2d ? "[" + std::to_string(e.rows) + ", " + std::to_string(e.width) + "]"
                   : "[" + std::to_string(e.rows) + "]") +
          " in the file; the program declares it " +
          (two_d ? "2-D of width " + std::to_string(width) : "1-D"));
    }
    if (e.is_int != d.is_int) {
      return InvalidArgument(what + "'" + e.name + "' holds " + (e.is_int ? "i32" : "f32") +
                             " values in the file; the program declares it " +
                             (d.is_int ? "i32" : "f32"));
    }
    d.init = ir::ParamDecl::kFile;
    d.file = path;
    d.file_offset = e.offset;
    d.file_bytes = static_cast<uint64_t>(bytes);
    d.file_rows = e.rows;
    d.file_int = e.is_int;
    RIGEL_RETURN_IF_ERROR(ir::OpenInitialValues(d));
    set[p] = true;
  }
  std::vector<std::string> out;
  for (size_t p = 0; p < prog->params.size(); ++p) {
    if (set[p]) out.push_back(prog->params[p].name);
  }
  return out;
}

Status CheckInitRows(const ir::ParamDecl& p, int64_t rows) {
  if (p.init != ir::ParamDecl::kFile || p.file_rows == rows) return Status::Ok();
  return InvalidArgument("--init-params " + p.file + ": '" + p.name + "' has " +
                         std::to_string(p.file_rows) + " rows in the file and " +
                         std::to_string(rows) +
                         " in this run (its declared rows with this run's data)");
}

}  // namespace rigel::exec
