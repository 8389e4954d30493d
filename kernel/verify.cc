#include "kernel/verify.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

#include "kernel/operands.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel {
namespace {

// How many loop variables the interpreter sets for each kind of data set.
size_t VarCount(const ir::DataDecl& d) {
  switch (d.kind) {
    case data::DataKind::kTriples:
      return 3;
    case data::DataKind::kTokens:
      return d.lines ? 3 : 2;
    case data::DataKind::kRange:
      return 1;
    default:
      return 2;
  }
}

class BytecodeVerifier {
 public:
  BytecodeVerifier(const Kernel::Impl& k, bool laid_out)
      : k_(k), p_(*k.prog), laid_out_(laid_out) {}

  Status Run() {
    RIGEL_RETURN_IF_ERROR(Frame());
    for (pc_ = 0; pc_ < static_cast<int>(k_.code.size()); ++pc_) {
      RIGEL_RETURN_IF_ERROR(One(k_.code[pc_]));
    }
    return laid_out_ ? Arena() : Status::Ok();
  }

 private:
  Status Fail(const std::string& what) const {
    return Internal("bytecode " + std::to_string(pc_) + " (" + CodeName(k_.code[pc_].code) +
                    "): " + what);
  }
  static Status FrameFail(const std::string& what) { return Internal("bytecode: " + what); }
  bool Slot(int s) const { return s >= 0 && s < k_.num_slots; }
  bool Vec(int v) const { return v >= 0 && v < k_.num_vecs; }
  int64_t ParamWidth(int p) const { return p_.params[p].width; }

  // Sizes of the frame's tables, loop variables and driver values.
  Status Frame() {
    if (k_.code.empty() || k_.code.back().code != kEnd) {
      return FrameFail("the program does not end with `end`");
    }
    if (k_.num_slots < 0 || k_.slot_init.size() != static_cast<size_t>(k_.num_slots)) {
      return FrameFail(std::to_string(k_.slot_init.size()) + " initial values for " +
                       std::to_string(k_.num_slots) + " slots");
    }
    const size_t nv = static_cast<size_t>(std::max(k_.num_vecs, 0));
    if (k_.vec_width.size() != nv || k_.vec_offset.size() != nv || k_.is_view.size() != nv) {
      return FrameFail("the vector tables do not have one entry per vector (" +
                       std::to_string(k_.num_vecs) + ")");
    }
    if (k_.data < 0 || k_.data >= static_cast<int>(p_.data.size())) {
      return FrameFail("the loop's data set " + std::to_string(k_.data) + " is out of range");
    }
    const size_t vars = VarCount(p_.data[k_.data]);
    if (k_.var_slots.size() != vars) {
      return FrameFail(std::to_string(k_.var_slots.size()) + " loop variable slots; a " +
                       data::DataKindName(k_.kind) + " loop sets " + std::to_string(vars));
    }
    for (int s : k_.var_slots) {
      if (!Slot(s))
        return FrameFail("loop variable slot " + std::to_string(s) + " is out of range");
    }
    for (const auto& [slot, expr] : k_.outer) {
      if (!Slot(slot) || expr < 0 || expr >= static_cast<int>(p_.exprs.size())) {
        return FrameFail("driver value (slot " + std::to_string(slot) + ", expression " +
                         std::to_string(expr) + ") is out of range");
      }
    }
    return Status::Ok();
  }

  Status One(const VOp& o) {
    if (o.code > kKey)
      return Internal("bytecode " + std::to_string(pc_) + ": unknown opcode " +
                      std::to_string(o.code));
    if (o.code == kKey && !k_.key_slice) return Fail("a key instruction outside a key slice");
    if (k_.key_slice && o.code >= kRdElem1 && o.code <= kWrWholeLin) {
      return Fail("a key slice touches parameter values");
    }
    if (o.loc < -1 || o.loc >= static_cast<int>(k_.locs.size())) {
      return Fail("location " + std::to_string(o.loc) + " is out of range");
    }
    const Operands& f = OperandsOf(o.code);
    const std::pair<const char*, std::pair<Field, int>> fields[] = {
        {"d", {f.d, o.d}}, {"a", {f.a, o.a}},       {"b", {f.b, o.b}}, {"c", {f.c, o.c}},
        {"n", {f.n, o.n}}, {"aux", {f.aux, o.aux}}, {"t", {f.t, o.t}}};
    for (const auto& [name, field] : fields) {
      RIGEL_RETURN_IF_ERROR(CheckField(name, field.first, field.second));
    }
    RIGEL_RETURN_IF_ERROR(Widths(o, f));
    RIGEL_RETURN_IF_ERROR(Terms(o));
    RIGEL_RETURN_IF_ERROR(Params(o));
    RIGEL_RETURN_IF_ERROR(Accums(o));
    return Kernels(o);
  }

  // An accumulator instruction's slot is its accumulator's first, and its
  // width the accumulator's (a scalar one has none).
  Status Accums(const VOp& o) const {
    if (o.code != kAccum && o.code != kAccumVec && o.code != kAccumElem) return Status::Ok();
    const int64_t offset = ir::AccumOffset(p_.accums, o.aux);
    if (o.c != offset) {
      return Fail("slot " + std::to_string(o.c) + " is not the first of accumulator " +
                  p_.accums[o.aux].name + " (" + std::to_string(offset) + ")");
    }
    const int64_t width = p_.accums[o.aux].width;
    if (o.code == kAccum ? width != 0 : width != o.n) {
      return Fail("does not match the width of accumulator " + p_.accums[o.aux].name + " (" +
                  std::to_string(width) + ")");
    }
    return Status::Ok();
  }

  Status CheckField(const char* name, Field f, int v) const {
    auto bad = [&](const std::string& what) {
      return Fail(std::string(name) + " = " + std::to_string(v) + " " + what);
    };
    switch (f) {
      case Field::kSlotOpt:
        if (v == -1) return Status::Ok();
        [[fallthrough]];
      case Field::kSlot:
      case Field::kSlots2:
      case Field::kSlots3: {
        int last = v + (f == Field::kSlots2 ? 1 : f == Field::kSlots3 ? 2 : 0);
        if (!Slot(v) || !Slot(last))
          return bad("is not a slot (" + std::to_string(k_.num_slots) + ")");
        return Status::Ok();
      }
      case Field::kVecIn:
      case Field::kVecOut:
      case Field::kVecView:
        if (!Vec(v)) return bad("is not a vector (" + std::to_string(k_.num_vecs) + ")");
        if (f == Field::kVecOut && k_.is_view[v]) return bad("is a view; this writes its buffer");
        if (f == Field::kVecView && !k_.is_view[v]) return bad("is a buffer; this makes it a view");
        return Status::Ok();
      case Field::kParam:
        return v >= 0 && v < static_cast<int>(p_.params.size()) ? Status::Ok()
                                                                : bad("is not a parameter");
      case Field::kData:
        return v >= 0 && v < static_cast<int>(p_.data.size()) ? Status::Ok()
                                                              : bad("is not a data set");
      case Field::kAccum:
        return v >= 0 && v < static_cast<int>(p_.accums.size()) ? Status::Ok()
                                                                : bad("is not an accumulator");
      case Field::kWidth:
        return v >= 1 ? Status::Ok() : bad("is not a width");
      case Field::kTarget:
        return v >= 0 && v < static_cast<int>(k_.code.size()) ? Status::Ok()
                                                              : bad("is not a jump target");
      case Field::kLoc:
        return v >= 0 && v < static_cast<int>(k_.locs.size()) ? Status::Ok()
                                                              : bad("is not a location");
      default:
        return Status::Ok();  // unused; terms and counts are checked below
    }
  }

  // Every vector the instruction touches has its width; rows their parameter's.
  Status Widths(const VOp& o, const Operands& f) const {
    const std::pair<Field, int> vecs[] = {{f.d, o.d}, {f.a, o.a}, {f.b, o.b}, {f.c, o.c}};
    for (const auto& [field, v] : vecs) {
      if (field != Field::kVecIn && field != Field::kVecOut && field != Field::kVecView) continue;
      int64_t want = f.n == Field::kWidth ? o.n : -1;
      if (o.code == kRdRowView2) want = ParamWidth(v == o.d ? o.aux : o.t);
      if (want >= 0 && k_.vec_width[v] != want) {
        return Fail("vector " + std::to_string(v) + " has width " +
                    std::to_string(k_.vec_width[v]) + ", but the instruction's width is " +
                    std::to_string(want));
      }
    }
    const bool row = o.code == kRdRowView || o.code == kRdRowCopy || o.code == kWrRowVec ||
                     o.code == kWrRowScalar || o.code == kWrRowLin;
    if (row && o.n != ParamWidth(o.aux)) {
      return Fail("width " + std::to_string(o.n) + " is not the width of parameter " +
                  p_.params[o.aux].name + " (" + std::to_string(ParamWidth(o.aux)) + ")");
    }
    return Status::Ok();
  }

  Status Terms(const VOp& o) const {
    if (!HasTerms(o.code)) return Status::Ok();
    const int count = o.c + (o.code == kWrRowPair ? o.fn : 0);
    if (o.t < 0 || count < 0 || o.t + count > static_cast<int>(k_.terms.size())) {
      return Fail("terms " + std::to_string(o.t) + " .. " + std::to_string(o.t + count) +
                  " are not in the term table (" + std::to_string(k_.terms.size()) + ")");
    }
    const bool write = o.code != kVLin;
    const int64_t width = o.code == kWrRowPair ? ParamWidth(o.aux) : o.n;
    for (int i = 0; i < count; ++i) {
      const Term& t = k_.terms[o.t + i];
      const std::string which = "term " + std::to_string(i);
      if (!Slot(t.coef) || !Slot(t.coef2))
        return Fail(which + " has a coefficient outside the slots");
      if (t.src == -1 && write) continue;
      if (!Vec(t.src))
        return Fail(which + " reads vector " + std::to_string(t.src) + ", which is not one");
      if (k_.vec_width[t.src] != width) {
        return Fail(which + " reads vector " + std::to_string(t.src) + " of width " +
                    std::to_string(k_.vec_width[t.src]) + ", but the instruction's width is " +
                    std::to_string(width));
      }
    }
    return Status::Ok();
  }

  // Parameter dimensions and data set kinds the instruction needs.
  Status Params(const VOp& o) const {
    auto dims = [&](int p, bool two_d) {
      if ((ParamWidth(p) > 0) == two_d) return Status::Ok();
      return Fail("parameter " + p_.params[p].name + " is not " + (two_d ? "2-D" : "1-D"));
    };
    switch (o.code) {
      case kRdElem1:
      case kWrElem1:
      case kRdWholeView:
      case kRdWholeCopy:
      case kWrWholeVec:
      case kWrWholeScalar:
      case kWrWholeLin:
        return dims(o.aux, false);
      case kRdElem2:
      case kWrElem2:
      case kRdRowView:
      case kRdRowCopy:
      case kWrRowVec:
      case kWrRowScalar:
      case kWrRowLin:
        return dims(o.aux, true);
      case kRdRowView2:
        RIGEL_RETURN_IF_ERROR(dims(o.aux, true));
        return dims(o.t, true);
      case kWrRowPair:
        RIGEL_RETURN_IF_ERROR(dims(o.aux, true));
        RIGEL_RETURN_IF_ERROR(dims(o.d, true));
        if (o.aux == o.d || ParamWidth(o.aux) != ParamWidth(o.d)) {
          return Fail("pairs writes of the same parameter or of different widths");
        }
        return Status::Ok();
      default:
        return DataKinds(o);
    }
  }

  Status DataKinds(const VOp& o) const {
    using data::DataKind;
    auto kind = [&](std::initializer_list<DataKind> kinds) {
      for (DataKind k : kinds) {
        if (p_.data[o.aux].kind == k) return Status::Ok();
      }
      return Fail("data set " + p_.data[o.aux].name + " is " +
                  data::DataKindName(p_.data[o.aux].kind) + ", which this cannot read");
    };
    switch (o.code) {
      case kNegative:
      case kWinInit:
      case kWinNext:
        return kind({DataKind::kTokens});
      case kFeatInit:
      case kFeatNext:
        return kind({DataKind::kLibsvm});
      case kRowX:
        return kind({DataKind::kDenseCsv});
      case kLabel:
        return kind({DataKind::kLibsvm, DataKind::kDenseCsv});
      default:
        return Status::Ok();
    }
  }

  // Term counts, row kernels and the operator of a fused dot.
  Status Kernels(const VOp& o) const {
    switch (o.code) {
      case kVLin:
      case kWrRowLin:
      case kWrWholeLin:
        if (o.c < 1 || o.c > kMaxLinTerms) return Fail(std::to_string(o.c) + " terms");
        return o.k.lin ? Status::Ok() : Fail("has no row kernel");
      case kWrRowPair:
        if (o.c < 1 || o.c > 4 || o.fn < 1 || o.fn > 4) {
          return Fail(std::to_string(o.c) + " + " + std::to_string(o.fn) + " terms");
        }
        return o.k.pair ? Status::Ok() : Fail("has no row kernel");
      case kDotOp:
        if ((o.fn != kFAdd && o.fn != kFSub && o.fn != kFMul) || o.t < 0 || o.t > 1) {
          return Fail("fuses a dot into operator " + std::to_string(o.fn) + " (side " +
                      std::to_string(o.t) + ")");
        }
        [[fallthrough]];
      case kDot:
      case kNorm:
        return o.k.dot ? Status::Ok() : Fail("has no dot kernel");
      case kVMove:
      case kRdRowCopy:
      case kRdWholeCopy:
        return o.k.copy ? Status::Ok() : Fail("has no copy kernel");
      default:
        return Status::Ok();
    }
  }

  Status Arena() const {
    for (int v = 0; v < k_.num_vecs; ++v) {
      if (k_.is_view[v] || k_.vec_width[v] == 0) continue;
      int64_t off = k_.vec_offset[v];
      if (off < 0 || off + k_.vec_width[v] > k_.arena_size) {
        return FrameFail("vector " + std::to_string(v) + "'s buffer (offset " +
                         std::to_string(off) + ", width " + std::to_string(k_.vec_width[v]) +
                         ") is outside the arena (" + std::to_string(k_.arena_size) + ")");
      }
    }
    return Status::Ok();
  }

  const Kernel::Impl& k_;
  const ir::Program& p_;
  const bool laid_out_;
  int pc_ = 0;
};

}  // namespace

Status VerifyBytecode(const Kernel::Impl& k, bool laid_out) {
  return BytecodeVerifier(k, laid_out).Run();
}

}  // namespace rigel::kernel
