// The lowering of one loop body (kernel/lower/lower.h), private to the files
// of kernel/lower/: one class whose methods are split by job across
// lowering.cc (set-up), linear.cc (coefficients and linear forms),
// select.cc (values), access.cc (parameter accesses) and control.cc (inner
// loops, branches). Not thread-safe; one Lowering per Impl.
#ifndef RIGEL_KERNEL_LOWER_LOWERING_H_
#define RIGEL_KERNEL_LOWER_LOWERING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/status.h"
#include "kernel/kernel_impl.h"
#include "kernel/lower/liveness.h"

namespace rigel::kernel::lower {

// A deferred vector value: sum of coefficient times vector terms. While a
// form is being built a term's coef2 is -1 when it has a single factor.
using LinForm = std::vector<Term>;

class Lowering {
 public:
  explicit Lowering(Kernel::Impl* k);
  Status Run(const WidthFn& widths);

 private:
  // --- lowering.cc: frame set-up and emission helpers.
  Status SizeVectors(const WidthFn& widths);
  int Loc(const ir::Inst& in);
  VOp& Op0(uint16_t code);
  int NewSlot();
  int NewVec(int64_t width);
  int64_t Width(int vec) const { return k_->vec_width[vec]; }
  bool Immutable(int slot) const;
  const ir::Reg& RegOf(int reg) const { return l_.regs[reg]; }

  // --- linear.cc: coefficients (slots, folded when constant) and forms.
  int ConstSlot(float v);
  int MulCoef(int c1, int c2);
  int AddCoef(int c1, int c2);
  int RecipCoef(int c);
  LinForm LinOf(int reg);
  int CoefSlot(const Term& t);
  void ScaleTerm(Term* t, int s);
  void NegTerm(Term* t) { ScaleTerm(t, ConstSlot(-1.0f)); }
  void AddTerms(LinForm* f, const LinForm& g);
  LinForm Scale(LinForm f, int coef);
  void EmitLin(uint16_t code, int dst, LinForm f, int64_t width, VOp base);
  int Materialise(int reg);
  bool Deferrable(int reg) const;
  void Define(int dst, LinForm f);

  // --- select.cc: values.
  void EmitOne(const ir::Inst& in);
  void Simple(const ir::Inst& in);
  void Move(const ir::Inst& in);
  void Unary(const ir::Inst& in);
  void Binary(const ir::Inst& in);
  void ScalarBinary(const ir::Inst& in);
  void Clip(const ir::Inst& in);
  void Reduce(const ir::Inst& in);
  // Language v2: a vector's element, its max/min/argmax/argmin, onehot.
  void VectorV2(const ir::Inst& in);
  // An accumulator update: scalar, a whole vector or one element.
  void Accumulate(const ir::Inst& in);

  // --- access.cc: parameter reads and writes.
  void Key(const ir::Inst& in);
  void Read(const ir::Inst& in);
  void Write(const ir::Inst& in);

  // --- control.cc: blocks, inner loops, branches.
  void Emit(const std::vector<ir::Inst>& body);
  void EmitNested(const std::vector<ir::Inst>& body);
  int Here() const { return static_cast<int>(k_->code.size()); }
  void For(const ir::Inst& in);
  void Features(const ir::Inst& in);
  void Window(const ir::Inst& in);
  void If(const ir::Inst& in);

  Kernel::Impl* k_;
  const ir::Program& p_;
  const ir::Loop& l_;
  const Liveness live_;
  std::map<int, LinForm> deferred_;
  std::map<uint32_t, int> const_pool_;  // f32 constant slots by bit pattern
  // Products computed in the current block; a nested block may not reuse
  // what it computed after it ends (it may not have run), so it gets a copy.
  std::map<std::pair<int, int>, int> products_;
  std::vector<std::optional<float>> const_val_;  // per slot: its constant value
};

}  // namespace rigel::kernel::lower

#endif  // RIGEL_KERNEL_LOWER_LOWERING_H_
