#include "kernel/operands.h"

namespace rigel::kernel {
namespace {

// One row per opcode reads better as a table.
// clang-format off
constexpr Field _ = Field::kUnused, S = Field::kSlot, SO = Field::kSlotOpt, S2 = Field::kSlots2,
                S3 = Field::kSlots3, VI = Field::kVecIn, VO = Field::kVecOut,
                VV = Field::kVecView, P = Field::kParam, D = Field::kData, A = Field::kAccum,
                W = Field::kWidth, T = Field::kTarget, L = Field::kLoc, TS = Field::kTerms,
                C = Field::kCount;

//                                 d   a   b   c   n   aux t
constexpr Operands kNone = {_, _, _, _, _, _, _};
constexpr Operands kScalar2 = {S, S, S, _, _, _, _};
constexpr Operands kScalar1 = {S, S, _, _, _, _, _};

Operands Make(uint16_t code) {
  if ((code >= kIAdd && code <= kINe) || (code >= kFAdd && code <= kFNe) || code == kBAnd ||
      code == kBOr) {
    return kScalar2;
  }
  switch (code) {
    case kINeg: case kFUn: case kIToF: case kFToI: case kIToI32: case kBNot: case kSMove:
      return kScalar1;
    case kFClip:       return {S, S, S, S, _, _, _};
    case kVMove:       return {VO, VI, _, _, W, _, _};
    case kVZero:       return {VO, _, _, _, W, _, _};
    case kVLin:        return {VO, _, _, C, W, _, TS};
    case kVBin:        return {VO, VI, VI, _, W, _, _};
    case kVBinVS:      return {VO, VI, S, _, W, _, _};
    case kVBinSV:      return {VO, S, VI, _, W, _, _};
    case kVUn:         return {VO, VI, _, _, W, _, _};
    case kVClip:       return {VO, VI, S, S, W, _, _};
    case kDot:         return {S, VI, VI, _, W, _, _};
    case kSum:         return {S, VI, _, _, W, _, _};
    case kNorm:        return {S, VI, _, _, W, _, _};
    case kVElem:       return {S, VI, S, _, W, _, _};
    case kVPick:       return {S, VI, _, _, W, _, _};
    case kOneHot:      return {VO, S, _, _, W, _, _};
    case kVSet:        return {VO, VI, S, S, W, _, _};
    case kSample:      return {S, VI, _, _, W, _, _};
    case kDotOp:       return {S, VI, VI, S, W, _, _};
    case kRdElem1:     return {S, S, _, _, _, P, _};
    case kRdElem2:     return {S, S, S, _, _, P, _};
    case kRdRowView:   return {VV, S, _, _, W, P, _};
    case kRdRowCopy:   return {VO, S, _, _, W, P, _};
    case kRdWholeView: return {VV, _, _, _, W, P, _};
    case kRdWholeCopy: return {VO, _, _, _, W, P, _};
    case kRdRowView2:  return {VV, S, VV, S, L, P, P};
    case kWrElem1:     return {_, S, _, S, _, P, _};
    case kWrElem2:     return {_, S, S, S, _, P, _};
    case kWrRowVec:    return {_, S, _, VI, W, P, _};
    case kWrRowScalar: return {_, S, _, S, W, P, _};
    case kWrRowLin:    return {_, S, _, C, W, P, TS};
    case kWrRowPair:   return {P, S, S, C, L, P, TS};
    case kWrWholeVec:  return {_, _, _, VI, W, P, _};
    case kWrWholeScalar: return {_, _, _, S, _, P, _};
    case kWrWholeLin:  return {_, _, _, C, W, P, TS};
    case kAccum:       return {_, S, _, _, _, A, _};
    case kAccumVec:    return {_, VI, _, _, W, A, _};
    case kAccumElem:   return {_, S, S, _, W, A, _};
    case kRand:        return {S, _, _, _, _, _, _};
    case kRandInt:     return {S, S, _, _, _, _, _};
    case kNegative:    return {S, _, _, _, _, D, _};
    case kLabel:       return {S, S, _, _, _, D, _};
    case kRowX:        return {VV, S, _, _, W, D, _};
    case kJump:        return {_, _, _, _, T, _, _};
    case kJumpIfFalse: return {_, S, _, _, T, _, _};
    case kForInit:     return {S, S, S, S, T, _, _};
    case kForNext:     return {S, _, _, S, T, _, _};
    case kFeatInit:    return {S, S, S, S2, T, D, _};
    case kFeatNext:    return {S, _, S, S2, T, D, _};
    case kWinInit:     return {S, S, S, S3, T, D, _};
    case kWinNext:     return {S, _, _, S3, T, D, _};
    case kKey:         return {_, S, SO, _, _, P, _};
    default:           return kNone;  // kEnd
  }
}
// clang-format on

struct Table {
  Table() {
    for (uint16_t c = 0; c <= kKey; ++c) ops[c] = Make(c);
  }
  Operands ops[kKey + 1];
};

}  // namespace

const Operands& OperandsOf(uint16_t code) {
  static const Table table;
  return table.ops[code];
}

bool IsJump(uint16_t code) { return code <= kKey && OperandsOf(code).n == Field::kTarget; }

bool IsParamWrite(uint16_t code) { return code >= kWrElem1 && code <= kWrWholeLin; }

bool HasTerms(uint16_t code) { return code <= kKey && OperandsOf(code).t == Field::kTerms; }

std::vector<int> VecReads(const VOp& o, const std::vector<Term>& terms) {
  const Operands& f = OperandsOf(o.code);
  std::vector<int> out;
  if (f.a == Field::kVecIn) out.push_back(o.a);
  if (f.b == Field::kVecIn) out.push_back(o.b);
  if (f.c == Field::kVecIn) out.push_back(o.c);
  if (f.t == Field::kTerms) {
    int count = o.c + (o.code == kWrRowPair ? o.fn : 0);
    for (int i = 0; i < count; ++i) {
      if (terms[o.t + i].src >= 0) out.push_back(terms[o.t + i].src);
    }
  }
  return out;
}

std::vector<int> ParamWrites(const VOp& o) {
  if (o.code == kWrRowPair) return {o.aux, o.d};
  if (IsParamWrite(o.code)) return {o.aux};
  return {};
}

std::vector<bool> JumpTargets(const std::vector<VOp>& code) {
  std::vector<bool> target(code.size() + 1, false);
  for (const VOp& o : code) {
    if (IsJump(o.code) && o.n >= 0 && o.n <= static_cast<int>(code.size())) target[o.n] = true;
  }
  return target;
}

}  // namespace rigel::kernel
