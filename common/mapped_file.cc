#include "common/mapped_file.h"

#include <sys/mman.h>

#include <cstring>
#include <utility>

#include "common/file.h"

namespace rigel {

StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::string& path) {
  // ReadOnlyFile says what is wrong with a path as every reader does.
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  const size_t size = static_cast<size_t>(f.size());
  if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0));
  void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd(), 0);
  if (at == MAP_FAILED) return IoError(path + ": cannot map: " + std::strerror(errno));
  // The mapping keeps the file's pages; the descriptor closes with `f`.
  return std::shared_ptr<const MappedFile>(
      new MappedFile(path, static_cast<const char*>(at), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace rigel
