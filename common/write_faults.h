// Fault injection for the writers of common/file.h and common/line_file.h,
// in the manner of leveldb's fault-injection Env: a test installs a rule,
// and every write(2), fsync(2) and close(2) those writers make asks it
// first. A rule that answers an errno makes the call fail with it, as the
// system would on a full disk (ENOSPC) or a failing device (EIO), so every
// writer's error path runs in-process without a special file system.
//
// Ownership: ScopedWriteFault holds its rule and removes it when it goes;
// one may be installed at a time.
// Errors: none of its own. InjectedWriteFault returns 0 (no fault) when no
// rule is installed, which is always the case outside tests.
// Thread-safety: installing and removing must not race each other;
// InjectedWriteFault may be called from any thread while a rule is
// installed (the rule itself must then be thread-safe).
#ifndef RIGEL_COMMON_WRITE_FAULTS_H_
#define RIGEL_COMMON_WRITE_FAULTS_H_

#include <cstddef>
#include <functional>
#include <string>

namespace rigel {

// The operation a writer is about to make.
enum class WriteOp { kWrite, kSync, kClose };

// Given the final path the writer writes (not its temporary file), the
// operation, and for kWrite how many bytes the call would write: an errno
// to fail with, or 0.
using WriteFaultRule = std::function<int(const std::string& path, WriteOp op, size_t bytes)>;

class ScopedWriteFault {
 public:
  explicit ScopedWriteFault(WriteFaultRule rule);
  ~ScopedWriteFault();
  ScopedWriteFault(const ScopedWriteFault&) = delete;
  ScopedWriteFault& operator=(const ScopedWriteFault&) = delete;
};

// The installed rule's answer, or 0.
int InjectedWriteFault(const std::string& path, WriteOp op, size_t bytes);

}  // namespace rigel

#endif  // RIGEL_COMMON_WRITE_FAULTS_H_
