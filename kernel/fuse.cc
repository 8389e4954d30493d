#include "kernel/fuse.h"

#include <map>
#include <vector>

#include "kernel/row_kernels.h"

namespace rigel::kernel {
namespace {

bool IsJump(uint16_t c) {
  return c == kJump || c == kJumpIfFalse || c == kForInit || c == kForNext || c == kFeatInit ||
         c == kFeatNext || c == kWinInit || c == kWinNext;
}

// Slot-only scalar instructions: they touch no parameter or vector memory,
// so moving them across a row write changes nothing. Integer division is
// excluded because it can fail, and which writes precede an error matters.
bool IsPureScalar(uint16_t c) { return c >= kIAdd && c <= kSMove && c != kIDiv; }

// Vector indices an instruction reads.
std::vector<int> VecReads(const VOp& o, const std::vector<Term>& terms) {
  auto term_srcs = [&](int first, int count) {
    std::vector<int> out;
    for (int i = 0; i < count; ++i) {
      if (terms[first + i].src >= 0) out.push_back(terms[first + i].src);
    }
    return out;
  };
  switch (o.code) {
    case kVMove: case kVUn: case kVClip: case kSum: case kNorm: case kVBinVS: return {o.a};
    case kVBinSV: return {o.b};
    case kVBin: case kDot: return {o.a, o.b};
    case kWrRowVec: case kWrWholeVec: return {o.c};
    case kVLin: case kWrRowLin: case kWrWholeLin: return term_srcs(o.t, o.c);
    case kWrRowPair: return term_srcs(o.t, o.c + o.fn);
    default: return {};
  }
}

// Parameters an instruction writes.
std::vector<int> ParamWrites(const VOp& o) {
  switch (o.code) {
    case kWrElem1: case kWrElem2: case kWrRowVec: case kWrRowScalar: case kWrRowLin:
    case kWrWholeVec: case kWrWholeScalar: case kWrWholeLin:
      return {o.aux};
    case kWrRowPair: return {o.aux, o.d};
    default: return {};
  }
}

std::vector<bool> JumpTargets(const std::vector<VOp>& code) {
  std::vector<bool> target(code.size() + 1, false);
  for (const VOp& o : code) {
    if (IsJump(o.code)) target[o.n] = true;
  }
  return target;
}

// Rebuilds `code`: at each position `step(p, &out)` appends the instructions
// that replace code[p ..] and returns how many it consumed (at least 1).
// Passes only fuse groups with no jump target after their first
// instruction, so remapping every target to its group's start is exact.
template <typename Step>
void Rewrite(std::vector<VOp>* code, Step step) {
  std::vector<VOp> out;
  std::vector<int> new_index(code->size() + 1, 0);
  for (size_t p = 0; p < code->size();) {
    int start = static_cast<int>(out.size());
    size_t consumed = step(p, &out);
    for (size_t i = p; i < p + consumed; ++i) new_index[i] = start;
    p += consumed;
  }
  new_index[code->size()] = static_cast<int>(out.size());
  for (VOp& o : out) {
    if (IsJump(o.code)) o.n = new_index[o.n];
  }
  *code = std::move(out);
}

void FusePairs(Kernel::Impl* k) {
  const std::vector<VOp> code = k->code;
  std::vector<bool> target = JumpTargets(code);
  std::map<int, int> view_param;  // vector index -> parameter it views
  for (const VOp& o : code) {
    if (o.code == kRdRowView || o.code == kRdWholeView) view_param[o.d] = o.aux;
  }
  Rewrite(&k->code, [&](size_t p, std::vector<VOp>* out) -> size_t {
    const VOp& first = code[p];
    size_t q = p + 1;
    while (q < code.size() && IsPureScalar(code[q].code) && !target[q]) ++q;
    bool fuse = first.code == kWrRowLin && q < code.size() && !target[q] &&
                code[q].code == kWrRowLin && code[q].aux != first.aux && code[q].n == first.n &&
                first.c <= 4 && code[q].c <= 4;
    if (fuse) {
      for (int i = 0; i < code[q].c; ++i) {
        auto vp = view_param.find(k->terms[code[q].t + i].src);
        if (vp != view_param.end() && vp->second == first.aux) fuse = false;
      }
    }
    if (!fuse) {
      out->push_back(first);
      return 1;
    }
    // The scalar instructions between the writes move before the pair.
    for (size_t s = p + 1; s < q; ++s) out->push_back(code[s]);
    const VOp& second = code[q];
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
    f.k.pair = SelectPair(first.c, second.c, first.n);
    out->push_back(f);
    return q + 1 - p;
  });
}

// A row copy can be a view when every write to its parameter before the
// copy's last use is that last use itself, done by a pair write (which reads
// all inputs first). Straight-line code only: a jump could re-run the write.
void CopiesToViews(Kernel::Impl* k) {
  std::vector<VOp>& code = k->code;
  std::vector<bool> target = JumpTargets(code);
  for (size_t c = 0; c < code.size(); ++c) {
    if (code[c].code != kRdRowCopy) continue;
    int v = code[c].d, param = code[c].aux;
    size_t last = c;
    for (size_t u = c + 1; u < code.size(); ++u) {
      for (int r : VecReads(code[u], k->terms)) {
        if (r == v) last = u;
      }
    }
    bool ok = last > c;
    for (size_t u = c + 1; ok && u <= last; ++u) {
      if (IsJump(code[u].code) || target[u]) ok = false;
      for (int w : ParamWrites(code[u])) {
        if (w == param && !(u == last && code[u].code == kWrRowPair)) ok = false;
      }
    }
    if (!ok) continue;
    code[c].code = kRdRowView;
    k->is_view[v] = true;
  }
}

}  // namespace

void FuseRowViews(Kernel::Impl* k) {
  const std::vector<VOp> code = k->code;
  std::vector<bool> target = JumpTargets(code);
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
    return 2;
  });
}

void FuseDotIntoScalarOp(Kernel::Impl* k) {
  const std::vector<VOp> code = k->code;
  std::vector<bool> target = JumpTargets(code);
  Rewrite(&k->code, [&](size_t p, std::vector<VOp>* out) -> size_t {
    const VOp& dot = code[p];
    if (dot.code == kDot && dot.fn == 1 && p + 1 < code.size() && !target[p + 1]) {
      const VOp& op = code[p + 1];
      bool arith = op.code == kFAdd || op.code == kFSub || op.code == kFMul;
      // The dot's slot is read once, by `op`, in exactly one operand.
      if (arith && (op.a == dot.d) != (op.b == dot.d)) {
        VOp f = dot;
        f.code = kDotOp;
        f.fn = static_cast<uint8_t>(op.code);
        f.d = op.d;
        f.c = op.a == dot.d ? op.b : op.a;
        f.t = op.a == dot.d ? 1 : 0;  // 1: the dot is the left operand
        out->push_back(f);
        return 2;
      }
    }
    out->push_back(dot);
    return 1;
  });
}

void FusePairedRowWrites(Kernel::Impl* k) {
  FusePairs(k);
  CopiesToViews(k);
}

}  // namespace rigel::kernel
