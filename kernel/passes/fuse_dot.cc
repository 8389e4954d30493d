// fuse-dot: a dot product whose value is read once (the lowering marks it
// with fn 1), by the immediately following scalar add, subtract or
// multiply, becomes one kDotOp: `e = v - dot(W[i], H[j])` is one dispatch.
#include <vector>

#include "kernel/passes/pipeline.h"
#include "kernel/passes/rewrite.h"

namespace rigel::kernel::passes {
namespace {

class FuseDotPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "fuse-dot"; }
  std::string_view description() const override {
    return "a dot product read once by the next scalar + - * is fused into it";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    const std::vector<VOp> code = k->code;
    std::vector<bool> target = JumpTargets(code);
    int fused = 0;
    Rewrite(&k->code, [&](size_t p, std::vector<VOp>* out) -> size_t {
      const VOp& dot = code[p];
      if (dot.code == kDot && dot.fn == 1 && p + 1 < code.size() && !target[p + 1]) {
        const VOp& op = code[p + 1];
        bool arith = op.code == kFAdd || op.code == kFSub || op.code == kFMul;
        // The dot's slot is read once, by `op`, in exactly one operand.
        if (arith && (op.a == dot.d) != (op.b == dot.d)) {
          VOp f = dot;
          f.code = kDotOp;
          f.fn = static_cast<uint8_t>(op.code);
          f.d = op.d;
          f.c = op.a == dot.d ? op.b : op.a;
          f.t = op.a == dot.d ? 1 : 0;  // 1: the dot is the left operand
          out->push_back(f);
          ++fused;
          return 2;
        }
      }
      out->push_back(dot);
      return 1;
    });
    if (fused > 0) stats->Add("dots fused", fused);
  }
};

}  // namespace

const BytecodePass& FuseDot() {
  static const FuseDotPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
