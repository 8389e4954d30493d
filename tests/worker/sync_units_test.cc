// worker/sync/strategy.h: the worker has a runtime for every unit the
// analysis resolves parameters to (analysis/sync/units.h).
#include <gtest/gtest.h>

#include "analysis/sync/units.h"
#include "worker/sync/strategy.h"

namespace rigel::worker::sync {
namespace {

TEST(SyncUnits, EveryUnitHasAWorkerRuntime) {
  for (const analysis::sync::Unit* u : analysis::sync::Units()) {
    EXPECT_TRUE(HasRuntime(*u)) << u->name();
  }
}

}  // namespace
}  // namespace rigel::worker::sync
