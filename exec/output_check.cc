#include "exec/output_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rigel::exec {

Status CheckOutputFile(const std::string& flag, const std::string& path) {
  // O_EXCL first, to know whether the file is ours to remove afterwards.
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string why = std::strerror(err);
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (err == ENOENT && !dir.empty() && !std::filesystem::is_directory(dir, ec)) {
      why = "the directory " + dir.string() + " does not exist";
    }
    return IoError(flag + " " + path + ": cannot write here (" + why +
                   "); nothing was run, so no training is lost");
  }
  close(fd);
  if (created) unlink(path.c_str());
  return Status::Ok();
}

Status SaveFailed(const std::string& flag, Status st) {
  if (st.code() != StatusCode::kIoError) return st;
  return IoError(flag + " " + st.message() + "; the trained values were not saved");
}

}  // namespace rigel::exec
