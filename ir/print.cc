// Text form of the IR for `rigel dump-ir` and tests. The format is stable:
// tests and docs/architecture.md quote it.
#include <cstdio>

#include "ir/ir.h"

namespace rigel::ir {

const char* UnFnName(int fn) {
  static const char* kNames[] = {"neg",     "not",      "sqrt", "exp",   "log",  "abs", "tanh",
                                 "sigmoid", "log1pexp", "f32",  "floor", "ceil", "int", "i32"};
  return fn >= 0 && fn <= kIntToI32 ? kNames[fn] : "?";
}

const char* BinOpName(int op) {
  static const char* kNames[] = {"+", "-",  "*", "/",  "%",  "min", "max", "pow",
                                 "<", "<=", ">", ">=", "==", "!=",  "and", "or"};
  return op >= 0 && op <= kOr ? kNames[op] : "?";
}

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string TypeStr(const Program& p, const Reg& r) {
  switch (r.type) {
    case Type::kInt:
      return "int";
    case Type::kF32:
      return "f32";
    case Type::kBool:
      return "bool";
    case Type::kRow:
      return "row<" + p.data[r.row_data].name + ">";
    case Type::kVec:
      return "f32[" + PrintExpr(p, r.width_expr) + "]";
  }
  return "?";
}

std::string R(const Loop& l, int reg) {
  if (reg < 0) return "_";
  std::string s = "%" + std::to_string(reg);
  if (!l.regs[reg].name.empty() && l.regs[reg].named) s += "(" + l.regs[reg].name + ")";
  return s;
}

std::string Access(const Program& p, const Loop& l, const Inst& in) {
  std::string s = p.params[in.index].name;
  switch (in.mode) {
    case Access::kWhole:
      return s + "[*]";
    case Access::kRow:
      return s + "[" + R(l, in.a) + ", :]";
    case Access::kElement:
      return s + "[" + R(l, in.a) + (in.b >= 0 ? ", " + R(l, in.b) : "") + "]";
  }
  return s;
}

void PrintBody(const Program& p, const Loop& l, const std::vector<Inst>& body, int indent,
               std::string* out) {
  std::string pad(indent, ' ');
  for (const Inst& in : body) {
    std::string d = in.dst >= 0 ? R(l, in.dst) + ": " + TypeStr(p, l.regs[in.dst]) + " = " : "";
    std::string line;
    switch (in.op) {
      case Op::kConstI:
        line = d + "const " + std::to_string(in.ival);
        break;
      case Op::kConstF:
        line = d + "const " + Num(in.fval);
        break;
      case Op::kOuter:
        line = d + "outer " + PrintExpr(p, in.index);
        break;
      case Op::kMove:
        line = R(l, in.dst) + " := " + R(l, in.a);
        break;
      case Op::kUnary:
        line = d + UnFnName(in.fn) + " " + R(l, in.a);
        break;
      case Op::kBinary:
        line = d + R(l, in.a) + " " + BinOpName(in.fn) + " " + R(l, in.b);
        break;
      case Op::kClip:
        line = d + "clip " + R(l, in.a) + ", " + R(l, in.b) + ", " + R(l, in.c);
        break;
      case Op::kDot:
        line = d + "dot " + R(l, in.a) + ", " + R(l, in.b);
        break;
      case Op::kSum:
        line = d + "sum " + R(l, in.a);
        break;
      case Op::kNorm:
        line = d + "norm " + R(l, in.a);
        break;
      case Op::kZeros:
        line = d + "zeros";
        break;
      case Op::kElem:
        line = d + R(l, in.a) + "[" + R(l, in.b) + "]";
        break;
      case Op::kVecPick: {
        static const char* kPick[] = {"max", "min", "argmax", "argmin"};
        line = d + (in.fn <= kPickArgMin ? kPick[in.fn] : "?") + " " + R(l, in.a);
        break;
      }
      case Op::kOneHot:
        line = d + "onehot " + R(l, in.a);
        break;
      case Op::kSetElem:
        line = R(l, in.dst) + "[" + R(l, in.b) + "] " +
               (in.fn == kPlainAssign ? "=" : std::string(BinOpName(in.fn)) + "=") + " " +
               R(l, in.c);
        break;
      case Op::kSample:
        line = d + "sample " + R(l, in.a);
        break;
      case Op::kRand:
        line = d + "rand";
        break;
      case Op::kRandInt:
        line = d + "randint " + R(l, in.a);
        break;
      case Op::kNegative:
        line = d + "negative " + p.data[in.index].name;
        break;
      case Op::kRowLabel:
        line = d + "label " + R(l, in.a);
        break;
      case Op::kRowX:
        line = d + "x " + R(l, in.a);
        break;
      case Op::kRead:
        line = d + "read " + Access(p, l, in);
        break;
      case Op::kWrite:
        line = "write " + Access(p, l, in) + " " +
               (in.fn == kPlainAssign ? std::string("=") : std::string(BinOpName(in.fn)) + "=") +
               " " + R(l, in.c);
        break;
      case Op::kAccumAdd:
        line = "accum " + p.accums[in.index].name + (in.b >= 0 ? "[" + R(l, in.b) + "]" : "") +
               " += " + R(l, in.a);
        break;
      case Op::kFor:
        line = "for " + R(l, in.dst) + " in " + R(l, in.a) + ".." + R(l, in.b);
        break;
      case Op::kForFeatures:
        line = "for (" + R(l, in.dst) + ", " + R(l, in.dst2) + ") in features " + R(l, in.a);
        break;
      case Op::kForWindow:
        line = "for " + R(l, in.dst) + " in window " + p.data[in.index].name + ", " + R(l, in.a) +
               ", " + R(l, in.b);
        break;
      case Op::kIf:
        line = "if " + R(l, in.a);
        break;
    }
    *out += pad + line + "\n";
    if (!in.body.empty() || in.op == Op::kIf || in.op == Op::kFor || in.op == Op::kForFeatures ||
        in.op == Op::kForWindow) {
      PrintBody(p, l, in.body, indent + 2, out);
      if (in.op == Op::kIf && !in.else_body.empty()) {
        *out += pad + "else\n";
        PrintBody(p, l, in.else_body, indent + 2, out);
      }
      *out += pad + "end\n";
    }
  }
}

void PrintDriver(const Program& p, const std::vector<DStmt>& body, int indent, std::string* out) {
  std::string pad(indent, ' ');
  for (const DStmt& s : body) {
    switch (s.kind) {
      case DStmt::kFor:
        *out += pad + "for $" + p.slot_names[s.slot] + " in " + PrintExpr(p, s.a) + ".." +
                PrintExpr(p, s.b) + "\n";
        PrintDriver(p, s.body, indent + 2, out);
        *out += pad + "end\n";
        break;
      case DStmt::kParallel:
        *out += pad + "run loop " + std::to_string(s.index) + "\n";
        break;
      case DStmt::kPrint: {
        std::string args;
        for (int a : s.args) args += (args.empty() ? "" : ", ") + PrintExpr(p, a);
        *out += pad + "print " + args + "\n";
        break;
      }
      case DStmt::kAccumSet:
        *out += pad + p.accums[s.index].name + " = " + PrintExpr(p, s.a) + "\n";
        break;
      case DStmt::kLet:
        *out += pad + "$" + p.slot_names[s.slot] + " = " + PrintExpr(p, s.a) + "\n";
        break;
      case DStmt::kIf:
        *out += pad + "if " + PrintExpr(p, s.a) + "\n";
        PrintDriver(p, s.body, indent + 2, out);
        if (!s.else_body.empty()) {
          *out += pad + "else\n";
          PrintDriver(p, s.else_body, indent + 2, out);
        }
        *out += pad + "end\n";
        break;
    }
  }
}

}  // namespace

std::string PrintExpr(const Program& p, int id) {
  if (id < 0 || id >= static_cast<int>(p.exprs.size())) return "?";
  const DExpr& e = p.exprs[id];
  switch (e.kind) {
    case DExpr::kInt:
      return std::to_string(e.ival);
    case DExpr::kFloat:
      return Num(e.fval);
    case DExpr::kString:
      return "\"" + e.str + "\"";
    case DExpr::kDataAttr:
      return p.data[e.index].name + "." + e.str;
    case DExpr::kAccum:
      return p.accums[e.index].name + (e.a >= 0 ? "[" + PrintExpr(p, e.a) + "]" : "");
    case DExpr::kSlot:
      return "$" + p.slot_names[e.index];
    case DExpr::kUnary:
      return std::string(UnFnName(e.fn)) + "(" + PrintExpr(p, e.a) + ")";
    case DExpr::kBinary:
      if (e.fn == kMin || e.fn == kMax || e.fn == kPow) {
        return std::string(BinOpName(e.fn)) + "(" + PrintExpr(p, e.a) + ", " + PrintExpr(p, e.b) +
               ")";
      }
      return "(" + PrintExpr(p, e.a) + " " + BinOpName(e.fn) + " " + PrintExpr(p, e.b) + ")";
  }
  return "?";
}

std::string PrintLoop(const Program& p, const Loop& l) {
  std::string out = "loop " + std::to_string(l.id) + (l.ordered ? " ordered" : "") + " over " +
                    p.data[l.data].name + " (";
  for (size_t k = 0; k < l.vars.size(); ++k) {
    out += (k ? ", " : "") + R(l, l.vars[k]) + ": " + TypeStr(p, l.regs[l.vars[k]]);
  }
  out += ")";
  std::string relax;
  for (size_t k = 0; k < l.relaxed.size(); ++k) {
    if (l.relaxed[k]) relax += (relax.empty() ? "" : ", ") + p.params[k].name;
  }
  if (!relax.empty()) out += " relax " + relax;
  out += "\n";
  PrintBody(p, l, l.body, 2, &out);
  out += "end\n";
  return out;
}

std::string Print(const Program& p) {
  std::string out = "program " + p.path + "\n";
  for (const auto& [name, v] : p.consts) out += "const " + name + " = " + Num(v) + "\n";
  for (const DataDecl& d : p.data) {
    out += "data " + d.name + " = " + (d.criteo ? "criteo" : data::DataKindName(d.kind));
    if (d.split_parent >= 0) {
      out += " split(" + p.data[d.split_parent].name + ", part " + std::to_string(d.split_part) +
             ", test " + Num(d.split_test) + ", seed " + std::to_string(d.split_seed) + ")";
    } else if (d.kind == data::DataKind::kGrid || d.kind == data::DataKind::kRange) {
      out += "(" + PrintExpr(p, d.grid_n) +
             (d.kind == data::DataKind::kGrid ? ", " + PrintExpr(p, d.grid_m) : "") + ")";
    } else if (d.criteo) {
      out += "(\"" + d.path + "\", buckets=" + std::to_string(d.buckets) +
             (d.shared_buckets ? ", fields=\"shared\")" : ", fields=\"own\")");
    } else {
      out += "(\"" + d.path + "\")";
    }
    out += "\n";
  }
  for (const ParamDecl& q : p.params) {
    static const char* kInit[] = {"zeros", "fill", "normal", "uniform", "randint"};
    out += "param " + q.name + (q.is_int ? ": i32[" : ": f32[") + PrintExpr(p, q.rows) +
           (q.width > 0 ? ", " + std::to_string(q.width) : "") + "] = ";
    if (q.init == ParamDecl::kFile) {
      out += "file(\"" + q.file + "\", offset=" + std::to_string(q.file_offset) +
             ", rows=" + std::to_string(q.file_rows) + (q.file_int ? ", i32" : "") + ")\n";
    } else {
      out += std::string(kInit[q.init]) + "(" + Num(q.a) + ", " + Num(q.b) +
             ", seed=" + std::to_string(q.seed) + ")\n";
    }
  }
  for (const AccumDecl& a : p.accums) {
    out += "accum " + a.name + ": f32" + (a.width > 0 ? "[" + std::to_string(a.width) + "]" : "") +
           "\n";
  }
  for (const Loop& l : p.loops) out += PrintLoop(p, l);
  out += "driver\n";
  PrintDriver(p, p.driver, 2, &out);
  out += "end\n";
  return out;
}

}  // namespace rigel::ir
