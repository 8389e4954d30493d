// A mutex, its scoped lock and a condition variable that clang's
// thread-safety analysis understands (common/thread_annotations.h), in the
// manner of abseil's Mutex/MutexLock/CondVar. They wrap std::mutex and
// std::condition_variable and behave like them (a Mutex also records which
// thread holds it, for AssertHeld); the annotations let a build with
// -Wthread-safety prove that every member marked RIGEL_GUARDED_BY(mu_) is
// touched only with mu_ held.
//
//   mutable Mutex mu_;
//   int count_ RIGEL_GUARDED_BY(mu_) = 0;
//   CondVar changed_;
//
//   void Add() RIGEL_EXCLUDES(mu_) {
//     { MutexLock l(&mu_); ++count_; }
//     changed_.NotifyAll();
//   }
//   void WaitFor(int n) RIGEL_EXCLUDES(mu_) {
//     MutexLock l(&mu_);
//     while (count_ < n) changed_.Wait(&mu_);
//   }
//
// CondVar has no predicate overloads: the analysis checks a lambda's body on
// its own, without the caller's lock, so conditions are written as loops
// around Wait/WaitUntil in the function that holds the lock.
//
// Ownership: a MutexLock borrows its Mutex, which must outlive it. None of
// the three types can be copied or moved.
// Errors: none reported. Misuse (unlocking a mutex this thread does not hold,
// locking one it holds) is undefined behaviour as with std::mutex; the
// analysis reports what it can see of it at compile time. AssertHeld aborts
// (RIGEL_CHECK) when this thread does not hold the mutex.
// Thread-safety: Mutex and CondVar are meant to be shared between threads;
// a MutexLock belongs to the thread that made it.
#ifndef RIGEL_COMMON_MUTEX_H_
#define RIGEL_COMMON_MUTEX_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/check.h"
#include "common/thread_annotations.h"

namespace rigel {

class RIGEL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Blocks until this thread holds the mutex.
  void Lock() RIGEL_ACQUIRE() {
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  // Gives the mutex back; this thread must hold it.
  void Unlock() RIGEL_RELEASE() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
  }
  // Takes the mutex if it is free; true if this thread now holds it.
  bool TryLock() RIGEL_TRY_ACQUIRE(true) {
    if (!mu_.try_lock()) return false;
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }
  // Aborts unless this thread holds the mutex; tells the analysis that it
  // does (for code it cannot follow, such as a callback run under the lock).
  void AssertHeld() const RIGEL_ASSERT_CAPABILITY(this) {
    RIGEL_CHECK_MSG(owner_.load(std::memory_order_relaxed) == std::this_thread::get_id(),
                    "this thread does not hold the mutex");
  }

 private:
  friend class CondVar;

  std::mutex mu_;
  // The holder, for AssertHeld only: written by the holder while it holds
  // mu_, so a thread reads its own id here exactly when it holds the mutex.
  std::atomic<std::thread::id> owner_{};
};

// Holds a Mutex from construction to destruction.
class RIGEL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) RIGEL_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RIGEL_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits for a condition that other threads change under a Mutex. Every wait
// may wake spuriously: test the condition again in a loop. A wait gives the
// mutex up while it sleeps and holds it again when it returns.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) RIGEL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock = Adopt(mu);
    cv_.wait(lock);
    Reclaim(mu, lock);
  }
  // std::cv_status::timeout once `deadline` has passed without a wake-up.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline)
      RIGEL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock = Adopt(mu);
    std::cv_status status = cv_.wait_until(lock, deadline);
    Reclaim(mu, lock);
    return status;
  }
  // As WaitUntil(mu, steady_clock::now() + timeout). A loop that waits for a
  // condition should compute the deadline once and call WaitUntil, so that
  // spurious wake-ups do not extend the wait.
  template <typename Rep, typename Period>
  std::cv_status WaitFor(Mutex* mu, const std::chrono::duration<Rep, Period>& timeout)
      RIGEL_REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }

  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  // The wait runs on std::condition_variable (cheaper than
  // condition_variable_any) with a unique_lock that adopts the held
  // std::mutex and is released, still locked, once the wait returns: the
  // caller's MutexLock stays the owner throughout.
  static std::unique_lock<std::mutex> Adopt(Mutex* mu) RIGEL_REQUIRES(mu) {
    mu->owner_.store(std::thread::id(), std::memory_order_relaxed);
    return std::unique_lock<std::mutex>(mu->mu_, std::adopt_lock);
  }
  static void Reclaim(Mutex* mu, std::unique_lock<std::mutex>& lock) RIGEL_REQUIRES(mu) {
    lock.release();
    mu->owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }

  std::condition_variable cv_;
};

}  // namespace rigel

#endif  // RIGEL_COMMON_MUTEX_H_
