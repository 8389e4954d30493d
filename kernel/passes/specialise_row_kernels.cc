// specialise-row-kernels: the lowering and the fusing passes pick row
// kernels (kernel/row_kernels.h) that work for any width; this pass replaces
// each by the one instantiated for the instruction's width when there is one
// (8, 16, 32, 64, 128), which the compiler has fully unrolled into SIMD
// code. Both compute the same sums in the same order.
#include "kernel/passes/pipeline.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel::passes {
namespace {

// Gives `o` the row kernel for its width; true if that changed it.
bool Specialise(const Kernel::Impl& k, VOp* o) {
  switch (o->code) {
    case kVLin:
    case kWrRowLin:
    case kWrWholeLin: {
      LinFn f = SelectLin(o->c, o->n);
      bool changed = f != o->k.lin;
      o->k.lin = f;
      return changed;
    }
    case kWrRowPair: {
      PairFn f = SelectPair(o->c, o->fn, k.prog->params[o->aux].width);
      bool changed = f != o->k.pair;
      o->k.pair = f;
      return changed;
    }
    case kDot:
    case kNorm:
    case kDotOp: {
      DotFn f = SelectDot(o->n);
      bool changed = f != o->k.dot;
      o->k.dot = f;
      return changed;
    }
    case kVMove:
    case kRdRowCopy:
    case kRdWholeCopy: {
      CopyFn f = SelectCopy(o->n);
      bool changed = f != o->k.copy;
      o->k.copy = f;
      return changed;
    }
    default:
      return false;
  }
}

class SpecialiseRowKernelsPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "specialise-row-kernels"; }
  std::string_view description() const override {
    return "row kernels are replaced by ones unrolled for the row's width where one exists";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    int changed = 0;
    for (VOp& o : k->code) changed += Specialise(*k, &o) ? 1 : 0;
    if (changed > 0) stats->Add("kernels specialised", changed);
  }
};

}  // namespace

const BytecodePass& SpecialiseRowKernels() {
  static const SpecialiseRowKernelsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
