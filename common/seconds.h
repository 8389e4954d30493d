// Elapsed wall-clock time for the timing figures runs report (compute,
// communication and waiting seconds). Thread-safe.
#ifndef RIGEL_COMMON_SECONDS_H_
#define RIGEL_COMMON_SECONDS_H_

#include <chrono>

namespace rigel {

using SteadyClock = std::chrono::steady_clock;

// Seconds from `t` to now on the steady clock.
inline double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

}  // namespace rigel

#endif  // RIGEL_COMMON_SECONDS_H_
