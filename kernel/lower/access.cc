// Parameter reads and writes. A row or whole read is a copy, marked (fn 1)
// when liveness shows no write to its parameter while its value is live, so
// that the read-views pass may make it a view. A row or whole write of a
// linear form with `=`, `+=` or `-=` is one pass over the destination
// (`+=`/`-=` add a term for the old values). In a key slice every access is
// a kKey instruction that records its row.
#include "kernel/lower/lowering.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel::lower {

using ir::Inst;
using ir::Type;

// A key slice's access: its row (and column, for a 2-D element, when the
// slice computes it) is checked and recorded; no value moves.
void Lowering::Key(const Inst& in) {
  const ir::ParamDecl& p = p_.params[in.index];
  VOp& o = Op0(kKey);
  o.aux = in.index, o.a = in.a, o.loc = Loc(in);
  if (in.mode == ir::Access::kElement && p.width > 0) o.b = in.b;
}

void Lowering::Read(const Inst& in) {
  if (k_->key_slice) return Key(in);
  const ir::ParamDecl& p = p_.params[in.index];
  VOp o;
  o.aux = in.index, o.d = in.dst, o.a = in.a, o.b = in.b, o.loc = Loc(in);
  if (in.mode == ir::Access::kElement) {
    o.code = p.width > 0 ? kRdElem2 : kRdElem1;
  } else {
    o.code = in.mode == ir::Access::kRow ? kRdRowCopy : kRdWholeCopy;
    o.fn = live_.CanView(in) ? 1 : 0;
    o.n = static_cast<int32_t>(Width(in.dst));
    // The width-independent kernel; specialise-row-kernels picks a faster one.
    o.k.copy = SelectCopy(0);
  }
  k_->code.push_back(o);
}

void Lowering::Write(const Inst& in) {
  if (k_->key_slice) return Key(in);
  const ir::ParamDecl& p = p_.params[in.index];
  VOp base;
  base.aux = in.index, base.a = in.a, base.b = in.b, base.loc = Loc(in), base.fn = in.fn;
  if (in.mode == ir::Access::kElement) {
    base.code = p.width > 0 ? kWrElem2 : kWrElem1;
    base.c = in.c;
    k_->code.push_back(base);
    return;
  }
  bool row = in.mode == ir::Access::kRow;
  if (RegOf(in.c).type != Type::kVec) {
    base.code = row ? kWrRowScalar : kWrWholeScalar;
    base.c = in.c;
    base.n = row ? static_cast<int32_t>(p.width) : 0;
    k_->code.push_back(base);
    return;
  }
  int64_t width = Width(in.c);
  if (in.fn == ir::kPlainAssign || in.fn == ir::kAdd || in.fn == ir::kSub) {
    // p = f, p += f and p -= f are all one pass over the row.
    LinForm f = LinOf(in.c);
    if (in.fn == ir::kSub) {
      for (Term& t : f) NegTerm(&t);
    }
    if (in.fn != ir::kPlainAssign) AddTerms(&f, {Term{ConstSlot(1.0f), -1, -1}});
    EmitLin(row ? kWrRowLin : kWrWholeLin, -1, f, width, base);
    return;
  }
  base.code = row ? kWrRowVec : kWrWholeVec;
  base.c = Materialise(in.c);
  base.n = static_cast<int32_t>(width);
  k_->code.push_back(base);
}

}  // namespace rigel::kernel::lower
