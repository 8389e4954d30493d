// Private to kernel/: which tier runs a Kernel's body, and the switch from
// the interpreter to compiled code (kernel/jit/jit.h). Kernel::RunSome asks
// Body() before each stretch of elements and reports the time it
// interpreted; under JitMode::kAuto the report that brings the body's
// interpreted time to the expected compile time starts the compile on a
// thread of the Tier's, and the interpreter goes on until the compiled body
// is there (docs/architecture.md, "Tiers"). Thread-safe.
#ifndef RIGEL_KERNEL_TIER_H_
#define RIGEL_KERNEL_TIER_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "kernel/jit/jit.h"
#include "kernel/kernel.h"

namespace rigel::kernel {

class Tier {
 public:
  // The tier of `k`'s body at `mode`; kOn compiles it now.
  Tier(const Kernel::Impl& k, JitMode mode);
  ~Tier();  // waits for a compile in flight
  Tier(const Tier&) = delete;
  Tier& operator=(const Tier&) = delete;

  // The compiled body, or null while the interpreter runs it.
  jit::BodyFn Body() const { return fn_.load(std::memory_order_acquire); }
  // Whether a compiled body may run over `params`: their row widths (and a
  // whole-parameter update's row count) are those the body was compiled for,
  // as every binding of the program's parameters has. Otherwise the run
  // stays interpreted, which reads them from the bindings.
  bool Fits(const std::vector<ParamBinding>& params) const;
  // Whether interpreted time still counts toward a compile (kAuto, not yet
  // tried). A relaxed read: a stale answer costs one more report.
  bool Watching() const { return watching_.load(std::memory_order_relaxed); }
  // Adds `ns` of interpreter time over `elements` elements of `k`, the
  // body of this Tier, with `left` elements still to run in the program (-1:
  // unknown); may start compiling it (kAuto).
  void Interpreted(const Kernel::Impl& k, int64_t ns, int64_t elements, int64_t left);
  TierReport Report() const;

 private:
  void CompileNow(const Kernel::Impl& k, double interpreted_ms);

  struct Need {
    int param;
    bool rows;  // the row count, else the row width
    int64_t value;
  };

  std::vector<Need> needs_;
  std::atomic<jit::BodyFn> fn_{nullptr};
  std::atomic<bool> watching_{false};
  std::atomic<int64_t> interpreted_ns_{0};
  std::atomic<int64_t> interpreted_elements_{0};
  std::thread compiler_;  // the background compile (kAuto); set once
  mutable Mutex mu_;
  TierReport report_ RIGEL_GUARDED_BY(mu_);
};

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_TIER_H_
