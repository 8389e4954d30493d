// Trained parameters on disk: what `rigel run --save-params FILE` writes
// (serial and distributed runs alike) and tests compare.
//
// Format: a text header line "rigel-params 1 <count>", then per parameter a
// line "<name> <rows> <width>" followed by rows * width little-endian float32
// values (row-major), then a newline. Written atomically (a temporary file
// renamed into place), so a failed run never leaves half a file.
//
// Thread-compatible value functions.
#ifndef RIGEL_EXEC_PARAM_FILE_H_
#define RIGEL_EXEC_PARAM_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rigel::exec {

struct SavedParam {
  std::string name;
  int64_t rows = 0;
  int64_t width = 1;          // 1 for a 1-D parameter
  std::vector<float> values;  // rows * width
};

// IoError when the file cannot be written; InvalidArgument when a
// parameter's values do not have rows * width entries or its name has spaces.
Status WriteParams(const std::string& path, const std::vector<SavedParam>& params);

// NotFound/IoError when unreadable; InvalidArgument naming the file and what
// is wrong when it is not in this format (truncated, bad header).
StatusOr<std::vector<SavedParam>> ReadParams(const std::string& path);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_PARAM_FILE_H_
