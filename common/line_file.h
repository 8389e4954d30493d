// A file of lines written one at a time, each reaching the file (write(2),
// no user-space buffer) before Append returns: the per-epoch JSON log, the
// run directory's printed lines. A reader, or a run that failed, finds
// whole lines only: when a line cannot be written whole (a full disk, an
// I/O error), what part of it was written is cut off again, the file ends
// with the lines before, and the error is kept (sticky) for every later
// call, so that a writer that misses one error still cannot go on writing
// after a gap.
//
// Ownership: a LineFile owns its descriptor and closes it when it goes
// (ignoring the result; call Close to see it).
// Errors: IoError whose message starts with the path and gives the
// system's reason ("PATH: write failed: No space left on device ..."); the
// caller adds the flag that named the path.
// Thread-safety: thread-compatible (one thread at a time).
#ifndef RIGEL_COMMON_LINE_FILE_H_
#define RIGEL_COMMON_LINE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rigel {

class LineFile {
 public:
  enum class Mode { kTruncate, kAppend };

  LineFile() = default;
  LineFile(LineFile&& other) noexcept;
  LineFile& operator=(LineFile&& other) noexcept;
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;
  ~LineFile();

  // Opens (creating it, 0644) the file at `path`, emptied (kTruncate) or to
  // go on after its last whole line (kAppend: a cut last line, left by a
  // process killed mid-write, is cut off). IoError "PATH: cannot open for
  // writing: REASON".
  static StatusOr<LineFile> Open(const std::string& path, Mode mode);

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // Whole lines the file holds: those it held when opened to append, and
  // those written since.
  int64_t lines() const { return lines_; }

  // Writes `line` and a newline (`line` must hold none). On failure the
  // file is as it was before the call.
  Status Append(std::string_view line);
  // Closes the file; its error (a delayed write failing) as Append's.
  Status Close();

 private:
  LineFile(std::string path, int fd, int64_t size, bool regular);
  Status Fail(const char* what, int err);

  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;      // bytes of whole lines
  bool regular_ = false;  // a regular file, which can be cut back
  int64_t lines_ = 0;     // whole lines in the file
  Status error_;          // the first failure, returned from then on
};

}  // namespace rigel

#endif  // RIGEL_COMMON_LINE_FILE_H_
