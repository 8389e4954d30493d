// CPU time of this process, for the per-epoch logs (exec/epoch_log.h) and
// the heartbeats that carry each member's figure to the scheduler.
// Thread-safe.
#ifndef RIGEL_COMMON_CPU_TIME_H_
#define RIGEL_COMMON_CPU_TIME_H_

namespace rigel {

// User plus system CPU seconds of every thread of this process so far; 0 if
// the system cannot say.
double ProcessCpuSeconds();

}  // namespace rigel

#endif  // RIGEL_COMMON_CPU_TIME_H_
