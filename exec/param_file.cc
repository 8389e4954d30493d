#include "exec/param_file.h"

#include <cstring>
#include <sstream>

#include "common/file.h"

namespace rigel::exec {

Status WriteParams(const std::string& path, const std::vector<SavedParam>& params) {
  std::string out = "rigel-params 1 " + std::to_string(params.size()) + "\n";
  for (const SavedParam& p : params) {
    if (p.name.empty() || p.name.find_first_of(" \n") != std::string::npos) {
      return InvalidArgument("parameter name '" + p.name + "' cannot be saved");
    }
    if (static_cast<int64_t>(p.values.size()) != p.rows * p.width) {
      return InvalidArgument("parameter '" + p.name + "' has " + std::to_string(p.values.size()) +
                             " values, not " + std::to_string(p.rows) + " x " +
                             std::to_string(p.width));
    }
    out += p.name + " " + std::to_string(p.rows) + " " + std::to_string(p.width) + "\n";
    out.append(reinterpret_cast<const char*>(p.values.data()), p.values.size() * sizeof(float));
    out += "\n";
  }
  return WriteFileAtomically(path, out);
}

StatusOr<std::vector<SavedParam>> ReadParams(const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  auto bad = [&](const std::string& why) {
    return InvalidArgument(path + ": not a parameter file written by rigel: " + why);
  };
  size_t pos = 0;
  auto line = [&](std::string* out) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return false;
    *out = text.substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  std::string header;
  if (!line(&header)) return bad("no header line");
  std::istringstream hs(header);
  std::string magic;
  int version = 0;
  int64_t count = -1;
  if (!(hs >> magic >> version >> count) || magic != "rigel-params" || version != 1 || count < 0) {
    return bad("header is '" + header.substr(0, 60) + "'");
  }
  std::vector<SavedParam> out;
  for (int64_t k = 0; k < count; ++k) {
    std::string l;
    if (!line(&l)) return bad("truncated before parameter " + std::to_string(k));
    std::istringstream ls(l);
    SavedParam p;
    if (!(ls >> p.name >> p.rows >> p.width) || p.rows < 0 || p.width < 1) {
      return bad("parameter line '" + l.substr(0, 60) + "'");
    }
    size_t bytes = static_cast<size_t>(p.rows * p.width) * sizeof(float);
    if (text.size() - pos < bytes + 1) return bad("parameter '" + p.name + "' is truncated");
    p.values.resize(static_cast<size_t>(p.rows * p.width));
    std::memcpy(p.values.data(), text.data() + pos, bytes);
    pos += bytes + 1;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace rigel::exec
