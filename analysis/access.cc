#include "analysis/access.h"

#include <algorithm>
#include <limits>
#include <map>

#include "common/int_math.h"

namespace rigel::analysis {

using data::DataKind;
using ir::Access;
using ir::Inst;
using ir::Op;
using ir::Program;
using ir::Type;

bool Subscript::IsConstant() const { return IsInvariant() && sym.empty(); }

bool Subscript::IsInvariant() const {
  return kind == kAffine && std::all_of(coef.begin(), coef.end(), [](int64_t a) { return a == 0; });
}

const char* AccessKindName(AccessKind k) {
  switch (k) {
    case AccessKind::kRead:
      return "read";
    case AccessKind::kWrite:
      return "write";
    case AccessKind::kReadModifyWrite:
      return "read-modify-write";
  }
  return "?";
}

const char* AccessModeName(Access m) {
  switch (m) {
    case Access::kElement:
      return "element";
    case Access::kRow:
      return "row";
    case Access::kWhole:
      return "whole";
  }
  return "?";
}

const char* SubscriptClass(const Subscript& s) {
  switch (s.kind) {
    case Subscript::kAffine:
      if (s.IsConstant()) return "constant";
      return s.IsInvariant() ? "invariant" : "affine";
    case Subscript::kIndirect:
      return "indirect";
    case Subscript::kNonAffine:
      return "non-affine";
  }
  return "?";
}

std::string FormatAffine(const Program& prog, const std::vector<std::string>& dims,
                         const Subscript& s, const std::string& suffix) {
  struct Term {
    int64_t k;
    std::string name;
  };
  std::vector<Term> terms;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (s.coef[d] != 0) terms.push_back({s.coef[d], dims[d] + suffix});
  }
  for (const auto& [id, k] : s.sym) terms.push_back({k, ir::PrintExpr(prog, id)});
  if (terms.empty()) return std::to_string(s.c);
  std::string out;
  bool lead_const = s.c != 0 && terms[0].k < 0;
  if (lead_const) out = std::to_string(s.c);
  for (const Term& t : terms) {
    int64_t mag = t.k < 0 ? -t.k : t.k;
    std::string body = (mag == 1 ? "" : std::to_string(mag) + "*") + t.name;
    if (out.empty()) {
      out = (t.k < 0 ? "-" : "") + body;
    } else {
      out += (t.k < 0 ? " - " : " + ") + body;
    }
  }
  if (s.c != 0 && !lead_const) {
    out += (s.c > 0 ? " + " : " - ") + std::to_string(s.c > 0 ? s.c : -s.c);
  }
  return out;
}

namespace {

bool SameSubscript(const Subscript& a, const Subscript& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Subscript::kAffine) return a.text == b.text;
  return a.coef == b.coef && a.c == b.c && a.sym == b.sym;
}

bool SameAccess(const ParamAccess& a, const ParamAccess& b) {
  if (a.param != b.param || a.mode != b.mode || a.subs.size() != b.subs.size()) return false;
  for (size_t k = 0; k < a.subs.size(); ++k) {
    if (!SameSubscript(a.subs[k], b.subs[k])) return false;
  }
  return true;
}

class Walker {
 public:
  Walker(const Program& prog, int loop, LoopAccesses* out)
      : prog_(prog), loop_(prog.loops[loop]), out_(out), vals_(loop_.regs.size()) {}

  void Run() {
    InitSpace();
    CountMoves(loop_.body);
    Walk(loop_.body, false, false);
  }

 private:
  std::string Format(const Subscript& s) const {
    return FormatAffine(prog_, out_->space.dims, s, "");
  }

  Subscript Affine(int64_t c) {
    Subscript s;
    s.c = c;
    s.text = std::to_string(c);
    return s;
  }
  Subscript Opaque(Subscript::Kind kind, std::string text, std::string why) {
    Subscript s;
    s.kind = kind;
    s.text = std::move(text);
    s.why = std::move(why);
    return s;
  }

  void InitSpace() {
    const ir::DataDecl& d = prog_.data[loop_.data];
    Space& sp = out_->space;
    int ndims = 1;
    sp.repeats = d.kind == data::DataKind::kTriples;
    switch (d.kind) {
      case data::DataKind::kTriples:
      case data::DataKind::kGrid:
        ndims = 2;
        break;
      case data::DataKind::kTokens:
        // With one document per line, the line number and the token id are
        // coordinates too, so rows kept by document or by word can be
        // partitioned; a plain corpus is numbered by position alone.
        ndims = d.lines ? 3 : 1;
        break;
      default:
        ndims = 1;
    }
    // Dimension k is loop variable var_of[k]. A lines corpus binds (t, w, d)
    // but its space is (t, d, w): the document comes before the word, as the
    // row before the column of a ratings matrix, so a 2-D schedule keeps
    // documents' rows on their workers and rotates the words' (as Orion
    // does for LDA). t alone names an element.
    std::vector<int> var_of = {0, 1, 2};
    if (d.kind == data::DataKind::kTokens && d.lines) {
      var_of = {0, 2, 1};
      sp.key_dim = 0;
    }
    for (int k = 0; k < ndims && k < static_cast<int>(loop_.vars.size()); ++k) {
      int r = loop_.vars[var_of[k]];
      sp.dims.push_back(loop_.regs[r].name);
      Subscript s;
      s.coef[k] = 1;
      s.text = loop_.regs[r].name;
      vals_[r] = s;
    }
    auto extent_of = [&](int expr) -> int64_t {
      if (expr < 0 || d.sized_at_launch) return -1;
      const ir::DExpr& e = prog_.exprs[expr];
      return e.kind == ir::DExpr::kInt ? e.ival : -1;
    };
    if (d.kind == data::DataKind::kGrid) {
      sp.extent = {extent_of(d.grid_n), extent_of(d.grid_m)};
      sp.what =
          "grid(" + ir::PrintExpr(prog_, d.grid_n) + ", " + ir::PrintExpr(prog_, d.grid_m) + ")";
    } else if (d.kind == data::DataKind::kRange) {
      sp.extent = {extent_of(d.grid_n)};
      sp.what = "range(" + ir::PrintExpr(prog_, d.grid_n) + ")";
    } else {
      sp.extent.assign(ndims, -1);
      sp.what = d.name + " (" + data::DataKindName(d.kind) + ")";
    }
    if (d.kind == data::DataKind::kTokens && !d.lines && loop_.vars.size() > 1) {
      int w = loop_.vars[1];
      vals_[w] = Opaque(Subscript::kIndirect, loop_.regs[w].name,
                        "the token id at position " + sp.dims[0] + ", a data value");
    }
    for (const ir::ParamDecl& p : prog_.params) {
      const ir::DExpr& e = prog_.exprs[p.rows];
      out_->param_rows.push_back(e.kind == ir::DExpr::kInt ? e.ival : -1);
    }
  }

  void CountMoves(const std::vector<Inst>& body) {
    for (const Inst& in : body) {
      if (in.op == Op::kMove) ++moves_[in.dst];
      CountMoves(in.body);
      CountMoves(in.else_body);
    }
  }

  std::string NameOr(int reg, const std::string& fallback) const {
    const std::string& n = loop_.regs[reg].name;
    return n.empty() ? fallback : n;
  }

  // a + k * b for affine a, b.
  static bool AddScaled(const Subscript& a, const Subscript& b, int64_t k, Subscript* out) {
    *out = a;
    for (int d = 0; d < kMaxDims; ++d) {
      int64_t t;
      if (__builtin_mul_overflow(b.coef[d], k, &t) ||
          __builtin_add_overflow(out->coef[d], t, &out->coef[d])) {
        return false;
      }
    }
    int64_t t;
    if (__builtin_mul_overflow(b.c, k, &t) || __builtin_add_overflow(out->c, t, &out->c)) {
      return false;
    }
    std::map<int, int64_t> sym(out->sym.begin(), out->sym.end());
    for (const auto& [id, v] : b.sym) {
      if (__builtin_mul_overflow(v, k, &t) || __builtin_add_overflow(sym[id], t, &sym[id])) {
        return false;
      }
    }
    out->sym.clear();
    for (const auto& [id, v] : sym) {
      if (v != 0) out->sym.emplace_back(id, v);
    }
    return true;
  }

  // The result of combining a and b when at least one is not affine: data
  // dependence wins over "not followed", since it says more to the user.
  Subscript Blend(const Subscript& a, const Subscript& b, const std::string& text) {
    const Subscript& src = a.kind == Subscript::kIndirect   ? a
                           : b.kind == Subscript::kIndirect ? b
                           : a.kind != Subscript::kAffine   ? a
                                                            : b;
    return Opaque(src.kind, text, src.why);
  }

  Subscript BinaryValue(const Inst& in) {
    const Subscript& a = vals_[in.a];
    const Subscript& b = vals_[in.b];
    std::string text = NameOr(in.dst, a.text + " " + ir::BinOpName(in.fn) + " " + b.text);
    if (a.kind != Subscript::kAffine || b.kind != Subscript::kAffine) return Blend(a, b, text);
    Subscript r;
    bool ok = true;
    switch (in.fn) {
      case ir::kAdd:
        ok = AddScaled(a, b, 1, &r);
        break;
      case ir::kSub:
        ok = AddScaled(a, b, -1, &r);
        break;
      case ir::kMul:
        if (b.IsConstant()) {
          ok = AddScaled(Affine(0), a, b.c, &r);
        } else if (a.IsConstant()) {
          ok = AddScaled(Affine(0), b, a.c, &r);
        } else {
          return Opaque(Subscript::kNonAffine, text,
                        "a product of values that change between iterations (" + a.text + " * " +
                            b.text + ")");
        }
        break;
      case ir::kDiv:
      case ir::kMod:
      case ir::kMin:
      case ir::kMax:
        if (a.IsConstant() && b.IsConstant() &&
            !((in.fn == ir::kDiv || in.fn == ir::kMod) && b.c == 0) &&
            !(in.fn == ir::kDiv && b.c == -1 && a.c == std::numeric_limits<int64_t>::min())) {
          int64_t v = in.fn == ir::kDiv   ? a.c / b.c
                      : in.fn == ir::kMod ? FlooredMod(a.c, b.c)
                      : in.fn == ir::kMin ? std::min(a.c, b.c)
                                          : std::max(a.c, b.c);
          r = Affine(v);
          break;
        }
        return Opaque(Subscript::kNonAffine, text,
                      in.fn == ir::kDiv   ? "an integer division"
                      : in.fn == ir::kMod ? "an integer modulo"
                                          : std::string("a ") + ir::BinOpName(in.fn) +
                                                "() of loop-dependent values");
      default:
        return Opaque(Subscript::kNonAffine, text, "a comparison");
    }
    if (!ok) return Opaque(Subscript::kNonAffine, text, "arithmetic that overflows 64 bits");
    r.text = Format(r);
    return r;
  }

  bool IsInt(int reg) const { return reg >= 0 && loop_.regs[reg].type == Type::kInt; }

  void Walk(const std::vector<Inst>& body, bool cond, bool inner) {
    for (const Inst& in : body) {
      switch (in.op) {
        case Op::kConstI:
          vals_[in.dst] = Affine(in.ival);
          break;
        case Op::kOuter:
          if (IsInt(in.dst)) {
            Subscript s;
            s.sym = {{in.index, 1}};
            s.text = ir::PrintExpr(prog_, in.index);
            vals_[in.dst] = s;
          }
          break;
        case Op::kMove:
          if (IsInt(in.dst)) {
            if (moves_[in.dst] == 1) {
              vals_[in.dst] = vals_[in.a];
            } else {
              vals_[in.dst] =
                  Opaque(Subscript::kNonAffine, NameOr(in.dst, "var"),
                         "var " + NameOr(in.dst, "") + ", which is reassigned in the loop");
            }
          }
          break;
        case Op::kUnary:
          if (in.fn == ir::kF32ToInt && i32_reads_.count(in.a)) {
            // An element of an i32 parameter (`z[t]` in `ndk[d, z[t]]`): a
            // value the loop itself may change, so a data value.
            const std::string& what = i32_reads_[in.a];
            vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, what),
                                   "an element of an i32 parameter (" + what + "), a data value");
          } else if (in.fn == ir::kF32ToInt) {
            // f32 values are not followed: an index made from one (a label,
            // a feature value) is a data value, whatever it holds.
            vals_[in.dst] =
                Opaque(Subscript::kIndirect, NameOr(in.dst, "int(...)"), "int() of an f32 value");
          } else if (IsInt(in.dst)) {
            const Subscript& a = vals_[in.a];
            Subscript r;
            if (in.fn == ir::kNeg && a.kind == Subscript::kAffine &&
                AddScaled(Affine(0), a, -1, &r)) {
              r.text = Format(r);
              vals_[in.dst] = r;
            } else {
              vals_[in.dst] = Blend(a, a, NameOr(in.dst, "-" + a.text));
              if (a.kind == Subscript::kAffine) vals_[in.dst].kind = Subscript::kNonAffine;
            }
          }
          break;
        case Op::kBinary:
          if (IsInt(in.dst)) vals_[in.dst] = BinaryValue(in);
          break;
        case Op::kRandInt:
          vals_[in.dst] =
              Opaque(Subscript::kIndirect, NameOr(in.dst, "randint(...)"), "a randint() draw");
          break;
        case Op::kVecPick:
          if (IsInt(in.dst)) {
            vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, "argmax(...)"),
                                   "the position of a vector's largest or smallest element");
          }
          break;
        case Op::kNegative:
          vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, "negative(...)"),
                                 "a negative() draw, a random token id");
          break;
        case Op::kSample:
          vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, "sample(...)"),
                                 "a sample() draw, weighted by values");
          break;
        case Op::kFor:
          vals_[in.dst] =
              Opaque(Subscript::kIndirect, NameOr(in.dst, "k"),
                     "the variable of an inner loop, which takes every value of its range");
          Walk(in.body, cond, true);
          break;
        case Op::kForFeatures:
          vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, "f"),
                                 "a feature index from row.features, a data value");
          vals_[in.dst].features_of = in.index;
          Walk(in.body, cond, true);
          break;
        case Op::kForWindow:
          vals_[in.dst] = Opaque(Subscript::kIndirect, NameOr(in.dst, "c"),
                                 "a token id from a window, a data value");
          Walk(in.body, cond, true);
          break;
        case Op::kIf:
          Walk(in.body, true, inner);
          Walk(in.else_body, true, inner);
          break;
        case Op::kRead:
          if (prog_.params[in.index].is_int && in.mode == ir::Access::kElement) {
            i32_reads_[in.dst] = prog_.params[in.index].name + "[" + vals_[in.a].text +
                                 (in.b >= 0 ? ", " + vals_[in.b].text : "") + "]";
          }
          Record(in, cond, inner);
          break;
        case Op::kWrite:
          Record(in, cond, inner);
          break;
        case Op::kAccumAdd:
          out_->accums.push_back({in.index, in.loc});
          break;
        default:
          // An int this walk does not follow must never pass for a constant
          // (the value a register has before anything defines it here).
          if (in.dst >= 0 && IsInt(in.dst)) {
            vals_[in.dst] = Opaque(Subscript::kNonAffine, NameOr(in.dst, "an int"),
                                   "a value the analysis does not follow");
          }
          break;
      }
    }
  }

  void Record(const Inst& in, bool cond, bool inner) {
    ParamAccess a;
    a.param = in.index;
    a.mode = in.mode;
    a.loc = in.loc;
    a.conditional = cond;
    a.in_inner_loop = inner;
    if (in.op == Op::kRead) {
      a.kind = AccessKind::kRead;
    } else {
      a.kind = in.fn == ir::kPlainAssign ? AccessKind::kWrite : AccessKind::kReadModifyWrite;
      a.additive = in.fn == ir::kAdd || in.fn == ir::kSub;
    }
    if (in.mode != Access::kWhole) {
      if (in.a >= 0) a.subs.push_back(vals_[in.a]);
      if (in.b >= 0) a.subs.push_back(vals_[in.b]);
    }
    // `W[i] = f(W[i])` reads the element it writes: a read-modify-write.
    if (a.kind == AccessKind::kWrite) {
      for (const ParamAccess& prev : out_->accesses) {
        if (prev.kind == AccessKind::kRead && SameAccess(prev, a))
          a.kind = AccessKind::kReadModifyWrite;
      }
    }
    for (ParamAccess& prev : out_->accesses) {
      if (prev.kind == a.kind && prev.additive == a.additive && prev.conditional == a.conditional &&
          prev.in_inner_loop == a.in_inner_loop && SameAccess(prev, a)) {
        ++prev.count;
        return;
      }
    }
    out_->accesses.push_back(std::move(a));
  }

  const Program& prog_;
  const ir::Loop& loop_;
  LoopAccesses* out_;
  std::vector<Subscript> vals_;
  std::map<int, std::string> i32_reads_;  // f32 register: the i32 element it read
  std::map<int, int> moves_;
};

}  // namespace

LoopAccesses AnalyzeAccesses(const Program& prog, int loop) {
  LoopAccesses out;
  out.loop = loop;
  Walker(prog, loop, &out).Run();
  std::vector<int> touched(prog.params.size(), 0), added(prog.params.size(), 0);
  for (const ParamAccess& a : out.accesses) {
    ++touched[a.param];
    if (a.kind == AccessKind::kReadModifyWrite && a.additive) ++added[a.param];
  }
  out.reductions.assign(prog.params.size(), false);
  for (size_t p = 0; p < prog.params.size(); ++p) {
    out.reductions[p] = touched[p] > 0 && added[p] == touched[p];
  }
  return out;
}

std::string FormatAccess(const Program& prog, const ParamAccess& a) {
  std::string s = prog.params[a.param].name;
  if (a.subs.empty()) return s;
  s += "[";
  for (size_t k = 0; k < a.subs.size(); ++k) s += (k ? ", " : "") + a.subs[k].text;
  return s + "]";
}

}  // namespace rigel::analysis
