// Coefficients and linear forms. Vector `+`, `-`, unary minus, scalar times
// vector and vector / scalar build a symbolic sum of terms
// S[coef] * S[coef2] * V[src] instead of code; a form stays deferred only
// for an unnamed temporary used exactly once, and is emitted as one
// combination (kVLin, or straight into a parameter row) by its consumer.
// Scaling a term folds constant factors together and keeps up to two
// variable factors unmultiplied (the row kernel multiplies them once per
// call); a third is multiplied out with an fmul. Terms with the same source
// are merged by adding coefficients. Sums of more than kMaxLinTerms terms
// are split through temporaries.
#include <algorithm>
#include <cstring>

#include "kernel/lower/lowering.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel::lower {

int Lowering::ConstSlot(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  auto it = const_pool_.find(bits);
  if (it != const_pool_.end()) return it->second;
  int s = NewSlot();
  k_->slot_init[s].f = v;
  const_val_[s] = v;
  const_pool_[bits] = s;
  return s;
}

// c1 * c2 as a slot, folded when both are known.
int Lowering::MulCoef(int c1, int c2) {
  // Equal constants in different registers share one slot, so memoised
  // products of them are found again.
  if (const_val_[c1]) c1 = ConstSlot(*const_val_[c1]);
  if (const_val_[c2]) c2 = ConstSlot(*const_val_[c2]);
  if (const_val_[c1] && *const_val_[c1] == 1.0f) return c2;
  if (const_val_[c2] && *const_val_[c2] == 1.0f) return c1;
  if (const_val_[c1] && const_val_[c2]) return ConstSlot(*const_val_[c1] * *const_val_[c2]);
  // The same product of immutable slots in the same block is computed once.
  auto key = std::make_pair(std::min(c1, c2), std::max(c1, c2));
  bool memo = Immutable(c1) && Immutable(c2);
  if (memo) {
    auto it = products_.find(key);
    if (it != products_.end()) return it->second;
  }
  int s = NewSlot();
  VOp& o = Op0(kFMul);
  o.d = s, o.a = c1, o.b = c2;
  if (memo) products_[key] = s;
  return s;
}

int Lowering::AddCoef(int c1, int c2) {
  if (const_val_[c1] && const_val_[c2]) return ConstSlot(*const_val_[c1] + *const_val_[c2]);
  int s = NewSlot();
  VOp& o = Op0(kFAdd);
  o.d = s, o.a = c1, o.b = c2;
  return s;
}

int Lowering::RecipCoef(int c) {
  if (const_val_[c]) return ConstSlot(1.0f / *const_val_[c]);
  int s = NewSlot();
  VOp& o = Op0(kFDiv);
  o.d = s, o.a = ConstSlot(1.0f), o.b = c;
  return s;
}

// The linear form of a vector register: its deferred form (consumed), or
// the single term 1 * reg.
LinForm Lowering::LinOf(int reg) {
  auto it = deferred_.find(reg);
  if (it != deferred_.end()) {
    LinForm f = std::move(it->second);
    deferred_.erase(it);
    return f;
  }
  return {Term{ConstSlot(1.0f), -1, reg}};
}

// A term's coefficient as one slot (emits the product if it has two).
int Lowering::CoefSlot(const Term& t) { return t.coef2 < 0 ? t.coef : MulCoef(t.coef, t.coef2); }

// Multiplies a term's coefficient by slot `s`: constants fold together and
// up to two variable factors stay unmultiplied for the row kernel.
void Lowering::ScaleTerm(Term* t, int s) {
  float cst = 1.0f;
  std::vector<int> vars;
  for (int f : {t->coef, t->coef2, s}) {
    if (f < 0) continue;
    if (const_val_[f]) {
      cst *= *const_val_[f];
    } else {
      vars.push_back(f);
    }
  }
  if (cst != 1.0f || vars.empty()) vars.push_back(ConstSlot(cst));
  while (vars.size() > 2) {
    int m = MulCoef(vars[0], vars[1]);
    vars.erase(vars.begin(), vars.begin() + 2);
    vars.insert(vars.begin(), m);
  }
  t->coef = vars[0];
  t->coef2 = vars.size() > 1 ? vars[1] : -1;
}

void Lowering::AddTerms(LinForm* f, const LinForm& g) {
  for (const Term& t : g) {
    bool merged = false;
    for (Term& u : *f) {
      if (u.src == t.src) {
        u.coef = AddCoef(CoefSlot(u), CoefSlot(t));
        u.coef2 = -1;
        merged = true;
        break;
      }
    }
    if (!merged) f->push_back(t);
  }
}

LinForm Lowering::Scale(LinForm f, int coef) {
  for (Term& t : f) ScaleTerm(&t, coef);
  return f;
}

// Emits a linear combination into vector `dst` (or a parameter row).
void Lowering::EmitLin(uint16_t code, int dst, LinForm f, int64_t width, VOp base) {
  // Longer sums are folded in chunks through temporaries.
  while (f.size() > static_cast<size_t>(kMaxLinTerms)) {
    int tmp = NewVec(width);
    LinForm head(f.begin(), f.begin() + kMaxLinTerms);
    EmitLin(kVLin, tmp, head, width, VOp{});
    f.erase(f.begin(), f.begin() + kMaxLinTerms);
    f.insert(f.begin(), Term{ConstSlot(1.0f), -1, tmp});
  }
  for (Term& t : f) {
    if (t.coef2 < 0) t.coef2 = ConstSlot(1.0f);
  }
  // The width-independent kernel; specialise-row-kernels picks a faster one.
  base.k.lin = SelectLin(static_cast<int>(f.size()), 0);
  base.code = code;
  base.d = dst;
  base.t = static_cast<int32_t>(k_->terms.size());
  base.c = static_cast<int32_t>(f.size());
  base.n = static_cast<int32_t>(width);
  k_->terms.insert(k_->terms.end(), f.begin(), f.end());
  k_->code.push_back(base);
}

// Makes sure vector register `reg` holds its value in memory.
int Lowering::Materialise(int reg) {
  auto it = deferred_.find(reg);
  if (it == deferred_.end()) return reg;
  LinForm f = LinOf(reg);
  EmitLin(kVLin, reg, f, Width(reg), VOp{});
  return reg;
}

bool Lowering::Deferrable(int reg) const {
  const ir::Reg& r = l_.regs[reg];
  return !r.named && !r.mut && live_.uses(reg) == 1;
}

// Stores a linear form for `dst`: deferred when only one consumer will read
// it (that consumer folds it in), otherwise evaluated now.
void Lowering::Define(int dst, LinForm f) {
  if (Deferrable(dst)) {
    deferred_[dst] = std::move(f);
  } else {
    EmitLin(kVLin, dst, f, Width(dst), VOp{});
  }
}

}  // namespace rigel::kernel::lower
