#include "common/memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rigel {

void KeepLargeBuffersInHeap() {
#if defined(__GLIBC__)
  // Fixing the thresholds also turns off glibc's dynamic adjustment, which
  // would otherwise move them on its own after the first large free.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace rigel
