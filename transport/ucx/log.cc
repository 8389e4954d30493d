#include "transport/ucx/log.h"

#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/logging.h"

namespace rigel::transport::ucx_internal {
namespace {

// A source line that repeats (a flush failing on each of a dead peer's
// requests) is said a few times, then only at debug level.
constexpr int kLoudPerLine = 3;

ucs_log_func_rc_t Handle(const char* file, unsigned line, const char* /*function*/,
                         ucs_log_level_t level, const ucs_log_component_config_t* /*comp*/,
                         const char* format, va_list ap) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, ap);
  static std::mutex mu;
  static std::unordered_map<std::string, int> said;
  bool loud = level <= UCS_LOG_LEVEL_WARN;
  if (loud) {
    std::lock_guard<std::mutex> lock(mu);
    if (said.size() > 1024) said.clear();
    int& n = said[std::string(file) + ":" + std::to_string(line)];
    loud = ++n <= kLoudPerLine;
  }
  Log(loud ? LogLevel::kWarning : LogLevel::kDebug, "ucx", "{} ({}:{})", text, file, line);
  return UCS_LOG_FUNC_RC_STOP;
}

}  // namespace

void RouteUcxLog() {
  static std::once_flag once;
  std::call_once(once, [] { ucs_log_push_handler(&Handle); });
}

}  // namespace rigel::transport::ucx_internal
