// Blocks, inner loops and branches. An inner loop is an init instruction
// that jumps past the loop when it is empty, the body, and a next
// instruction that jumps back to the body's start; its hidden state (bound,
// position) lives in slots added for it. Coefficient products memoised
// inside a nested block are forgotten when it ends: it may not have run.
#include "kernel/lower/lowering.h"

namespace rigel::kernel::lower {

using ir::Inst;

void Lowering::Emit(const std::vector<Inst>& body) {
  for (const Inst& in : body) EmitOne(in);
}

// Emits a nested block; products it computes are forgotten afterwards.
void Lowering::EmitNested(const std::vector<Inst>& body) {
  auto saved = products_;
  Emit(body);
  products_ = std::move(saved);
}

void Lowering::For(const Inst& in) {
  int hidden = NewSlot();
  int init = Here();
  VOp& o = Op0(kForInit);
  o.d = in.dst, o.a = in.a, o.b = in.b, o.c = hidden;
  EmitNested(in.body);
  VOp& next = Op0(kForNext);
  next.d = in.dst, next.c = hidden, next.n = init + 1;
  k_->code[init].n = Here();
}

void Lowering::Features(const Inst& in) {
  int hidden = NewSlot();
  NewSlot();
  int init = Here();
  VOp& o = Op0(kFeatInit);
  o.d = in.dst, o.b = in.dst2, o.a = in.a, o.c = hidden, o.aux = in.index;
  EmitNested(in.body);
  VOp& next = Op0(kFeatNext);
  next.d = in.dst, next.b = in.dst2, next.c = hidden, next.aux = in.index, next.n = init + 1;
  k_->code[init].n = Here();
}

void Lowering::Window(const Inst& in) {
  int hidden = NewSlot();
  NewSlot();
  NewSlot();
  int init = Here();
  VOp& o = Op0(kWinInit);
  o.d = in.dst, o.a = in.a, o.b = in.b, o.c = hidden, o.aux = in.index, o.loc = Loc(in);
  EmitNested(in.body);
  VOp& next = Op0(kWinNext);
  next.d = in.dst, next.c = hidden, next.aux = in.index, next.n = init + 1;
  k_->code[init].n = Here();
}

void Lowering::If(const Inst& in) {
  int jf = Here();
  VOp& o = Op0(kJumpIfFalse);
  o.a = in.a;
  EmitNested(in.body);
  if (in.else_body.empty()) {
    k_->code[jf].n = Here();
    return;
  }
  int j = Here();
  Op0(kJump);
  k_->code[jf].n = Here();
  EmitNested(in.else_body);
  k_->code[j].n = Here();
}

}  // namespace rigel::kernel::lower
