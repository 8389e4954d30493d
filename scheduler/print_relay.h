// The relay of a job's printed lines (scripts/rigel-launch): the scheduler
// writes the program's prints into a pipe, and this relay, a process that
// outlives every attempt of the job, copies each whole line to the
// launcher's standard output and then appends it to the run directory's
// file of printed lines. A restarted scheduler is told how many lines that
// file holds (--quiet-prints) and prints none of them again.
//
// Why a relay: a scheduler that wrote its standard output and then its file
// could be killed between the two writes, and its successor printed that
// line a second time (the sanitizer CI saw "epoch 20" twice). Here the one
// process that writes the standard output also keeps the count, and is not
// the one a failure kills. A line the scheduler was cut off in the middle of
// never reaches the output: the next attempt prints it whole.
//
// Errors: IoError naming what could not be written ("the standard output",
// or the file with LineFile's reason and the whole lines it ends with); the
// relay stops at the first, after the line in question reached the output
// (the standard output) or did not (the file: the line was printed, not
// recorded).
// Thread-safety: one call at a time; blocks until `in_fd` reaches EOF.
#ifndef RIGEL_SCHEDULER_PRINT_RELAY_H_
#define RIGEL_SCHEDULER_PRINT_RELAY_H_

#include <cstdint>

#include "common/line_file.h"
#include "common/status.h"

namespace rigel::scheduler {

struct RelayCounts {
  int64_t lines = 0;      // whole lines copied to the output and the file
  int64_t cut_bytes = 0;  // bytes of a last line with no newline, dropped
};

// Reads `in_fd` to EOF; each whole line goes to `out_fd` (write(2), nothing
// buffered) and then to `printed`. Does not close either descriptor.
StatusOr<RelayCounts> RelayPrints(int in_fd, int out_fd, LineFile* printed);

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_PRINT_RELAY_H_
