// Private to kernel/: how a run walks its elements, shared by the
// interpreter (kernel/run.cc) and compiled bodies (kernel/jit/ops_bitcode.cc,
// whose element loop is compiled with the body).
#ifndef RIGEL_KERNEL_ELEMENTS_H_
#define RIGEL_KERNEL_ELEMENTS_H_

#include <cstdint>

#include "data/dataset.h"
#include "kernel/kernel_impl.h"
#include "kernel/ops.h"

namespace rigel::kernel {

// How many elements ahead a run over a list prefetches a listed element's
// data: enough to cover a memory latency at a few nanoseconds per element.
inline constexpr int64_t kPrefetchAhead = 16;

// A listed block visits the data set out of order: without a prefetch the
// element loads miss the cache for nearly every element, and in a key slice
// (key_slice.h) those misses are most of the time per element.
__attribute__((always_inline)) inline void Prefetch(const data::Dataset& data, data::DataKind kind,
                                                    int64_t e) {
  e = data.Local(e);
  if (e < 0) return;
  if (kind == data::DataKind::kTriples) {
    __builtin_prefetch(&data.ti[e]);
    __builtin_prefetch(&data.tj[e]);
    __builtin_prefetch(&data.tv[e]);
  } else if (kind == data::DataKind::kTokens) {
    __builtin_prefetch(&data.tokens[e]);
  }
}

// Sets the loop variables (slots vars[0..]) to element e's values, which are
// at column position l (Dataset::Local).
__attribute__((always_inline)) inline void BindElement(const data::Dataset& data,
                                                       data::DataKind kind, const int* vars,
                                                       Slot* S, int64_t e, int64_t l) {
  switch (kind) {
    case data::DataKind::kTriples:
      S[vars[0]].i = data.ti[l];
      S[vars[1]].i = data.tj[l];
      S[vars[2]].f = data.tv[l];
      break;
    case data::DataKind::kLibsvm:
    case data::DataKind::kDenseCsv:
      S[vars[0]].i = e;
      S[vars[1]].i = e;
      break;
    case data::DataKind::kTokens:
      S[vars[0]].i = e;
      S[vars[1]].i = data.tokens[l];
      if (data.lines) S[vars[2]].i = data.token_doc[l];
      break;
    case data::DataKind::kGrid:
      S[vars[0]].i = e / data.cols;
      S[vars[1]].i = e % data.cols;
      break;
    case data::DataKind::kRange:
      S[vars[0]].i = e;
      break;
  }
}

// What RunEach returns.
enum RunEnd : int { kRanAll = 0, kElementFaulted = 1, kElementNotHeld = 2 };

// Runs elements list[begin, end) (begin..end without a list) in order:
// binds each one's loop variables (slots vars[...]) and calls body(m), which
// returns 0 or, when an instruction faulted, not 0 with m.fault set. On
// kElementFaulted and kElementNotHeld (an element this process does not hold) m.e is
// the element.
template <typename Body>
__attribute__((always_inline)) inline RunEnd RunEach(ops::Machine& m, const data::Dataset& data,
                                                     data::DataKind kind, const int* vars,
                                                     const int64_t* list, int64_t begin,
                                                     int64_t end, Body body) {
  for (int64_t k = begin; k < end; ++k) {
    const int64_t e = list ? list[k] : k;
    if (list && k + kPrefetchAhead < end) Prefetch(data, kind, list[k + kPrefetchAhead]);
    m.e = e;
    const int64_t l = data.Local(e);
    if (l < 0) [[unlikely]]
      return kElementNotHeld;
    BindElement(data, kind, vars, m.S, e, l);
    m.draw = 0;
    if (body(m) != 0) [[unlikely]]
      return kElementFaulted;
  }
  return kRanAll;
}

}  // namespace rigel::kernel

#endif  // RIGEL_KERNEL_ELEMENTS_H_
