// copies-to-views: a row copy can be a view when every write to its
// parameter before the copy's last use is that last use itself, done by a
// pair write (kWrRowPair reads all its inputs before it stores either row).
// Such a copy existed only because of the first of two writes that
// fuse-row-writes has since paired. Straight-line code only: a jump could
// run the write again before another use.
#include <vector>

#include "kernel/operands.h"
#include "kernel/passes/pipeline.h"

namespace rigel::kernel::passes {
namespace {

// Whether the copy at `c` may view its parameter's memory instead.
bool CanView(const Kernel::Impl& k, const std::vector<bool>& target, size_t c) {
  const std::vector<VOp>& code = k.code;
  int v = code[c].d, param = code[c].aux;
  size_t last = c;
  for (size_t u = c + 1; u < code.size(); ++u) {
    for (int r : VecReads(code[u], k.terms)) {
      if (r == v) last = u;
    }
  }
  if (last == c) return false;
  for (size_t u = c + 1; u <= last; ++u) {
    if (IsJump(code[u].code) || target[u]) return false;
    for (int w : ParamWrites(code[u])) {
      if (w == param && !(u == last && code[u].code == kWrRowPair)) return false;
    }
  }
  return true;
}

class CopiesToViewsPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "copies-to-views"; }
  std::string_view description() const override {
    return "row copies whose parameter is only written by a pair write at their last use "
           "become views";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    std::vector<bool> target = JumpTargets(k->code);
    int views = 0;
    for (size_t c = 0; c < k->code.size(); ++c) {
      if (k->code[c].code != kRdRowCopy || !CanView(*k, target, c)) continue;
      k->code[c].code = kRdRowView;
      k->code[c].fn = 0;
      k->is_view[k->code[c].d] = true;
      ++views;
    }
    if (views > 0) stats->Add("copies made views", views);
  }
};

}  // namespace

const BytecodePass& CopiesToViews() {
  static const CopiesToViewsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
