// The bytecode interpreter. One indirect jump per instruction (direct
// threading through a table of label addresses); vector
// instructions do a whole row per dispatch, which is what keeps the
// interpreter within a small factor of hand-written loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/hash.h"
#include "data/element_origin.h"
#include "ir/param_init.h"
#include "kernel/kernel_impl.h"
#include "kernel/vec_ops.h"

namespace rigel::kernel {

using data::DataKind;
using data::Dataset;

namespace {

// How many elements ahead RunElements prefetches a listed element's data:
// enough to cover a memory latency at a few nanoseconds per element.
constexpr int64_t kPrefetchAhead = 16;

// Keeps rand(), randint() and negative() streams apart for equal coordinates.
constexpr uint64_t kRandSalt = 0x72616e64;      // "rand"
constexpr uint64_t kNegativeSalt = 0x6e656773;  // "negs"

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float Log1pExp(float x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

inline float ApplyUn(uint8_t fn, float x) {
  switch (fn) {
    case ir::kNeg:
      return -x;
    case ir::kSqrt:
      return std::sqrt(x);
    case ir::kExp:
      return std::exp(x);
    case ir::kLog:
      return std::log(x);
    case ir::kAbs:
      return std::fabs(x);
    case ir::kTanh:
      return std::tanh(x);
    case ir::kSigmoid:
      return Sigmoid(x);
    case ir::kLog1pExp:
      return Log1pExp(x);
    default:
      return x;
  }
}

inline float ApplyBin(uint8_t fn, float x, float y) {
  switch (fn) {
    case ir::kAdd:
      return x + y;
    case ir::kSub:
      return x - y;
    case ir::kMul:
      return x * y;
    case ir::kDiv:
      return x / y;
    case ir::kMin:
      return std::min(x, y);
    case ir::kMax:
      return std::max(x, y);
    default:
      return y;  // kPlainAssign
  }
}

template <typename N, typename F>
__attribute__((always_inline)) inline void VecMap(float* d, N n, F f) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = f(k);
}

// Error paths are cold and out of line so they cost the hot loop nothing.
// A run-time error names the program position and, after it, the data line
// of the element that failed: bad indices usually come from the data.
__attribute__((noinline, cold)) Status RunError(const Kernel::Impl& K, const data::Dataset& data,
                                                int64_t e, const VOp* o, const std::string& msg) {
  ir::Loc loc = o->loc >= 0 ? K.locs[o->loc] : ir::Loc{};
  return OutOfRange(ir::FormatDiagnostic(*K.prog->source, loc, msg) +
                    data::ElementNote(data, K.prog->data[K.data].name, e, "while running"));
}

__attribute__((noinline, cold)) Status IndexError(const Kernel::Impl& K, const data::Dataset& data,
                                                  int64_t e, const VOp* o, int64_t idx,
                                                  int64_t limit, const char* what) {
  return RunError(K, data, e, o,
                  "index " + std::to_string(idx) + " out of range for " + what + " of '" +
                      K.prog->params[o->aux].name + "' (" + std::to_string(limit) + ")");
}

}  // namespace

Status Kernel::Run(const RunContext& ctx, int64_t begin, int64_t end) const {
  return RunSome(ctx, nullptr, begin, end, nullptr);
}

Status Kernel::CheckElements(const RunContext& ctx, std::span<const int64_t> elements) const {
  const int64_t count = (*ctx.data)[impl_->data]->count;
  for (int64_t e : elements) {
    if (e < 0 || e >= count) {
      return InvalidArgument("element " + std::to_string(e) + " is outside the loop's " +
                             std::to_string(count) + " elements");
    }
  }
  return Status::Ok();
}

Status Kernel::RunElements(const RunContext& ctx, std::span<const int64_t> elements) const {
  RIGEL_RETURN_IF_ERROR(CheckElements(ctx, elements));
  return RunSome(ctx, elements.data(), 0, static_cast<int64_t>(elements.size()), nullptr);
}

Status Kernel::RunSome(const RunContext& ctx, const int64_t* list, int64_t begin, int64_t end,
                       KeyTrace* keys) const {
  const Impl& K = *impl_;
  std::vector<Slot> slots = K.slot_init;
  Slot* S = slots.data();
  std::vector<float> arena(static_cast<size_t>(K.arena_size) + 16);
  std::vector<float*> vecs(K.num_vecs, nullptr);
  float* V_base = arena.data();
  for (int v = 0; v < K.num_vecs; ++v) {
    if (K.vec_offset[v] >= 0) vecs[v] = V_base + K.vec_offset[v];
  }
  float** V = vecs.data();
  for (const auto& [slot, id] : K.outer) {
    RIGEL_ASSIGN_OR_RETURN(OuterValue ov, ctx.outer(id));
    // The register's type is the expression's declared type.
    if (K.prog->exprs[id].is_int) {
      S[slot].i = ov.is_int ? ov.i : static_cast<int64_t>(ov.f);
    } else {
      S[slot].f = static_cast<float>(ov.is_int ? static_cast<double>(ov.i) : ov.f);
    }
  }
  const ParamBinding* P = ctx.params->data();
  const auto& datas = *ctx.data;
  const data::Dataset& data = *datas[K.data];
  const VOp* code = K.code.data();
  const Term* terms = K.terms.data();
  const int* vars = K.var_slots.data();
  const uint64_t run_key = (static_cast<uint64_t>(K.loop) << 32) | ctx.launch;
  double* acc = ctx.accums;
  // Only key slices have kKey instructions; for them the trace has a list
  // per parameter (KeySlice::Run sizes it).
  std::vector<int64_t>* key_out = keys ? keys->data() : nullptr;

  int64_t current = -1;  // the element being run, for error notes
  auto fail = [&](const VOp* o, const std::string& msg) {
    return RunError(K, data, current, o, msg);
  };
  auto bad_index = [&](const VOp* o, int64_t idx, int64_t limit, const char* what) {
    return IndexError(K, data, current, o, idx, limit, what);
  };

  // Direct threading: every handler ends in its own indirect jump, which the
  // branch predictor learns per handler (a single switch jump it cannot).
#define RIGEL_LABEL(c) [c] = &&L_##c
  static const void* const kLabels[] = {
      RIGEL_LABEL(kEnd),        RIGEL_LABEL(kIAdd),        RIGEL_LABEL(kISub),
      RIGEL_LABEL(kIMul),       RIGEL_LABEL(kIDiv),        RIGEL_LABEL(kIMin),
      RIGEL_LABEL(kIMax),       RIGEL_LABEL(kILt),         RIGEL_LABEL(kILe),
      RIGEL_LABEL(kIGt),        RIGEL_LABEL(kIGe),         RIGEL_LABEL(kIEq),
      RIGEL_LABEL(kINe),        RIGEL_LABEL(kINeg),        RIGEL_LABEL(kFAdd),
      RIGEL_LABEL(kFSub),       RIGEL_LABEL(kFMul),        RIGEL_LABEL(kFDiv),
      RIGEL_LABEL(kFMin),       RIGEL_LABEL(kFMax),        RIGEL_LABEL(kFLt),
      RIGEL_LABEL(kFLe),        RIGEL_LABEL(kFGt),         RIGEL_LABEL(kFGe),
      RIGEL_LABEL(kFEq),        RIGEL_LABEL(kFNe),         RIGEL_LABEL(kFUn),
      RIGEL_LABEL(kIToF),       RIGEL_LABEL(kBAnd),        RIGEL_LABEL(kBOr),
      RIGEL_LABEL(kBNot),       RIGEL_LABEL(kFClip),       RIGEL_LABEL(kSMove),
      RIGEL_LABEL(kVMove),      RIGEL_LABEL(kVZero),       RIGEL_LABEL(kVLin),
      RIGEL_LABEL(kVBin),       RIGEL_LABEL(kVBinVS),      RIGEL_LABEL(kVBinSV),
      RIGEL_LABEL(kVUn),        RIGEL_LABEL(kVClip),       RIGEL_LABEL(kDot),
      RIGEL_LABEL(kSum),        RIGEL_LABEL(kNorm),        RIGEL_LABEL(kDotOp),
      RIGEL_LABEL(kRdElem1),    RIGEL_LABEL(kRdElem2),     RIGEL_LABEL(kRdRowView),
      RIGEL_LABEL(kRdRowCopy),  RIGEL_LABEL(kRdWholeView), RIGEL_LABEL(kRdWholeCopy),
      RIGEL_LABEL(kRdRowView2), RIGEL_LABEL(kWrElem1),     RIGEL_LABEL(kWrElem2),
      RIGEL_LABEL(kWrRowVec),   RIGEL_LABEL(kWrRowScalar), RIGEL_LABEL(kWrRowLin),
      RIGEL_LABEL(kWrRowPair),  RIGEL_LABEL(kWrWholeVec),  RIGEL_LABEL(kWrWholeScalar),
      RIGEL_LABEL(kWrWholeLin), RIGEL_LABEL(kAccum),       RIGEL_LABEL(kRand),
      RIGEL_LABEL(kRandInt),    RIGEL_LABEL(kNegative),    RIGEL_LABEL(kLabel),
      RIGEL_LABEL(kRowX),       RIGEL_LABEL(kJump),        RIGEL_LABEL(kJumpIfFalse),
      RIGEL_LABEL(kForInit),    RIGEL_LABEL(kForNext),     RIGEL_LABEL(kFeatInit),
      RIGEL_LABEL(kFeatNext),   RIGEL_LABEL(kWinInit),     RIGEL_LABEL(kWinNext),
      RIGEL_LABEL(kKey)};
#undef RIGEL_LABEL
// Every parameter access is bounds-checked: a bad index is a program error
// reported at its source location, never a wild memory access.
#define RIGEL_CHECK_ROW(binding, row)                                        \
  do {                                                                       \
    if (static_cast<uint64_t>(row) >= static_cast<uint64_t>((binding).rows)) \
      return bad_index(o, row, (binding).rows, "the rows");                  \
  } while (0)
#define NEXT()              \
  do {                      \
    ++o;                    \
    goto* kLabels[o->code]; \
  } while (0)
#define JUMP(target)        \
  do {                      \
    o = code + (target);    \
    goto* kLabels[o->code]; \
  } while (0)

  for (int64_t k = begin; k < end; ++k) {
    const int64_t e = list ? list[k] : k;
    current = e;
    // A listed block visits the data set out of order: without a prefetch
    // the loads below miss the cache for nearly every element, and in a key
    // slice (key_slice.h) those misses are most of the time per element.
    if (list && k + kPrefetchAhead < end) {
      const int64_t f = list[k + kPrefetchAhead];
      if (K.kind == data::DataKind::kTriples) {
        __builtin_prefetch(&data.ti[f]);
        __builtin_prefetch(&data.tj[f]);
        __builtin_prefetch(&data.tv[f]);
      } else if (K.kind == data::DataKind::kTokens) {
        __builtin_prefetch(&data.tokens[f]);
      }
    }
    switch (K.kind) {
      case data::DataKind::kTriples:
        S[vars[0]].i = data.ti[e];
        S[vars[1]].i = data.tj[e];
        S[vars[2]].f = data.tv[e];
        break;
      case data::DataKind::kLibsvm:
      case data::DataKind::kDenseCsv:
        S[vars[0]].i = e;
        S[vars[1]].i = e;
        break;
      case data::DataKind::kTokens:
        S[vars[0]].i = e;
        S[vars[1]].i = data.tokens[e];
        break;
      case data::DataKind::kGrid:
        S[vars[0]].i = e / data.cols;
        S[vars[1]].i = e % data.cols;
        break;
      case data::DataKind::kRange:
        S[vars[0]].i = e;
        break;
    }
    uint64_t draw = 0;
    const VOp* o = code;
    goto* kLabels[o->code];
    {
    L_kEnd:
      goto next_element;
    L_kIAdd:
      if (__builtin_add_overflow(S[o->a].i, S[o->b].i, &S[o->d].i)) {
        return fail(o, "integer overflow");
      }
      NEXT();
    L_kISub:
      if (__builtin_sub_overflow(S[o->a].i, S[o->b].i, &S[o->d].i)) {
        return fail(o, "integer overflow");
      }
      NEXT();
    L_kIMul:
      if (__builtin_mul_overflow(S[o->a].i, S[o->b].i, &S[o->d].i)) {
        return fail(o, "integer overflow");
      }
      NEXT();
    L_kIDiv:
      if (S[o->b].i == 0) return fail(o, "integer division by zero");
      if (S[o->b].i == -1 && S[o->a].i == std::numeric_limits<int64_t>::min()) {
        return fail(o, "integer overflow");
      }
      S[o->d].i = S[o->a].i / S[o->b].i;
      NEXT();
    L_kIMin:
      S[o->d].i = std::min(S[o->a].i, S[o->b].i);
      NEXT();
    L_kIMax:
      S[o->d].i = std::max(S[o->a].i, S[o->b].i);
      NEXT();
    L_kILt:
      S[o->d].i = S[o->a].i < S[o->b].i;
      NEXT();
    L_kILe:
      S[o->d].i = S[o->a].i <= S[o->b].i;
      NEXT();
    L_kIGt:
      S[o->d].i = S[o->a].i > S[o->b].i;
      NEXT();
    L_kIGe:
      S[o->d].i = S[o->a].i >= S[o->b].i;
      NEXT();
    L_kIEq:
      S[o->d].i = S[o->a].i == S[o->b].i;
      NEXT();
    L_kINe:
      S[o->d].i = S[o->a].i != S[o->b].i;
      NEXT();
    L_kINeg:
      if (S[o->a].i == std::numeric_limits<int64_t>::min()) return fail(o, "integer overflow");
      S[o->d].i = -S[o->a].i;
      NEXT();
    L_kFAdd:
      S[o->d].f = S[o->a].f + S[o->b].f;
      NEXT();
    L_kFSub:
      S[o->d].f = S[o->a].f - S[o->b].f;
      NEXT();
    L_kFMul:
      S[o->d].f = S[o->a].f * S[o->b].f;
      NEXT();
    L_kFDiv:
      S[o->d].f = S[o->a].f / S[o->b].f;
      NEXT();
    L_kFMin:
      S[o->d].f = std::min(S[o->a].f, S[o->b].f);
      NEXT();
    L_kFMax:
      S[o->d].f = std::max(S[o->a].f, S[o->b].f);
      NEXT();
    L_kFLt:
      S[o->d].i = S[o->a].f < S[o->b].f;
      NEXT();
    L_kFLe:
      S[o->d].i = S[o->a].f <= S[o->b].f;
      NEXT();
    L_kFGt:
      S[o->d].i = S[o->a].f > S[o->b].f;
      NEXT();
    L_kFGe:
      S[o->d].i = S[o->a].f >= S[o->b].f;
      NEXT();
    L_kFEq:
      S[o->d].i = S[o->a].f == S[o->b].f;
      NEXT();
    L_kFNe:
      S[o->d].i = S[o->a].f != S[o->b].f;
      NEXT();
    L_kFUn:
      S[o->d].f = ApplyUn(o->fn, S[o->a].f);
      NEXT();
    L_kIToF:
      S[o->d].f = static_cast<float>(S[o->a].i);
      NEXT();
    L_kBAnd:
      S[o->d].i = S[o->a].i && S[o->b].i;
      NEXT();
    L_kBOr:
      S[o->d].i = S[o->a].i || S[o->b].i;
      NEXT();
    L_kBNot:
      S[o->d].i = !S[o->a].i;
      NEXT();
    L_kFClip:
      S[o->d].f = std::min(std::max(S[o->a].f, S[o->b].f), S[o->c].f);
      NEXT();
    L_kSMove:
      S[o->d] = S[o->a];
      NEXT();
    L_kVMove:
      if (V[o->d] != V[o->a]) o->k.copy(V[o->d], V[o->a], o->n);
      NEXT();
    L_kVZero:
      std::memset(V[o->d], 0, sizeof(float) * o->n);
      NEXT();
    L_kVLin:
      o->k.lin(V[o->d], terms + o->t, S, V, nullptr, o->n);
      NEXT();
    L_kVBin : {
      float* d = V[o->d];
      const float *a = V[o->a], *b = V[o->b];
      uint8_t fn = o->fn;
      VecMap(d, o->n, [&](int64_t k) { return ApplyBin(fn, a[k], b[k]); });
      NEXT();
    }
    L_kVBinVS : {
      float* d = V[o->d];
      const float* a = V[o->a];
      float b = S[o->b].f;
      uint8_t fn = o->fn;
      VecMap(d, o->n, [&](int64_t k) { return ApplyBin(fn, a[k], b); });
      NEXT();
    }
    L_kVBinSV : {
      float* d = V[o->d];
      float a = S[o->a].f;
      const float* b = V[o->b];
      uint8_t fn = o->fn;
      VecMap(d, o->n, [&](int64_t k) { return ApplyBin(fn, a, b[k]); });
      NEXT();
    }
    L_kVUn : {
      float* d = V[o->d];
      const float* a = V[o->a];
      uint8_t fn = o->fn;
      VecMap(d, o->n, [&](int64_t k) { return ApplyUn(fn, a[k]); });
      NEXT();
    }
    L_kVClip : {
      float* d = V[o->d];
      const float* a = V[o->a];
      float lo = S[o->b].f, hi = S[o->c].f;
      VecMap(d, o->n, [&](int64_t k) { return std::min(std::max(a[k], lo), hi); });
      NEXT();
    }
    L_kDot:
      S[o->d].f = o->k.dot(V[o->a], V[o->b], o->n);
      NEXT();
    L_kDotOp : {
      float dot = o->k.dot(V[o->a], V[o->b], o->n);
      float x = o->t ? dot : S[o->c].f, y = o->t ? S[o->c].f : dot;
      S[o->d].f = o->fn == kFAdd ? x + y : o->fn == kFSub ? x - y : x * y;
      NEXT();
    }
    L_kSum:
      S[o->d].f = vec::Sum(V[o->a], o->n);
      NEXT();
    L_kNorm:
      S[o->d].f = std::sqrt(o->k.dot(V[o->a], V[o->a], o->n));
      NEXT();
    L_kRdElem1 : {
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i;
      RIGEL_CHECK_ROW(p, i);
      S[o->d].f = p.data[i];
      NEXT();
    }
    L_kRdElem2 : {
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i, j = S[o->b].i;
      RIGEL_CHECK_ROW(p, i);
      if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p.width)) {
        return bad_index(o, j, p.width, "the columns");
      }
      S[o->d].f = p.data[i * p.width + j];
      NEXT();
    }
    L_kRdRowView:
    L_kRdRowCopy : {
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i;
      RIGEL_CHECK_ROW(p, i);
      float* row = p.data + i * p.width;
      if (o->code == kRdRowView) {
        V[o->d] = row;
      } else {
        o->k.copy(V[o->d], row, o->n);
      }
      NEXT();
    }
    L_kRdRowView2 : {
      const ParamBinding& p1 = P[o->aux];
      const ParamBinding& p2 = P[o->t];
      int64_t i = S[o->a].i, j = S[o->c].i;
      RIGEL_CHECK_ROW(p1, i);
      if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p2.rows)) {
        VOp second = *o;  // report against the second read's own location
        second.aux = o->t;
        second.loc = o->n;
        return bad_index(&second, j, p2.rows, "the rows");
      }
      V[o->d] = p1.data + i * p1.width;
      V[o->b] = p2.data + j * p2.width;
      NEXT();
    }
    L_kRdWholeView:
      V[o->d] = P[o->aux].data;
      NEXT();
    L_kRdWholeCopy:
      o->k.copy(V[o->d], P[o->aux].data, o->n);
      NEXT();
    L_kWrElem1:
    L_kWrElem2 : {
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i;
      RIGEL_CHECK_ROW(p, i);
      int64_t off = i;
      if (o->code == kWrElem2) {
        int64_t j = S[o->b].i;
        if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p.width)) {
          return bad_index(o, j, p.width, "the columns");
        }
        off = i * p.width + j;
      }
      p.data[off] = ApplyBin(o->fn, p.data[off], S[o->c].f);
      NEXT();
    }
    L_kWrRowLin : {
      // The hot case of every SGD update: one fused pass into the row.
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i;
      RIGEL_CHECK_ROW(p, i);
      float* dst = p.data + i * p.width;
      o->k.lin(dst, terms + o->t, S, V, dst, p.width);
      NEXT();
    }
    L_kWrRowPair : {
      const ParamBinding& p1 = P[o->aux];
      const ParamBinding& p2 = P[o->d];
      int64_t i = S[o->a].i, j = S[o->b].i;
      RIGEL_CHECK_ROW(p1, i);
      if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p2.rows)) {
        // Sequentially the first row was written before the second
        // write failed: do that write (the second lands in scratch).
        std::vector<float> scratch(p1.width, 0.0f);
        o->k.pair(p1.data + i * p1.width, scratch.data(), terms + o->t, S, V, p1.width);
        VOp second = *o;  // report against the second write's own location
        second.aux = o->d;
        second.loc = o->n;
        return bad_index(&second, j, p2.rows, "the rows");
      }
      o->k.pair(p1.data + i * p1.width, p2.data + j * p2.width, terms + o->t, S, V, p1.width);
      NEXT();
    }
    L_kWrRowVec:
    L_kWrRowScalar:
    L_kWrWholeVec:
    L_kWrWholeScalar:
    L_kWrWholeLin : {
      const ParamBinding& p = P[o->aux];
      float* dst = p.data;
      int64_t n = p.rows;
      if (o->code == kWrRowVec || o->code == kWrRowScalar || o->code == kWrRowLin) {
        int64_t i = S[o->a].i;
        RIGEL_CHECK_ROW(p, i);
        dst = p.data + i * p.width;
        n = p.width;
      }
      uint8_t fn = o->fn;
      if (o->code == kWrRowLin || o->code == kWrWholeLin) {
        o->k.lin(dst, terms + o->t, S, V, dst, n);
      } else if (o->code == kWrRowVec || o->code == kWrWholeVec) {
        const float* s = V[o->c];
        VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s[k]); });
      } else {
        float s = S[o->c].f;
        VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s); });
      }
      NEXT();
    }
    L_kAccum:
      acc[o->aux] += S[o->a].f;
      NEXT();
    L_kRand:
      S[o->d].f = UnitFloat(HashCoords(ctx.seed ^ kRandSalt, run_key, e, draw++));
      NEXT();
    L_kRandInt : {
      int64_t n = S[o->a].i;
      if (n <= 0) return fail(o, "randint bound must be positive, got " + std::to_string(n));
      S[o->d].i = static_cast<int64_t>(
          UnitDouble(HashCoords(ctx.seed ^ kRandSalt, run_key, e, draw++)) * n);
      NEXT();
    }
    L_kNegative:
      S[o->d].i =
          datas[o->aux]->negatives.Sample(HashCoords(ctx.seed ^ kNegativeSalt, run_key, e, draw++));
      NEXT();
    L_kLabel:
      S[o->d].f = datas[o->aux]->labels[S[o->a].i];
      NEXT();
    L_kRowX : {
      const data::Dataset& d = *datas[o->aux];
      V[o->d] = const_cast<float*>(d.x.data()) + S[o->a].i * d.dim;
      NEXT();
    }
    L_kJump:
      JUMP(o->n);
    L_kJumpIfFalse:
      if (!S[o->a].i) JUMP(o->n);
      NEXT();
    L_kForInit:
      S[o->d].i = S[o->a].i;
      S[o->c].i = S[o->b].i;
      if (S[o->d].i >= S[o->c].i) JUMP(o->n);
      NEXT();
    L_kForNext:
      if (++S[o->d].i < S[o->c].i) JUMP(o->n);
      NEXT();
    L_kFeatInit : {
      const data::Dataset& d = *datas[o->aux];
      int64_t row = S[o->a].i;
      int64_t p = d.feat_offset[row], q = d.feat_offset[row + 1];
      S[o->c].i = p;
      S[o->c + 1].i = q;
      if (p >= q) {
        JUMP(o->n);
      } else {
        S[o->d].i = d.feat_index[p];
        S[o->b].f = d.feat_value[p];
      }
      NEXT();
    }
    L_kFeatNext : {
      const data::Dataset& d = *datas[o->aux];
      int64_t p = ++S[o->c].i;
      if (p < S[o->c + 1].i) {
        S[o->d].i = d.feat_index[p];
        S[o->b].f = d.feat_value[p];
        JUMP(o->n);
      }
      NEXT();
    }
    L_kWinInit : {
      const data::Dataset& d = *datas[o->aux];
      int64_t t = S[o->a].i, r = S[o->b].i;
      if (r < 0) return fail(o, "window radius must not be negative, got " + std::to_string(r));
      // 128-bit bounds: t and r are program values and may be huge.
      int64_t lo = static_cast<int64_t>(std::max<__int128>(0, __int128{t} - r));
      int64_t hi = static_cast<int64_t>(std::min<__int128>(d.count, __int128{t} + r + 1));
      if (lo == t) ++lo;
      S[o->c].i = lo;
      S[o->c + 1].i = hi;
      S[o->c + 2].i = t;
      if (lo >= hi) {
        JUMP(o->n);
      } else {
        S[o->d].i = d.tokens[lo];
      }
      NEXT();
    }
    L_kWinNext : {
      const data::Dataset& d = *datas[o->aux];
      int64_t q = ++S[o->c].i;
      if (q == S[o->c + 2].i) q = ++S[o->c].i;
      if (q < S[o->c + 1].i) {
        S[o->d].i = d.tokens[q];
        JUMP(o->n);
      }
      NEXT();
    }
    L_kKey : {
      const ParamBinding& p = P[o->aux];
      int64_t i = S[o->a].i;
      RIGEL_CHECK_ROW(p, i);
      if (o->b >= 0 && static_cast<uint64_t>(S[o->b].i) >= static_cast<uint64_t>(p.width)) {
        return bad_index(o, S[o->b].i, p.width, "the columns");
      }
      key_out[o->aux].push_back(i);
      NEXT();
    }
    }
  next_element:;
  }
#undef NEXT
#undef JUMP
#undef RIGEL_CHECK_ROW
  return Status::Ok();
}

}  // namespace rigel::kernel
