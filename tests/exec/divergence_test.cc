// DSL.md versions 3 and 4: a relaxed parameter that blows up stops the run,
// finite or not, with an error naming the parameter, the row, the loop's
// line and the epoch (exec/divergence.h); a stable one never does.
#include "exec/divergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::exec {
namespace {

TEST(Divergence, ScanFindsTheLargestValueAndTheFirstNonFiniteOne) {
  std::vector<float> v = {0.5f, -3.0f, 2.0f, 1.0f, 0.0f, -0.25f};
  Magnitude m = ScanMagnitude(v.data(), 3, 2);
  EXPECT_TRUE(m.scanned);
  EXPECT_TRUE(m.finite);
  EXPECT_EQ(m.largest, 3.0f);
  EXPECT_EQ(m.row, 0);
  EXPECT_EQ(m.col, 1);
  v[4] = std::numeric_limits<float>::quiet_NaN();
  v[5] = std::numeric_limits<float>::infinity();
  m = ScanMagnitude(v.data(), 3, 2);
  EXPECT_FALSE(m.finite);
  EXPECT_EQ(m.bad_row, 2);
  EXPECT_EQ(m.bad_col, 0);
  EXPECT_EQ(Divergence("V", Magnitude{}, m), "'V' row 2 is not finite (nan at column 0)");
}

TEST(Divergence, GrowthIsMeasuredFromOneAtLeast) {
  Magnitude first;  // not scanned: no reference
  Magnitude a{true, 2.0f, 3, 0};
  Magnitude b{true, 1999.0f, 17, 1};
  Magnitude c{true, 2000.0f, 17, 1};
  EXPECT_EQ(Divergence("w", first, c), "");                  // no reference
  EXPECT_EQ(Divergence("w", Magnitude{true, 0.0f}, c), "");  // from zeros(): no scale yet
  EXPECT_EQ(Divergence("w", a, b), "");                      // 999.5-fold
  EXPECT_EQ(Divergence("w", a, c),
            "the largest value of 'w' grew from 2 (row 3) to 2000 (row 17), 1000-fold over the "
            "loop's runs since (1000-fold, and to 1000 or more, is divergence)");
  EXPECT_EQ(Divergence("w", c, a), "");  // shrinking is fine
  // Near zero there is no scale: an SVM's bias from 3e-7 to 0.02 is training.
  EXPECT_EQ(Divergence("b", Magnitude{true, 3e-7f, 0, 0}, Magnitude{true, 0.02f, 0, 0}), "");
  EXPECT_NE(Divergence("b", Magnitude{true, 3e-7f, 0, 0}, Magnitude{true, 1000.0f, 0, 0}), "");
  // The first run moves parameters from their initial values by large
  // factors: 10^4-fold, and to 1000, is divergence.
  const Magnitude init{true, 0.0156f, 5, 0};
  EXPECT_EQ(Divergence("emb", init, Magnitude{true, 150.0f, 1, 0}, /*first=*/true), "");
  EXPECT_EQ(Divergence("emb", init, Magnitude{true, 999.0f, 1, 0}, true), "");
  EXPECT_NE(Divergence("emb", init, Magnitude{true, 5000.0f, 1, 0}, true)
                .find("in the loop's first run from its initial values"),
            std::string::npos);
}

TEST(Divergence, AWatchFindsSteadyGrowthOverSeveralRuns) {
  DivergenceWatch w;
  std::vector<float> v = {0.1f};
  w.Before(v.data(), 1, 1);
  std::vector<std::string> said;
  for (float x : {5.0f, 500.0f, 5e4f}) {  // 100-fold a run
    v[0] = x;
    said.push_back(w.After("b", v.data(), 1, 1));
  }
  EXPECT_EQ(said[0], "");  // the first run, 50-fold from 0.1
  EXPECT_EQ(said[1], "");  // 100-fold
  EXPECT_NE(said[2].find("grew from 5 (row 0) to 5e+04 (row 0), 1e+04-fold"), std::string::npos)
      << said[2];
}

struct Ran {
  Status status;
  std::string out;
};

// tests/e2e/programs/grow.rgl (a relaxed w that grows 1 + lr-fold per
// element, 250 elements a row an epoch) at learning rate `lr`.
Ran RunGrowing(const std::string& lr) {
  Ran r;
  frontend::CompileOptions co;
  co.sets = {{"lr", lr}};
  auto prog =
      frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/grow.rgl", co);
  if (!prog.ok()) {
    r.status = prog.status();
    return r;
  }
  std::ostringstream out;
  ExecutorOptions opts;
  opts.out = &out;
  auto ex = SerialExecutor::Create(*prog, opts);
  if (!ex.ok()) {
    r.status = ex.status();
    return r;
  }
  r.status = (*ex)->Run();
  r.out = out.str();
  return r;
}

TEST(Divergence, SerialRunStopsWhenARelaxedParameterGrowsAThousandFold) {
  Ran r = RunGrowing("0.03");
  ASSERT_FALSE(r.status.ok()) << r.out;
  EXPECT_EQ(r.status.code(), StatusCode::kFailedPrecondition);
  const std::string& m = r.status.message();
  EXPECT_NE(m.find("grow.rgl:12:3: error: a relaxed parameter diverged in epoch 1 (run 1 of this "
                   "loop): the largest value of 'w' grew from "),
            std::string::npos)
      << m;
  EXPECT_EQ(r.out.find("epoch 1"), std::string::npos) << "nothing printed after it:\n" << r.out;
}

TEST(Divergence, SerialRunStopsAtTheFirstNonFiniteValue) {
  Ran r = RunGrowing("30");
  ASSERT_FALSE(r.status.ok()) << r.out;
  EXPECT_NE(r.status.message().find("a relaxed parameter diverged in epoch 0 (run 0 of this "
                                    "loop): 'w' row 0 is not finite (inf at column 0)"),
            std::string::npos)
      << r.status.message();
}

TEST(Divergence, AStableRelaxedRunIsNotStopped) {
  // Grows 1.2-fold an epoch, 3-fold over the run: training, not divergence.
  Ran r = RunGrowing("0.0007");
  EXPECT_TRUE(r.status.ok()) << r.status.message();
}

}  // namespace
}  // namespace rigel::exec
