// The annotated lock types (common/mutex.h): what the analysis is told must
// also be what happens at run time.
#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rigel {
namespace {

TEST(Mutex, TryLockFailsWhileAnotherThreadHoldsItAndAssertHeldKnowsTheHolder) {
  Mutex mu;
  MutexLock lock(&mu);
  mu.AssertHeld();
  bool taken = true;
  std::thread other([&] {
    if (mu.TryLock()) {
      mu.Unlock();
    } else {
      taken = false;
    }
  });
  other.join();
  EXPECT_FALSE(taken);
}

TEST(MutexDeathTest, AssertHeldAbortsWhenThisThreadDoesNotHoldIt) {
  Mutex mu;
  EXPECT_DEATH(mu.AssertHeld(), "does not hold the mutex");
  std::thread holder([&] {
    MutexLock lock(&mu);
    // Held by this thread, not by the one that asserts below.
  });
  holder.join();
  EXPECT_DEATH(mu.AssertHeld(), "does not hold the mutex");
}

TEST(CondVar, AWaitGivesTheMutexUpAndHoldsItAgainWhenWoken) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread setter([&] {
    MutexLock lock(&mu);  // only possible while the waiter sleeps
    ready = true;
    cv.NotifyAll();
  });
  {
    MutexLock lock(&mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ready && cv.WaitUntil(&mu, deadline) == std::cv_status::no_timeout) {
    }
    EXPECT_TRUE(ready);
    mu.AssertHeld();
  }
  setter.join();
}

TEST(CondVar, WaitForTimesOutWithoutAWakeUpAndStillHoldsTheMutex) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const auto start = std::chrono::steady_clock::now();
  std::cv_status s = std::cv_status::no_timeout;
  // A spurious wake-up returns early: wait again until the timeout.
  while (s == std::cv_status::no_timeout) s = cv.WaitFor(&mu, std::chrono::milliseconds(20));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  mu.AssertHeld();
}

}  // namespace
}  // namespace rigel
