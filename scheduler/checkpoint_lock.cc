#include "scheduler/checkpoint_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

namespace rigel::scheduler {

namespace {

constexpr std::chrono::seconds kHolderExitWait{3};

std::string Holder(const std::string& program) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[64];
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return std::string("host ") + host + ", pid " + std::to_string(getpid()) + ", started " + when +
         ", program " + program;
}

// What the lock file says of its holder (its one line), or why it says
// nothing: the holder may be between taking the lock and writing it.
std::string ReadHolder(int fd) {
  char buf[1024];
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s.empty() ? "a job that has not written its details yet" : s;
}

}  // namespace

CheckpointLock& CheckpointLock::operator=(CheckpointLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

CheckpointLock::~CheckpointLock() {
  // Closing the only descriptor releases the lock; the file stays, naming
  // the last holder, which is harmless: only the lock counts.
  if (fd_ >= 0) close(fd_);
}

StatusOr<CheckpointLock> CheckpointLock::Acquire(const std::string& dir,
                                                 const std::string& program) {
  const std::string path = dir + "/" + kLockFileName;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path + ": cannot open the lock file: " + std::strerror(errno));
  CheckpointLock lock(fd);
  // A holder killed a moment ago releases the lock only once the kernel has
  // run its exit (a loaded machine may take a while): a job started right
  // after a kill waits that long rather than being refused.
  const auto give_up = std::chrono::steady_clock::now() + kHolderExitWait;
  int rc;
  while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 &&
         (errno == EINTR || (errno == EWOULDBLOCK && std::chrono::steady_clock::now() < give_up))) {
    if (errno == EWOULDBLOCK) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (rc != 0) {
    if (errno != EWOULDBLOCK) {
      return IoError(path + ": cannot lock: " + std::strerror(errno));
    }
    return FailedPrecondition("the checkpoint directory " + dir + " is in use by another job (" +
                              ReadHolder(fd) + "): stop that job first, or give another " +
                              "--checkpoint-dir");
  }
  const std::string line = Holder(program) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    return IoError(path + ": cannot write the lock file: " + std::strerror(errno));
  }
  return lock;
}

}  // namespace rigel::scheduler
