// Process-wide memory settings for processes that move large messages.
#ifndef RIGEL_COMMON_MEMORY_H_
#define RIGEL_COMMON_MEMORY_H_

#include <cstdint>

namespace rigel {

// Makes glibc malloc serve large blocks (up to 1 GiB) from its heaps and
// keep freed memory there instead of mapping fresh pages for each one and
// returning them on free. Servers and workers allocate and free a
// message-sized buffer (megabytes) for every pull and push; with fresh pages
// each time, the page faults cost more than the work (measured in
// bench/ps.cc: a 100k-row push of width 16 spent half its client time in page
// faults). The price is that freed buffers stay in the process until exit.
// Every thread allocates from one heap, so that what one frees serves the
// others. Call once at the start of main, before other threads exist. Not
// thread-safe; a no-op where malloc is not glibc's.
void KeepLargeBuffersInHeap();

// The most resident memory this process has held so far, in bytes (Linux's
// VmHWM: the high-water mark of its resident set), or -1 where the system
// does not say (no /proc). Thread-safe.
int64_t PeakResidentBytes();

}  // namespace rigel

#endif  // RIGEL_COMMON_MEMORY_H_
