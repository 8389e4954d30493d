// A regular file mapped read-only into memory, whole: its bytes are read
// from the page cache as they are touched, so a process can read a few rows
// of a large file without holding the rest. The mapping lives as long as
// the object.
//
// Errors (Open): NotFound when the file does not exist, IoError when it
// cannot be opened or mapped or is not a regular file; the message names
// the path. An empty file maps to no bytes.
// Thread-safe: bytes() is read-only.
#ifndef RIGEL_COMMON_MAPPED_FILE_H_
#define RIGEL_COMMON_MAPPED_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rigel {

class MappedFile {
 public:
  static StatusOr<std::shared_ptr<const MappedFile>> Open(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const char* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const char* data_;
  size_t size_;
};

}  // namespace rigel

#endif  // RIGEL_COMMON_MAPPED_FILE_H_
