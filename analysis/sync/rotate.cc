// rotate: each worker holds one block's rows at a time and hands them on.
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

class RotateUnit : public Unit {
 public:
  std::string_view name() const override { return "rotate"; }
  std::string_view description() const override {
    return "each worker holds one column of blocks' rows at a time and hands it to the next "
           "worker after each step";
  }
  bool Keeps(const PlanParam& p) const override { return p.strategy == Strategy::kRotate; }

  // The column this worker ends with (and its first one) pulled, a hand-off
  // after every step but the last, the last column pushed.
  void Count(const ParamRun& r, WorkerCounts* wc) const override {
    const double rb = RowBytes(*r.shape);
    const auto& cols = r.rows->columns;
    const int last = (r.rank + r.workers - 1) % r.workers;
    Move(wc, "rotate", static_cast<double>(cols[last].size()), rb, -1);
    if (last != r.rank) Move(wc, "rotate", static_cast<double>(cols[r.rank].size()), rb, -1);
    const int64_t steps = static_cast<int64_t>(wc->step_elements.size());
    for (int64_t t = 0; t + 1 < steps; ++t) {
      const double b = static_cast<double>(cols[(r.rank + t) % r.workers].size()) * rb;
      wc->bytes["rotate"] += b;
      wc->step_handoff_bytes[t] += b;
    }
    const double pushed = Pushed(r, cols[last]);
    if (pushed > 0) Move(wc, "rotate", pushed, rb, -2);
  }

  // Every worker pushes its last column when a run ends: together, the
  // whole table, each server its share.
  std::vector<MemoryPart> ServerMemory(const ServerShare& s) const override {
    const MemoryInputs::Param& p = *s.param;
    return {{"the columns of '" + p.name + "' the workers push when a run ends",
             (p.rows + s.servers - 1) / s.servers * p.width * 4}};
  }
};

}  // namespace

const Unit& Rotate() {
  static const RotateUnit unit;
  return unit;
}

}  // namespace rigel::analysis::sync
