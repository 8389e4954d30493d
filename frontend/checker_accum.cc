// Accumulators in loop bodies and in the driver: `s += x` and, for a vector
// accumulator (accum s: f32[K]), `s += v` and `s[k] += x` inside a parallel
// for; `s[k]` reads and `s = x` in the driver.
#include "frontend/checker_internal.h"

namespace rigel::frontend::internal {

using ast::Expr;
using ast::Stmt;
using ir::Inst;
using ir::Op;
using ir::Type;

namespace {

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

}  // namespace

void Checker::BodyAccumAdd(const Stmt& s, uint8_t op, int accum, std::vector<Inst>* out) {
  const Expr& t = *s.target;
  const ir::AccumDecl& a = prog_.accums[accum];
  if (op != ir::kAdd) {
    Error(t.loc, "accumulator " + Quoted(t.str) + " can only be updated with += inside a " +
                     "parallel for");
    Lower(*s.value, out);  // still report errors on the right-hand side
    return;
  }
  Inst in;
  in.op = Op::kAccumAdd;
  in.index = accum;
  in.loc = s.loc;
  if (t.kind == Expr::kIndex) {
    // s[k] += x: the element index is checked against the width when it runs.
    if (a.width == 0) {
      Error(t.loc, "accumulator " + Quoted(t.str) + " is a scalar and cannot be indexed");
      return;
    }
    if (t.args.size() != 1) {
      Error(t.loc, "an element of accumulator " + Quoted(t.str) + " takes one subscript, got " +
                       std::to_string(t.args.size()));
      return;
    }
    Val k = Lower(*t.args[0], out);
    if (!k.ok()) return;
    if (k.type != Type::kInt) {
      Error(t.args[0]->loc, std::string("an accumulator element index must be an int, not ") +
                                TypeName(k.type) + " (int() converts)");
      return;
    }
    in.b = k.reg;
  }
  Val v = Lower(*s.value, out);
  if (!v.ok()) return;
  if (a.width > 0 && t.kind == Expr::kName) {
    if (v.type != Type::kVec) {
      Error(s.value->loc, "vector accumulator " + Quoted(t.str) + " adds vectors of width " +
                              std::to_string(a.width) + ", not " + TypeName(v.type) + " (" + t.str +
                              "[k] += x adds to one element)");
      return;
    }
    CheckAccumWidth(v.reg, a.width, s.value->loc);
  } else {
    if (v.type == Type::kInt) v = ToF32(v, out);
    if (v.type != Type::kF32) {
      Error(s.value->loc,
            (t.kind == Expr::kIndex ? "an element of accumulator " + Quoted(t.str) + " adds"
                                    : std::string("an accumulator adds")) +
                " f32 scalars, not " + TypeName(v.type));
      return;
    }
  }
  in.a = v.reg;
  out->push_back(in);
}

void Checker::CheckAccumWidth(int reg, int64_t width, Loc loc) {
  const ir::Reg& r = loop_->regs[reg];
  if (r.width >= 0) {
    if (r.width != width) {
      Error(loc, "vector width mismatch in accumulator update: " + std::to_string(r.width) +
                     " vs " + std::to_string(width));
    }
    return;
  }
  // Depends on data attributes: checked once the data are loaded, before anything runs.
  prog_.width_checks.push_back({r.width_expr, ConstInt(width), loc, "accumulator update"});
}

int Checker::DExprAccum(const Expr& e, int accum) {
  const ir::AccumDecl& a = prog_.accums[accum];
  ir::DExpr d;
  d.loc = e.loc;
  d.kind = ir::DExpr::kAccum;
  d.index = accum;
  if (e.kind == Expr::kName) {
    if (a.width > 0) {
      Error(e.loc, "vector accumulator " + Quoted(e.str) + " is read one element at a time (" +
                       e.str + "[k])");
      return -1;
    }
    return AddExpr(d);
  }
  if (a.width == 0) {
    Error(e.loc, "accumulator " + Quoted(e.str) + " is a scalar and cannot be indexed");
    return -1;
  }
  if (e.args.size() != 1) {
    Error(e.loc, "an element of accumulator " + Quoted(e.str) + " takes one subscript, got " +
                     std::to_string(e.args.size()));
    return -1;
  }
  int k = DExprOf(*e.args[0]);
  if (k < 0) return -1;
  if (!prog_.exprs[k].is_int) {
    Error(e.args[0]->loc,
          "an accumulator element index must be an int, not " +
              std::string(prog_.exprs[k].kind == ir::DExpr::kString ? "a string" : "f32") +
              " (int() converts)");
    return -1;
  }
  d.a = k;  // checked against the width when it is read
  return AddExpr(d);
}

bool Checker::DriverAccumSet(const Stmt& s, int accum, ir::DStmt* d) {
  const Expr& t = *s.target;
  if (t.kind == Expr::kIndex) {
    Error(t.loc, prog_.accums[accum].width == 0
                     ? "accumulator " + Quoted(t.str) + " is a scalar and cannot be indexed"
                     : "an element of accumulator " + Quoted(t.str) +
                           " cannot be assigned in the driver (" + t.str +
                           " = 0 resets every element)");
    return false;
  }
  if (s.op != Tok::kAssign) {
    Error(t.loc, "vector accumulator " + Quoted(t.str) + " can only be set whole in the driver (" +
                     t.str + " = 0 resets every element)");
    return false;
  }
  int value = DExprOf(*s.value);
  if (value < 0) return false;
  if (prog_.exprs[value].kind == ir::DExpr::kString) {
    Error(s.value->loc, "strings can only be printed");
    return false;
  }
  d->kind = ir::DStmt::kAccumSet;
  d->index = accum;
  d->a = value;
  return true;
}

}  // namespace rigel::frontend::internal
