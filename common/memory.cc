#include "common/memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rigel {

void KeepLargeBuffersInHeap() {
#if defined(__GLIBC__)
  // Fixing the thresholds also turns off glibc's dynamic adjustment, which
  // would otherwise move them on its own after the first large free.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // One heap for every thread: a buffer freed in one thread's arena would
  // otherwise stay there, unseen by the others' allocations (messages are
  // made on the transport's threads and freed on the worker's). A 2-D MF
  // worker peaked at 102.7 MB with an arena per thread, 96.9 MB with one.
  mallopt(M_ARENA_MAX, 1);
#endif
}

int64_t PeakResidentBytes() {
  // /proc/self/status is a few dozen short lines; stdio keeps this free of
  // the allocations a stream would make.
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      if (std::sscanf(line + 6, "%lld", &kb) != 1) kb = -1;
      break;
    }
  }
  std::fclose(f);
  return kb < 0 ? -1 : static_cast<int64_t>(kb) * 1024;
}

}  // namespace rigel
