#include "analysis/intsolve.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <utility>

namespace rigel::analysis {
namespace {

// Numbers in dependence tests are tiny (coefficients of subscripts, extents
// of spaces); anything near this bound means something unusual and the
// answer becomes "unknown" rather than wrong.
constexpr int64_t kLimit = int64_t{1} << 62;

bool Mul(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_mul_overflow(a, b, r) && *r<kLimit&& * r> - kLimit;
}
bool Add(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_add_overflow(a, b, r) && *r<kLimit&& * r> - kLimit;
}

int64_t FloorDiv(int64_t a, int64_t b) {  // b > 0
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Adds q * column `src` to column `dst` of every row of `m`.
bool AddColumn(std::vector<std::vector<int64_t>>* m, int dst, int src, int64_t q) {
  for (auto& row : *m) {
    int64_t t;
    if (!Mul(q, row[src], &t) || !Add(row[dst], t, &row[dst])) return false;
  }
  return true;
}

void SwapColumns(std::vector<std::vector<int64_t>>* m, int a, int b) {
  for (auto& row : *m) std::swap(row[a], row[b]);
}

}  // namespace

std::optional<Lattice> SolveEqualities(const std::vector<LinExpr>& eqs, int n, bool* overflow) {
  if (overflow) *overflow = false;
  auto fail_overflow = [&]() -> std::optional<Lattice> {
    if (overflow) *overflow = true;
    return std::nullopt;
  };
  // Column operations are applied to A and to U together (A U stays the
  // reduced matrix; U is unimodular), so z = U w and A U w = b.
  std::vector<std::vector<int64_t>> a;
  for (const LinExpr& e : eqs) a.push_back(e.coef);
  std::vector<std::vector<int64_t>> u(n, std::vector<int64_t>(n, 0));
  for (int k = 0; k < n; ++k) u[k][k] = 1;
  std::vector<int> pivot_of_row(a.size(), -1);
  int p = 0;
  for (size_t i = 0; i < a.size() && p < n; ++i) {
    // Euclid on the entries of row i in columns p..n-1, one column at a time.
    while (true) {
      int best = -1;
      for (int k = p; k < n; ++k) {
        if (a[i][k] != 0 && (best < 0 || std::llabs(a[i][k]) < std::llabs(a[i][best]))) best = k;
      }
      if (best < 0) break;
      if (best != p) {
        SwapColumns(&a, best, p);
        SwapColumns(&u, best, p);
      }
      bool done = true;
      for (int k = p + 1; k < n; ++k) {
        if (a[i][k] == 0) continue;
        int64_t q = a[i][k] / a[i][p];
        if (!AddColumn(&a, k, p, -q) || !AddColumn(&u, k, p, -q)) return fail_overflow();
        if (a[i][k] != 0) done = false;
      }
      if (done) {
        pivot_of_row[i] = p++;
        break;
      }
    }
  }
  // Forward substitution for the pivot variables w_0 .. w_{p-1}.
  std::vector<int64_t> w(n, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t rhs = -eqs[i].c;
    int piv = pivot_of_row[i];
    int upto = piv >= 0 ? piv : p;
    for (int k = 0; k < upto; ++k) {
      int64_t t;
      if (!Mul(a[i][k], w[k], &t) || !Add(rhs, -t, &rhs)) return fail_overflow();
    }
    if (piv < 0) {
      if (rhs != 0) return std::nullopt;  // inconsistent
      continue;
    }
    if (rhs % a[i][piv] != 0) return std::nullopt;  // the GCD test fails
    w[piv] = rhs / a[i][piv];
  }
  Lattice l;
  l.z0.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < p; ++k) {
      int64_t t;
      if (!Mul(u[r][k], w[k], &t) || !Add(l.z0[r], t, &l.z0[r])) return fail_overflow();
    }
  }
  for (int k = p; k < n; ++k) {
    std::vector<int64_t> col(n);
    for (int r = 0; r < n; ++r) col[r] = u[r][k];
    l.basis.push_back(std::move(col));
  }
  return l;
}

LinExpr Substitute(const LinExpr& e, const Lattice& lattice, bool* overflow) {
  LinExpr out;
  out.c = e.c;
  out.coef.assign(lattice.basis.size(), 0);
  for (size_t v = 0; v < e.coef.size(); ++v) {
    if (e.coef[v] == 0) continue;
    int64_t t;
    if (!Mul(e.coef[v], lattice.z0[v], &t) || !Add(out.c, t, &out.c)) *overflow = true;
    for (size_t k = 0; k < lattice.basis.size(); ++k) {
      if (!Mul(e.coef[v], lattice.basis[k][v], &t) || !Add(out.coef[k], t, &out.coef[k])) {
        *overflow = true;
      }
    }
  }
  return out;
}

namespace {

using Cons = std::vector<LinExpr>;

struct Solver {
  int n;
  long budget = 200000;  // recursive steps before giving up with kUnknown
  static constexpr size_t kMaxConstraints = 400;
  static constexpr int64_t kMaxEnumerate = 4096;

  // Divides each constraint by the gcd of its coefficients and floors the
  // constant (exact for integer points). Returns false on a constant
  // constraint that is violated.
  static bool Normalize(Cons* cons) {
    Cons out;
    std::set<std::pair<std::vector<int64_t>, int64_t>> seen;
    for (LinExpr& e : *cons) {
      int64_t g = 0;
      for (int64_t a : e.coef) g = std::gcd(g, std::llabs(a));
      if (g == 0) {
        if (e.c < 0) return false;
        continue;
      }
      if (g > 1) {
        for (int64_t& a : e.coef) a /= g;
        e.c = FloorDiv(e.c, g);
      }
      if (seen.insert({e.coef, e.c}).second) out.push_back(std::move(e));
    }
    *cons = std::move(out);
    return true;
  }

  // b * lower + a * upper, where lower has coefficient a > 0 on v and upper
  // has -b < 0: the combination no longer mentions v.
  static bool Combine(const LinExpr& lo, const LinExpr& up, int v, LinExpr* out) {
    int64_t a = lo.coef[v], b = -up.coef[v];
    out->coef.assign(lo.coef.size(), 0);
    int64_t t1, t2;
    for (size_t k = 0; k < lo.coef.size(); ++k) {
      if (!Mul(b, lo.coef[k], &t1) || !Mul(a, up.coef[k], &t2) || !Add(t1, t2, &out->coef[k])) {
        return false;
      }
    }
    out->coef[v] = 0;
    return Mul(b, lo.c, &t1) && Mul(a, up.c, &t2) && Add(t1, t2, &out->c);
  }

  // Fourier-Motzkin elimination of v (real shadow). False on overflow or
  // when the system grows too large.
  static bool Eliminate(const Cons& cons, int v, Cons* out) {
    out->clear();
    std::vector<const LinExpr*> lo, up;
    for (const LinExpr& e : cons) {
      if (e.coef[v] > 0) {
        lo.push_back(&e);
      } else if (e.coef[v] < 0) {
        up.push_back(&e);
      } else {
        out->push_back(e);
      }
    }
    for (const LinExpr* l : lo) {
      for (const LinExpr* u : up) {
        LinExpr c;
        if (!Combine(*l, *u, v, &c)) return false;
        out->push_back(std::move(c));
        if (out->size() > kMaxConstraints) return false;
      }
    }
    return true;
  }

  // Bounds on integer values of v over the real shadow of the other
  // variables (a sound over-approximation). Infinite sides are reported as
  // has_lo/has_hi false.
  bool RangeOf(Cons cons, int v, int64_t* lo, int64_t* hi, bool* has_lo, bool* has_hi) {
    for (int k = 0; k < n; ++k) {
      if (k == v) continue;
      Cons next;
      if (!Eliminate(cons, k, &next)) return false;
      cons = std::move(next);
      if (!Normalize(&cons)) {  // infeasible even over the reals
        *has_lo = *has_hi = true;
        *lo = 1;
        *hi = 0;
        return true;
      }
    }
    *has_lo = *has_hi = false;
    for (const LinExpr& e : cons) {
      int64_t a = e.coef[v];
      if (a > 0) {  // a v + c >= 0  =>  v >= ceil(-c / a)
        int64_t b = -FloorDiv(e.c, a);
        if (!*has_lo || b > *lo) *lo = b;
        *has_lo = true;
      } else if (a < 0) {  // v <= floor(c / -a)
        int64_t b = FloorDiv(e.c, -a);
        if (!*has_hi || b < *hi) *hi = b;
        *has_hi = true;
      }
    }
    return true;
  }

  Feasibility Run(Cons cons) {
    if (--budget < 0) return Feasibility::kUnknown;
    if (!Normalize(&cons)) return Feasibility::kNo;
    if (cons.empty()) return Feasibility::kYes;
    int free_var = -1, exact_var = -1;
    size_t exact_cost = 0;
    for (int v = 0; v < n && free_var < 0; ++v) {
      size_t nlo = 0, nup = 0;
      bool lo_unit = true, up_unit = true;
      for (const LinExpr& e : cons) {
        if (e.coef[v] > 0) {
          ++nlo;
          lo_unit &= e.coef[v] == 1;
        } else if (e.coef[v] < 0) {
          ++nup;
          up_unit &= e.coef[v] == -1;
        }
      }
      if (nlo + nup == 0) continue;
      if (nlo == 0 || nup == 0) {
        free_var = v;
      } else if ((lo_unit || up_unit) && (exact_var < 0 || nlo * nup < exact_cost)) {
        exact_var = v;
        exact_cost = nlo * nup;
      }
    }
    if (free_var >= 0) {
      // v is bounded on one side only: it can always be chosen far enough
      // out to satisfy every constraint that mentions it.
      Cons rest;
      for (LinExpr& e : cons) {
        if (e.coef[free_var] == 0) rest.push_back(std::move(e));
      }
      return Run(std::move(rest));
    }
    if (exact_var >= 0) {
      Cons next;
      if (!Eliminate(cons, exact_var, &next)) return Feasibility::kUnknown;
      return Run(std::move(next));
    }
    // No exact elimination: enumerate the variable with the smallest range.
    int best = -1;
    int64_t best_lo = 0, best_hi = -1;
    for (int v = 0; v < n; ++v) {
      bool used = false;
      for (const LinExpr& e : cons) used |= e.coef[v] != 0;
      if (!used) continue;
      int64_t lo = 0, hi = 0;
      bool has_lo, has_hi;
      if (!RangeOf(cons, v, &lo, &hi, &has_lo, &has_hi) || !has_lo || !has_hi) continue;
      if (hi < lo) return Feasibility::kNo;
      if (hi - lo >= kMaxEnumerate) continue;
      if (best < 0 || hi - lo < best_hi - best_lo) {
        best = v;
        best_lo = lo;
        best_hi = hi;
      }
    }
    if (best < 0) return Feasibility::kUnknown;
    bool unknown = false;
    for (int64_t val = best_lo; val <= best_hi; ++val) {
      Cons sub = cons;
      bool ovf = false;
      for (LinExpr& e : sub) {
        int64_t t;
        if (!Mul(e.coef[best], val, &t) || !Add(e.c, t, &e.c)) ovf = true;
        e.coef[best] = 0;
      }
      if (ovf) return Feasibility::kUnknown;
      Feasibility f = Run(std::move(sub));
      if (f == Feasibility::kYes) return f;
      if (f == Feasibility::kUnknown) unknown = true;
      if (budget < 0) return Feasibility::kUnknown;
    }
    return unknown ? Feasibility::kUnknown : Feasibility::kNo;
  }
};

}  // namespace

Feasibility Feasible(std::vector<LinExpr> ge, int n) {
  Solver s{n};
  return s.Run(std::move(ge));
}

}  // namespace rigel::analysis
