// merge-reads: a row or whole read of the same parameter, mode and immutable
// subscript registers as an earlier one, with no write to that parameter in
// between, is dropped and its register renamed to the earlier read's.
// Programs say H[j] several times per statement; each read would otherwise
// be a dispatch and, in linear forms, a separate term.
//
// Entering an inner loop forgets the parameters written anywhere in it (a
// later iteration follows the write); after any nested block, the
// parameters it writes are forgotten. A key slice is left as it is: it
// records every access it keeps.
#include <algorithm>
#include <map>
#include <vector>

#include "kernel/passes/pipeline.h"

namespace rigel::kernel::passes {
namespace {

using ir::Inst;
using ir::Op;

// Params written anywhere in `body` (including nested blocks).
void WrittenParams(const std::vector<Inst>& body, std::vector<bool>* out) {
  for (const Inst& in : body) {
    if (in.op == Op::kWrite) (*out)[in.index] = true;
    WrittenParams(in.body, out);
    WrittenParams(in.else_body, out);
  }
}

bool IsLoop(Op op) { return op == Op::kFor || op == Op::kForFeatures || op == Op::kForWindow; }

class ReadCse {
 public:
  ReadCse(const ir::Loop& l, size_t num_params) : l_(l), num_params_(num_params) {}

  struct Avail {
    int param;
    ir::Access mode;
    int a, b, dst;
  };

  // Rewrites `body` with the reads in `avail` known on entry; returns how
  // many reads it dropped.
  int Block(std::vector<Inst>* body, std::vector<Avail> avail) {
    int merged = 0;
    std::vector<Inst> kept;
    for (Inst& in : *body) {
      in.a = Resolve(in.a);
      in.b = Resolve(in.b);
      in.c = Resolve(in.c);
      bool row_read = in.op == Op::kRead && in.mode != ir::Access::kElement;
      if (row_read && Immutable(in.a) && Immutable(in.b)) {
        auto same = [&](const Avail& v) {
          return v.param == in.index && v.mode == in.mode && v.a == in.a && v.b == in.b;
        };
        auto it = std::find_if(avail.begin(), avail.end(), same);
        if (it != avail.end()) {
          rename_[in.dst] = it->dst;
          ++merged;
          continue;
        }
        avail.push_back({in.index, in.mode, in.a, in.b, in.dst});
      }
      if (in.op == Op::kWrite) Kill(&avail, in.index);
      if (!in.body.empty() || !in.else_body.empty()) merged += Nested(&in, &avail);
      kept.push_back(std::move(in));
    }
    *body = std::move(kept);
    return merged;
  }

 private:
  // The blocks of `in`; afterwards `avail` forgets what they may write.
  int Nested(Inst* in, std::vector<Avail>* avail) {
    std::vector<bool> written(num_params_, false);
    WrittenParams(in->body, &written);
    WrittenParams(in->else_body, &written);
    std::vector<Avail> inner = *avail;
    // Inside a loop a later iteration runs after this iteration's writes.
    for (size_t p = 0; p < num_params_; ++p) {
      if (written[p] && IsLoop(in->op)) Kill(&inner, static_cast<int>(p));
    }
    int merged = Block(&in->body, inner);
    merged += Block(&in->else_body, inner);
    for (size_t p = 0; p < num_params_; ++p) {
      if (written[p]) Kill(avail, static_cast<int>(p));
    }
    return merged;
  }
  bool Immutable(int reg) const { return reg < 0 || !l_.regs[reg].mut; }
  int Resolve(int r) const {
    auto it = rename_.find(r);
    return it == rename_.end() ? r : it->second;
  }
  static void Kill(std::vector<Avail>* avail, int param) {
    avail->erase(std::remove_if(avail->begin(), avail->end(),
                                [&](const Avail& v) { return v.param == param; }),
                 avail->end());
  }

  const ir::Loop& l_;
  size_t num_params_;
  std::map<int, int> rename_;
};

class MergeReadsPass final : public IrPass {
 public:
  std::string_view name() const override { return "merge-reads"; }
  std::string_view description() const override {
    return "a repeated row or whole read with no write in between reuses the first one";
  }
  void Run(const ir::Program& prog, bool key_slice, ir::Loop* loop,
           PassStats* stats) const override {
    if (key_slice) return;
    int merged = ReadCse(*loop, prog.params.size()).Block(&loop->body, {});
    if (merged > 0) stats->Add("reads merged", merged);
  }
};

}  // namespace

const IrPass& MergeReads() {
  static const MergeReadsPass pass;
  return pass;
}

}  // namespace rigel::kernel::passes
