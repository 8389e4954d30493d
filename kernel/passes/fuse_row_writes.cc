// fuse-row-writes: a row write `P[i] = f` followed, with only slot-only
// scalar instructions between, by `Q[j] = g` becomes one kWrRowPair that
// computes both rows from the old values in one pass, when P != Q (so the
// rows cannot overlap), g reads no view of P and both are linear forms of at
// most 4 terms and equal width. Sequential semantics are kept: g could not
// have seen P's new row anyway, and f never reads Q's new row. This is the
// shape of every two-sided SGD update (MF, embeddings). If the second
// subscript is out of range, the interpreter still writes the first row, as
// a sequential run would, before it returns the error.
#include <map>
#include <vector>

#include "kernel/passes/pipeline.h"
#include "kernel/passes/rewrite.h"
#include "kernel/row_kernels.h"

namespace rigel::kernel::passes {
namespace {

// Slot-only scalar instructions: they touch no parameter or vector memory,
// so moving them across a row write changes nothing. Integer division is
// excluded because it can fail, and which writes precede an error matters.
// Those that can fault (IDiv, IMod, FToI, IToI32) are not pure: moving them would move the error.
bool IsPureScalar(uint16_t c) {
  return c >= kIAdd && c <= kSMove && c != kIDiv && c != kIMod && c != kFToI && c != kIToI32;
}

// Whether code[p] and code[q] (a pure scalar run between them) can pair.
bool CanPair(const Kernel::Impl& k, const std::vector<VOp>& code, size_t p, size_t q,
             const std::vector<bool>& target, const std::map<int, int>& view_param) {
  const VOp& first = code[p];
  bool fuse = first.code == kWrRowLin && q < code.size() && !target[q] &&
              code[q].code == kWrRowLin && code[q].aux != first.aux && code[q].n == first.n &&
              first.c <= 4 && code[q].c <= 4;
  if (!fuse) return false;
  for (int i = 0; i < code[q].c; ++i) {
    auto vp = view_param.find(k.terms[code[q].t + i].src);
    if (vp != view_param.end() && vp->second == first.aux) return false;
  }
  return true;
}

VOp Pair(Kernel::Impl* k, const VOp& first, const VOp& second) {
  VOp f;
  f.code = kWrRowPair;
  f.aux = first.aux;
  f.a = first.a;
  f.d = second.aux;
  f.b = second.a;
  f.loc = first.loc;
  f.n = second.loc;  // the second write's location, for its index errors
  f.c = first.c;
  f.fn = static_cast<uint8_t>(second.c);
  f.t = static_cast<int32_t>(k->terms.size());
  for (int i = 0; i < first.c; ++i) k->terms.push_back(k->terms[first.t + i]);
  for (int i = 0; i < second.c; ++i) k->terms.push_back(k->terms[second.t + i]);
  // The width-independent kernel; specialise-row-kernels picks a faster one.
  f.k.pair = SelectPair(first.c, second.c, 0);
  return f;
}

class FuseRowWritesPass final : public BytecodePass {
 public:
  std::string_view name() const override { return "fuse-row-writes"; }
  std::string_view description() const override {
    return "two row writes of different parameters become one pass over both rows";
  }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    const std::vector<VOp> code = k->code;
    std::vector<bool> target = JumpTargets(code);
    std::map<int, int> view_param;  // vector index -> parameter it views
    for (const VOp& o : code) {
      if (o.code == kRdRowView || o.code == kRdWholeView) view_param[o.d] = o.aux;
    }
    int pairs = 0;
    Rewrite(&k->code, [&](size_t p, std::vector<VOp>* out) -> size_t {
      size_t q = p + 1;
      while (q < code.size() && IsPureScalar(code[q].code) && !target[q]) ++q;
      if (!CanPair(*k, code, p, q, target, view_param)) {
        out->push_back(code[p]);
        return 1;
      }
      // The scalar instructions between the writes move before the pair.
      for (size_t s = p + 1; s < q; ++s) out->push_back(code[s]);
      out->push_back(Pair(k, code[p], code[q]));
      ++pairs;
      return q + 1 - p;
    });
    if (pairs > 0) stats->Add("write pairs fused", pairs);
  }
};

}  // namespace

const BytecodePass& FuseRowWrites() {
  static const FuseRowWritesPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
