#include "analysis/sync/units.h"

namespace rigel::analysis::sync {

const std::vector<const Unit*>& Units() {
  // Each resolved parameter is kept by exactly one of these
  // (tests/analysis/units_test.cc checks it over every example).
  static const std::vector<const Unit*> units = {
      &Local(), &Held(), &Rotate(), &Cache(), &Ps(), &Allreduce(), &Replicated(),
  };
  return units;
}

const Unit* UnitOf(const PlanParam& p) {
  for (const Unit* u : Units()) {
    if (u->Keeps(p)) return u;
  }
  return nullptr;
}

}  // namespace rigel::analysis::sync
