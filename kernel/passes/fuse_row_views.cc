// fuse-row-views: two consecutive row views (no jump target between) become
// one kRdRowView2. A view is only address arithmetic, so the dispatch is
// most of its cost.
#include <vector>

#include "kernel/passes/pipeline.h"
#include "kernel/passes/rewrite.h"

namespace rigel::kernel::passes {
namespace {

class FuseRowViewsPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "fuse-row-views"; }
  std::string_view description() const override {
    return "two consecutive row views become one instruction";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    const std::vector<VOp> code = k->code;
    std::vector<bool> target = JumpTargets(code);
    int fused = 0;
    Rewrite(&k->code, [&](size_t p, std::vector<VOp>* out) -> size_t {
      if (code[p].code != kRdRowView || p + 1 >= code.size() || code[p + 1].code != kRdRowView ||
          target[p + 1]) {
        out->push_back(code[p]);
        return 1;
      }
      VOp f = code[p];
      const VOp& second = code[p + 1];
      f.code = kRdRowView2;
      f.b = second.d;
      f.c = second.a;
      f.t = second.aux;
      f.n = second.loc;  // the second read's location, for its index errors
      out->push_back(f);
      ++fused;
      return 2;
    });
    if (fused > 0) stats->Add("view pairs fused", fused);
  }
};

}  // namespace

const BytecodePass& FuseRowViews() {
  static const FuseRowViewsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
