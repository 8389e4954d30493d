#include "analysis/dependence.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "analysis/intsolve.h"

namespace rigel::analysis {

using ir::Program;

bool Distance::Constant() const {
  for (bool f : fixed) {
    if (!f) return false;
  }
  return true;
}

std::string Distance::ToString() const {
  std::string s = "(";
  for (size_t d = 0; d < fixed.size(); ++d) {
    if (d) s += ", ";
    s += fixed[d] ? std::to_string(dist[d]) : sign[d];
  }
  return s + ")";
}

std::string DescribePair(const Program& prog, const LoopAccesses& acc, const Dependence& d) {
  auto one = [&](const ParamAccess& a) {
    return FormatAccess(prog, a) + " (" + AccessKindName(a.kind) + ", " +
           std::to_string(a.loc.line) + ":" + std::to_string(a.loc.col) + ")";
  };
  const ParamAccess& a = acc.accesses[d.a];
  if (d.a == d.b) return one(a) + " in two iterations";
  return one(a) + " and " + one(acc.accesses[d.b]);
}

namespace {

// The system for one pair: access a at iteration x, access b at iteration y;
// variables z = (x_0 .. x_{D-1}, y_0 .. y_{D-1}).
class PairTest {
 public:
  PairTest(const Program& prog, const LoopAccesses& acc, int a, int b)
      : prog_(prog), acc_(acc), d_(static_cast<int>(acc.space.dims.size())), n_(2 * d_) {
    const ParamAccess& pa = acc.accesses[a];
    const ParamAccess& pb = acc.accesses[b];
    size_t common = std::min(pa.subs.size(), pb.subs.size());
    for (size_t k = 0; k < common; ++k) {
      const Subscript& s1 = pa.subs[k];
      const Subscript& s2 = pb.subs[k];
      if (s1.kind != Subscript::kAffine || s2.kind != Subscript::kAffine) {
        const Subscript& bad = s1.kind != Subscript::kAffine ? s1 : s2;
        if (always_why_.empty()) always_why_ = bad.text + " is " + bad.why;
        continue;
      }
      if (s1.sym != s2.sym) {
        if (always_why_.empty()) {
          always_why_ = s1.text + " and " + s2.text + " depend on driver values the analysis " +
                        "does not know";
        }
        continue;
      }
      LinExpr e = Over(s1, 0);
      LinExpr f = Over(s2, d_);
      for (int v = 0; v < n_; ++v) e.coef[v] -= f.coef[v];
      e.c -= f.c;
      eqs_.push_back(e);
      equations_text_.push_back(FormatAffine(prog, acc.space.dims, s1, "") + " = " +
                                FormatAffine(prog, acc.space.dims, s2, "'"));
    }
    if (pa.subs.empty() || pb.subs.empty()) {
      const ParamAccess& whole = pa.subs.empty() ? pa : pb;
      always_why_ = FormatAccess(prog, whole) + " is the whole parameter";
    }
    // Iteration space bounds.
    for (int v = 0; v < d_; ++v) {
      int64_t ext = acc.space.extent[v];
      for (int side = 0; side < 2; ++side) {
        LinExpr lo = Zero();
        lo.coef[side * d_ + v] = 1;
        ge_.push_back(lo);
        if (ext >= 0) {
          LinExpr hi = Zero();
          hi.coef[side * d_ + v] = -1;
          hi.c = ext - 1;
          ge_.push_back(hi);
        }
      }
    }
    AddParamBounds(pa, 0);
    AddParamBounds(pb, d_);
    bool overflow = false;
    lattice_ = SolveEqualities(eqs_, n_, &overflow);
    if (overflow) inexact_ = true;
  }

  bool inexact() const { return inexact_; }
  bool unconstrained() const { return eqs_.empty(); }
  const std::string& always_why() const { return always_why_; }
  const std::vector<std::string>& equations() const { return equations_text_; }
  // False when the equalities have no integer solution (and numbers did not
  // overflow): the two accesses never touch the same element.
  bool Solvable() const { return lattice_.has_value() || inexact_; }

  int dims() const { return d_; }

  // x_d - y_d as an expression over z.
  LinExpr Dx(int d) const {
    LinExpr e = Zero();
    e.coef[d] = 1;
    e.coef[d_ + d] = -1;
    return e;
  }
  static LinExpr Scaled(LinExpr e, int64_t k, int64_t c) {
    for (int64_t& v : e.coef) v *= k;
    e.c = e.c * k + c;
    return e;
  }

  // May some (x, y) satisfy the pair's system plus `extra` (each >= 0)?
  // An undecided question counts as yes and marks the pair inexact.
  bool MayExist(const std::vector<LinExpr>& extra) {
    if (!lattice_) return inexact_;
    std::vector<LinExpr> cons;
    bool overflow = false;
    for (const LinExpr& e : ge_) cons.push_back(Substitute(e, *lattice_, &overflow));
    for (const LinExpr& e : extra) cons.push_back(Substitute(e, *lattice_, &overflow));
    if (overflow) {
      inexact_ = true;
      return true;
    }
    Feasibility f = Feasible(std::move(cons), static_cast<int>(lattice_->basis.size()));
    if (f == Feasibility::kUnknown) inexact_ = true;
    return f != Feasibility::kNo;
  }

  // If `e` (over z) takes one value on every solution, returns it.
  std::optional<int64_t> ConstantValue(const LinExpr& e) {
    if (!lattice_) return std::nullopt;
    bool overflow = false;
    LinExpr t = Substitute(e, *lattice_, &overflow);
    if (overflow) return std::nullopt;
    for (int64_t c : t.coef) {
      if (c != 0) return std::nullopt;
    }
    return t.c;
  }

 private:
  LinExpr Zero() const {
    LinExpr e;
    e.coef.assign(n_, 0);
    return e;
  }
  LinExpr Over(const Subscript& s, int offset) const {
    LinExpr e = Zero();
    for (int v = 0; v < d_; ++v) e.coef[offset + v] = s.coef[v];
    e.c = s.c;
    return e;
  }
  // An access that runs names an element inside the parameter (the executor
  // stops otherwise), so its subscripts are within the rows (and width).
  void AddParamBounds(const ParamAccess& p, int offset) {
    for (size_t k = 0; k < p.subs.size() && k < 2; ++k) {
      const Subscript& s = p.subs[k];
      if (s.kind != Subscript::kAffine || !s.sym.empty()) continue;
      int64_t size = k == 0 ? acc_.param_rows[p.param] : prog_.params[p.param].width;
      if (size <= 0) continue;
      LinExpr lo = Over(s, offset);
      ge_.push_back(lo);
      LinExpr hi = Scaled(lo, -1, size - 1);
      ge_.push_back(hi);
    }
  }

  const Program& prog_;
  const LoopAccesses& acc_;
  int d_, n_;
  std::vector<LinExpr> eqs_, ge_;
  std::vector<std::string> equations_text_;
  std::string always_why_;
  std::optional<Lattice> lattice_;
  bool inexact_ = false;
};

// Lexicographically positive classes of delta = sigma * (y - x).
void Distances(PairTest* t, int from, int to, int sigma, std::vector<Distance>* out) {
  int d = t->dims();
  auto delta = [&](int k) { return PairTest::Scaled(t->Dx(k), -sigma, 0); };
  for (int level = 0; level < d; ++level) {
    std::vector<LinExpr> cls;
    for (int k = 0; k < level; ++k) {
      cls.push_back(delta(k));
      cls.push_back(PairTest::Scaled(delta(k), -1, 0));
    }
    cls.push_back(PairTest::Scaled(delta(level), 1, -1));
    if (!t->MayExist(cls)) continue;
    Distance dist;
    dist.from = from;
    dist.to = to;
    dist.fixed.assign(d, false);
    dist.dist.assign(d, 0);
    dist.sign.assign(d, "");
    for (int k = 0; k < d; ++k) {
      if (k < level) {
        dist.fixed[k] = true;
        continue;
      }
      if (auto v = t->ConstantValue(delta(k))) {
        dist.fixed[k] = true;
        dist.dist[k] = *v;
        continue;
      }
      auto with = [&](LinExpr e) {
        std::vector<LinExpr> c = cls;
        c.push_back(std::move(e));
        return t->MayExist(c);
      };
      bool pos = with(PairTest::Scaled(delta(k), 1, -1));
      bool neg = k != level && with(PairTest::Scaled(delta(k), -1, -1));
      bool zero = false;
      if (k != level) {
        std::vector<LinExpr> c = cls;
        c.push_back(delta(k));
        c.push_back(PairTest::Scaled(delta(k), -1, 0));
        zero = t->MayExist(c);
      }
      if (zero && !pos && !neg) {
        dist.fixed[k] = true;
        continue;
      }
      dist.sign[k] = pos && neg ? (zero ? "*" : "+-")
                     : pos      ? (zero ? "0+" : "+")
                                : (zero ? "0-" : "-");
    }
    out->push_back(std::move(dist));
  }
}

std::string JoinDims(const std::vector<std::string>& names) {
  std::string s;
  for (size_t k = 0; k < names.size(); ++k) {
    s += k == 0 ? "" : (k + 1 == names.size() ? " and " : ", ");
    s += names[k];
  }
  return s;
}

std::string Relation(const Program& prog, const LoopAccesses& acc, const Dependence& dep,
                     const PairTest& t) {
  const Space& space = acc.space;
  if (dep.always) return "in any two iterations, since " + dep.always_why;
  const ParamAccess& pa = acc.accesses[dep.a];
  const ParamAccess& pb = acc.accesses[dep.b];
  auto fixed = [](const ParamAccess& p) {
    return std::all_of(p.subs.begin(), p.subs.end(),
                       [](const Subscript& s) { return s.IsInvariant(); });
  };
  if (fixed(pa) && fixed(pb)) {
    return "in any two iterations: every iteration names " + FormatAccess(prog, pa);
  }
  bool all_constant = !dep.distances.empty();
  for (const Distance& d : dep.distances) all_constant &= d.Constant();
  if (all_constant) {
    // A fixed distance reads best as which coordinates agree and which differ.
    const Distance& d = dep.distances[0];
    std::vector<std::string> same, differ;
    for (size_t k = 0; k < d.dist.size(); ++k) {
      if (d.dist[k] == 0) {
        same.push_back(space.dims[k]);
      } else {
        int64_t m = d.dist[k] < 0 ? -d.dist[k] : d.dist[k];
        differ.push_back(space.dims[k] + " differs by " + std::to_string(m));
      }
    }
    std::string s = "when ";
    if (!differ.empty()) s += JoinDims(differ);
    if (!same.empty()) {
      s += std::string(differ.empty() ? "" : " and ") + JoinDims(same) +
           (same.size() == 1 ? " is equal" : " are equal");
    }
    s += " (distance";
    for (size_t k = 0; k < dep.distances.size(); ++k) {
      s += (k ? ", " : " ") + dep.distances[k].ToString();
    }
    return s + ")";
  }
  std::vector<std::string> equal;
  for (size_t k = 0; k < dep.needs_equal.size(); ++k) {
    if (dep.needs_equal[k]) equal.push_back(space.dims[k]);
  }
  if (dep.same_point) {
    std::string point;
    for (const std::string& d : space.dims) point += (point.empty() ? "" : ", ") + d;
    return "when " + JoinDims(equal) + " are equal: two lines of the file with the same (" + point +
           ")";
  }
  if (!equal.empty()) {
    return "when " + JoinDims(equal) + (equal.size() == 1 ? " is equal" : " are equal");
  }
  std::string s = "when ";
  for (size_t k = 0; k < t.equations().size(); ++k) s += (k ? " and " : "") + t.equations()[k];
  return s + " (primed: the other iteration)";
}

bool SameSubscripts(const ParamAccess& a, const ParamAccess& b) {
  if (a.subs.size() != b.subs.size()) return false;
  for (size_t k = 0; k < a.subs.size(); ++k) {
    const Subscript& x = a.subs[k];
    const Subscript& y = b.subs[k];
    if (x.kind != y.kind) return false;
    if (x.kind != Subscript::kAffine ? x.text != y.text
                                     : x.coef != y.coef || x.c != y.c || x.sym != y.sym) {
      return false;
    }
  }
  return true;
}

// Dependence::carries for the pair (a, b). A recurrence is named first: it
// says more than the assignment that usually comes with it.
void Classify(const Program& prog, const ParamAccess& a, const ParamAccess& b, Dependence* dep) {
  for (auto [r, w] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    if (r->kind != AccessKind::kRead || w->kind == AccessKind::kRead) continue;
    if (r->subs.empty() || SameSubscripts(*r, *w) || r->subs.size() != w->subs.size()) continue;
    bool known = true, moves = false;
    for (size_t k = 0; k < r->subs.size(); ++k) {
      known =
          known && r->subs[k].kind == Subscript::kAffine && w->subs[k].kind == Subscript::kAffine;
      moves = moves || !r->subs[k].IsInvariant() || !w->subs[k].IsInvariant();
    }
    if (!known || !moves) continue;
    dep->carries = Dependence::kRecurrence;
    dep->carries_why = "one iteration writes " + FormatAccess(prog, *w) + " (line " +
                       std::to_string(w->loc.line) + ") and another reads that element as " +
                       FormatAccess(prog, *r) + " (line " + std::to_string(r->loc.line) +
                       "): a value carried from iteration to iteration (a recurrence), which a " +
                       "stale read would change";
    return;
  }
  for (const ParamAccess* w : {&a, &b}) {
    if (w->kind != AccessKind::kWrite) continue;
    dep->carries = Dependence::kOverwrite;
    dep->carries_why = FormatAccess(prog, *w) + " is assigned with = (line " +
                       std::to_string(w->loc.line) +
                       "), not updated: relaxed updates are merged as deltas, which would add " +
                       "the assignments of different iterations together";
    return;
  }
}

}  // namespace

std::vector<Dependence> ComputeDependences(const Program& prog, const LoopAccesses& acc,
                                           std::vector<std::string>* independent) {
  const ir::Loop& loop = prog.loops[acc.loop];
  int d = static_cast<int>(acc.space.dims.size());
  std::vector<Dependence> out;
  for (size_t a = 0; a < acc.accesses.size(); ++a) {
    for (size_t b = a; b < acc.accesses.size(); ++b) {
      const ParamAccess& pa = acc.accesses[a];
      const ParamAccess& pb = acc.accesses[b];
      if (pa.param != pb.param) continue;
      if (pa.kind == AccessKind::kRead && pb.kind == AccessKind::kRead) continue;
      PairTest t(prog, acc, static_cast<int>(a), static_cast<int>(b));
      Dependence pair;
      pair.a = static_cast<int>(a);
      pair.b = static_cast<int>(b);
      std::string pair_name = DescribePair(prog, acc, pair);
      if (!t.Solvable()) {
        if (independent)
          independent->push_back(pair_name + ": never the same element (no integer solution)");
        continue;
      }
      Dependence dep;
      dep.param = pa.param;
      dep.a = static_cast<int>(a);
      dep.b = static_cast<int>(b);
      dep.relaxed = loop.relaxed[pa.param];
      dep.reduction = acc.reductions[pa.param];
      dep.always = t.unconstrained();
      dep.always_why = t.always_why();
      // Distinct iterations: some coordinate differs.
      bool any = false;
      dep.needs_equal.assign(d, true);
      for (int k = 0; k < d; ++k) {
        bool pos = t.MayExist({PairTest::Scaled(t.Dx(k), 1, -1)});
        bool neg = t.MayExist({PairTest::Scaled(t.Dx(k), -1, -1)});
        dep.needs_equal[k] = !pos && !neg;
        any |= pos || neg;
      }
      // An element key equal on both sides: the same iteration.
      if (acc.space.key_dim >= 0 && dep.needs_equal[acc.space.key_dim]) {
        if (independent) {
          independent->push_back(pair_name + ": only within one iteration (" +
                                 acc.space.dims[acc.space.key_dim] + " names an element)");
        }
        continue;
      }
      if (!any) {
        // Equal coordinates are one iteration only where points are
        // iterations; a triples file may repeat a pair, and nothing here may
        // assume it does not.
        if (!acc.space.repeats || !t.MayExist({})) {
          if (independent) {
            independent->push_back(pair_name +
                                   ": only within one iteration (every loop variable equal)");
          }
          continue;
        }
        dep.same_point = true;
      }
      dep.needs_either.assign(d, std::vector<bool>(d, false));
      for (int k1 = 0; k1 < d; ++k1) {
        for (int k2 = 0; k2 < d; ++k2) {
          if (k1 == k2) {
            dep.needs_either[k1][k2] = dep.needs_equal[k1];
            continue;
          }
          bool found = false;
          for (int s1 : {1, -1}) {
            for (int s2 : {1, -1}) {
              found = found || t.MayExist({PairTest::Scaled(t.Dx(k1), s1, -1),
                                           PairTest::Scaled(t.Dx(k2), s2, -1)});
            }
          }
          dep.needs_either[k1][k2] = !found;
        }
      }
      Distances(&t, dep.a, dep.b, 1, &dep.distances);
      if (b != a) Distances(&t, dep.b, dep.a, -1, &dep.distances);
      dep.exact = !t.inexact();
      dep.relation = Relation(prog, acc, dep, t);
      Classify(prog, pa, pb, &dep);
      out.push_back(std::move(dep));
    }
  }
  return out;
}

}  // namespace rigel::analysis
