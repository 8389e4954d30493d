// What a pass of the loop-body compiler did: named counters ("reads merged",
// "writes fused", "instructions before", ...) that a pass records when it
// changes something, and the report the pipeline (kernel/passes/pipeline.h)
// gives for each pass of each compiled loop. Value types; not thread-safe.
#ifndef RIGEL_KERNEL_PASSES_STATS_H_
#define RIGEL_KERNEL_PASSES_STATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rigel::kernel::passes {

class PassStats {
 public:
  // Adds `n` to `counter`, creating it (after the existing ones) if new.
  void Add(std::string_view counter, int64_t n = 1) {
    for (auto& [name, value] : counters_) {
      if (name == counter) {
        value += n;
        return;
      }
    }
    counters_.emplace_back(std::string(counter), n);
  }
  // The value of `counter`; 0 if it was never recorded.
  int64_t Get(std::string_view counter) const {
    for (const auto& [name, value] : counters_) {
      if (name == counter) return value;
    }
    return 0;
  }
  // True when nothing was recorded: the pass changed nothing.
  bool empty() const { return counters_.empty(); }
  // Counters in the order they were first recorded.
  const std::vector<std::pair<std::string, int64_t>>& counters() const { return counters_; }

 private:
  std::vector<std::pair<std::string, int64_t>> counters_;
};

// One pass on one loop: whether it ran (false: disabled) and its counters;
// for a pass that changed something the pipeline adds "instructions before"
// and "instructions after" (IR instructions for IR passes, bytecode ones for
// bytecode passes).
struct PassReport {
  std::string pass;
  bool ran = false;
  PassStats stats;
};

}  // namespace rigel::kernel::passes

#endif  // RIGEL_KERNEL_PASSES_STATS_H_
