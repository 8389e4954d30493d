// local (and held): the rows a worker's blocks own stay on it for the run.
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

class LocalUnit : public Unit {
 public:
  explicit LocalUnit(bool held) : held_(held) {}

  std::string_view name() const override { return held_ ? "held" : "local"; }
  std::string_view description() const override {
    return held_ ? "no other loop touches it, so its rows stay on the workers between runs and "
                   "reach the servers only for a checkpoint or the saved parameters"
                 : "the rows a worker's blocks own stay on it for the run: pulled at its start, "
                   "pushed at its end when written";
  }
  bool Keeps(const PlanParam& p) const override {
    return p.strategy == Strategy::kLocal && p.held == held_;
  }

  // Held rows are pulled at the start unless kept from this loop's last run
  // or still the initialiser's (no run wrote the parameter, so the worker
  // computes them), and pushed at the end when written (unless they stay on
  // the worker between runs: the flush before a checkpoint or the saved
  // parameters is not an epoch's); shared rows move around every step.
  void Count(const ParamRun& r, WorkerCounts* wc) const override {
    CountState::Param& ps = *r.state;
    const bool kept = ps.local.loop == r.loop && ps.local.rows == r.rows->held &&
                      ps.local.generation == ps.generation && ps.local.valid;
    const double rb = RowBytes(*r.shape), held = static_cast<double>(r.rows->held.size());
    if (kept) {
      wc->bytes["local.kept"] += held * rb;
    } else if (held > 0 && ps.generation != 0) {
      Move(wc, "local", held, rb, -1);
    }
    MoveStepRows(r, "local", wc);
    ps.local = {r.loop, r.rows->held, 0, true};
    if (r.rows->param.held) return;
    const double pushed = Pushed(r, r.rows->held);
    if (pushed > 0) Move(wc, "local", pushed, rb, -2);
  }
  void Written(CountState::Param* state) const override {
    state->local.generation = state->generation;
  }

 private:
  bool held_;
};

}  // namespace

const Unit& Local() {
  static const LocalUnit unit(false);
  return unit;
}

const Unit& Held() {
  static const LocalUnit unit(true);
  return unit;
}

}  // namespace rigel::analysis::sync
