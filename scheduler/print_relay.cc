#include "scheduler/print_relay.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

namespace rigel::scheduler {
namespace {

// All of `data` to `fd`, through short writes and signals.
Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return IoError(std::string("the printed lines cannot be written to the standard output: ") +
                     std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RelayCounts> RelayPrints(int in_fd, int out_fd, LineFile* printed) {
  RelayCounts counts;
  std::string pending;  // bytes after the last newline read so far
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return IoError(std::string("the scheduler's printed lines cannot be read: ") +
                     std::strerror(errno));
    }
    if (n == 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      // The output first: a line recorded as printed must have been.
      RIGEL_RETURN_IF_ERROR(
          WriteAll(out_fd, std::string_view(pending).substr(start, nl + 1 - start)));
      Status st = printed->Append(std::string_view(pending).substr(start, nl - start));
      if (!st.ok()) return IoError("the run directory's printed lines: " + st.message());
      ++counts.lines;
    }
    pending.erase(0, start);
  }
  // The writer ended in the middle of a line (killed): its next attempt
  // prints the line whole.
  counts.cut_bytes = static_cast<int64_t>(pending.size());
  return counts;
}

}  // namespace rigel::scheduler
