// replicated: a read-only copy of the rows a worker reads, once per run.
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

class ReplicatedUnit : public Unit {
 public:
  std::string_view name() const override { return "replicated"; }
  std::string_view description() const override {
    return "a read-only copy of the rows each worker reads, fetched once per run of the loop";
  }
  bool Keeps(const PlanParam& p) const override { return p.strategy == Strategy::kReplicated; }

  // Nothing moves while a current whole copy (allreduce's) or the same rows
  // of the same value are held.
  void Count(const ParamRun& r, WorkerCounts* wc) const override {
    CountState::Param& ps = *r.state;
    if (ps.dense.valid && ps.dense.generation == ps.generation) return;
    if (ps.replicated.valid && ps.replicated.rows == r.rows->read &&
        ps.replicated.generation == ps.generation) {
      return;
    }
    Move(wc, "replicated", static_cast<double>(r.rows->read.size()), RowBytes(*r.shape), -1);
    ps.replicated = {r.loop, r.rows->read, ps.generation, true};
  }
};

}  // namespace

const Unit& Replicated() {
  static const ReplicatedUnit unit;
  return unit;
}

}  // namespace rigel::analysis::sync
