// Set-up of the lowering: slots and vectors for every register, widths, and
// the helpers every emitting file uses. See kernel/lower/lower.h.
#include "kernel/lower/lowering.h"

#include <string>

#include "kernel/lower/lower.h"

namespace rigel::kernel::lower {

using ir::Type;

Lowering::Lowering(Kernel::Impl* k) : k_(k), p_(*k->prog), l_(k->rewritten), live_(l_) {}

Status Lowering::Run(const WidthFn& widths) {
  size_t nregs = l_.regs.size();
  k_->num_slots = static_cast<int>(nregs);
  k_->num_vecs = static_cast<int>(nregs);
  k_->slot_init.assign(nregs, Slot{0});
  const_val_.assign(nregs, std::nullopt);
  k_->vec_width.assign(nregs, 0);
  k_->vec_offset.assign(nregs, -1);
  k_->is_view.assign(nregs, false);
  RIGEL_RETURN_IF_ERROR(SizeVectors(widths));
  for (int v : l_.vars) k_->var_slots.push_back(v);
  Emit(l_.body);
  Op0(kEnd);
  return Status::Ok();
}

Status Lowering::SizeVectors(const WidthFn& widths) {
  for (size_t r = 0; r < l_.regs.size(); ++r) {
    if (l_.regs[r].type != Type::kVec) continue;
    auto w = widths(l_.regs[r].width_expr);
    if (!w.ok()) return w.status();
    // Bytecode holds widths in 32 bits; far below that a vector no longer
    // fits a worker's memory anyway.
    constexpr int64_t kMaxWidth = int64_t{1} << 30;
    if (*w < 1 || *w > kMaxWidth) {
      return InvalidArgument("vector register %" + std::to_string(r) + " has width " +
                             std::to_string(*w) + "; widths must be between 1 and 2^30");
    }
    k_->vec_width[r] = *w;
  }
  return Status::Ok();
}

int Lowering::Loc(const ir::Inst& in) {
  k_->locs.push_back(in.loc);
  return static_cast<int>(k_->locs.size()) - 1;
}

VOp& Lowering::Op0(uint16_t code) {
  k_->code.push_back(VOp{});
  k_->code.back().code = code;
  return k_->code.back();
}

int Lowering::NewSlot() {
  k_->slot_init.push_back(Slot{0});
  const_val_.push_back(std::nullopt);
  return k_->num_slots++;
}

int Lowering::NewVec(int64_t width) {
  k_->vec_width.push_back(width);
  k_->vec_offset.push_back(-1);
  k_->is_view.push_back(false);
  return k_->num_vecs++;
}

bool Lowering::Immutable(int slot) const {
  return slot >= static_cast<int>(l_.regs.size()) || !l_.regs[slot].mut;
}

Status Lower(const WidthFn& widths, Kernel::Impl* k) { return Lowering(k).Run(widths); }

void LayOutArena(Kernel::Impl* k) {
  for (int v = 0; v < k->num_vecs; ++v) {
    if (k->is_view[v] || k->vec_width[v] == 0) continue;
    k->vec_offset[v] = k->arena_size;
    k->arena_size += (k->vec_width[v] + 15) / 16 * 16;  // 64-byte aligned starts
  }
}

}  // namespace rigel::kernel::lower
