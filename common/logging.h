// Minimal leveled logging for library code that runs unattended (transport,
// servers, schedulers): one line per event on stderr,
//   "W 12:34:56.789 transport: dropped malformed message from worker:3 ...".
//
// Header-only on purpose: it needs only fmt, which rigel::common already links,
// so any layer can use it without a build change. Tests and embedders can
// redirect lines with SetLogSink (e.g. to assert that something was logged once).
//
// Thread-safety: every function may be called from any thread. A sink is called
// with an internal mutex held, so it must not log itself.
#ifndef RIGEL_COMMON_LOGGING_H_
#define RIGEL_COMMON_LOGGING_H_

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace rigel {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

// Receives each line that passes the level filter: its level, the component
// ("transport") and the formatted message (no trailing newline).
using LogSink = std::function<void(LogLevel, std::string_view component, std::string_view message)>;

namespace internal {
inline std::atomic<int> g_log_level{static_cast<int>(LogLevel::kInfo)};
inline std::mutex g_log_mu;
inline LogSink g_log_sink;  // empty: write to stderr; guarded by g_log_mu

inline void WriteLogLine(LogLevel level, std::string_view component, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (g_log_sink) {
    g_log_sink(level, component, message);
    return;
  }
  static constexpr char kLetters[] = "DIWE";
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  // One fwrite per line so concurrent processes sharing stderr do not interleave within a line.
  std::string line =
      fmt::format("{} {:02}:{:02}:{:02}.{:03} {}: {}\n", kLetters[static_cast<int>(level)],
                  tm.tm_hour, tm.tm_min, tm.tm_sec, millis, component, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}
}  // namespace internal

// Lines below `level` are discarded. Default: kInfo.
inline void SetLogLevel(LogLevel level) {
  internal::g_log_level.store(static_cast<int>(level), std::memory_order_relaxed);
}
inline LogLevel GetLogLevel() {
  return static_cast<LogLevel>(internal::g_log_level.load(std::memory_order_relaxed));
}
inline bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= internal::g_log_level.load(std::memory_order_relaxed) &&
         level != LogLevel::kOff;
}

// Replaces the destination of log lines; an empty sink restores stderr.
// Returns the previous sink.
inline LogSink SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(internal::g_log_mu);
  std::swap(internal::g_log_sink, sink);
  return sink;
}

// Formats with fmt and writes one line if `level` passes the filter.
template <typename... Args>
void Log(LogLevel level, std::string_view component, fmt::format_string<Args...> format,
         Args&&... args) {
  if (!LogEnabled(level)) return;
  internal::WriteLogLine(level, component, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace rigel

#endif  // RIGEL_COMMON_LOGGING_H_
