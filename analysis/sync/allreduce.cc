// allreduce: a whole copy on every worker, its changes summed by collectives.
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

class AllreduceUnit : public Unit {
 public:
  std::string_view name() const override { return "allreduce"; }
  std::string_view description() const override {
    return "a whole copy on every worker, its changes summed by an all-reduce after every step";
  }
  bool Keeps(const PlanParam& p) const override { return p.strategy == Strategy::kAllreduce; }

  // Pulled whole unless this worker's copy is current; when written, one
  // all-reduce per step (--sync-every 1) and worker 0 pushes the result.
  void Count(const ParamRun& r, WorkerCounts* wc) const override {
    CountState::Param& ps = *r.state;
    const ParamShape& shape = *r.shape;
    if (!(ps.dense.valid && ps.dense.generation == ps.generation)) {
      Move(wc, "allreduce", static_cast<double>(shape.rows), RowBytes(shape), -1);
      ps.dense.valid = true;
      ps.dense.generation = ps.generation;
    }
    if (!r.rows->param.written) return;
    const int syncs = static_cast<int>(wc->step_elements.size());
    wc->collectives += syncs;
    const double b = static_cast<double>(shape.rows) * RowBytes(shape);
    wc->collective_bytes += b * syncs;
    wc->bytes["allreduce.collective"] += b * syncs;
    if (r.rank == 0) Move(wc, "allreduce", static_cast<double>(shape.rows), RowBytes(shape), -2);
  }
  void Written(CountState::Param* state) const override {
    state->dense.generation = state->generation;
  }

  // The servers' copy and the deltas beside the worker's own.
  std::vector<MemoryPart> WorkerMemory(const MemoryInputs::Param& p, int64_t /*cache_rows*/,
                                       bool /*in_part*/) const override {
    return {{"allreduce copies of '" + p.name + "'", 2 * p.rows * p.width * 4}};
  }
};

}  // namespace

const Unit& Allreduce() {
  static const AllreduceUnit unit;
  return unit;
}

}  // namespace rigel::analysis::sync
