// fold-constants: f32 arithmetic (+ - * /) on two constants, and the
// int -> f32 conversion of an int constant, become f32 constants, so
// coefficient arithmetic such as `lr * reg` costs nothing per iteration and
// the lowering can fold the result into linear forms. Each result is what
// the interpreter would compute (kernel/float_ops.h, shared with it).
// Registers defined by constants are never `var`s (a var gets its own
// register and a move), so a constant register holds its value everywhere.
#include <optional>
#include <vector>

#include "kernel/float_ops.h"
#include "kernel/passes/pipeline.h"

namespace rigel::kernel::passes {
namespace {

using ir::Inst;
using ir::Op;

class Folder {
 public:
  explicit Folder(const ir::Loop& l)
      : l_(l), f32_(l.regs.size(), std::nullopt), int_(l.regs.size(), std::nullopt) {}

  // Folds `body` and its nested blocks in program order; returns how many
  // instructions became constants.
  int Block(std::vector<Inst>* body) {
    int folded = 0;
    for (Inst& in : *body) {
      if (in.op == Op::kConstI) int_[in.dst] = in.ival;
      if (in.op == Op::kConstF) f32_[in.dst] = static_cast<float>(in.fval);
      std::optional<float> v = Value(in);
      if (v && !l_.regs[in.dst].mut) {
        in = MakeConst(in, *v);
        f32_[in.dst] = *v;
        ++folded;
      }
      folded += Block(&in.body);
      folded += Block(&in.else_body);
    }
    return folded;
  }

 private:
  // The value of `in` when it is a foldable operation on constants.
  std::optional<float> Value(const Inst& in) const {
    if (in.op == Op::kUnary && in.fn == ir::kIntToF32 && int_[in.a]) {
      return static_cast<float>(*int_[in.a]);
    }
    if (in.op != Op::kBinary || in.fn > ir::kDiv || l_.regs[in.dst].type != ir::Type::kF32) {
      return std::nullopt;
    }
    if (!f32_[in.a] || !f32_[in.b]) return std::nullopt;
    return ApplyBin(in.fn, *f32_[in.a], *f32_[in.b]);
  }
  static Inst MakeConst(const Inst& in, float v) {
    Inst c;
    c.op = Op::kConstF;
    c.dst = in.dst;
    c.fval = v;
    c.loc = in.loc;
    return c;
  }

  const ir::Loop& l_;
  std::vector<std::optional<float>> f32_;    // f32 registers holding constants
  std::vector<std::optional<int64_t>> int_;  // int registers holding constants
};

class FoldConstantsPass final : public IrPass {
 public:
  std::string_view name() const override { return "fold-constants"; }
  std::string_view description() const override {
    return "f32 arithmetic on constants and int constants made f32 are done at compile time";
  }
  void Run(const ir::Program& prog, bool key_slice, ir::Loop* loop,
           PassStats* stats) const override {
    int folded = Folder(*loop).Block(&loop->body);
    if (folded > 0) stats->Add("constants folded", folded);
  }
};

}  // namespace

const IrPass& FoldConstants() {
  static const FoldConstantsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
