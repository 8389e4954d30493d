// Whole-file reading for loaders and the frontend.
#ifndef RIGEL_COMMON_FILE_H_
#define RIGEL_COMMON_FILE_H_

#include <string>

#include "common/status.h"

namespace rigel {

// Reads the whole file at `path` into a string. Returns NotFound if the file
// does not exist, IoError for any other failure; the message names the path.
// Thread-safe.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` atomically (temp file + rename), so a reader never
// sees a half-written file. Thread-safe for distinct paths.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// WriteFileAtomically, and durable once it returns OK: the data are fsynced
// before the rename and the directory after it, so a crash (or power loss)
// leaves either the old file or the whole new one. On failure (a full disk,
// a read-only directory) the temporary file is removed, an existing file at
// `path` is untouched, and IoError names `path` and the system's reason.
// Thread-safe for distinct paths.
Status WriteFileDurably(const std::string& path, const std::string& contents);

// Resolves `path` relative to the directory holding `base_file` unless `path`
// is absolute. Pure function.
std::string ResolveRelativeTo(const std::string& base_file, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_COMMON_FILE_H_
