#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "common/write_faults.h"

namespace rigel {

StatusOr<ReadOnlyFile> ReadOnlyFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return IoError(path + ": not a regular file");
  }
  return ReadOnlyFile(path, fd, static_cast<int64_t>(st.st_size));
}

ReadOnlyFile::ReadOnlyFile(std::string path, int fd, int64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<int64_t> ReadOnlyFile::Read(char* out, int64_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, out, static_cast<size_t>(n));
    if (got >= 0) return static_cast<int64_t>(got);
    const int err = errno;
    if (err != EINTR) return IoError(path_ + ": read failed: " + std::strerror(err));
  }
}

StatusOr<int64_t> ReadOnlyFile::ReadAt(int64_t offset, char* out, int64_t n) const {
  while (true) {
    const ssize_t got = ::pread(fd_, out, static_cast<size_t>(n), static_cast<off_t>(offset));
    if (got >= 0) return static_cast<int64_t>(got);
    const int err = errno;
    if (err != EINTR) return IoError(path_ + ": read failed: " + std::strerror(err));
  }
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  std::string out;
  out.resize(static_cast<size_t>(f.size()));
  int64_t done = 0;
  // One read() per chunk into the final buffer: no per-line copying.
  while (done < f.size()) {
    RIGEL_ASSIGN_OR_RETURN(int64_t n, f.Read(out.data() + done, f.size() - done));
    if (n == 0) break;
    done += n;
  }
  out.resize(static_cast<size_t>(done));
  // Files that grow while read (or report size 0, like /proc) are read to EOF.
  char buf[65536];
  for (;;) {
    auto n = f.Read(buf, sizeof buf);
    if (!n.ok() || *n == 0) break;
    out.append(buf, static_cast<size_t>(*n));
  }
  return out;
}

namespace {

enum class Sync { kNone, kData, kDataAndName };

// Takes a spare of `dir` (RetireToSpare) as `tmp`; false when none is left.
bool TakeSpare(const std::filesystem::path& dir, const std::string& tmp) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
    if (e.path().filename().string().rfind(kSparePrefix, 0) != 0) continue;
    // Another writer may have taken it since the listing: then the next.
    if (::rename(e.path().c_str(), tmp.c_str()) == 0) return true;
  }
  return false;
}

// The pieces written in turn to `fd`, each write(2) asking the fault rule
// (common/write_faults.h) first; false with errno set on failure.
bool WriteAll(const std::string& path, int fd, std::span<const std::string_view> pieces,
              off_t* size) {
  for (std::string_view contents : pieces) {
    size_t done = 0;
    while (done < contents.size()) {
      if (const int err = InjectedWriteFault(path, WriteOp::kWrite, contents.size() - done)) {
        errno = err;
        return false;
      }
      ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      done += static_cast<size_t>(n);
    }
    *size += static_cast<off_t>(done);
  }
  return true;
}

// fsync(2) or close(2), asking the fault rule first.
int Checked(const std::string& path, WriteOp op, int fd) {
  if (const int err = InjectedWriteFault(path, op, 0)) {
    if (op == WriteOp::kClose) ::close(fd);
    errno = err;
    return -1;
  }
  return op == WriteOp::kSync ? ::fsync(fd) : ::close(fd);
}

// `path` names something that is not a regular file and is not to be
// replaced by one: a device (/dev/null, /dev/full, /dev/stdout's
// terminal) or a pipe. Such a path is written in place; renaming a file
// over it would replace /dev/full with a regular file.
bool WrittenInPlace(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

Status WriteInPlace(const std::string& path, std::span<const std::string_view> pieces) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return IoError(path + ": cannot open for writing: " + std::strerror(errno));
  off_t size = 0;
  if (!WriteAll(path, fd, pieces, &size)) {
    const int err = errno;
    ::close(fd);
    return IoError(path + ": write failed: " + std::strerror(err));
  }
  if (Checked(path, WriteOp::kClose, fd) != 0) {
    return IoError(path + ": close failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

// Writes `contents` to a temporary file beside `path` (a spare overwritten
// in place, with `reuse_spare` and when there is one) and renames it over
// `path`; fsyncs the file first (kData) and the directory after
// (kDataAndName).
Status WriteThroughTemporary(const std::string& path, std::span<const std::string_view> pieces,
                             Sync sync, bool reuse_spare = false) {
  if (WrittenInPlace(path)) return WriteInPlace(path, pieces);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const bool reused = reuse_spare && TakeSpare(std::filesystem::path(path).parent_path(), tmp);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CLOEXEC | (reused ? 0 : O_CREAT | O_TRUNC), 0644);
  if (fd < 0) return IoError(path + ": cannot create " + tmp + ": " + std::strerror(errno));
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return IoError(path + ": " + what + " failed: " + std::strerror(err));
  };
  off_t size = 0;
  if (!WriteAll(path, fd, pieces, &size)) return fail("write");
  // A spare longer than the new contents keeps none of its old tail.
  if (reused && ::ftruncate(fd, size) != 0) return fail("truncate");
  // Delayed allocation can report a full disk only here.
  if (sync != Sync::kNone && Checked(path, WriteOp::kSync, fd) != 0) return fail("fsync");
  if (Checked(path, WriteOp::kClose, fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": close failed: " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": rename failed: " + std::strerror(err));
  }
  if (sync != Sync::kDataAndName) return Status::Ok();
  Status st = SyncDirectory(std::filesystem::path(path).parent_path().string());
  return st.ok() ? st : IoError(path + ": " + st.message());
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string_view piece = contents;
  return WriteThroughTemporary(path, {&piece, 1}, Sync::kNone);
}

Status WriteFileDurably(const std::string& path, const std::string& contents) {
  const std::string_view piece = contents;
  return WriteThroughTemporary(path, {&piece, 1}, Sync::kDataAndName);
}

Status WriteFileDataDurably(const std::string& path, const std::string& contents) {
  const std::string_view piece = contents;
  return WriteThroughTemporary(path, {&piece, 1}, Sync::kData);
}

Status WriteFileDataDurably(const std::string& path, std::span<const std::string_view> pieces,
                            bool reuse_spare) {
  return WriteThroughTemporary(path, pieces, Sync::kData, reuse_spare);
}

Status RetireToSpare(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path spare =
      p.parent_path() / (std::string(kSparePrefix) + p.filename().string());
  if (::rename(path.c_str(), spare.c_str()) != 0) {
    return IoError(path + ": cannot rename it to " + spare.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  const std::string d = dir.empty() ? "." : dir;
  int dfd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return IoError("cannot open the directory " + d + ": " + std::strerror(errno));
  int rc = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  if (rc != 0) return IoError("fsync of the directory " + d + " failed: " + std::strerror(err));
  return Status::Ok();
}

std::string ResolveRelativeTo(const std::string& base_file, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  std::filesystem::path dir = std::filesystem::path(base_file).parent_path();
  if (dir.empty()) return path;
  return (dir / p).lexically_normal().string();
}

}  // namespace rigel
