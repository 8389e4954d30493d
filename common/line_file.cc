#include "common/line_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/write_faults.h"

namespace rigel {
namespace {

// Where a file a killed writer may have left mid-line goes on: the length
// up to and including its last newline, and the whole lines before it.
struct WholeLines {
  int64_t end = 0;
  int64_t lines = 0;
};

StatusOr<WholeLines> ScanWholeLines(const std::string& path, int fd) {
  WholeLines out;
  char buf[65536];
  for (int64_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0) return IoError(path + ": read failed: " + std::strerror(errno));
    if (n == 0) return out;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') continue;
      ++out.lines;
      out.end = at + i + 1;
    }
    at += n;
  }
}

}  // namespace

LineFile::LineFile(std::string path, int fd, int64_t size, bool regular)
    : path_(std::move(path)), fd_(fd), size_(size), regular_(regular) {}

LineFile::LineFile(LineFile&& other) noexcept { *this = std::move(other); }

LineFile& LineFile::operator=(LineFile&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  path_ = std::move(other.path_);
  fd_ = std::exchange(other.fd_, -1);
  size_ = other.size_;
  regular_ = other.regular_;
  lines_ = other.lines_;
  error_ = std::move(other.error_);
  return *this;
}

LineFile::~LineFile() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<LineFile> LineFile::Open(const std::string& path, Mode mode) {
  // No O_APPEND: a cut line is written over from where the whole lines
  // end, and /dev/full or a pipe must open as well as a regular file.
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::kTruncate ? O_TRUNC : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return IoError(path + ": cannot open for writing: " + std::strerror(errno));
  struct stat st;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  int64_t size = 0, lines = 0;
  if (regular && mode == Mode::kAppend) {
    // The writing descriptor cannot read: a second one reads the tail.
    const int rd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    StatusOr<WholeLines> whole =
        rd < 0 ? StatusOr<WholeLines>(IoError(path + ": cannot open: " + std::strerror(errno)))
               : ScanWholeLines(path, rd);
    if (rd >= 0) ::close(rd);
    if (!whole.ok() || (whole->end < st.st_size && ::ftruncate(fd, whole->end) != 0) ||
        ::lseek(fd, whole.ok() ? whole->end : 0, SEEK_SET) < 0) {
      const std::string why = whole.ok() ? std::strerror(errno) : whole.status().message();
      ::close(fd);
      return IoError(path + ": cannot go on after its last whole line: " + why);
    }
    size = whole->end;
    lines = whole->lines;
  }
  LineFile f(path, fd, size, regular);
  f.lines_ = lines;
  return f;
}

Status LineFile::Fail(const char* what, int err) {
  std::string m = path_ + ": " + what + " failed: " + std::strerror(err);
  // Cut back what part of the line reached the file: readers then see the
  // whole lines before it. A device or a pipe keeps what it took.
  if (regular_ && fd_ >= 0 && ::ftruncate(fd_, size_) == 0) {
    m += "; it ends with the " + std::to_string(lines_) + " whole line" + (lines_ == 1 ? "" : "s") +
         " written before";
  }
  error_ = IoError(std::move(m));
  return error_;
}

Status LineFile::Append(std::string_view line) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return FailedPrecondition(path_ + ": not open");
  std::string text(line);
  text += '\n';
  size_t done = 0;
  while (done < text.size()) {
    const size_t want = text.size() - done;
    if (const int err = InjectedWriteFault(path_, WriteOp::kWrite, want); err != 0) {
      // As the system does on a full disk: part of the line first.
      const ssize_t part = ::write(fd_, text.data() + done, want / 2);
      if (part > 0) done += static_cast<size_t>(part);
      return Fail("write", err);
    }
    const ssize_t n = ::write(fd_, text.data() + done, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail("write", errno);
    }
    done += static_cast<size_t>(n);
  }
  size_ += static_cast<int64_t>(text.size());
  ++lines_;
  return Status::Ok();
}

Status LineFile::Close() {
  if (fd_ < 0) return error_;
  if (const int err = InjectedWriteFault(path_, WriteOp::kClose, 0); err != 0) {
    Status st = Fail("close", err);
    ::close(std::exchange(fd_, -1));
    return st;
  }
  if (::close(fd_) != 0) {
    const int err = errno;
    // The descriptor is gone whatever close says (Linux), so the file
    // cannot be cut back here.
    fd_ = -1;
    error_ = IoError(path_ + ": close failed: " + std::strerror(err));
    return error_;
  }
  fd_ = -1;
  return error_;
}

}  // namespace rigel
