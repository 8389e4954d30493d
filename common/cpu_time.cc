#include "common/cpu_time.h"

#include <sys/resource.h>

namespace rigel {

double ProcessCpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

}  // namespace rigel
