// read-views: a row or whole read that the lowering marked (fn 1: no write
// to its parameter lies strictly between the read and the last use of its
// value, in program order, counting a use inside an inner loop as a use at
// the loop's end) becomes a view: a pointer into parameter memory instead
// of a copy. A write at the last use itself is allowed, because row and
// whole writes are elementwise. Unmarked reads stay copies.
#include "kernel/passes/pipeline.h"

namespace rigel::kernel::passes {
namespace {

class ReadViewsPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "read-views"; }
  std::string_view description() const override {
    return "row and whole reads that no write can disturb while live become views";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    int views = 0;
    for (VOp& o : k->code) {
      if ((o.code != kRdRowCopy && o.code != kRdWholeCopy) || o.fn != 1) continue;
      o.code = o.code == kRdRowCopy ? kRdRowView : kRdWholeView;
      o.fn = 0;
      k->is_view[o.d] = true;
      ++views;
    }
    if (views > 0) stats->Add("reads made views", views);
  }
};

}  // namespace

const BytecodePass& ReadViews() {
  static const ReadViewsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
