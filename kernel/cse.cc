#include "kernel/cse.h"

#include <algorithm>
#include <map>
#include <vector>

namespace rigel::kernel {

using ir::Inst;
using ir::Op;

namespace {

// Params written anywhere in `body` (including nested blocks).
void WrittenParams(const std::vector<Inst>& body, std::vector<bool>* out) {
  for (const Inst& in : body) {
    if (in.op == Op::kWrite) (*out)[in.index] = true;
    WrittenParams(in.body, out);
    WrittenParams(in.else_body, out);
  }
}

class ReadCse {
 public:
  ReadCse(const ir::Loop& l, size_t num_params) : l_(l), num_params_(num_params) {}

  struct Avail {
    int param;
    ir::Access mode;
    int a, b, dst;
  };

  void Block(std::vector<Inst>* body, std::vector<Avail> avail) {
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
          continue;
        }
        avail.push_back({in.index, in.mode, in.a, in.b, in.dst});
      }
      if (in.op == Op::kWrite) Kill(&avail, in.index);
      if (!in.body.empty() || !in.else_body.empty()) {
        std::vector<bool> written(num_params_, false);
        WrittenParams(in.body, &written);
        WrittenParams(in.else_body, &written);
        std::vector<Avail> inner = avail;
        // Inside a loop a later iteration runs after this iteration's writes.
        bool is_loop = in.op == Op::kFor || in.op == Op::kForFeatures || in.op == Op::kForWindow;
        for (size_t p = 0; p < num_params_; ++p) {
          if (written[p] && is_loop) Kill(&inner, static_cast<int>(p));
        }
        Block(&in.body, inner);
        Block(&in.else_body, inner);
        for (size_t p = 0; p < num_params_; ++p) {
          if (written[p]) Kill(&avail, static_cast<int>(p));
        }
      }
      kept.push_back(std::move(in));
    }
    *body = std::move(kept);
  }

 private:
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

}  // namespace

void MergeRepeatedReads(ir::Loop* loop, size_t num_params) {
  ReadCse(*loop, num_params).Block(&loop->body, {});
}

}  // namespace rigel::kernel
