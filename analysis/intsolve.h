// Exact integer reasoning for dependence tests on small systems (a few
// variables, a few constraints: our iteration spaces have at most 3
// dimensions, so a dependence test has at most 6 unknowns).
//
// Two pieces:
//  - SolveEqualities: all integer solutions of A z = b as z = z0 + N t
//    (t ranges over Z^r), by unimodular column reduction. This is the exact
//    form of the GCD test: no solution means no dependence.
//  - Feasible: does {t in Z^n : every constraint e.t + c >= 0} have a point?
//    Variables are eliminated with Fourier-Motzkin when that is exact for
//    integers (one side of every pair has a unit coefficient, as in Pugh's
//    Omega test), or with an unbounded side; otherwise a variable whose range
//    is small is enumerated. When neither applies, or numbers overflow, the
//    answer is kUnknown and callers must assume the worst.
//
// Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_INTSOLVE_H_
#define RIGEL_ANALYSIS_INTSOLVE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace rigel::analysis {

// coef . z + c, over variables z_0 .. z_{n-1}.
struct LinExpr {
  std::vector<int64_t> coef;
  int64_t c = 0;
};

enum class Feasibility { kNo, kYes, kUnknown };

// The integer solutions of a system of equalities: z = z0 + basis * t.
struct Lattice {
  std::vector<int64_t> z0;                  // one solution (n entries)
  std::vector<std::vector<int64_t>> basis;  // r columns of n entries each
};

// Solves every `eqs[k].coef . z + eqs[k].c == 0` over the integers, with n
// variables (each coef has n entries). Returns nullopt when there is no
// integer solution. `overflow` (optional) is set when numbers grew past
// 2^62; the result is then nullopt too and must not be trusted as "no
// solution".
std::optional<Lattice> SolveEqualities(const std::vector<LinExpr>& eqs, int n,
                                       bool* overflow = nullptr);

// Substitutes z = lattice.z0 + basis * t into `e` (over z), giving an
// expression over t. Sets *overflow on overflow.
LinExpr Substitute(const LinExpr& e, const Lattice& lattice, bool* overflow);

// Decides whether some integer t satisfies every `ge[k].coef . t + c >= 0`
// (n variables).
Feasibility Feasible(std::vector<LinExpr> ge, int n);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_INTSOLVE_H_
