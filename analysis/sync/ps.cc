// ps: every step pulls the rows it touches and pushes them back.
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

class PsUnit : public Unit {
 public:
  std::string_view name() const override { return "ps"; }
  std::string_view description() const override {
    return "every step pulls the rows it touches from the servers and pushes them back when "
           "written";
  }
  bool Keeps(const PlanParam& p) const override { return p.strategy == Strategy::kPs && !p.cached; }
  void Count(const ParamRun& r, WorkerCounts* wc) const override { MoveStepRows(r, "ps", wc); }
};

}  // namespace

const Unit& Ps() {
  static const PsUnit unit;
  return unit;
}

}  // namespace rigel::analysis::sync
