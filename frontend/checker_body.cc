// Lowering of `parallel for` bodies into typed IR instructions.
#include "frontend/checker_internal.h"

namespace rigel::frontend::internal {

using ast::Expr;
using ast::Stmt;
using ir::Inst;
using ir::Op;
using ir::Type;

namespace {

struct SpaceVars {
  std::vector<Type> types;
  const char* names;
};

SpaceVars VarsOf(const ir::DataDecl& d) {
  switch (d.kind) {
    case data::DataKind::kTriples:
      return {{Type::kInt, Type::kInt, Type::kF32}, "(i, j, v)"};
    case data::DataKind::kLibsvm:
      return {{Type::kInt, Type::kRow}, "(n, row)"};
    case data::DataKind::kTokens:
      if (d.lines) return {{Type::kInt, Type::kInt, Type::kInt}, "(t, w, d)"};
      return {{Type::kInt, Type::kInt}, "(t, w)"};
    case data::DataKind::kDenseCsv:
      return {{Type::kInt, Type::kRow}, "(n, row)"};
    case data::DataKind::kGrid:
      return {{Type::kInt, Type::kInt}, "(i, j)"};
    case data::DataKind::kRange:
      return {{Type::kInt}, "i"};
  }
  return {};
}

}  // namespace

std::string Checker::WrongPositionMessage(const ast::Expr& pos, int pos_data,
                                          int window_data) const {
  const std::string& of = prog_.data[pos_data].name;
  const std::string& in = prog_.data[window_data].name;
  const bool named = pos.kind == Expr::kName;
  const std::string what = named ? "'" + pos.str + "' is a position" : "this is a position";
  std::string why;
  auto part_of = [&](int part, int whole) {
    for (int d = prog_.data[part].split_parent; d >= 0; d = prog_.data[d].split_parent) {
      if (d == whole) return true;
    }
    return false;
  };
  if (part_of(pos_data, window_data) || part_of(window_data, pos_data)) {
    why =
        ": a part of split() numbers its positions from 0 within the part, so the same number "
        "is another word of '" +
        in + "'";
  }
  return what + " of '" + of + "', not of '" + in + "'" + why + "; write window(" + of + ", " +
         (named ? pos.str : "...") + ", radius) for the neighbours of " + of + "'s word";
}

int Checker::NewReg(Type t, int width_expr) {
  ir::Reg r;
  r.type = t;
  r.width_expr = width_expr;
  if (width_expr >= 0 && prog_.exprs[width_expr].kind == ir::DExpr::kInt) {
    r.width = prog_.exprs[width_expr].ival;
  }
  loop_->regs.push_back(r);
  return static_cast<int>(loop_->regs.size()) - 1;
}

int Checker::FindLocal(const std::string& name) const {
  for (auto it = body_scopes_.rbegin(); it != body_scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return f->second;
  }
  return -1;
}

void Checker::Parallel(const Stmt& s, std::vector<ir::DStmt>* out) {
  if (loop_) {
    Error(s.loc, "parallel for cannot be nested inside another parallel for");
    return;
  }
  int data = -1;
  const Expr& space = *s.value;
  if (space.kind == Expr::kName) {
    const Global* g = FindGlobal(space.str);
    if (g && g->kind == Global::kData) data = g->index;
  } else if (space.kind == Expr::kCall && (space.str == "grid" || space.str == "range")) {
    // An inline iteration space becomes an anonymous data declaration.
    bool grid = space.str == "grid";
    if (space.args.size() != (grid ? 2u : 1u)) {
      Error(space.loc, space.str + " expects " + (grid ? "2 arguments" : "1 argument") + ", got " +
                           std::to_string(space.args.size()));
      return;
    }
    ir::DataDecl d;
    d.kind = grid ? data::DataKind::kGrid : data::DataKind::kRange;
    d.name = space.str + "@" + std::to_string(space.loc.line);
    d.loc = space.loc;
    d.grid_n = DExprOf(*space.args[0]);
    d.grid_m = grid ? DExprOf(*space.args[1]) : ConstInt(1);
    if (d.grid_n < 0 || d.grid_m < 0) return;
    CheckGridSize(d);
    d.sized_at_launch = UsesDriverState(d.grid_n) || UsesDriverState(d.grid_m);
    prog_.data.push_back(d);
    data = static_cast<int>(prog_.data.size()) - 1;
  }
  if (data < 0) {
    Error(space.loc, space.kind == Expr::kName && !FindGlobal(space.str)
                         ? "unknown name '" + space.str + "'"
                         : "parallel for iterates a data set, grid(N, M) or range(N)");
    return;
  }
  ir::Loop loop;
  loop.id = static_cast<int>(prog_.loops.size());
  loop.loc = s.loc;
  loop.ordered = s.ordered;
  loop.data = data;
  loop.relaxed.assign(prog_.params.size(), false);
  for (size_t k = 0; k < s.relax.size(); ++k) {
    const Global* g = FindGlobal(s.relax[k]);
    if (!g || g->kind != Global::kParam) {
      Error(s.relax_locs[k], "relax names '" + s.relax[k] + "', which is not a parameter (" +
                                 (g ? "it is " + DescribeName(s.relax[k]) : "unknown name") + ")");
      continue;
    }
    loop.relaxed[g->index] = true;
  }
  loop_ = &loop;
  body_scopes_.assign(1, {});
  const ir::DataDecl& dd = prog_.data[data];
  SpaceVars sv = VarsOf(dd);
  if (s.names.size() != sv.types.size()) {
    const bool tokens = dd.kind == data::DataKind::kTokens;
    Error(s.name_locs[0], std::string("iterating ") + data::DataKindName(dd.kind) +
                              (dd.lines ? "(..., lines=true)" : "") + " binds " +
                              std::to_string(sv.types.size()) + " variable" +
                              (sv.types.size() == 1 ? " " : "s ") + sv.names + ", got " +
                              std::to_string(s.names.size()) +
                              (tokens && !dd.lines && s.names.size() == 3
                                   ? " (a third, the line number d, needs tokens(..., lines=true))"
                                   : ""));
  } else {
    for (size_t k = 0; k < s.names.size(); ++k) {
      if (FindGlobal(s.names[k])) Error(s.name_locs[k], "'" + s.names[k] + "' is already declared");
      int r = NewReg(sv.types[k]);
      loop.regs[r].named = true;
      loop.regs[r].name = s.names[k];
      if (sv.types[k] == Type::kRow) loop.regs[r].row_data = data;
      if (k == 0 && dd.kind == data::DataKind::kTokens) position_of_[r] = data;
      loop.vars.push_back(r);
      body_scopes_.back()[s.names[k]] = r;
      loop_var_regs_[r] = true;
    }
    BodyStmts(s.body, &loop.body);
  }
  loop_ = nullptr;
  body_scopes_.clear();
  loop_var_regs_.clear();
  position_of_.clear();
  ir::DStmt d;
  d.kind = ir::DStmt::kParallel;
  d.loc = s.loc;
  d.index = loop.id;
  prog_.loops.push_back(std::move(loop));
  out->push_back(d);
}

void Checker::BodyStmts(const std::vector<ast::StmtPtr>& stmts, std::vector<Inst>* out) {
  for (const auto& s : stmts) BodyStmt(*s, out);
}

void Checker::BodyStmt(const Stmt& s, std::vector<Inst>* out) {
  switch (s.kind) {
    case Stmt::kLet:
    case Stmt::kVar: {
      Val v = Lower(*s.value, out);
      const std::string& name = s.names[0];
      if (body_scopes_.back().count(name) || FindGlobal(name) || FindSlot(name) >= 0) {
        Error(s.name_locs[0], "'" + name + "' is already declared");
      }
      if (!v.ok()) {
        body_scopes_.back()[name] = -1;
        return;
      }
      if (s.kind == Stmt::kLet && !loop_->regs[v.reg].mut) {
        loop_->regs[v.reg].named = true;
        if (loop_->regs[v.reg].name.empty()) loop_->regs[v.reg].name = name;
        body_scopes_.back()[name] = v.reg;
        return;
      }
      // A var (or a let of a var's current value) owns a copy.
      int r = NewReg(v.type, loop_->regs[v.reg].width_expr);
      loop_->regs[r].named = true;
      loop_->regs[r].mut = s.kind == Stmt::kVar;
      loop_->regs[r].name = name;
      loop_->regs[r].row_data = loop_->regs[v.reg].row_data;
      if (auto p = position_of_.find(v.reg); p != position_of_.end()) position_of_[r] = p->second;
      Inst m;
      m.op = Op::kMove;
      m.dst = r;
      m.a = v.reg;
      m.loc = s.loc;
      out->push_back(m);
      body_scopes_.back()[name] = r;
      return;
    }
    case Stmt::kAssign:
      return BodyAssign(s, out);
    case Stmt::kIf: {
      Val c = Lower(*s.value, out);
      if (c.ok() && c.type != Type::kBool) {
        Error(s.value->loc, std::string("the condition of if must be a comparison (bool), not ") +
                                TypeName(c.type));
      }
      Inst in;
      in.op = Op::kIf;
      in.a = c.reg;
      in.loc = s.loc;
      body_scopes_.emplace_back();
      BodyStmts(s.body, &in.body);
      body_scopes_.back().clear();
      BodyStmts(s.else_body, &in.else_body);
      body_scopes_.pop_back();
      out->push_back(std::move(in));
      return;
    }
    case Stmt::kFor:
      return BodyFor(s, out);
    case Stmt::kPrint:
      Error(s.loc,
            "print is not allowed inside a parallel for; add to an accum and print it "
            "after the loop");
      return;
    case Stmt::kParallelFor:
      Error(s.loc, "parallel for cannot be nested inside another parallel for");
      return;
    default:
      Error(s.loc, "this statement is not allowed inside a parallel for");
      return;
  }
}

void Checker::BodyFor(const Stmt& s, std::vector<Inst>* out) {
  Inst in;
  in.loc = s.loc;
  std::vector<std::pair<std::string, Type>> binds;
  const Expr& it = *s.value;
  if (s.range) {
    Val lo = Lower(it, out), hi = Lower(*s.value2, out);
    if (lo.ok() && lo.type != Type::kInt) Error(it.loc, "range bounds must be integers");
    if (hi.ok() && hi.type != Type::kInt) Error(s.value2->loc, "range bounds must be integers");
    in.op = Op::kFor;
    in.a = lo.reg;
    in.b = hi.reg;
    binds = {{"", Type::kInt}};
  } else if (it.kind == Expr::kAttr && it.str == "features" && it.args[0]->kind == Expr::kName) {
    int row = FindLocal(it.args[0]->str);
    if (row < 0 || loop_->regs[row].type != Type::kRow ||
        prog_.data[loop_->regs[row].row_data].kind != data::DataKind::kLibsvm) {
      Error(it.loc, "only a libsvm row has .features");
      return;
    }
    in.op = Op::kForFeatures;
    in.a = row;
    in.index = loop_->regs[row].row_data;
    binds = {{"", Type::kInt}, {"", Type::kF32}};
  } else if (it.kind == Expr::kCall && it.str == "window") {
    if (it.args.size() != 3) {
      Error(it.loc, "window expects 3 arguments (corpus, t, radius), got " +
                        std::to_string(it.args.size()));
      return;
    }
    const Global* g = it.args[0]->kind == Expr::kName ? FindGlobal(it.args[0]->str) : nullptr;
    if (!g || g->kind != Global::kData || prog_.data[g->index].kind != data::DataKind::kTokens) {
      Error(it.args[0]->loc, "window expects a tokens data set as its first argument");
      return;
    }
    Val t = Lower(*it.args[1], out), r = Lower(*it.args[2], out);
    if (!t.ok() || !r.ok()) return;
    if (t.type != Type::kInt || r.type != Type::kInt) {
      Error(it.loc, "window's position and radius must be integers");
      return;
    }
    if (auto p = position_of_.find(t.reg); p != position_of_.end() && p->second != g->index) {
      Error(it.args[1]->loc, WrongPositionMessage(*it.args[1], p->second, g->index));
      return;
    }
    in.op = Op::kForWindow;
    in.index = g->index;
    in.a = t.reg;
    in.b = r.reg;
    binds = {{"", Type::kInt}};
  } else {
    Error(it.loc, "an inner loop iterates lo..hi, row.features or window(corpus, t, radius)");
    return;
  }
  if (s.names.size() != binds.size()) {
    Error(s.name_locs[0], "this loop binds " + std::to_string(binds.size()) + " variable" +
                              (binds.size() == 1 ? "" : "s") + ", got " +
                              std::to_string(s.names.size()));
    return;
  }
  body_scopes_.emplace_back();
  for (size_t k = 0; k < binds.size(); ++k) {
    if (FindGlobal(s.names[k]) || FindSlot(s.names[k]) >= 0) {
      Error(s.name_locs[k], "'" + s.names[k] + "' is already declared");
    }
    int r = NewReg(binds[k].second);
    loop_->regs[r].named = true;
    loop_->regs[r].name = s.names[k];
    loop_var_regs_[r] = true;
    body_scopes_.back()[s.names[k]] = r;
    (k == 0 ? in.dst : in.dst2) = r;
  }
  BodyStmts(s.body, &in.body);
  body_scopes_.pop_back();
  out->push_back(std::move(in));
}

void Checker::BodyAssign(const Stmt& s, std::vector<Inst>* out) {
  const Expr& t = *s.target;
  static const std::map<Tok, uint8_t> kOps = {{Tok::kAssign, ir::kPlainAssign},
                                              {Tok::kPlusAssign, ir::kAdd},
                                              {Tok::kMinusAssign, ir::kSub},
                                              {Tok::kStarAssign, ir::kMul},
                                              {Tok::kSlashAssign, ir::kDiv}};
  uint8_t op = kOps.at(s.op);
  if (t.kind == Expr::kName) {
    int local = FindLocal(t.str);
    if (local >= 0 || body_scopes_.back().count(t.str)) {
      if (local < 0) return;  // its declaration already failed
      // A let may alias a loop variable's register; the name tells which it is.
      if (loop_var_regs_.count(local) && loop_->regs[local].name == t.str) {
        Error(t.loc, "cannot assign to loop variable '" + t.str + "'");
        return;
      }
      if (!loop_->regs[local].mut) {
        Error(t.loc, "cannot assign to '" + t.str + "': it was bound with let (use var)");
        Lower(*s.value, out);
        return;
      }
      Val v = Lower(*s.value, out);
      if (!v.ok()) return;
      Val var{local, loop_->regs[local].type};
      if (op != ir::kPlainAssign) v = Binary(static_cast<ir::BinOp>(op), var, v, s.loc, out);
      if (!v.ok()) return;
      if (var.type == Type::kF32 && v.type == Type::kInt) v = ToF32(v, out);
      if (v.type != var.type) {
        Error(s.value->loc, "cannot assign " + std::string(TypeName(v.type)) + " to '" + t.str +
                                "', which holds " + TypeName(var.type));
        return;
      }
      if (v.type == Type::kVec) CheckWidths(local, v.reg, s.value->loc, "assignment");
      Inst m;
      m.op = Op::kMove;
      m.dst = local;
      m.a = v.reg;
      m.loc = s.loc;
      out->push_back(m);
      return;
    }
    const Global* g = FindGlobal(t.str);
    if (!g) {
      Error(t.loc, FindSlot(t.str) >= 0
                       ? "cannot assign to driver variable '" + t.str + "' inside a parallel for"
                       : "unknown name '" + t.str + "'");
      return;
    }
    if (g->kind == Global::kAccum) return BodyAccumAdd(s, op, g->index, out);
    if (g->kind != Global::kParam) {
      Error(t.loc, "cannot assign to '" + t.str + "': it is " + DescribeName(t.str));
      return;
    }
  } else {
    if (FindLocal(t.str) >= 0) return BodyElementAssign(s, op, out);
    for (const auto& scope : body_scopes_) {
      if (scope.count(t.str)) return;  // its declaration already failed
    }
    const Global* g = FindGlobal(t.str);
    if (g && g->kind == Global::kAccum) return BodyAccumAdd(s, op, g->index, out);
    if (!g || g->kind != Global::kParam) {
      Error(t.loc, g || FindLocal(t.str) >= 0
                       ? "'" + t.str + "' is not a parameter and cannot be indexed"
                       : "unknown name '" + t.str + "'");
      return;
    }
  }
  // A parameter write.
  int param = FindGlobal(t.str)->index;
  Inst w;
  w.op = Op::kWrite;
  w.index = param;
  w.fn = op;
  w.loc = s.loc;
  Val target = ParamAccess(t, param, out, &w.mode, &w.a, &w.b);
  if (!target.ok()) return;
  Val v = Lower(*s.value, out);
  if (!v.ok()) return;
  if (prog_.params[param].is_int) return BodyIntWrite(s, v, &w, out);
  if (v.type == Type::kInt) v = ToF32(v, out);
  if (w.mode == ir::Access::kElement && v.type != Type::kF32) {
    Error(s.value->loc,
          "an element of '" + t.str + "' takes an f32 scalar, not " + TypeName(v.type));
    return;
  }
  if (v.type == Type::kVec) CheckWidths(target.reg, v.reg, s.value->loc, "assignment");
  if (v.type != Type::kVec && v.type != Type::kF32) {
    Error(s.value->loc, "cannot write " + std::string(TypeName(v.type)) + " to a parameter");
    return;
  }
  w.c = v.reg;
  out->push_back(w);
}

// A write to an i32 parameter: one element at a time, an int value, and no
// `/=`, so that every element stays an integer; the value is checked to be
// one that the parameter's f32 cell holds exactly.
void Checker::BodyIntWrite(const Stmt& s, Val v, Inst* w, std::vector<Inst>* out) {
  const Expr& t = *s.target;
  if (w->mode != ir::Access::kElement) {
    Error(t.loc, "'" + t.str + "' is an i32 parameter, written one element at a time (" + t.str +
                     (prog_.params[w->index].width > 0 ? "[i, k]" : "[i]") + ")");
    return;
  }
  if (w->fn == ir::kDiv) {
    Error(s.loc, "an element of i32 parameter '" + t.str +
                     "' cannot be divided in place (/=); its elements stay integers");
    return;
  }
  if (v.type != Type::kInt) {
    Error(s.value->loc, "an element of i32 parameter '" + t.str + "' takes an int, not " +
                            TypeName(v.type) + " (int() converts)");
    return;
  }
  v = Unary(ir::kIntToI32, v, s.value->loc, out);
  if (!v.ok()) return;
  w->c = v.reg;
  out->push_back(*w);
}

// `g[k] op= x` on a var vector: an in-place element update.
void Checker::BodyElementAssign(const Stmt& s, uint8_t op, std::vector<Inst>* out) {
  const Expr& t = *s.target;
  int local = FindLocal(t.str);
  const ir::Reg& r = loop_->regs[local];
  if (r.type != Type::kVec) {
    Error(t.loc, "'" + t.str + "' is " + TypeName(r.type) +
                     ", not a vector or a parameter, and cannot be indexed");
    return;
  }
  if (!r.mut) {
    Error(t.loc, "cannot assign to an element of '" + t.str + "': it was bound with let (use var)");
    return;
  }
  if (t.args.size() != 1) {
    Error(t.loc, "an element of vector '" + t.str + "' takes one subscript, got " +
                     std::to_string(t.args.size()));
    return;
  }
  Val k = Lower(*t.args[0], out);
  Val v = Lower(*s.value, out);
  if (!k.ok() || !v.ok()) return;
  if (k.type != Type::kInt) {
    Error(t.args[0]->loc, std::string("a vector element index must be an int, not ") +
                              TypeName(k.type) + " (int() converts)");
    return;
  }
  if (v.type == Type::kInt) v = ToF32(v, out);
  if (v.type != Type::kF32) {
    Error(s.value->loc,
          "an element of '" + t.str + "' takes an f32 scalar, not " + TypeName(v.type));
    return;
  }
  Inst in;
  in.op = Op::kSetElem;
  in.fn = op;
  in.dst = local;
  in.a = local;
  in.b = k.reg;
  in.c = v.reg;
  in.loc = s.loc;
  out->push_back(in);
}

}  // namespace rigel::frontend::internal
