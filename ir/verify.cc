#include "ir/verify.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace rigel::ir {
namespace {

const char* OpName(Op op) {
  static const char* kNames[] = {
      "const", "const", "outer", "move", "unary",        "binary",     "clip",  "dot",
      "sum",   "norm",  "zeros", "rand", "randint",      "negative",   "label", "x",
      "read",  "write", "accum", "for",  "for features", "for window", "if"};
  size_t i = static_cast<size_t>(op);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

const char* TypeName(Type t) {
  switch (t) {
    case Type::kInt:
      return "an int";
    case Type::kF32:
      return "an f32";
    case Type::kBool:
      return "a bool";
    case Type::kVec:
      return "a vector";
    case Type::kRow:
      return "a row";
  }
  return "?";
}

bool IsLoopOp(Op op) { return op == Op::kFor || op == Op::kForFeatures || op == Op::kForWindow; }

// The loop variables' types for each kind of iteration space.
std::vector<Type> SpaceTypes(const DataDecl& d) {
  switch (d.kind) {
    case data::DataKind::kTriples:
      return {Type::kInt, Type::kInt, Type::kF32};
    case data::DataKind::kLibsvm:
    case data::DataKind::kDenseCsv:
      return {Type::kInt, Type::kRow};
    case data::DataKind::kTokens:
      // With lines=true: (t, w, d), the line number third.
      if (d.lines) return {Type::kInt, Type::kInt, Type::kInt};
      return {Type::kInt, Type::kInt};
    case data::DataKind::kGrid:
      return {Type::kInt, Type::kInt};
    case data::DataKind::kRange:
      return {Type::kInt};
  }
  return {};
}

class Verifier {
 public:
  Verifier(const Program& p, const Loop& l, const VerifyOptions& o) : p_(p), l_(l), o_(o) {}

  Status Run() {
    if (Status st = Header(); !st.ok()) return st;
    defined_.assign(l_.regs.size(), false);
    def_count_.assign(l_.regs.size(), 0);
    for (int v : l_.vars) {
      if (Status st = Define(v); !st.ok()) return st;
    }
    return Block(l_.body);
  }

 private:
  Status LoopFail(const std::string& what) const {
    return Internal("loop " + std::to_string(l_.id) + ": " + what);
  }
  Status Fail(const std::string& what) const {
    if (current_ == nullptr) return LoopFail(what);
    const Inst& in = *current_;
    return Internal("loop " + std::to_string(l_.id) + ", instruction " + std::to_string(number_) +
                    " (" + OpName(in.op) + " at " + std::to_string(in.loc.line) + ":" +
                    std::to_string(in.loc.col) + "): " + what);
  }
  static std::string Reg(int r) {
    std::string s = "%";  // (not "%" + ...: GCC 12 warns about that, wrongly)
    return s + std::to_string(r);
  }
  bool InRange(int r) const { return r >= 0 && r < static_cast<int>(l_.regs.size()); }
  Type TypeOf(int r) const { return l_.regs[r].type; }

  // The loop's data set, variables, flags and register declarations.
  Status Header() {
    if (l_.data < 0 || l_.data >= static_cast<int>(p_.data.size())) {
      return LoopFail("iterates data set " + std::to_string(l_.data) + ", but there are " +
                      std::to_string(p_.data.size()));
    }
    if (l_.relaxed.size() != p_.params.size()) {
      return LoopFail("has " + std::to_string(l_.relaxed.size()) + " relax flags for " +
                      std::to_string(p_.params.size()) + " parameters");
    }
    for (size_t r = 0; r < l_.regs.size(); ++r) {
      const ir::Reg& reg = l_.regs[r];
      if (reg.type == Type::kVec &&
          (reg.width_expr < 0 || reg.width_expr >= static_cast<int>(p_.exprs.size()))) {
        return LoopFail("vector register " + Reg(static_cast<int>(r)) + " has no width expression");
      }
      if (reg.type == Type::kRow &&
          (reg.row_data < 0 || reg.row_data >= static_cast<int>(p_.data.size()))) {
        return LoopFail("row register " + Reg(static_cast<int>(r)) + " names no data set");
      }
    }
    std::vector<Type> want = SpaceTypes(p_.data[l_.data]);
    if (l_.vars.size() != want.size()) {
      return LoopFail("has " + std::to_string(l_.vars.size()) +
                      " loop variables; its space binds " + std::to_string(want.size()));
    }
    for (size_t k = 0; k < want.size(); ++k) {
      if (!InRange(l_.vars[k]) || TypeOf(l_.vars[k]) != want[k]) {
        return LoopFail("loop variable " + std::to_string(k) + " (" + Reg(l_.vars[k]) +
                        ") is out of range or not " + TypeName(want[k]));
      }
    }
    return Status::Ok();
  }

  Status Define(int r) {
    if (!InRange(r)) return Fail("defines " + Reg(r) + ", outside the loop's registers");
    if (def_count_[r]++ > 0 && !l_.regs[r].mut) {
      return Fail("defines " + Reg(r) + " again; it is not a var");
    }
    if (!defined_[r]) {
      defined_[r] = true;
      undo_.push_back(r);
    }
    return Status::Ok();
  }

  // Runs `f` with the definitions it makes visible only inside it.
  template <typename F>
  Status Scoped(F f) {
    size_t mark = undo_.size();
    Status st = f();
    while (undo_.size() > mark) {
      defined_[undo_.back()] = false;
      undo_.pop_back();
    }
    return st;
  }

  Status Block(const std::vector<Inst>& body) {
    return Scoped([&]() -> Status {
      for (const Inst& in : body) {
        if (Status st = One(in); !st.ok()) return st;
      }
      return Status::Ok();
    });
  }

  Status One(const Inst& in) {
    current_ = &in;
    ++number_;
    if (!in.body.empty() && !IsLoopOp(in.op) && in.op != Op::kIf) return Fail("has a body");
    if (!in.else_body.empty() && in.op != Op::kIf) return Fail("has an else body");
    const char* names[] = {"a", "b", "c"};
    const int regs[] = {in.a, in.b, in.c};
    for (int k = 0; k < 3; ++k) {
      if (regs[k] < 0) continue;
      if (!InRange(regs[k]))
        return Fail(std::string("operand ") + names[k] + " " + Reg(regs[k]) +
                    " is outside the loop's registers");
      if (!defined_[regs[k]]) {
        return Fail(std::string("operand ") + names[k] + " " + Reg(regs[k]) +
                    " is used before it is defined");
      }
    }
    if (in.dst >= 0 && !InRange(in.dst)) return Fail("defines " + Reg(in.dst) + ", out of range");
    if (in.dst2 >= 0 && !InRange(in.dst2))
      return Fail("defines " + Reg(in.dst2) + ", out of range");
    if (Status st = Types(in); !st.ok()) return st;
    if (!IsLoopOp(in.op)) {
      for (int d : {in.dst, in.dst2}) {
        if (d < 0) continue;
        if (Status st = Define(d); !st.ok()) return st;
      }
    }
    if (in.op == Op::kIf) {
      if (Status st = Block(in.body); !st.ok()) return st;
      return Block(in.else_body);
    }
    if (!IsLoopOp(in.op)) return Status::Ok();
    return Scoped([&]() -> Status {
      for (int d : {in.dst, in.dst2}) {
        if (d < 0) continue;
        if (Status st = Define(d); !st.ok()) return st;
      }
      return Block(in.body);
    });
  }

  // --- Types.
  Status Expect(const char* what, int r, std::initializer_list<Type> types) {
    if (r < 0) return Fail(std::string(what) + " is missing");
    std::string expected;
    for (Type t : types) {
      if (TypeOf(r) == t) return Status::Ok();
      expected += (expected.empty() ? "" : " or ") + std::string(TypeName(t));
    }
    return Fail(std::string(what) + " " + Reg(r) + " is " + TypeName(TypeOf(r)) + ", expected " +
                expected);
  }
  Status Index(const char* what, int i, size_t n) {
    if (i >= 0 && i < static_cast<int>(n)) return Status::Ok();
    return Fail(std::string(what) + " " + std::to_string(i) + " is out of range (" +
                std::to_string(n) + ")");
  }
  // Static widths of two vector registers agree when both are known.
  Status SameWidth(int r, int64_t w) {
    int64_t rw = l_.regs[r].width;
    if (rw < 0 || w < 0 || rw == w) return Status::Ok();
    return Fail("vector " + Reg(r) + " has width " + std::to_string(rw) + ", expected " +
                std::to_string(w));
  }

  Status Types(const Inst& in) {
    switch (in.op) {
      case Op::kRead:
      case Op::kWrite:
        return AccessTypes(in);
      case Op::kAccumAdd:
      case Op::kFor:
      case Op::kForFeatures:
      case Op::kForWindow:
      case Op::kIf:
        return ControlTypes(in);
      case Op::kUnary:
      case Op::kBinary:
      case Op::kClip:
        return ArithmeticTypes(in);
      default:
        return ValueTypes(in);
    }
  }

  Status ValueTypes(const Inst& in) {
    switch (in.op) {
      case Op::kConstI:
        return Expect("dst", in.dst, {Type::kInt, Type::kBool});
      case Op::kConstF:
      case Op::kRand:
        return Expect("dst", in.dst, {Type::kF32});
      case Op::kOuter: {
        if (Status st = Index("driver expression", in.index, p_.exprs.size()); !st.ok()) return st;
        return Expect("dst", in.dst, {p_.exprs[in.index].is_int ? Type::kInt : Type::kF32});
      }
      case Op::kMove: {
        if (Status st =
                Expect("a", in.a, {Type::kInt, Type::kF32, Type::kBool, Type::kVec, Type::kRow});
            !st.ok()) {
          return st;
        }
        if (Status st = Expect("dst", in.dst, {TypeOf(in.a)}); !st.ok()) return st;
        return TypeOf(in.a) == Type::kVec ? SameWidth(in.a, l_.regs[in.dst].width) : Status::Ok();
      }
      case Op::kDot:
        if (Status st = Expect("b", in.b, {Type::kVec}); !st.ok()) return st;
        if (Status st = SameWidth(in.a, l_.regs[in.b].width); !st.ok()) return st;
        [[fallthrough]];
      case Op::kSum:
      case Op::kNorm:
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kF32});
      case Op::kZeros:
        return Expect("dst", in.dst, {Type::kVec});
      case Op::kElem:
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        if (Status st = Expect("b", in.b, {Type::kInt}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kF32});
      case Op::kVecPick:
        if (in.fn > kPickArgMin) return Fail("picks with fn " + std::to_string(in.fn));
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        return Expect("dst", in.dst, {in.fn >= kPickArgMax ? Type::kInt : Type::kF32});
      case Op::kOneHot:
        if (Status st = Expect("a", in.a, {Type::kInt}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kVec});
      case Op::kSetElem:
        if (in.a != in.dst)
          return Fail("sets an element of " + Reg(in.dst) + " but reads " + Reg(in.a));
        if (in.dst < 0 || !l_.regs[in.dst].mut)
          return Fail("sets an element of a register that is not a var");
        if (in.fn != kPlainAssign && in.fn > kDiv)
          return Fail("sets an element with fn " + std::to_string(in.fn));
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        if (Status st = Expect("b", in.b, {Type::kInt}); !st.ok()) return st;
        return Expect("c", in.c, {Type::kF32});
      case Op::kSample:
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kInt});
      case Op::kRandInt:
        if (Status st = Expect("a", in.a, {Type::kInt}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kInt});
      case Op::kNegative:
        if (Status st = Index("data set", in.index, p_.data.size()); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kInt});
      case Op::kRowLabel:
      case Op::kRowX:
        if (Status st = Index("data set", in.index, p_.data.size()); !st.ok()) return st;
        if (Status st = Expect("a", in.a, {Type::kRow}); !st.ok()) return st;
        return Expect("dst", in.dst, {in.op == Op::kRowX ? Type::kVec : Type::kF32});
      default:
        return Fail("has an unknown op");
    }
  }

  Status ArithmeticTypes(const Inst& in) {
    if (in.op == Op::kClip) {
      if (Status st = Expect("a", in.a, {Type::kF32, Type::kVec}); !st.ok()) return st;
      if (Status st = Expect("b", in.b, {Type::kF32}); !st.ok()) return st;
      if (Status st = Expect("c", in.c, {Type::kF32}); !st.ok()) return st;
      return Expect("dst", in.dst, {TypeOf(in.a)});
    }
    if (in.op == Op::kUnary) {
      if (in.fn > kIntToI32) return Fail("has unary function " + std::to_string(in.fn));
      if (in.fn == kIntToF32 || in.fn == kIntToI32) {
        if (Status st = Expect("a", in.a, {Type::kInt}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kF32});
      }
      if (in.fn == kF32ToInt) {
        if (Status st = Expect("a", in.a, {Type::kF32}); !st.ok()) return st;
        return Expect("dst", in.dst, {Type::kInt});
      }
      if (in.fn == kNot) {
        if (Status st = Expect("a", in.a, {Type::kBool}); !st.ok()) return st;
      } else if (Status st = Expect("a", in.a, {Type::kF32, Type::kVec, Type::kInt}); !st.ok()) {
        return st;
      } else if (in.fn != kNeg && TypeOf(in.a) == Type::kInt) {
        return Fail(std::string(UnFnName(in.fn)) + " of an int");
      }
      return Expect("dst", in.dst, {TypeOf(in.a)});
    }
    if (in.fn > kOr) return Fail("has binary operator " + std::to_string(in.fn));
    if (Status st = Expect("a", in.a, {Type::kInt, Type::kF32, Type::kBool, Type::kVec});
        !st.ok()) {
      return st;
    }
    if (Status st = Expect("b", in.b, {Type::kInt, Type::kF32, Type::kBool, Type::kVec});
        !st.ok()) {
      return st;
    }
    return BinaryTypes(in);
  }

  Status BinaryTypes(const Inst& in) {
    Type a = TypeOf(in.a), b = TypeOf(in.b);
    if (in.fn == kAnd || in.fn == kOr) {
      if (Status st = Expect("a", in.a, {Type::kBool}); !st.ok()) return st;
      if (Status st = Expect("b", in.b, {Type::kBool}); !st.ok()) return st;
      return Expect("dst", in.dst, {Type::kBool});
    }
    if (in.fn >= kLt) {
      const bool bools = a == Type::kBool && (in.fn == kEq || in.fn == kNe);
      if (a != b || (a != Type::kInt && a != Type::kF32 && !bools)) {
        return Fail(std::string("compares ") + TypeName(a) + " with " + TypeName(b));
      }
      return Expect("dst", in.dst, {Type::kBool});
    }
    if (in.fn == kMod && (a != Type::kInt || b != Type::kInt)) {
      return Fail(std::string("takes % of ") + TypeName(a) + " and " + TypeName(b));
    }
    if (in.fn == kPow && (a == Type::kInt || b == Type::kInt)) {
      return Fail(std::string("takes pow of ") + TypeName(a) + " and " + TypeName(b));
    }
    if (a == Type::kVec || b == Type::kVec) {
      for (int r : {in.a, in.b}) {
        if (Status st = Expect("operand", r, {Type::kVec, Type::kF32}); !st.ok()) return st;
      }
      if (Status st = Expect("dst", in.dst, {Type::kVec}); !st.ok()) return st;
      if (a == Type::kVec && b == Type::kVec) {
        if (Status st = SameWidth(in.a, l_.regs[in.b].width); !st.ok()) return st;
      }
      return SameWidth(in.dst, l_.regs[a == Type::kVec ? in.a : in.b].width);
    }
    if (a != b || (a != Type::kInt && a != Type::kF32)) {
      return Fail(std::string("computes with ") + TypeName(a) + " and " + TypeName(b));
    }
    return Expect("dst", in.dst, {a});
  }

  // Parameter reads and writes: subscripts by access mode, value types.
  Status AccessTypes(const Inst& in) {
    if (Status st = Index("parameter", in.index, p_.params.size()); !st.ok()) return st;
    const int64_t width = p_.params[in.index].width;
    const bool two_d = width > 0;
    const bool read = in.op == Op::kRead;
    const int value = read ? in.dst : in.c;
    if (!read && in.fn != kPlainAssign && in.fn > kDiv) {
      return Fail("writes with operator " + std::to_string(in.fn));
    }
    switch (in.mode) {
      case Access::kWhole:
        if (two_d) return Fail("reads or writes a 2-D parameter whole");
        if (in.a >= 0 || in.b >= 0) return Fail("has subscripts for a whole access");
        break;
      case Access::kRow:
        if (!two_d) return Fail("takes a row of a 1-D parameter");
        if (Status st = Expect("row subscript", in.a, {Type::kInt}); !st.ok()) return st;
        if (in.b >= 0) return Fail("has a column subscript for a row access");
        break;
      case Access::kElement:
        if (Status st = Expect("row subscript", in.a, {Type::kInt}); !st.ok()) return st;
        if (!two_d && in.b >= 0) return Fail("has a column subscript for a 1-D parameter");
        if (two_d && !(o_.key_slice && in.b < 0)) {
          if (Status st = Expect("column subscript", in.b, {Type::kInt}); !st.ok()) return st;
        }
        break;
    }
    if (o_.key_slice && value < 0) return Status::Ok();
    const char* what = read ? "dst" : "value c";
    if (in.mode == Access::kElement) return Expect(what, value, {Type::kF32});
    if (Status st = Expect(what, value,
                           read ? std::initializer_list<Type>{Type::kVec}
                                : std::initializer_list<Type>{Type::kVec, Type::kF32});
        !st.ok()) {
      return st;
    }
    return TypeOf(value) == Type::kVec && two_d ? SameWidth(value, width) : Status::Ok();
  }

  Status ControlTypes(const Inst& in) {
    switch (in.op) {
      case Op::kAccumAdd: {
        if (Status st = Index("accumulator", in.index, p_.accums.size()); !st.ok()) return st;
        const int64_t width = p_.accums[in.index].width;
        if (in.b >= 0 || width == 0) {
          if (in.b >= 0 && width == 0) return Fail("indexes a scalar accumulator");
          if (in.b >= 0) {
            if (Status st = Expect("element index", in.b, {Type::kInt}); !st.ok()) return st;
          }
          return Expect("a", in.a, {Type::kF32});
        }
        if (Status st = Expect("a", in.a, {Type::kVec}); !st.ok()) return st;
        return SameWidth(in.a, width);
      }
      case Op::kIf:
        return Expect("condition", in.a, {Type::kBool});
      case Op::kFor:
        if (Status st = Expect("lower bound", in.a, {Type::kInt}); !st.ok()) return st;
        if (Status st = Expect("upper bound", in.b, {Type::kInt}); !st.ok()) return st;
        return Expect("loop variable", in.dst, {Type::kInt});
      case Op::kForFeatures:
        if (Status st = Index("data set", in.index, p_.data.size()); !st.ok()) return st;
        if (Status st = Expect("row", in.a, {Type::kRow}); !st.ok()) return st;
        if (Status st = Expect("feature", in.dst, {Type::kInt}); !st.ok()) return st;
        return Expect("feature value", in.dst2, {Type::kF32});
      case Op::kForWindow:
        if (Status st = Index("data set", in.index, p_.data.size()); !st.ok()) return st;
        if (Status st = Expect("position", in.a, {Type::kInt}); !st.ok()) return st;
        if (Status st = Expect("radius", in.b, {Type::kInt}); !st.ok()) return st;
        return Expect("loop variable", in.dst, {Type::kInt});
      default:
        return Fail("has an unknown op");
    }
  }

  const Program& p_;
  const Loop& l_;
  const VerifyOptions& o_;
  std::vector<bool> defined_;
  std::vector<int> def_count_;
  std::vector<int> undo_;  // registers made visible by open blocks, innermost last
  const Inst* current_ = nullptr;
  int number_ = -1;  // pre-order number of current_
};

}  // namespace

Status VerifyLoop(const Program& prog, const Loop& loop, const VerifyOptions& opts) {
  return Verifier(prog, loop, opts).Run();
}

}  // namespace rigel::ir
