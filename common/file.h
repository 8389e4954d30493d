// Whole-file reading for loaders and the frontend, reading a file in parts
// (data/line_split.h), and durable writes.
#ifndef RIGEL_COMMON_FILE_H_
#define RIGEL_COMMON_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rigel {

// A file open for reading, closed when it goes. Open: NotFound ("PATH: no
// such file"), IoError ("PATH: cannot open: ..." or "PATH: not a regular
// file" for a directory). Reads: IoError naming the path; 0 bytes at the
// end of the file. Thread-compatible: ReadAt may be called from several
// threads at once, Read from one at a time.
class ReadOnlyFile {
 public:
  static StatusOr<ReadOnlyFile> Open(const std::string& path);
  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(ReadOnlyFile&&) = delete;
  ~ReadOnlyFile();

  // The size when it was opened (0 for pipes and most of /proc).
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // owned by this object
  // Up to n bytes from where the last Read ended (the start at first).
  StatusOr<int64_t> Read(char* out, int64_t n);
  // Up to n bytes from byte `offset` (regular files).
  StatusOr<int64_t> ReadAt(int64_t offset, char* out, int64_t n) const;

 private:
  ReadOnlyFile(std::string path, int fd, int64_t size);

  std::string path_;
  int fd_;
  int64_t size_;
};

// Reads the whole file at `path` into a string. Returns NotFound if the file
// does not exist, IoError for any other failure; the message names the path.
// Thread-safe.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` atomically (temp file + rename), so a reader never
// sees a half-written file. A path naming a device or a pipe (/dev/full,
// /dev/stdout) is written in place instead, never replaced by a regular
// file; the same holds for the durable writes below. Every write, fsync
// and close these writers make can be failed by a test
// (common/write_faults.h). IoError names `path` and the system's reason
// ("PATH: write failed: No space left on device"); a temporary file is
// removed on failure and an existing file at `path` is untouched.
// Thread-safe for distinct paths.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// WriteFileAtomically, and durable once it returns OK: the data are fsynced
// before the rename and the directory after it, so a crash (or power loss)
// leaves either the old file or the whole new one. On failure (a full disk,
// a read-only directory) the temporary file is removed, an existing file at
// `path` is untouched, and IoError names `path` and the system's reason.
// Thread-safe for distinct paths.
Status WriteFileDurably(const std::string& path, const std::string& contents);

// WriteFileDurably without the directory's fsync: the data are durable once it
// returns OK, the new name only once the caller fsyncs the directory
// (SyncDirectory). For files a later durable write in the same directory
// commits together (a checkpoint's rows files before its manifest): one
// directory fsync then covers every rename before it. Errors and thread
// safety as WriteFileDurably.
Status WriteFileDataDurably(const std::string& path, const std::string& contents);
// The same, for contents given in pieces written one after another (so that
// a large file need not be assembled in memory first). With `reuse_spare`,
// a spare in the directory of `path` (RetireToSpare), when there is one, is
// taken (renamed to the temporary name, so that writers sharing the
// directory never take the same one) and overwritten in place instead of a
// new file being created: the file system then neither allocates blocks for
// the new file nor frees (and, mounted with `discard`, trims) the old one's,
// which cuts the CPU time a large file's durable write costs the machine
// (kernel threads included) by about 40% (bench/durable_write.cc).
Status WriteFileDataDurably(const std::string& path, std::span<const std::string_view> pieces,
                            bool reuse_spare = false);

// The prefix of a spare's name: a file kept to be overwritten.
inline constexpr std::string_view kSparePrefix = ".spare.";

// Makes the file `path` a spare: renames it to kSparePrefix + its name in
// the same directory. Its contents stay until a writer reuses it; removing
// spares no writer took is the caller's. IoError names `path`. Thread-safe.
Status RetireToSpare(const std::string& path);

// Fsyncs the directory `dir`, making the names created, renamed or removed in
// it durable. IoError names `dir` and the system's reason. Thread-safe.
Status SyncDirectory(const std::string& dir);

// Resolves `path` relative to the directory holding `base_file` unless `path`
// is absolute. Pure function.
std::string ResolveRelativeTo(const std::string& base_file, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_COMMON_FILE_H_
