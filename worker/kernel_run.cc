// The bytecode interpreter. One switch dispatch per instruction; vector
// instructions do a whole row per dispatch, which is what keeps the
// interpreter within a small factor of hand-written loops.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/hash.h"
#include "frontend/param_init.h"
#include "worker/kernel_impl.h"
#include "worker/vec_ops.h"

namespace rigel::worker {

namespace ir = frontend::ir;
using frontend::DataKind;
using frontend::Dataset;

namespace {

// Keeps rand(), randint() and negative() streams apart for equal coordinates.
constexpr uint64_t kRandSalt = 0x72616e64;      // "rand"
constexpr uint64_t kNegativeSalt = 0x6e656773;  // "negs"

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float Log1pExp(float x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

inline float ApplyUn(uint8_t fn, float x) {
  switch (fn) {
    case ir::kNeg: return -x;
    case ir::kSqrt: return std::sqrt(x);
    case ir::kExp: return std::exp(x);
    case ir::kLog: return std::log(x);
    case ir::kAbs: return std::fabs(x);
    case ir::kTanh: return std::tanh(x);
    case ir::kSigmoid: return Sigmoid(x);
    case ir::kLog1pExp: return Log1pExp(x);
    default: return x;
  }
}

inline float ApplyBin(uint8_t fn, float x, float y) {
  switch (fn) {
    case ir::kAdd: return x + y;
    case ir::kSub: return x - y;
    case ir::kMul: return x * y;
    case ir::kDiv: return x / y;
    case ir::kMin: return std::min(x, y);
    case ir::kMax: return std::max(x, y);
    default: return y;  // kPlainAssign
  }
}

template <typename N, typename F>
__attribute__((always_inline)) inline void VecMap(float* d, N n, F f) {
#pragma GCC ivdep
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) d[k] = f(k);
}

// Out of line on purpose: inlining the width-specialised bodies into the
// interpreter loop makes the compiler spill its hot registers.
__attribute__((noinline)) void LinCombine(float* d, const Term* t, int count, const Slot* S,
                                          float* const* V, float* self, int64_t n) {
  const float* src[4];
  float c[4];
  int head = count < 4 ? count : 4;
  for (int i = 0; i < head; ++i) {
    src[i] = t[i].src < 0 ? self : V[t[i].src];
    c[i] = S[t[i].coef].f;
  }
  vec::Sized(n, [&](auto w) {
    switch (head) {
      case 1: return vec::Lin1(d, c[0], src[0], w);
      case 2: return vec::Lin2(d, c[0], src[0], c[1], src[1], w);
      case 3: return vec::Lin3(d, c[0], src[0], c[1], src[1], c[2], src[2], w);
      default: return vec::Lin4(d, c[0], src[0], c[1], src[1], c[2], src[2], c[3], src[3], w);
    }
  });
  // Rare wide combinations: the first four above, the rest added here.
  for (int i = 4; i < count; ++i) {
    float ci = S[t[i].coef].f;
    const float* si = t[i].src < 0 ? self : V[t[i].src];
    VecMap(d, n, [&](int64_t k) { return d[k] + ci * si[k]; });
  }
}

__attribute__((noinline)) float DotSized(const float* a, const float* b, int64_t n) {
  float r = 0;
  vec::Sized(n, [&](auto w) { r = vec::Dot(a, b, w); });
  return r;
}

__attribute__((noinline)) void CopySized(float* d, const float* s, int64_t n) {
  vec::Sized(n, [&](auto w) { VecMap(d, w, [&](int64_t k) { return s[k]; }); });
}

}  // namespace

Status Kernel::Run(const RunContext& ctx, int64_t begin, int64_t end) const {
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
    if (ov.is_int) {
      S[slot].i = ov.i;
    } else {
      S[slot].f = static_cast<float>(ov.f);
    }
  }
  const ParamBinding* P = ctx.params->data();
  const auto& datas = *ctx.data;
  const Dataset& data = *datas[K.data];
  const VOp* code = K.code.data();
  const Term* terms = K.terms.data();
  const int* vars = K.var_slots.data();
  const uint64_t run_key = (static_cast<uint64_t>(K.loop) << 32) | ctx.launch;
  double* acc = ctx.accums;

  auto fail = [&](const VOp& o, const std::string& msg) {
    frontend::Loc loc = o.loc >= 0 ? K.locs[o.loc] : frontend::Loc{};
    return OutOfRange(frontend::FormatDiagnostic(*K.prog->source, loc, msg));
  };
  auto bad_index = [&](const VOp& o, int64_t idx, int64_t limit, const char* what) {
    return fail(o, "index " + std::to_string(idx) + " out of range for " + what + " of '" +
                       K.prog->params[o.aux].name + "' (" + std::to_string(limit) + ")");
  };

  for (int64_t e = begin; e < end; ++e) {
    switch (K.kind) {
      case DataKind::kTriples:
        S[vars[0]].i = data.ti[e];
        S[vars[1]].i = data.tj[e];
        S[vars[2]].f = data.tv[e];
        break;
      case DataKind::kLibsvm:
      case DataKind::kDenseCsv:
        S[vars[0]].i = e;
        S[vars[1]].i = e;
        break;
      case DataKind::kTokens:
        S[vars[0]].i = e;
        S[vars[1]].i = data.tokens[e];
        break;
      case DataKind::kGrid:
        S[vars[0]].i = e / data.cols;
        S[vars[1]].i = e % data.cols;
        break;
      case DataKind::kRange:
        S[vars[0]].i = e;
        break;
    }
    uint64_t draw = 0;
    for (const VOp* pc = code;; ++pc) {
      const VOp& o = *pc;
      switch (o.code) {
        case kEnd: goto next_element;
        case kIAdd: S[o.d].i = S[o.a].i + S[o.b].i; break;
        case kISub: S[o.d].i = S[o.a].i - S[o.b].i; break;
        case kIMul: S[o.d].i = S[o.a].i * S[o.b].i; break;
        case kIDiv:
          if (S[o.b].i == 0) return fail(o, "integer division by zero");
          S[o.d].i = S[o.a].i / S[o.b].i;
          break;
        case kIMin: S[o.d].i = std::min(S[o.a].i, S[o.b].i); break;
        case kIMax: S[o.d].i = std::max(S[o.a].i, S[o.b].i); break;
        case kILt: S[o.d].i = S[o.a].i < S[o.b].i; break;
        case kILe: S[o.d].i = S[o.a].i <= S[o.b].i; break;
        case kIGt: S[o.d].i = S[o.a].i > S[o.b].i; break;
        case kIGe: S[o.d].i = S[o.a].i >= S[o.b].i; break;
        case kIEq: S[o.d].i = S[o.a].i == S[o.b].i; break;
        case kINe: S[o.d].i = S[o.a].i != S[o.b].i; break;
        case kINeg: S[o.d].i = -S[o.a].i; break;
        case kFAdd: S[o.d].f = S[o.a].f + S[o.b].f; break;
        case kFSub: S[o.d].f = S[o.a].f - S[o.b].f; break;
        case kFMul: S[o.d].f = S[o.a].f * S[o.b].f; break;
        case kFDiv: S[o.d].f = S[o.a].f / S[o.b].f; break;
        case kFMin: S[o.d].f = std::min(S[o.a].f, S[o.b].f); break;
        case kFMax: S[o.d].f = std::max(S[o.a].f, S[o.b].f); break;
        case kFLt: S[o.d].i = S[o.a].f < S[o.b].f; break;
        case kFLe: S[o.d].i = S[o.a].f <= S[o.b].f; break;
        case kFGt: S[o.d].i = S[o.a].f > S[o.b].f; break;
        case kFGe: S[o.d].i = S[o.a].f >= S[o.b].f; break;
        case kFEq: S[o.d].i = S[o.a].f == S[o.b].f; break;
        case kFNe: S[o.d].i = S[o.a].f != S[o.b].f; break;
        case kFUn: S[o.d].f = ApplyUn(o.fn, S[o.a].f); break;
        case kIToF: S[o.d].f = static_cast<float>(S[o.a].i); break;
        case kBAnd: S[o.d].i = S[o.a].i && S[o.b].i; break;
        case kBOr: S[o.d].i = S[o.a].i || S[o.b].i; break;
        case kBNot: S[o.d].i = !S[o.a].i; break;
        case kFClip: S[o.d].f = std::min(std::max(S[o.a].f, S[o.b].f), S[o.c].f); break;
        case kSMove: S[o.d] = S[o.a]; break;
        case kVMove:
          if (V[o.d] != V[o.a]) std::memcpy(V[o.d], V[o.a], sizeof(float) * o.n);
          break;
        case kVZero: std::memset(V[o.d], 0, sizeof(float) * o.n); break;
        case kVLin: LinCombine(V[o.d], terms + o.t, o.c, S, V, nullptr, o.n); break;
        case kVBin: {
          float* d = V[o.d];
          const float *a = V[o.a], *b = V[o.b];
          uint8_t fn = o.fn;
          VecMap(d, o.n, [&](int64_t k) { return ApplyBin(fn, a[k], b[k]); });
          break;
        }
        case kVBinVS: {
          float* d = V[o.d];
          const float* a = V[o.a];
          float b = S[o.b].f;
          uint8_t fn = o.fn;
          VecMap(d, o.n, [&](int64_t k) { return ApplyBin(fn, a[k], b); });
          break;
        }
        case kVBinSV: {
          float* d = V[o.d];
          float a = S[o.a].f;
          const float* b = V[o.b];
          uint8_t fn = o.fn;
          VecMap(d, o.n, [&](int64_t k) { return ApplyBin(fn, a, b[k]); });
          break;
        }
        case kVUn: {
          float* d = V[o.d];
          const float* a = V[o.a];
          uint8_t fn = o.fn;
          VecMap(d, o.n, [&](int64_t k) { return ApplyUn(fn, a[k]); });
          break;
        }
        case kVClip: {
          float* d = V[o.d];
          const float* a = V[o.a];
          float lo = S[o.b].f, hi = S[o.c].f;
          VecMap(d, o.n, [&](int64_t k) { return std::min(std::max(a[k], lo), hi); });
          break;
        }
        case kDot: S[o.d].f = DotSized(V[o.a], V[o.b], o.n); break;
        case kSum: S[o.d].f = vec::Sum(V[o.a], o.n); break;
        case kNorm: S[o.d].f = std::sqrt(vec::Dot(V[o.a], V[o.a], o.n)); break;
        case kRdElem1: {
          const ParamBinding& p = P[o.aux];
          int64_t i = S[o.a].i;
          if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(p.rows)) {
            return bad_index(o, i, p.rows, "the rows");
          }
          S[o.d].f = p.data[i];
          break;
        }
        case kRdElem2: {
          const ParamBinding& p = P[o.aux];
          int64_t i = S[o.a].i, j = S[o.b].i;
          if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(p.rows)) {
            return bad_index(o, i, p.rows, "the rows");
          }
          if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p.width)) {
            return bad_index(o, j, p.width, "the columns");
          }
          S[o.d].f = p.data[i * p.width + j];
          break;
        }
        case kRdRowView:
        case kRdRowCopy: {
          const ParamBinding& p = P[o.aux];
          int64_t i = S[o.a].i;
          if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(p.rows)) {
            return bad_index(o, i, p.rows, "the rows");
          }
          float* row = p.data + i * p.width;
          if (o.code == kRdRowView) {
            V[o.d] = row;
          } else {
            CopySized(V[o.d], row, o.n);
          }
          break;
        }
        case kRdWholeView: V[o.d] = P[o.aux].data; break;
        case kRdWholeCopy: std::memcpy(V[o.d], P[o.aux].data, sizeof(float) * o.n); break;
        case kWrElem1:
        case kWrElem2: {
          const ParamBinding& p = P[o.aux];
          int64_t i = S[o.a].i;
          if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(p.rows)) {
            return bad_index(o, i, p.rows, "the rows");
          }
          int64_t off = i;
          if (o.code == kWrElem2) {
            int64_t j = S[o.b].i;
            if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(p.width)) {
              return bad_index(o, j, p.width, "the columns");
            }
            off = i * p.width + j;
          }
          p.data[off] = ApplyBin(o.fn, p.data[off], S[o.c].f);
          break;
        }
        case kWrRowVec:
        case kWrRowScalar:
        case kWrRowLin:
        case kWrWholeVec:
        case kWrWholeScalar:
        case kWrWholeLin: {
          const ParamBinding& p = P[o.aux];
          float* dst = p.data;
          int64_t n = p.rows;
          if (o.code == kWrRowVec || o.code == kWrRowScalar || o.code == kWrRowLin) {
            int64_t i = S[o.a].i;
            if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(p.rows)) {
              return bad_index(o, i, p.rows, "the rows");
            }
            dst = p.data + i * p.width;
            n = p.width;
          }
          uint8_t fn = o.fn;
          if (o.code == kWrRowLin || o.code == kWrWholeLin) {
            LinCombine(dst, terms + o.t, o.c, S, V, dst, n);
          } else if (o.code == kWrRowVec || o.code == kWrWholeVec) {
            const float* s = V[o.c];
            VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s[k]); });
          } else {
            float s = S[o.c].f;
            VecMap(dst, n, [&](int64_t k) { return ApplyBin(fn, dst[k], s); });
          }
          break;
        }
        case kAccum: acc[o.aux] += S[o.a].f; break;
        case kRand:
          S[o.d].f = UnitFloat(HashCoords(ctx.seed ^ kRandSalt, run_key, e, draw++));
          break;
        case kRandInt: {
          int64_t n = S[o.a].i;
          if (n <= 0) return fail(o, "randint bound must be positive, got " + std::to_string(n));
          S[o.d].i = static_cast<int64_t>(
              UnitDouble(HashCoords(ctx.seed ^ kRandSalt, run_key, e, draw++)) * n);
          break;
        }
        case kNegative:
          S[o.d].i = datas[o.aux]->negatives.Sample(
              HashCoords(ctx.seed ^ kNegativeSalt, run_key, e, draw++));
          break;
        case kLabel: S[o.d].f = datas[o.aux]->labels[S[o.a].i]; break;
        case kRowX: {
          const Dataset& d = *datas[o.aux];
          V[o.d] = const_cast<float*>(d.x.data()) + S[o.a].i * d.dim;
          break;
        }
        case kJump: pc = code + o.n - 1; break;
        case kJumpIfFalse:
          if (!S[o.a].i) pc = code + o.n - 1;
          break;
        case kForInit:
          S[o.d].i = S[o.a].i;
          S[o.c].i = S[o.b].i;
          if (S[o.d].i >= S[o.c].i) pc = code + o.n - 1;
          break;
        case kForNext:
          if (++S[o.d].i < S[o.c].i) pc = code + o.n - 1;
          break;
        case kFeatInit: {
          const Dataset& d = *datas[o.aux];
          int64_t row = S[o.a].i;
          int64_t p = d.feat_offset[row], q = d.feat_offset[row + 1];
          S[o.c].i = p;
          S[o.c + 1].i = q;
          if (p >= q) {
            pc = code + o.n - 1;
          } else {
            S[o.d].i = d.feat_index[p];
            S[o.b].f = d.feat_value[p];
          }
          break;
        }
        case kFeatNext: {
          const Dataset& d = *datas[o.aux];
          int64_t p = ++S[o.c].i;
          if (p < S[o.c + 1].i) {
            S[o.d].i = d.feat_index[p];
            S[o.b].f = d.feat_value[p];
            pc = code + o.n - 1;
          }
          break;
        }
        case kWinInit: {
          const Dataset& d = *datas[o.aux];
          int64_t t = S[o.a].i, r = S[o.b].i;
          if (r < 0) return fail(o, "window radius must not be negative, got " + std::to_string(r));
          int64_t lo = std::max<int64_t>(0, t - r), hi = std::min<int64_t>(d.count, t + r + 1);
          if (lo == t) ++lo;
          S[o.c].i = lo;
          S[o.c + 1].i = hi;
          S[o.c + 2].i = t;
          if (lo >= hi) {
            pc = code + o.n - 1;
          } else {
            S[o.d].i = d.tokens[lo];
          }
          break;
        }
        case kWinNext: {
          const Dataset& d = *datas[o.aux];
          int64_t q = ++S[o.c].i;
          if (q == S[o.c + 2].i) q = ++S[o.c].i;
          if (q < S[o.c + 1].i) {
            S[o.d].i = d.tokens[q];
            pc = code + o.n - 1;
          }
          break;
        }
        default:
          return Internal("unknown bytecode " + std::to_string(o.code));
      }
    }
  next_element:;
  }
  return Status::Ok();
}

}  // namespace rigel::worker
