// Declarations, driver statements and driver expressions. Parallel loop
// bodies are in checker_body.cc.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/file.h"
#include "common/int_math.h"
#include "frontend/checker_internal.h"

namespace rigel::frontend {
namespace internal {

using ast::Expr;
using ast::Stmt;

const char* TypeName(ir::Type t) {
  switch (t) {
    case ir::Type::kInt:
      return "int";
    case ir::Type::kF32:
      return "f32";
    case ir::Type::kBool:
      return "bool";
    case ir::Type::kVec:
      return "f32 vector";
    case ir::Type::kRow:
      return "data row";
  }
  return "?";
}

Checker::Checker(std::shared_ptr<const SourceFile> source, const CompileOptions& opts,
                 Diagnostics* d)
    : source_(std::move(source)), opts_(opts), diags_(d) {
  prog_.path = source_->path();
  prog_.source = source_;
  for (const auto& [name, value] : opts.sets) {
    size_t dot = name.find('.');
    if (dot != std::string::npos && name.substr(dot) == ".path") {
      path_overrides_[name.substr(0, dot)] = value;
    } else {
      const_overrides_[name] = value;
    }
  }
  driver_scopes_.emplace_back();
}

ir::Program Checker::Run(const ast::Program& prog) {
  for (const auto& s : prog.stmts) TopLevel(*s);
  return std::move(prog_);
}

void Checker::TopLevel(const Stmt& s) {
  switch (s.kind) {
    case Stmt::kConst:
      return Const(s);
    case Stmt::kData:
      return Data(s);
    case Stmt::kParam:
      return Param(s);
    case Stmt::kAccum:
      return Accum(s);
    default:
      return DriverStmt(s, &prog_.driver);
  }
}

const Global* Checker::FindGlobal(const std::string& name) const {
  auto it = globals_.find(name);
  return it == globals_.end() ? nullptr : &it->second;
}

int Checker::FindSlot(const std::string& name) const {
  for (auto it = driver_scopes_.rbegin(); it != driver_scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return f->second;
  }
  return -1;
}

void Checker::Declare(const std::string& name, Loc loc, Global g) {
  if (globals_.count(name) || FindSlot(name) >= 0) {
    Error(loc, "'" + name + "' is already declared");
    return;
  }
  globals_[name] = g;
}

std::string Checker::DescribeName(const std::string& name) const {
  const Global* g = FindGlobal(name);
  if (!g) return "unknown name";
  switch (g->kind) {
    case Global::kConst:
      return "a constant";
    case Global::kData:
      return "a data set";
    case Global::kParam:
      return "a parameter";
    case Global::kAccum:
      return "an accumulator";
  }
  return "";
}

int Checker::AddExpr(ir::DExpr e) {
  prog_.exprs.push_back(std::move(e));
  return static_cast<int>(prog_.exprs.size()) - 1;
}

int Checker::ConstInt(int64_t v) {
  ir::DExpr e;
  e.kind = ir::DExpr::kInt;
  e.is_int = true;
  e.ival = v;
  e.fval = static_cast<double>(v);
  return AddExpr(e);
}

std::optional<double> Checker::ConstValue(int id, bool* is_int) const {
  if (id < 0) return std::nullopt;
  const ir::DExpr& e = prog_.exprs[id];
  if (e.kind == ir::DExpr::kInt) {
    *is_int = true;
    return static_cast<double>(e.ival);
  }
  if (e.kind == ir::DExpr::kFloat) {
    *is_int = false;
    return e.fval;
  }
  return std::nullopt;
}

std::optional<int64_t> Checker::ConstIntOf(const Expr& e, const char* what) {
  int id = DExprOf(e);
  if (id < 0) return std::nullopt;
  bool is_int = false;
  auto v = ConstValue(id, &is_int);
  if (!v || !is_int) {
    Error(e.loc, std::string("expected ") + what + " to be an integer known before data is loaded");
    return std::nullopt;
  }
  return prog_.exprs[id].ival;
}

std::optional<double> Checker::ConstNumberOf(const Expr& e, const char* what) {
  int id = DExprOf(e);
  if (id < 0) return std::nullopt;
  bool is_int = false;
  auto v = ConstValue(id, &is_int);
  if (!v) {
    Error(e.loc, std::string("expected ") + what + " to be a number known before data is loaded");
    return std::nullopt;
  }
  return v;
}

void Checker::Const(const Stmt& s) {
  const std::string& name = s.names[0];
  int id = -1;
  auto ov = const_overrides_.find(name);
  if (ov != const_overrides_.end()) {
    const std::string& text = ov->second;
    int64_t iv = 0;
    double fv = 0;
    auto ri = std::from_chars(text.data(), text.data() + text.size(), iv);
    auto rf = std::from_chars(text.data(), text.data() + text.size(), fv);
    if (ri.ec == std::errc() && ri.ptr == text.data() + text.size()) {
      id = ConstInt(iv);
    } else if (rf.ec == std::errc() && rf.ptr == text.data() + text.size()) {
      ir::DExpr e;
      e.kind = ir::DExpr::kFloat;
      e.fval = fv;
      id = AddExpr(e);
    } else {
      Error(s.name_locs[0], "--set " + name + "=" + text + ": expected a number");
    }
    const_overrides_.erase(ov);
    // The declared value is still checked so a broken default is reported.
    DExprOf(*s.value);
  } else {
    id = DExprOf(*s.value);
    bool is_int;
    if (id >= 0 && !ConstValue(id, &is_int)) {
      Error(s.value->loc, "the value of const '" + name + "' must be known before data is loaded");
      id = -1;
    }
  }
  if (id < 0) id = ConstInt(0);  // keep going so later uses do not cascade
  Declare(name, s.name_locs[0], {Global::kConst, id});
  bool is_int = false;
  prog_.consts.push_back({name, *ConstValue(id, &is_int)});
}

int Checker::DataAttr(int data, const std::string& attr, Loc loc) {
  const ir::DataDecl& d = prog_.data[data];
  static const std::map<data::DataKind, std::vector<std::string>> kAttrs = {
      {data::DataKind::kTriples, {"rows", "cols", "count"}},
      {data::DataKind::kLibsvm, {"count", "dim"}},
      {data::DataKind::kTokens, {"count", "vocab", "docs"}},
      {data::DataKind::kDenseCsv, {"count", "dim"}},
      {data::DataKind::kGrid, {"rows", "cols", "count"}},
      {data::DataKind::kRange, {"count"}},
  };
  const auto& ok = kAttrs.at(d.kind);
  if (std::find(ok.begin(), ok.end(), attr) == ok.end()) {
    std::string list;
    for (const auto& a : ok) list += (list.empty() ? "." : ", .") + a;
    Error(loc, "data set '" + d.name + "' (" + data::DataKindName(d.kind) + ") has no attribute '" +
                   attr + "'; it has " + list);
    return -1;
  }
  if (attr == "docs" && !d.lines) {
    Error(loc, "'" + d.name +
                   ".docs' counts lines, which tokens(..., lines=true) reads as "
                   "documents; '" +
                   d.name + "' is read without lines=true");
    return -1;
  }
  ir::DExpr e;
  e.kind = ir::DExpr::kDataAttr;
  e.is_int = true;
  e.index = data;
  e.str = attr;
  e.loc = loc;
  return AddExpr(e);
}

ir::BinOp BinOpOf(Tok t) {
  static const std::map<Tok, ir::BinOp> kOps = {
      {Tok::kPlus, ir::kAdd},  {Tok::kMinus, ir::kSub},   {Tok::kStar, ir::kMul},
      {Tok::kSlash, ir::kDiv}, {Tok::kPercent, ir::kMod}, {Tok::kLt, ir::kLt},
      {Tok::kLe, ir::kLe},     {Tok::kGt, ir::kGt},       {Tok::kGe, ir::kGe},
      {Tok::kEq, ir::kEq},     {Tok::kNe, ir::kNe},       {Tok::kAnd, ir::kAnd},
      {Tok::kOr, ir::kOr}};
  return kOps.at(t);
}

int Checker::DExprOf(const Expr& e) {
  ir::DExpr d;
  d.loc = e.loc;
  switch (e.kind) {
    case Expr::kInt:
    case Expr::kBool:
      return ConstInt(e.ival);
    case Expr::kFloat:
      d.kind = ir::DExpr::kFloat;
      d.fval = e.fval;
      return AddExpr(d);
    case Expr::kString:
      d.kind = ir::DExpr::kString;
      d.str = e.str;
      return AddExpr(d);
    case Expr::kName:
      return DExprName(e);
    case Expr::kAttr:
      return DExprAttr(e);
    case Expr::kUnary:
      return DExprUnary(e);
    case Expr::kBinary:
      return DExprBinary(e);
    case Expr::kCall:
      return DExprCall(e);
    case Expr::kIndex:
      if (const Global* g = FindGlobal(e.str); g && g->kind == Global::kAccum) {
        return DExprAccum(e, g->index);
      }
      Error(e.loc, "'" + e.str + "' can only be indexed inside a parallel for");
      return -1;
    case Expr::kElement:
      Error(e.loc, "vector elements can only be read inside a parallel for");
      return -1;
  }
  return -1;
}

int Checker::DExprName(const Expr& e) {
  ir::DExpr d;
  d.loc = e.loc;
  int slot = FindSlot(e.str);
  if (slot >= 0) {
    d.kind = ir::DExpr::kSlot;
    d.index = slot;
    d.str = prog_.slot_names[slot];
    d.is_int = slot_is_int_[slot];
    return AddExpr(d);
  }
  const Global* g = FindGlobal(e.str);
  if (!g) {
    Error(e.loc, "unknown name '" + e.str + "'");
    return -1;
  }
  switch (g->kind) {
    case Global::kConst:
      return g->index;
    case Global::kAccum:
      return DExprAccum(e, g->index);
    case Global::kData:
      Error(e.loc, "'" + e.str + "' is a data set, not a value; use an attribute such as " + e.str +
                       ".count");
      return -1;
    case Global::kParam:
      Error(e.loc, "parameter '" + e.str + "' can only be used inside a parallel for");
      return -1;
  }
  return -1;
}

int Checker::DExprAttr(const Expr& e) {
  const Expr& obj = *e.args[0];
  const Global* g = obj.kind == Expr::kName ? FindGlobal(obj.str) : nullptr;
  if (!g || g->kind != Global::kData) {
    Error(obj.loc, obj.kind == Expr::kName && !g && FindSlot(obj.str) < 0
                       ? "unknown name '" + obj.str + "'"
                       : "only data sets have attributes here");
    return -1;
  }
  return DataAttr(g->index, e.str, e.loc);
}

int Checker::DExprUnary(const Expr& e) {
  int a = DExprOf(*e.args[0]);
  if (a < 0) return -1;
  ir::DExpr d;
  d.loc = e.loc;
  bool is_int = false;
  auto v = ConstValue(a, &is_int);
  if (e.op == Tok::kMinus) {
    if (v) {
      if (is_int) {
        int64_t r;
        if (__builtin_sub_overflow(int64_t{0}, prog_.exprs[a].ival, &r)) {
          Error(e.loc, "integer overflow in constant expression");
          return -1;
        }
        return ConstInt(r);
      }
      d.kind = ir::DExpr::kFloat;
      d.fval = -*v;
      return AddExpr(d);
    }
    d.fn = ir::kNeg;
  } else {
    d.fn = ir::kNot;
  }
  d.kind = ir::DExpr::kUnary;
  d.a = a;
  d.is_int = prog_.exprs[a].is_int || d.fn == ir::kNot;
  return AddExpr(d);
}

int Checker::DExprBinary(const Expr& e) {
  int a = DExprOf(*e.args[0]);
  int b = DExprOf(*e.args[1]);
  if (a < 0 || b < 0) return -1;
  if (prog_.exprs[a].kind == ir::DExpr::kString || prog_.exprs[b].kind == ir::DExpr::kString) {
    Error(e.loc, "strings can only be printed");
    return -1;
  }
  ir::BinOp op = BinOpOf(e.op);
  bool both_int = prog_.exprs[a].is_int && prog_.exprs[b].is_int;
  bool ai = false, bi = false;
  auto va = ConstValue(a, &ai);
  auto vb = ConstValue(b, &bi);
  if (op == ir::kMod && !both_int) {
    Error(e.loc, std::string("'%' needs two ints, not ") + (prog_.exprs[a].is_int ? "int" : "f32") +
                     " and " + (prog_.exprs[b].is_int ? "int" : "f32") + " (int() converts)");
    return -1;
  }
  ir::DExpr d;
  d.loc = e.loc;
  if (va && vb && op <= ir::kMod) {
    // Fold constant arithmetic so shapes and initialisers are known early.
    if (both_int) return FoldIntBinary(op, prog_.exprs[a].ival, prog_.exprs[b].ival, e.loc);
    d.kind = ir::DExpr::kFloat;
    d.fval = op == ir::kAdd   ? *va + *vb
             : op == ir::kSub ? *va - *vb
             : op == ir::kMul ? *va * *vb
                              : *va / *vb;
    return AddExpr(d);
  }
  d.kind = ir::DExpr::kBinary;
  d.fn = op;
  d.a = a;
  d.b = b;
  d.is_int = op > ir::kDiv || both_int;
  return AddExpr(d);
}

int Checker::FoldIntBinary(ir::BinOp op, int64_t x, int64_t y, Loc loc) {
  if ((op == ir::kDiv || op == ir::kMod) && y == 0) {
    Error(loc, op == ir::kDiv ? "integer division by zero" : "integer modulo by zero");
    return -1;
  }
  // Folding must not wrap silently (and signed overflow is UB here).
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case ir::kAdd:
      overflow = __builtin_add_overflow(x, y, &r);
      break;
    case ir::kSub:
      overflow = __builtin_sub_overflow(x, y, &r);
      break;
    case ir::kMul:
      overflow = __builtin_mul_overflow(x, y, &r);
      break;
    case ir::kMod:
      r = FlooredMod(x, y);
      break;
    default:  // kDiv
      overflow = x == std::numeric_limits<int64_t>::min() && y == -1;
      if (!overflow) r = x / y;
      break;
  }
  if (overflow) {
    Error(loc, "integer overflow in constant expression");
    return -1;
  }
  return ConstInt(r);
}

int Checker::DExprCall(const Expr& e) {
  static const std::map<std::string, ir::UnFn> kUn = {
      {"sqrt", ir::kSqrt},         {"exp", ir::kExp},     {"log", ir::kLog},
      {"abs", ir::kAbs},           {"tanh", ir::kTanh},   {"sigmoid", ir::kSigmoid},
      {"log1pexp", ir::kLog1pExp}, {"floor", ir::kFloor}, {"ceil", ir::kCeil},
      {"int", ir::kF32ToInt}};
  auto un = kUn.find(e.str);
  // min, max and pow take two arguments and are binary operators.
  bool is_binary = e.str == "min" || e.str == "max" || e.str == "pow";
  if (un == kUn.end() && !is_binary) {
    static const char* kBodyOnly[] = {"dot",    "sum",     "norm",     "clip",   "zeros",
                                      "rand",   "randint", "negative", "window", "argmax",
                                      "argmin", "onehot",  "sample"};
    for (const char* f : kBodyOnly) {
      if (e.str == f) {
        Error(e.loc, "'" + e.str + "' can only be used inside a parallel for");
        return -1;
      }
    }
    Error(e.loc, "unknown function '" + e.str + "'");
    return -1;
  }
  size_t want = is_binary ? 2 : 1;
  if (e.args.size() != want) {
    Error(e.loc, e.str + " expects " + std::to_string(want) + " argument" + (want == 1 ? "" : "s") +
                     ", got " + std::to_string(e.args.size()));
    return -1;
  }
  int a = DExprOf(*e.args[0]);
  int b = is_binary ? DExprOf(*e.args[1]) : -1;
  if (a < 0 || (is_binary && b < 0)) return -1;
  ir::DExpr d;
  d.loc = e.loc;
  d.a = a;
  d.b = b;
  if (is_binary) {
    d.kind = ir::DExpr::kBinary;
    d.fn = e.str == "min" ? ir::kMin : e.str == "max" ? ir::kMax : ir::kPow;
    d.is_int = d.fn != ir::kPow && prog_.exprs[a].is_int && prog_.exprs[b].is_int;
  } else {
    d.kind = ir::DExpr::kUnary;
    d.fn = un->second;
    d.is_int = (e.str == "abs" && prog_.exprs[a].is_int) || un->second == ir::kF32ToInt;
  }
  return AddExpr(d);
}

}  // namespace internal

ir::Program CheckAndLower(const ast::Program& prog, std::shared_ptr<const SourceFile> source,
                          const CompileOptions& opts, Diagnostics* diags) {
  internal::Checker c(std::move(source), opts, diags);
  return c.Run(prog);
}

}  // namespace rigel::frontend
