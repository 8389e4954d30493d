// Data, parameter and accumulator declarations, and driver statements.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/file.h"
#include "frontend/checker_internal.h"

namespace rigel::frontend::internal {

using ast::Expr;
using ast::Stmt;

namespace {

// Integral values in full (16777217, not 1.67772e+07), others as %g.
std::string Num(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

}  // namespace

std::optional<std::vector<const Expr*>> Checker::BindArgs(const Expr& call,
                                                          const std::vector<std::string>& names,
                                                          size_t required) {
  std::vector<const Expr*> out(names.size(), nullptr);
  size_t positional = 0;
  bool ok = true;
  for (size_t k = 0; k < call.args.size(); ++k) {
    const std::string& n = call.arg_names[k];
    size_t slot = names.size();
    if (n.empty()) {
      slot = positional++;
      if (slot >= names.size()) {
        Error(call.args[k]->loc, call.str + " expects at most " + std::to_string(names.size()) +
                                     " arguments, got " + std::to_string(call.args.size()));
        return std::nullopt;
      }
    } else {
      for (size_t j = 0; j < names.size(); ++j) {
        if (names[j] == n) slot = j;
      }
      if (slot == names.size()) {
        std::string list;
        for (const auto& x : names) list += (list.empty() ? "" : ", ") + x;
        Error(call.arg_name_locs[k],
              call.str + " has no argument named '" + n + "' (it takes " + list + ")");
        ok = false;
        continue;
      }
    }
    if (out[slot]) {
      Error(call.args[k]->loc, call.str + ": argument '" + names[slot] + "' given twice");
      ok = false;
      continue;
    }
    out[slot] = call.args[k].get();
  }
  for (size_t j = 0; j < required; ++j) {
    if (!out[j]) {
      Error(call.loc, call.str + " expects " + std::to_string(required) + " argument" +
                          (required == 1 ? "" : "s") + " (" + names[j] + " is missing), got " +
                          std::to_string(call.args.size()));
      return std::nullopt;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> Checker::StringArg(const Expr* e, const char* what) {
  if (e->kind != Expr::kString) {
    Error(e->loc, std::string("expected ") + what + " as a string in double quotes");
    return std::nullopt;
  }
  return e->str;
}

void Checker::Data(const Stmt& s) {
  const Expr& call = *s.value;
  static const std::map<std::string, data::DataKind> kLoaders = {
      {"triples", data::DataKind::kTriples}, {"libsvm", data::DataKind::kLibsvm},
      {"tokens", data::DataKind::kTokens},   {"dense_csv", data::DataKind::kDenseCsv},
      {"grid", data::DataKind::kGrid},       {"range", data::DataKind::kRange},
      {"criteo", data::DataKind::kLibsvm}};
  if (call.kind != Expr::kCall || (call.str != "split" && !kLoaders.count(call.str))) {
    Error(call.loc,
          "expected a data loader: triples(...), libsvm(...), criteo(...), tokens(...), "
          "dense_csv(...), grid(N, M), range(N) or split(...)");
    return;
  }
  bool is_split = call.str == "split";
  if (s.names.size() != (is_split ? 2u : 1u)) {
    Error(s.name_locs[0], is_split ? "split makes two data sets: data train, test = split(...)"
                                   : call.str + " makes one data set, got " +
                                         std::to_string(s.names.size()) + " names");
    return;
  }
  if (is_split) return DataSplit(s);
  ir::DataDecl d;
  d.name = s.names[0];
  d.loc = s.name_locs[0];
  d.kind = kLoaders.at(call.str);
  d.criteo = call.str == "criteo";
  auto args = LoaderArgs(call, &d);
  if (!args) return;
  bool sized = d.kind == data::DataKind::kGrid || d.kind == data::DataKind::kRange;
  if (!(sized ? DataSize(call, *args, &d) : DataFile(call, *args, &d))) return;
  prog_.data.push_back(d);
  Declare(d.name, d.loc, {Global::kData, static_cast<int>(prog_.data.size()) - 1});
}

void Checker::DataSplit(const Stmt& s) {
  const Expr& call = *s.value;
  auto args = BindArgs(call, {"data", "test", "seed"}, 2);
  if (!args) return;
  const Expr* src = (*args)[0];
  const Global* g = src->kind == Expr::kName ? FindGlobal(src->str) : nullptr;
  if (!g || g->kind != Global::kData) {
    Error(src->loc, "split expects a data set name as its first argument");
    return;
  }
  const ir::DataDecl parent = prog_.data[g->index];  // a copy: push_back below reallocates
  if (parent.kind == data::DataKind::kGrid || parent.kind == data::DataKind::kRange) {
    Error(src->loc, "cannot split " + std::string(data::DataKindName(parent.kind)) + " data");
    return;
  }
  auto frac = ConstNumberOf(*(*args)[1], "test");
  if (!frac) return;
  if (*frac <= 0 || *frac >= 1) {
    Error((*args)[1]->loc, "test fraction must be between 0 and 1");
    return;
  }
  int64_t seed = 0;
  if ((*args)[2]) {
    auto sv = ConstIntOf(*(*args)[2], "seed");
    if (!sv) return;
    seed = *sv;
  }
  for (int part = 0; part < 2; ++part) {
    ir::DataDecl p = parent;
    p.name = s.names[part];
    p.loc = s.name_locs[part];
    p.split_parent = g->index;
    p.split_part = part;
    p.split_test = *frac;
    p.split_seed = static_cast<uint64_t>(seed);
    prog_.data.push_back(p);
    Declare(p.name, p.loc, {Global::kData, static_cast<int>(prog_.data.size()) - 1});
  }
}

std::optional<std::vector<const Expr*>> Checker::LoaderArgs(const Expr& call, ir::DataDecl* d) {
  switch (d->kind) {
    case data::DataKind::kTriples:
      return BindArgs(call, {"path", "sep", "base", "skip_header", "extra"}, 1);
    case data::DataKind::kLibsvm:
      if (d->criteo) return BindArgs(call, {"path", "buckets", "fields"}, 1);
      d->base = 1;
      return BindArgs(call, {"path", "base", "labels"}, 1);
    case data::DataKind::kTokens:
      return BindArgs(call, {"path", "min_count", "lines"}, 1);
    case data::DataKind::kDenseCsv:
      return BindArgs(call, {"path", "label", "sep", "skip_header"}, 1);
    case data::DataKind::kGrid:
      return BindArgs(call, {"N", "M"}, 2);
    case data::DataKind::kRange:
      return BindArgs(call, {"N"}, 1);
  }
  return std::nullopt;
}

bool Checker::DataSize(const Expr& call, const std::vector<const Expr*>& a, ir::DataDecl* d) {
  d->grid_n = DExprOf(*a[0]);
  d->grid_m = d->kind == data::DataKind::kGrid ? DExprOf(*a[1]) : ConstInt(1);
  if (d->grid_n < 0 || d->grid_m < 0) return false;
  CheckGridSize(*d);
  if (UsesDriverState(d->grid_n) || UsesDriverState(d->grid_m)) {
    Error(call.loc,
          "the size of a declared data set must be known before the program runs "
          "(constants and data attributes); write grid/range inline in the "
          "parallel for to size it per run");
    return false;
  }
  return true;
}

bool Checker::DataFile(const Expr& call, const std::vector<const Expr*>& a, ir::DataDecl* d) {
  auto path = StringArg(a[0], "a file path");
  if (!path) return false;
  // open() would stop at the NUL and read a file other than the one named.
  if (path->find('\0') != std::string::npos) {
    Error(a[0]->loc, "a file path cannot contain a NUL byte");
    return false;
  }
  d->path_as_written = *path;
  auto ov = path_overrides_.find(d->name);
  if (ov != path_overrides_.end()) {
    d->path = ov->second;  // relative to the current directory, as typed on the command line
    d->path_from_set = true;
    path_overrides_.erase(ov);
  } else {
    d->path = ResolveRelativeTo(source_->path(), *path);
  }
  for (size_t k = 1; k < a.size(); ++k) {
    if (!a[k]) continue;
    const std::string& what = call.str == "tokens"      ? (k == 1 ? "min_count" : "lines")
                              : call.str == "libsvm"    ? (k == 1 ? "base" : "labels")
                              : call.str == "criteo"    ? (k == 1 ? "buckets" : "fields")
                              : call.str == "dense_csv" ? (k == 1   ? "label"
                                                           : k == 2 ? "sep"
                                                                    : "skip_header")
                                                        : (k == 1   ? "sep"
                                                           : k == 2 ? "base"
                                                           : k == 3 ? "skip_header"
                                                                    : "extra");
    if (!DataOption(*a[k], what, d)) return false;
  }
  if (d->criteo) {
    data::LibsvmOptions o;
    o.buckets = d->buckets;
    o.shared_buckets = d->shared_buckets;
    if (Status st = data::CheckCriteoOptions(o); !st.ok()) {
      Error(a.size() > 1 && a[1] ? a[1]->loc : call.loc, st.message());
      return false;
    }
  }
  return true;
}

bool Checker::DataOption(const Expr& arg, const std::string& what, ir::DataDecl* d) {
  if (what == "sep") {
    auto sep = StringArg(&arg, "the separator");
    if (!sep) return false;
    if (sep->size() != 1) {
      Error(arg.loc, "the separator must be a single character");
      return false;
    }
    if ((*sep)[0] == '\n' || (*sep)[0] == '\r') {
      Error(arg.loc, "the separator cannot be a line end: a data file holds one entry per line");
      return false;
    }
    d->sep = (*sep)[0];
  } else if (what == "extra") {
    auto extra = StringArg(&arg, "what to do with further columns");
    if (!extra) return false;
    if (*extra != "ignore" && *extra != "error") {
      Error(arg.loc,
            "extra must be \"ignore\" (skip columns after the third) or \"error\" "
            "(the default), not \"" +
                *extra + "\"");
      return false;
    }
    d->ignore_extra = *extra == "ignore";
  } else if (what == "labels") {
    auto labels = StringArg(&arg, "how to read the labels");
    if (!labels) return false;
    static const std::map<std::string, data::LibsvmLabels> kModes = {
        {"auto", data::LibsvmLabels::kAuto},
        {"pm1", data::LibsvmLabels::kPm1},
        {"keep", data::LibsvmLabels::kKeep}};
    auto mode = kModes.find(*labels);
    if (mode == kModes.end()) {
      Error(arg.loc,
            "labels must be \"auto\" (the default: -1/+1 read as 0/1, other labels as "
            "written), \"pm1\" (only -1/+1, read as 0/1) or \"keep\" (as written), not \"" +
                *labels + "\"");
      return false;
    }
    d->labels = mode->second;
  } else if (what == "fields") {
    auto fields = StringArg(&arg, "how the categorical fields share buckets");
    if (!fields) return false;
    if (*fields != "shared" && *fields != "own") {
      Error(arg.loc,
            "fields must be \"shared\" (the default: the 26 categorical fields hash into one "
            "range of buckets) or \"own\" (a range of buckets per field), not \"" +
                *fields + "\"");
      return false;
    }
    d->shared_buckets = *fields == "shared";
  } else if (what == "buckets") {
    auto v = ConstIntOf(arg, "buckets");
    if (!v) return false;
    d->buckets = *v;  // checked with `fields` (DataFile)
  } else if (what == "skip_header" || what == "lines") {
    if (arg.kind != Expr::kBool) {
      Error(arg.loc, what + " must be true or false");
      return false;
    }
    (what == "lines" ? d->lines : d->skip_header) = arg.ival != 0;
  } else {
    auto v = ConstIntOf(arg, what.c_str());
    if (!v) return false;
    if (*v < 0) {
      Error(arg.loc, what + " must not be negative");
      return false;
    }
    (what == "base" ? d->base : what == "label" ? d->label : d->min_count) = *v;
  }
  return true;
}

void Checker::Param(const Stmt& s) {
  ir::ParamDecl p;
  p.name = s.names[0];
  p.loc = s.name_locs[0];
  p.is_int = s.is_int;
  p.rows = DExprOf(*s.rows);
  if (p.rows >= 0 && !prog_.exprs[p.rows].is_int) {
    Error(s.rows->loc, "the row count of a parameter must be an integer");
    p.rows = -1;
  } else if (UsesDriverState(p.rows)) {
    Error(s.rows->loc,
          "the row count of a parameter must be known before the program runs "
          "(constants and data attributes)");
    p.rows = -1;
  }
  if (s.width) {
    auto w = ConstIntOf(*s.width, "the row width");
    if (w && *w < 1) Error(s.width->loc, "the row width must be at least 1");
    p.width = w.value_or(1);
  }
  ParamInit(*s.value, &p);
  prog_.params.push_back(p);
  Declare(p.name, p.loc, {Global::kParam, static_cast<int>(prog_.params.size()) - 1});
}

// The initialiser of `p`: zeros() and fill(c) suit both element types,
// normal() and uniform() only f32, randint() only i32, whose values must be
// integers that f32 rows hold exactly.
void Checker::ParamInit(const Expr& init, ir::ParamDecl* p) {
  static const std::map<std::string, std::pair<ir::ParamDecl::Init, size_t>> kInits = {
      {"zeros", {ir::ParamDecl::kZeros, 0}},
      {"fill", {ir::ParamDecl::kFill, 1}},
      {"normal", {ir::ParamDecl::kNormal, 2}},
      {"uniform", {ir::ParamDecl::kUniform, 2}},
      {"randint", {ir::ParamDecl::kRandInt, 1}}};
  auto it = init.kind == Expr::kCall ? kInits.find(init.str) : kInits.end();
  const bool known = it != kInits.end();
  const ir::ParamDecl::Init kind = known ? it->second.first : ir::ParamDecl::kZeros;
  const bool f32_only = kind == ir::ParamDecl::kNormal || kind == ir::ParamDecl::kUniform;
  if (!known || (p->is_int ? f32_only : kind == ir::ParamDecl::kRandInt)) {
    Error(init.loc, p->is_int
                        ? "expected an i32 initialiser: zeros(), fill(c) or randint(n, seed=S)"
                        : std::string("expected an initialiser: zeros(), fill(c), normal(mean, "
                                      "std, seed=S) or uniform(lo, hi, seed=S)") +
                              (known ? " (randint(n, seed=S) is for i32 parameters)" : ""));
    return;
  }
  p->init = kind;
  std::vector<std::string> names;
  if (kind == ir::ParamDecl::kFill) names = {"c"};
  if (kind == ir::ParamDecl::kNormal) names = {"mean", "std", "seed"};
  if (kind == ir::ParamDecl::kUniform) names = {"lo", "hi", "seed"};
  if (kind == ir::ParamDecl::kRandInt) names = {"n", "seed"};
  auto args = BindArgs(init, names, it->second.second);
  if (!args) return;
  for (size_t k = 0; k < names.size(); ++k) {
    const Expr* a = (*args)[k];
    if (!a) continue;
    if (names[k] == "seed") {
      p->seed = static_cast<uint64_t>(ConstIntOf(*a, "seed").value_or(0));
      continue;
    }
    const double v = ConstNumberOf(*a, names[k].c_str()).value_or(0);
    (k == 0 ? p->a : p->b) = v;
    if (!p->is_int) continue;
    if (v != std::floor(v) || std::fabs(v) > static_cast<double>(ir::kMaxExactInt) ||
        (kind == ir::ParamDecl::kRandInt && v < 1)) {
      Error(a->loc, names[k] + " of an i32 parameter must be an integer " +
                        (kind == ir::ParamDecl::kRandInt ? "in [1, 2^24]" : "in [-2^24, 2^24]") +
                        ", not " + Num(v));
    }
  }
}

void Checker::Accum(const Stmt& s) {
  ir::AccumDecl a{s.names[0], s.name_locs[0]};
  // The cap keeps the sums (8 bytes each, on every worker and in every
  // partial-sum message) far from any memory or message limit, and their
  // slots within the kernel's 32-bit operands.
  constexpr int64_t kMaxSums = int64_t{1} << 20;
  if (s.width) {
    auto w = ConstIntOf(*s.width, "the width of an accumulator");
    if (w && *w < 1) Error(s.width->loc, "the width of an accumulator must be at least 1");
    if (w && *w > kMaxSums) {
      Error(s.width->loc,
            "the width of an accumulator must be at most " + std::to_string(kMaxSums));
    }
    a.width = w && *w >= 1 && *w <= kMaxSums ? *w : 1;
  }
  prog_.accums.push_back(a);
  if (ir::AccumSlots(prog_.accums) > kMaxSums) {
    Error(s.width ? s.width->loc : s.name_locs[0],
          "the accumulators hold more than " + std::to_string(kMaxSums) + " sums in all");
    prog_.accums.back().width = 1;
  }
  Declare(s.names[0], s.name_locs[0], {Global::kAccum, static_cast<int>(prog_.accums.size()) - 1});
}

void Checker::CheckGridSize(const ir::DataDecl& d) {
  const ir::DExpr& n = prog_.exprs[d.grid_n];
  const ir::DExpr& m = prog_.exprs[d.grid_m];
  int64_t count;
  if (n.kind == ir::DExpr::kInt && m.kind == ir::DExpr::kInt &&
      __builtin_mul_overflow(n.ival, m.ival, &count)) {
    Error(d.loc, "grid(" + std::to_string(n.ival) + ", " + std::to_string(m.ival) +
                     ") has more elements than a 64-bit count holds");
  }
}

bool Checker::UsesDriverState(int id) const {
  if (id < 0) return false;
  const ir::DExpr& e = prog_.exprs[id];
  if (e.kind == ir::DExpr::kSlot || e.kind == ir::DExpr::kAccum) return true;
  return UsesDriverState(e.a) || UsesDriverState(e.b);
}

int Checker::NewSlot(const std::string& name, Loc loc, bool is_int, bool mut) {
  if (globals_.count(name) || driver_scopes_.back().count(name)) {
    Error(loc, "'" + name + "' is already declared");
  }
  int slot = static_cast<int>(prog_.slot_names.size());
  prog_.slot_names.push_back(name);
  slot_is_int_.push_back(is_int);
  slot_mut_.push_back(mut);
  slot_is_loop_.push_back(false);
  prog_.slot_is_int.push_back(is_int);
  driver_scopes_.back()[name] = slot;
  return slot;
}

void Checker::DriverStmt(const Stmt& s, std::vector<ir::DStmt>* out) {
  ir::DStmt d;
  d.loc = s.loc;
  bool ok = true;
  switch (s.kind) {
    case Stmt::kParallelFor:
      return Parallel(s, out);
    case Stmt::kFor:
      ok = DriverFor(s, &d);
      break;
    case Stmt::kPrint:
      d.kind = ir::DStmt::kPrint;
      for (const auto& a : s.args) d.args.push_back(DExprOf(*a));
      break;
    case Stmt::kLet:
    case Stmt::kVar:
      DriverLet(s, &d);
      break;
    case Stmt::kIf:
      DriverIf(s, &d);
      break;
    case Stmt::kAssign:
      ok = DriverAssign(s, &d);
      break;
    default:
      Error(s.loc, "unexpected statement");
      return;
  }
  if (ok) out->push_back(std::move(d));
}

bool Checker::DriverFor(const Stmt& s, ir::DStmt* d) {
  if (!s.range) {
    Error(s.value->loc,
          "a driver loop iterates a range lo..hi; use 'parallel for' to "
          "iterate data");
    return false;
  }
  if (s.names.size() != 1) {
    Error(s.name_locs[0], "a range loop binds one variable");
    return false;
  }
  d->kind = ir::DStmt::kFor;
  d->a = DExprOf(*s.value);
  d->b = DExprOf(*s.value2);
  if (d->a >= 0 && !prog_.exprs[d->a].is_int) Error(s.value->loc, "range bounds must be integers");
  if (d->b >= 0 && !prog_.exprs[d->b].is_int) Error(s.value2->loc, "range bounds must be integers");
  driver_scopes_.emplace_back();
  d->slot = NewSlot(s.names[0], s.name_locs[0], true, false);
  slot_is_loop_[d->slot] = true;
  for (const auto& b : s.body) DriverStmt(*b, &d->body);
  driver_scopes_.pop_back();
  return true;
}

void Checker::DriverLet(const Stmt& s, ir::DStmt* d) {
  d->kind = ir::DStmt::kLet;
  d->a = DExprOf(*s.value);
  if (d->a >= 0 && prog_.exprs[d->a].kind == ir::DExpr::kString) {
    Error(s.value->loc, "strings can only be printed");
  }
  bool is_int = d->a >= 0 && prog_.exprs[d->a].is_int;
  d->slot = NewSlot(s.names[0], s.name_locs[0], is_int, s.kind == Stmt::kVar);
}

void Checker::DriverIf(const Stmt& s, ir::DStmt* d) {
  d->kind = ir::DStmt::kIf;
  d->a = DExprOf(*s.value);
  driver_scopes_.emplace_back();
  for (const auto& b : s.body) DriverStmt(*b, &d->body);
  driver_scopes_.pop_back();
  driver_scopes_.emplace_back();
  for (const auto& b : s.else_body) DriverStmt(*b, &d->else_body);
  driver_scopes_.pop_back();
}

bool Checker::DriverAssign(const Stmt& s, ir::DStmt* d) {
  const Expr& t = *s.target;
  if (const Global* g = FindGlobal(t.str);
      g && g->kind == Global::kAccum &&
      (t.kind == Expr::kIndex || prog_.accums[g->index].width > 0)) {
    return DriverAccumSet(s, g->index, d);
  }
  if (t.kind == Expr::kIndex) {
    Error(t.loc, "parameter '" + t.str + "' can only be written inside a parallel for");
    return false;
  }
  int value = DExprOf(*s.value);
  int target = -1;
  if (!AssignTarget(t, d, &target)) return false;
  if (value < 0) return false;
  if (prog_.exprs[value].kind == ir::DExpr::kString) {
    Error(s.value->loc, "strings can only be printed");
    return false;
  }
  if (s.op != Tok::kAssign) {
    ir::DExpr b;
    b.kind = ir::DExpr::kBinary;
    b.fn = s.op == Tok::kPlusAssign    ? ir::kAdd
           : s.op == Tok::kMinusAssign ? ir::kSub
           : s.op == Tok::kStarAssign  ? ir::kMul
                                       : ir::kDiv;
    b.a = target;
    b.b = value;
    b.is_int = prog_.exprs[target].is_int && prog_.exprs[value].is_int;
    b.loc = s.loc;
    value = AddExpr(b);
  }
  // A driver variable keeps the type of its first value; f32 variables
  // take ints (promoted), int variables do not take f32 values.
  if (d->kind == ir::DStmt::kLet && slot_is_int_[d->slot] && !prog_.exprs[value].is_int) {
    Error(s.value->loc, "cannot assign f32 to '" + t.str +
                            "', which holds int (start it with a float, e.g. var " + t.str +
                            " = 0.0)");
    return false;
  }
  d->a = value;
  return true;
}

bool Checker::AssignTarget(const Expr& t, ir::DStmt* d, int* target) {
  int slot = FindSlot(t.str);
  const Global* g = FindGlobal(t.str);
  if (slot >= 0) {
    if (slot_is_loop_[slot]) {
      Error(t.loc, "cannot assign to loop variable '" + t.str + "'");
      return false;
    }
    if (!slot_mut_[slot]) {
      Error(t.loc, "cannot assign to '" + t.str + "': it was bound with let (use var)");
      return false;
    }
    d->kind = ir::DStmt::kLet;
    d->slot = slot;
    *target = DExprOf(t);
    return true;
  }
  if (g && g->kind == Global::kAccum) {
    d->kind = ir::DStmt::kAccumSet;
    d->index = g->index;
    *target = DExprOf(t);
    return true;
  }
  Error(t.loc, g ? "cannot assign to '" + t.str + "': it is " + DescribeName(t.str)
                 : "unknown name '" + t.str + "'");
  return false;
}

}  // namespace rigel::frontend::internal
