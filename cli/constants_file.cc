#include "cli/constants_file.h"

#include <unistd.h>

#include <cstdlib>

#include "common/file.h"

namespace rigel::cli {

std::string DefaultConstantsPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/rigel/constants.json";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : ".") +
         "/.config/rigel/constants.json";
}

StatusOr<analysis::CostConstants> LoadConstants(const std::string& flag, std::string* source) {
  std::string path = flag;
  if (path.empty()) {
    const char* env = std::getenv("RIGEL_CONSTANTS");
    if (env != nullptr && *env != '\0') path = env;
  }
  // The default file is optional; a file named by flag or environment is not.
  if (path.empty() && access(DefaultConstantsPath().c_str(), R_OK) == 0) {
    path = DefaultConstantsPath();
  }
  if (path.empty()) {
    *source = "defaults";
    return analysis::CostConstants{};
  }
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  *source = path;
  return analysis::ParseConstants(text, path);
}

}  // namespace rigel::cli
