// Expressions inside `parallel for` bodies: typing, promotion, widths.
#include "frontend/checker_internal.h"

namespace rigel::frontend::internal {

using ast::Expr;
using ir::Inst;
using ir::Op;
using ir::Type;

namespace {
bool IsScalar(Type t) { return t == Type::kInt || t == Type::kF32; }
}  // namespace

Val Checker::ConstF(double v, std::vector<Inst>* out) {
  Inst in;
  in.op = Op::kConstF;
  in.fval = v;
  in.dst = NewReg(Type::kF32);
  out->push_back(in);
  return {in.dst, Type::kF32};
}

Val Checker::ToF32(Val v, std::vector<Inst>* out) {
  if (!v.ok() || v.type != Type::kInt) return v;
  return Unary(ir::kIntToF32, v, {}, out);
}

void Checker::CheckWidths(int ra, int rb, Loc loc, const char* what) {
  const ir::Reg& a = loop_->regs[ra];
  const ir::Reg& b = loop_->regs[rb];
  if (a.width >= 0 && b.width >= 0) {
    if (a.width != b.width) {
      Error(loc, std::string("vector width mismatch in ") + what + ": " + std::to_string(a.width) +
                     " vs " + std::to_string(b.width));
    }
    return;
  }
  if (PrintExpr(prog_, a.width_expr) == PrintExpr(prog_, b.width_expr)) return;
  // Depends on data attributes: checked once the data are loaded, before anything runs.
  prog_.width_checks.push_back({a.width_expr, b.width_expr, loc, what});
}

Val Checker::Unary(ir::UnFn fn, Val a, Loc loc, std::vector<Inst>* out) {
  if (!a.ok()) return {};
  Type t = a.type;
  if (fn == ir::kNot) {
    if (t != Type::kBool) {
      Error(loc, std::string("'not' needs a bool, not ") + TypeName(t));
      return {};
    }
  } else if (fn == ir::kNeg) {
    if (!IsScalar(t) && t != Type::kVec) {
      Error(loc, std::string("cannot negate ") + TypeName(t));
      return {};
    }
  } else if (fn == ir::kIntToF32 || fn == ir::kIntToI32) {
    t = Type::kF32;
  } else if (fn == ir::kF32ToInt) {
    if (t == Type::kInt) return a;  // int() of an int is itself
    if (t != Type::kF32) {
      Error(loc, std::string("int needs a number, not ") + TypeName(t));
      return {};
    }
    t = Type::kInt;
  } else {
    if (t == Type::kInt) {
      a = ToF32(a, out);
      t = Type::kF32;
    }
    if (t != Type::kF32 && t != Type::kVec) {
      Error(loc, std::string(ir::UnFnName(fn)) + " needs a number or vector, not " + TypeName(t));
      return {};
    }
  }
  Inst in;
  in.op = Op::kUnary;
  in.fn = fn;
  in.a = a.reg;
  in.loc = loc;
  in.dst = NewReg(t, t == Type::kVec ? loop_->regs[a.reg].width_expr : -1);
  out->push_back(in);
  return {in.dst, t};
}

Val Checker::Binary(ir::BinOp op, Val a, Val b, Loc loc, std::vector<Inst>* out) {
  if (!a.ok() || !b.ok()) return {};
  Type rt;
  int width_expr = -1;
  if (op == ir::kAnd || op == ir::kOr) {
    if (a.type != Type::kBool || b.type != Type::kBool) {
      Error(loc, std::string("'") + ir::BinOpName(op) + "' needs bool operands, got " +
                     TypeName(a.type) + " and " + TypeName(b.type));
      return {};
    }
    rt = Type::kBool;
  } else if (op >= ir::kLt) {
    // Two bools are equal or not (`(a > 0) == (b > 0.5)`); they have no order.
    const bool bools = a.type == Type::kBool && b.type == Type::kBool;
    if (bools && op != ir::kEq && op != ir::kNe) {
      Error(loc, std::string("'") + ir::BinOpName(op) +
                     "' cannot order bools; only == and != compare two bools");
      return {};
    }
    if (!bools && (!IsScalar(a.type) || !IsScalar(b.type))) {
      Error(loc, std::string("comparison needs scalar operands, got ") + TypeName(a.type) +
                     " and " + TypeName(b.type));
      return {};
    }
    if (a.type != b.type) {
      a = ToF32(a, out);
      b = ToF32(b, out);
    }
    rt = Type::kBool;
  } else if (op == ir::kMod) {
    if (a.type != Type::kInt || b.type != Type::kInt) {
      Error(loc, std::string("'%' needs two ints, not ") + TypeName(a.type) + " and " +
                     TypeName(b.type) + " (int() converts)");
      return {};
    }
    rt = Type::kInt;
  } else {
    bool av = a.type == Type::kVec, bv = b.type == Type::kVec;
    if ((!IsScalar(a.type) && !av) || (!IsScalar(b.type) && !bv)) {
      Error(loc, std::string(op == ir::kPow ? "pow" : "arithmetic") +
                     " needs numbers or vectors, got " + TypeName(a.type) + " and " +
                     TypeName(b.type));
      return {};
    }
    if (av && bv) {
      CheckWidths(a.reg, b.reg, loc, "vector arithmetic");
      rt = Type::kVec;
      width_expr = loop_->regs[a.reg].width_expr;
    } else if (av || bv) {
      if (!av) a = ToF32(a, out);
      if (!bv) b = ToF32(b, out);
      rt = Type::kVec;
      width_expr = loop_->regs[(av ? a : b).reg].width_expr;
    } else if (a.type == Type::kInt && b.type == Type::kInt) {
      rt = Type::kInt;
    } else {
      a = ToF32(a, out);
      b = ToF32(b, out);
      rt = Type::kF32;
    }
  }
  Inst in;
  in.op = Op::kBinary;
  in.fn = op;
  in.a = a.reg;
  in.b = b.reg;
  in.loc = loc;
  in.dst = NewReg(rt, width_expr);
  out->push_back(in);
  // t + k and t - k are positions of t's data set; t - u (two positions) is
  // a distance, no position.
  if (rt == Type::kInt && (op == ir::kAdd || op == ir::kSub)) {
    auto pa = position_of_.find(a.reg), pb = position_of_.find(b.reg);
    if (pa != position_of_.end() && pb == position_of_.end()) {
      position_of_[in.dst] = pa->second;
    } else if (op == ir::kAdd && pb != position_of_.end() && pa == position_of_.end()) {
      position_of_[in.dst] = pb->second;
    }
  }
  return {in.dst, rt};
}

Val Checker::ParamAccess(const Expr& e, int param, std::vector<Inst>* out, ir::Access* mode,
                         int* sub_a, int* sub_b) {
  const ir::ParamDecl& p = prog_.params[param];
  bool two_d = p.width > 0;
  if (e.kind == Expr::kName) {
    if (two_d) {
      Error(e.loc, "parameter '" + p.name + "' is 2-D; index it: " + p.name + "[i] or " + p.name +
                       "[i, k]");
      return {};
    }
    *mode = ir::Access::kWhole;
    return {NewReg(Type::kVec, p.rows), Type::kVec};
  }
  if (e.args.size() > 2 || (!two_d && e.args.size() == 2)) {
    Error(e.loc, "parameter '" + p.name + "' is " + (two_d ? "2-D" : "1-D") + "; it takes " +
                     (two_d ? "one or two subscripts" : "one subscript") + ", got " +
                     std::to_string(e.args.size()));
    return {};
  }
  int subs[2] = {-1, -1};
  bool ok = true;
  for (size_t k = 0; k < e.args.size(); ++k) {
    Val v = Lower(*e.args[k], out);
    if (!v.ok()) {
      ok = false;
      continue;
    }
    if (v.type != Type::kInt) {
      Error(e.args[k]->loc, "parameter '" + p.name + "' indexed with " +
                                (v.type == Type::kF32 ? std::string("a float")
                                                      : std::string("a ") + TypeName(v.type)) +
                                "; subscripts must be integers");
      ok = false;
      continue;
    }
    subs[k] = v.reg;
  }
  if (!ok) return {};
  *sub_a = subs[0];
  *sub_b = subs[1];
  if (two_d && e.args.size() == 1) {
    *mode = ir::Access::kRow;
    return {NewReg(Type::kVec, ConstInt(p.width)), Type::kVec};
  }
  *mode = ir::Access::kElement;
  return {NewReg(Type::kF32), Type::kF32};
}

Val Checker::Lower(const ast::Expr& e, std::vector<Inst>* out) {
  switch (e.kind) {
    case Expr::kInt:
    case Expr::kBool: {
      Inst in;
      in.loc = e.loc;
      in.op = Op::kConstI;
      in.ival = e.ival;
      in.dst = NewReg(e.kind == Expr::kBool ? Type::kBool : Type::kInt);
      out->push_back(in);
      return {in.dst, loop_->regs[in.dst].type};
    }
    case Expr::kFloat:
      return ConstF(e.fval, out);
    case Expr::kString:
      Error(e.loc, "strings can only be printed");
      return {};
    case Expr::kName:
      return LowerName(e, out);
    case Expr::kAttr:
      return LowerAttr(e, out);
    case Expr::kIndex:
      return LowerIndex(e, out);
    case Expr::kElement:
      return Element(Lower(*e.args[0], out), *e.args[1], e.loc, out);
    case Expr::kUnary: {
      Val a = Lower(*e.args[0], out);
      return Unary(e.op == Tok::kMinus ? ir::kNeg : ir::kNot, a, e.loc, out);
    }
    case Expr::kBinary: {
      Val a = Lower(*e.args[0], out);
      Val b = Lower(*e.args[1], out);
      return Binary(BinOpOf(e.op), a, b, e.loc, out);
    }
    case Expr::kCall:
      return Call(e, out);
  }
  return {};
}

Val Checker::LowerName(const ast::Expr& e, std::vector<Inst>* out) {
  int local = FindLocal(e.str);
  if (local >= 0) return {local, loop_->regs[local].type};
  for (auto it = body_scopes_.rbegin(); it != body_scopes_.rend(); ++it) {
    if (it->count(e.str)) return {};  // declared, but its value had an error
  }
  int slot = FindSlot(e.str);
  const Global* g = FindGlobal(e.str);
  if (slot >= 0 || (g && g->kind == Global::kConst)) return LowerDriverValue(e, out);
  if (!g) {
    Error(e.loc, "unknown name '" + e.str + "'");
    return {};
  }
  if (g->kind == Global::kParam) return ReadParam(e, g->index, out);
  if (g->kind == Global::kAccum) {
    Error(e.loc, "accumulator '" + e.str +
                     "' can only be updated with += inside a "
                     "parallel for, not read");
    return {};
  }
  Error(e.loc, "'" + e.str + "' is a data set, not a value");
  return {};
}

Val Checker::LowerDriverValue(const ast::Expr& e, std::vector<Inst>* out) {
  int id = DExprOf(e);
  if (id < 0) return {};
  const ir::DExpr& d = prog_.exprs[id];
  Inst in;
  in.loc = e.loc;
  if (d.kind == ir::DExpr::kInt || d.kind == ir::DExpr::kFloat) {
    in.op = d.is_int ? Op::kConstI : Op::kConstF;
    in.ival = d.ival;
    in.fval = d.fval;
  } else {
    in.op = Op::kOuter;
    in.index = id;
  }
  in.dst = NewReg(d.is_int ? Type::kInt : Type::kF32);
  out->push_back(in);
  return {in.dst, loop_->regs[in.dst].type};
}

Val Checker::ReadParam(const ast::Expr& e, int param, std::vector<Inst>* out) {
  Inst in;
  in.loc = e.loc;
  in.op = Op::kRead;
  in.index = param;
  Val v = ParamAccess(e, param, out, &in.mode, &in.a, &in.b);
  if (!v.ok()) return {};
  in.dst = v.reg;
  out->push_back(in);
  if (prog_.params[param].is_int && in.mode == ir::Access::kElement) {
    // An i32 element is an int to the program; its f32 cell holds it
    // exactly, so the conversion cannot fail. Rows read as f32 vectors.
    return Unary(ir::kF32ToInt, v, e.loc, out);
  }
  return v;
}

Val Checker::LowerAttr(const ast::Expr& e, std::vector<Inst>* out) {
  const ast::Expr& obj = *e.args[0];
  if (obj.kind == Expr::kName) {
    int local = FindLocal(obj.str);
    if (local >= 0 && loop_->regs[local].type == Type::kRow) return RowAttr(e, local, out);
    for (auto it = body_scopes_.rbegin(); it != body_scopes_.rend(); ++it) {
      if (!it->count(obj.str)) continue;
      // A local whose declaration failed was reported there; one more
      // error about it would only repeat that one.
      if (local < 0) return {};
      Error(obj.loc, "'" + obj.str + "' is a local value, not a data set or a row; only " +
                         "those have attributes (." + e.str + ")");
      return {};
    }
  }
  int id = DExprOf(e);
  if (id < 0) return {};
  Inst in;
  in.loc = e.loc;
  in.op = Op::kOuter;
  in.index = id;
  in.dst = NewReg(Type::kInt);
  out->push_back(in);
  return {in.dst, Type::kInt};
}

Val Checker::RowAttr(const ast::Expr& e, int local, std::vector<Inst>* out) {
  const ast::Expr& obj = *e.args[0];
  const ir::Reg& row = loop_->regs[local];
  data::DataKind kind = prog_.data[row.row_data].kind;
  Inst in;
  in.loc = e.loc;
  in.a = local;
  in.index = row.row_data;
  if (e.str == "label") {
    in.op = Op::kRowLabel;
    in.dst = NewReg(Type::kF32);
  } else if (e.str == "x" && kind == data::DataKind::kDenseCsv) {
    in.op = Op::kRowX;
    in.dst = NewReg(Type::kVec, DataAttr(row.row_data, "dim", e.loc));
  } else if (e.str == "features" && kind == data::DataKind::kLibsvm) {
    Error(e.loc,
          "row.features can only be iterated: for (f, x) in " + obj.str + ".features { ... }");
    return {};
  } else {
    Error(e.loc, std::string("a ") + data::DataKindName(kind) + " row has no attribute '" + e.str +
                     "'; it has .label and " +
                     (kind == data::DataKind::kLibsvm ? ".features" : ".x"));
    return {};
  }
  out->push_back(in);
  return {in.dst, loop_->regs[in.dst].type};
}

Val Checker::LowerIndex(const ast::Expr& e, std::vector<Inst>* out) {
  // v[k] of a vector held by a let or var.
  if (int local = FindLocal(e.str); local >= 0 && e.args.size() == 1) {
    return Element({local, loop_->regs[local].type}, *e.args[0], e.loc, out);
  }
  const Global* g = FindGlobal(e.str);
  if (g && g->kind == Global::kAccum) {
    Error(e.loc, "accumulator '" + e.str +
                     "' can only be updated with += inside a parallel for, not read");
    return {};
  }
  if (!g || g->kind != Global::kParam) {
    Error(e.loc, g || FindLocal(e.str) >= 0 || FindSlot(e.str) >= 0
                     ? "'" + e.str + "' is not a parameter and cannot be indexed"
                     : "unknown name '" + e.str + "'");
    return {};
  }
  return ReadParam(e, g->index, out);
}

bool Checker::CheckCallShape(const ast::Expr& e) {
  static const std::map<std::string, int> kArity = {
      {"dot", 2},     {"sum", 1},      {"norm", 1},   {"sqrt", 1},    {"exp", 1},
      {"log", 1},     {"abs", 1},      {"tanh", 1},   {"sigmoid", 1}, {"log1pexp", 1},
      {"min", 2},     {"max", 2},      {"clip", 3},   {"zeros", 1},   {"rand", 0},
      {"randint", 1}, {"negative", 1}, {"int", 1},    {"floor", 1},   {"ceil", 1},
      {"argmax", 1},  {"argmin", 1},   {"onehot", 2}, {"sample", 1},  {"pow", 2}};
  auto ar = kArity.find(e.str);
  if (ar == kArity.end()) {
    if (e.str == "window") {
      Error(e.loc, "window can only be iterated: for c in window(corpus, t, radius) { ... }");
    } else {
      Error(e.loc, "unknown function '" + e.str + "'");
    }
    return false;
  }
  // max(v) and min(v) of a vector (version 2) beside max(a, b).
  const bool pick = (e.str == "max" || e.str == "min") && e.args.size() == 1;
  if (static_cast<int>(e.args.size()) != ar->second && !pick) {
    Error(e.loc, e.str + " expects " + std::to_string(ar->second) + " argument" +
                     (ar->second == 1 ? "" : "s") + ", got " + std::to_string(e.args.size()));
    return false;
  }
  for (const auto& n : e.arg_names) {
    if (!n.empty()) {
      Error(e.loc, e.str + " takes no named arguments");
      return false;
    }
  }
  return true;
}

Val Checker::Call(const ast::Expr& e, std::vector<Inst>* out) {
  if (!CheckCallShape(e)) return {};
  const std::string& f = e.str;
  // These take no run-time values as arguments: nothing to lower first.
  if (f == "zeros") return CallZeros(e, out);
  if (f == "onehot") return CallOneHot(e, out);
  if (f == "negative") return CallNegative(e, out);
  if (f == "rand") {
    Inst in;
    in.loc = e.loc;
    in.op = Op::kRand;
    in.dst = NewReg(Type::kF32);
    out->push_back(in);
    return {in.dst, Type::kF32};
  }
  std::vector<Val> args;
  for (const auto& a : e.args) args.push_back(Lower(*a, out));
  for (const Val& v : args) {
    if (!v.ok()) return {};
  }
  if (f == "randint") return CallRandInt(e, args, out);
  if (f == "sample") {
    if (args[0].type != Type::kVec) {
      Error(e.args[0]->loc,
            std::string("sample expects a vector of weights, got ") + TypeName(args[0].type));
      return {};
    }
    Inst in;
    in.loc = e.loc;
    in.op = Op::kSample;
    in.a = args[0].reg;
    in.dst = NewReg(Type::kInt);
    out->push_back(in);
    return {in.dst, Type::kInt};
  }
  if (f == "dot" || f == "sum" || f == "norm") return CallReduce(e, args, out);
  if (f == "argmax" || f == "argmin" || ((f == "min" || f == "max") && args.size() == 1)) {
    return CallPick(e, args, out);
  }
  if (f == "min" || f == "max") {
    return Binary(f == "min" ? ir::kMin : ir::kMax, args[0], args[1], e.loc, out);
  }
  if (f == "pow") {
    // f32 like exp and log, so int arguments are promoted (pow(2, -1) is
    // 0.5, which an int result could not hold); elementwise with a vector
    // and broadcast with a scalar, as arithmetic is.
    Val x = ToF32(args[0], out);  // in argument order, so the IR reads in source order
    Val y = ToF32(args[1], out);
    return Binary(ir::kPow, x, y, e.loc, out);
  }
  if (f == "clip") return CallClip(e, args, out);
  static const std::map<std::string, ir::UnFn> kUn = {
      {"sqrt", ir::kSqrt},         {"exp", ir::kExp},     {"log", ir::kLog},
      {"abs", ir::kAbs},           {"tanh", ir::kTanh},   {"sigmoid", ir::kSigmoid},
      {"log1pexp", ir::kLog1pExp}, {"floor", ir::kFloor}, {"ceil", ir::kCeil},
      {"int", ir::kF32ToInt}};
  return Unary(kUn.at(f), args[0], e.loc, out);
}

Val Checker::CallZeros(const ast::Expr& e, std::vector<Inst>* out) {
  if (e.args[0]->kind == Expr::kName && FindLocal(e.args[0]->str) >= 0) {
    Error(e.args[0]->loc,
          "the width of zeros must be a constant, not the loop value '" + e.args[0]->str + "'");
    return {};
  }
  auto k = ConstIntOf(*e.args[0], "the width of zeros");
  if (!k) return {};
  if (*k < 1) {
    Error(e.args[0]->loc, "zeros needs a width of at least 1");
    return {};
  }
  Inst in;
  in.loc = e.loc;
  in.op = Op::kZeros;
  in.dst = NewReg(Type::kVec, ConstInt(*k));
  out->push_back(in);
  return {in.dst, Type::kVec};
}

Val Checker::CallNegative(const ast::Expr& e, std::vector<Inst>* out) {
  const ast::Expr& c = *e.args[0];
  const Global* g = c.kind == Expr::kName ? FindGlobal(c.str) : nullptr;
  if (!g || g->kind != Global::kData || prog_.data[g->index].kind != data::DataKind::kTokens) {
    Error(c.loc, "negative expects a tokens data set");
    return {};
  }
  Inst in;
  in.loc = e.loc;
  in.op = Op::kNegative;
  in.index = g->index;
  in.dst = NewReg(Type::kInt);
  out->push_back(in);
  return {in.dst, Type::kInt};
}

Val Checker::CallRandInt(const ast::Expr& e, const std::vector<Val>& args, std::vector<Inst>* out) {
  if (args[0].type != Type::kInt) {
    Error(e.args[0]->loc, "randint expects an integer bound");
    return {};
  }
  Inst in;
  in.loc = e.loc;
  in.op = Op::kRandInt;
  in.a = args[0].reg;
  in.dst = NewReg(Type::kInt);
  out->push_back(in);
  return {in.dst, Type::kInt};
}

Val Checker::CallReduce(const ast::Expr& e, const std::vector<Val>& args, std::vector<Inst>* out) {
  const std::string& f = e.str;
  for (size_t k = 0; k < args.size(); ++k) {
    if (args[k].type != Type::kVec) {
      Error(e.args[k]->loc, f + " expects a vector, got " + TypeName(args[k].type));
      return {};
    }
  }
  if (f == "dot") CheckWidths(args[0].reg, args[1].reg, e.loc, "dot");
  Inst in;
  in.loc = e.loc;
  in.op = f == "dot" ? Op::kDot : f == "sum" ? Op::kSum : Op::kNorm;
  in.a = args[0].reg;
  in.b = args.size() > 1 ? args[1].reg : -1;
  in.dst = NewReg(Type::kF32);
  out->push_back(in);
  return {in.dst, Type::kF32};
}

Val Checker::CallPick(const ast::Expr& e, const std::vector<Val>& args, std::vector<Inst>* out) {
  const std::string& f = e.str;
  if (args[0].type != Type::kVec) {
    Error(e.args[0]->loc, f + " of one argument expects a vector, got " + TypeName(args[0].type));
    return {};
  }
  const bool arg = f == "argmax" || f == "argmin";
  Inst in;
  in.loc = e.loc;
  in.op = Op::kVecPick;
  in.fn = f == "max"      ? ir::kPickMax
          : f == "min"    ? ir::kPickMin
          : f == "argmax" ? ir::kPickArgMax
                          : ir::kPickArgMin;
  in.a = args[0].reg;
  in.dst = NewReg(arg ? Type::kInt : Type::kF32);
  out->push_back(in);
  return {in.dst, arg ? Type::kInt : Type::kF32};
}

Val Checker::CallOneHot(const ast::Expr& e, std::vector<Inst>* out) {
  auto width = ConstIntOf(*e.args[1], "the width of onehot");
  if (!width) return {};
  if (*width < 1) {
    Error(e.args[1]->loc, "onehot needs a width of at least 1");
    return {};
  }
  Val k = Lower(*e.args[0], out);
  if (!k.ok()) return {};
  if (k.type != Type::kInt) {
    Error(e.args[0]->loc, std::string("onehot expects an int index, got ") + TypeName(k.type) +
                              " (int() converts)");
    return {};
  }
  Inst in;
  in.loc = e.loc;
  in.op = Op::kOneHot;
  in.a = k.reg;
  in.dst = NewReg(Type::kVec, ConstInt(*width));
  out->push_back(in);
  return {in.dst, Type::kVec};
}

Val Checker::Element(Val v, const ast::Expr& index, Loc loc, std::vector<Inst>* out) {
  if (!v.ok()) return {};
  if (v.type != Type::kVec) {
    Error(loc, std::string("only a vector has elements, not ") + TypeName(v.type));
    return {};
  }
  Val k = Lower(index, out);
  if (!k.ok()) return {};
  if (k.type != Type::kInt) {
    Error(index.loc, std::string("a vector element index must be an int, not ") + TypeName(k.type) +
                         " (int() converts)");
    return {};
  }
  Inst in;
  in.loc = loc;
  in.op = Op::kElem;
  in.a = v.reg;
  in.b = k.reg;
  in.dst = NewReg(Type::kF32);
  out->push_back(in);
  return {in.dst, Type::kF32};
}

Val Checker::CallClip(const ast::Expr& e, const std::vector<Val>& args, std::vector<Inst>* out) {
  Val x = args[0];
  if (x.type == Type::kInt) x = ToF32(x, out);
  if (x.type != Type::kF32 && x.type != Type::kVec) {
    Error(e.args[0]->loc, "clip expects a number or vector");
    return {};
  }
  Val lo = ToF32(args[1], out), hi = ToF32(args[2], out);
  if (lo.type != Type::kF32 || hi.type != Type::kF32) {
    Error(e.loc, "clip's bounds must be scalars");
    return {};
  }
  Inst in;
  in.loc = e.loc;
  in.op = Op::kClip;
  in.a = x.reg;
  in.b = lo.reg;
  in.c = hi.reg;
  in.dst = NewReg(x.type, x.type == Type::kVec ? loop_->regs[x.reg].width_expr : -1);
  out->push_back(in);
  return {in.dst, x.type};
}

}  // namespace rigel::frontend::internal
