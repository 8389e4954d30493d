#include "kernel/lower/liveness.h"

#include <algorithm>

namespace rigel::kernel::lower {

using ir::Inst;
using ir::Op;

Liveness::Liveness(const ir::Loop& loop) {
  Number(loop.body, 0);
  std::vector<std::pair<int, int>> loops;
  Uses(loop.body, &loops);
}

int Liveness::uses(int reg) const {
  auto it = uses_.find(reg);
  return it == uses_.end() ? 0 : it->second;
}

bool Liveness::CanView(const Inst& read) const {
  int from = pos_.at(&read);
  auto last = last_use_.find(read.dst);
  int to = last == last_use_.end() ? 0 : last->second;
  auto w = writes_.find(read.index);
  if (w == writes_.end()) return true;
  for (int pos : w->second) {
    if (pos > from && pos < to) return false;
  }
  return true;
}

int Liveness::Number(const std::vector<Inst>& body, int pos) {
  for (const Inst& in : body) {
    pos_[&in] = pos++;
    pos = Number(in.body, pos);
    pos = Number(in.else_body, pos);
    end_[&in] = pos - 1;
  }
  return pos;
}

void Liveness::Use(int reg, int pos, const std::vector<std::pair<int, int>>& loops) {
  if (reg < 0) return;
  ++uses_[reg];
  int last = pos;
  // A value defined outside an inner loop and used inside it is live until
  // the loop ends: later iterations read it again.
  // A write anywhere in that loop then precedes a later read, hence end + 1.
  for (const auto& [start, end] : loops) {
    auto d = def_.find(reg);
    bool defined_inside = d != def_.end() && d->second >= start && d->second <= end;
    if (!defined_inside) last = std::max(last, end + 1);
  }
  last_use_[reg] = std::max(last_use_[reg], last);
}

void Liveness::Uses(const std::vector<Inst>& body, std::vector<std::pair<int, int>>* loops) {
  for (const Inst& in : body) {
    int pos = pos_[&in];
    if (in.dst >= 0 && !def_.count(in.dst)) def_[in.dst] = pos;
    if (in.dst2 >= 0 && !def_.count(in.dst2)) def_[in.dst2] = pos;
    for (int r : {in.a, in.b, in.c}) Use(r, pos, *loops);
    if (in.op == Op::kMove) Use(in.dst, pos, *loops);
    if (in.op == Op::kWrite) writes_[in.index].push_back(pos);
    bool is_loop = in.op == Op::kFor || in.op == Op::kForFeatures || in.op == Op::kForWindow;
    if (is_loop) loops->push_back({pos, end_[&in]});
    Uses(in.body, loops);
    Uses(in.else_body, loops);
    if (is_loop) loops->pop_back();
  }
}

}  // namespace rigel::kernel::lower
