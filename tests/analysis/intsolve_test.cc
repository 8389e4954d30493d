// The exact integer solver behind the dependence test.
#include "analysis/intsolve.h"

#include <gtest/gtest.h>

namespace rigel::analysis {
namespace {

LinExpr L(std::vector<int64_t> coef, int64_t c) { return {std::move(coef), c}; }

TEST(SolveEqualities, ParametrisesEveryIntegerSolution) {
  // 2x - 3y = 1: x = 2 + 3t, y = 1 + 2t (up to the choice of t).
  auto l = SolveEqualities({L({2, -3}, -1)}, 2);
  ASSERT_TRUE(l.has_value());
  ASSERT_EQ(l->basis.size(), 1u);
  for (int64_t t = -5; t <= 5; ++t) {
    int64_t x = l->z0[0] + l->basis[0][0] * t;
    int64_t y = l->z0[1] + l->basis[0][1] * t;
    EXPECT_EQ(2 * x - 3 * y, 1);
  }
  // Consecutive t give consecutive solutions (the basis is primitive).
  EXPECT_EQ(std::abs(l->basis[0][0]), 3);
  EXPECT_EQ(std::abs(l->basis[0][1]), 2);
}

TEST(SolveEqualities, GcdTestRejects) {
  EXPECT_FALSE(SolveEqualities({L({2, -2}, -1)}, 2).has_value());  // 2x = 2y + 1
  EXPECT_FALSE(SolveEqualities({L({0, 0}, 3)}, 2).has_value());    // 3 = 0
  // x + y = 1 and x + y = 2 together are inconsistent.
  EXPECT_FALSE(SolveEqualities({L({1, 1}, -1), L({1, 1}, -2)}, 2).has_value());
}

TEST(SolveEqualities, TwoEquationsFixTwoOfFourVariables) {
  // x0 + 1 = y0, x1 = y1 + 1 over (x0, x1, y0, y1).
  auto l = SolveEqualities({L({1, 0, -1, 0}, 1), L({0, 1, 0, -1}, -1)}, 4);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->basis.size(), 2u);
}

TEST(Feasible, ExactWithUnitCoefficients) {
  // 0 <= x <= 3, 0 <= y <= 3, x + y >= 7: no.
  EXPECT_EQ(Feasible({L({1, 0}, 0), L({-1, 0}, 3), L({0, 1}, 0), L({0, -1}, 3), L({1, 1}, -7)}, 2),
            Feasibility::kNo);
  EXPECT_EQ(Feasible({L({1, 0}, 0), L({-1, 0}, 3), L({0, 1}, 0), L({0, -1}, 3), L({1, 1}, -6)}, 2),
            Feasibility::kYes);
}

TEST(Feasible, IntegerGapsThatRealsMiss) {
  // 4 <= 3x <= 5 has real solutions but no integer one.
  EXPECT_EQ(Feasible({L({3}, -4), L({-3}, 5)}, 1), Feasibility::kNo);
  // 2 <= 2x - 2y... : 1 <= 2x + 2y <= 1 (x, y integers): no.
  EXPECT_EQ(Feasible({L({2, 2}, -1), L({-2, -2}, 1)}, 2), Feasibility::kNo);
  // 3x - 2y = 1 squeezed to a box, checked by enumeration: x = 1, y = 1.
  EXPECT_EQ(Feasible({L({3, -2}, -1), L({-3, 2}, 1), L({1, 0}, 0), L({-1, 0}, 5), L({0, 1}, 0),
                      L({0, -1}, 5)},
                     2),
            Feasibility::kYes);
}

TEST(Feasible, UnboundedSidesAreFree) {
  // x >= 5 alone, and x - y >= 3 with y >= 0: both satisfiable.
  EXPECT_EQ(Feasible({L({1}, -5)}, 1), Feasibility::kYes);
  EXPECT_EQ(Feasible({L({1, -1}, -3), L({0, 1}, 0)}, 2), Feasibility::kYes);
}

}  // namespace
}  // namespace rigel::analysis
