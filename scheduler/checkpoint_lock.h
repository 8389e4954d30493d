// The lock that keeps two jobs out of one checkpoint directory: an advisory
// lock (flock) on DIR/rigel.lock, held by the scheduler for the job's life.
// The file names its holder (host, pid, start time, program), so a second
// job is refused with those details. The kernel drops the lock when its
// holder dies however it dies, so a lock left by a dead job is simply taken
// over: there is no stale-lock guessing.
//
// Thread-compatible; movable, not copyable.
#ifndef RIGEL_SCHEDULER_CHECKPOINT_LOCK_H_
#define RIGEL_SCHEDULER_CHECKPOINT_LOCK_H_

#include <string>

#include "common/status.h"

namespace rigel::scheduler {

inline constexpr char kLockFileName[] = "rigel.lock";

class CheckpointLock {
 public:
  CheckpointLock() = default;
  CheckpointLock(CheckpointLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  CheckpointLock& operator=(CheckpointLock&& o) noexcept;
  ~CheckpointLock();

  // Takes the lock of the existing directory `dir` for the job running
  // `program`, waiting up to 3 s for a holder that is exiting.
  // FailedPrecondition naming the holder when another process still holds
  // it then; IoError when the lock file cannot be opened or written.
  static StatusOr<CheckpointLock> Acquire(const std::string& dir, const std::string& program);

  bool held() const { return fd_ >= 0; }

 private:
  explicit CheckpointLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_CHECKPOINT_LOCK_H_
