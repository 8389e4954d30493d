// Access analysis: what each `parallel for` body reads and writes.
//
// For every parameter access in a loop body this records whether it reads,
// writes or read-modify-writes, how it touches the parameter (an element, a
// row, the whole parameter) and, for each subscript, what the analysis knows
// about its value:
//  - affine: an integer coefficient per dimension of the iteration space plus
//    a constant (through lets, integer + - * and unary minus, with signs kept),
//    plus loop-invariant driver values (`ep`, `train.count`) kept symbolic;
//  - indirect: depends on data values (a token id, a feature index), a draw of
//    rand()/randint()/negative(), or a variable of an inner loop;
//  - non-affine: computed from the loop variables in a way the analysis does
//    not follow (products of variables, division, min/max, a var that is
//    reassigned).
// Accumulator updates are listed separately: they are reductions, never
// dependences.
//
// Pure functions of the program; thread-safe.
#ifndef RIGEL_ANALYSIS_ACCESS_H_
#define RIGEL_ANALYSIS_ACCESS_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/source.h"

namespace rigel::analysis {

constexpr int kMaxDims = 3;

struct Subscript {
  enum Kind : uint8_t { kAffine, kIndirect, kNonAffine };
  Kind kind = kAffine;
  std::array<int64_t, kMaxDims> coef{};      // kAffine: per space dimension
  int64_t c = 0;                             // kAffine: the constant
  std::vector<std::pair<int, int64_t>> sym;  // kAffine: (driver DExpr id, coefficient), sorted
  std::string text;  // how the subscript reads ("i + 1", "f", "o"), for messages
  std::string why;   // kIndirect / kNonAffine: what its value depends on
  // kIndirect: a feature index of data set `features_of` (a program data
  // set index) as row.features gives it, unchanged; -1 otherwise. Its values
  // are at most that data set's feature entries (analysis/memory.cc bounds
  // the rows a table indexed so can touch by them).
  int features_of = -1;

  // Affine with every coefficient zero and no driver values: a number.
  bool IsConstant() const;
  // Affine with every coefficient zero: the same in every iteration of a run.
  bool IsInvariant() const;
};

enum class AccessKind : uint8_t { kRead, kWrite, kReadModifyWrite };
const char* AccessKindName(AccessKind k);  // "read", "write", "read-modify-write"

struct ParamAccess {
  int param = -1;
  AccessKind kind = AccessKind::kRead;
  ir::Access mode = ir::Access::kElement;
  std::vector<Subscript> subs;  // none (whole), one (row, or 1-D element) or two (2-D element)
  ir::Loc loc;
  bool conditional = false;    // under an `if`
  bool in_inner_loop = false;  // inside a for / row.features / window loop
  int count = 1;               // identical accesses (same kind, mode, subscripts) merged into one
  bool additive = false;       // a read-modify-write by += or -= (a sum's update)
};

struct AccumUpdate {
  int accum = -1;
  ir::Loc loc;
};

// The iteration space of a loop: the loop variables that number its points.
struct Space {
  std::vector<std::string> dims;  // (i, j) for triples and grid; (n) libsvm/dense_csv; (t) tokens,
                                  // (t, d, w) with lines=true; (i) range
  std::vector<int64_t> extent;    // per dim; -1 when it depends on data or driver values
  std::string what;               // "train (triples)", "grid(512, 512)"
  // Two elements may have the same coordinates: a triples file may list an
  // (i, j) pair on several lines (one line per event), so (i, j) names a
  // point of the space, not an iteration. Grid, range, and the sample or
  // position numbers of the other kinds are distinct per element.
  bool repeats = false;
  // A dimension that alone names an element (the position t of a lines
  // corpus, whose other coordinates follow from it): two iterations with
  // the same value there are one. -1: none.
  int key_dim = -1;
};

struct LoopAccesses {
  int loop = -1;
  Space space;
  std::vector<ParamAccess> accesses;  // in body order
  std::vector<AccumUpdate> accums;
  // Row count of each parameter when it is a compile-time number, else -1.
  std::vector<int64_t> param_rows;
  // Per parameter: the loop touches it only with += and -= and never reads
  // it otherwise, so it computes a sum (DSL.md "Analysis"): updates of
  // different iterations commute and never conflict.
  std::vector<bool> reductions;
};

// Analyses loop `loop` of `prog` (a checked program).
LoopAccesses AnalyzeAccesses(const ir::Program& prog, int loop);

// "element", "row" or "whole".
const char* AccessModeName(ir::Access m);

// "W[i + 1, k]", "w" (whole), "emb[w]".
std::string FormatAccess(const ir::Program& prog, const ParamAccess& a);

// An affine subscript as text over `dims` (each suffixed with `suffix`, e.g.
// "'" for the other iteration of a pair): "i + 1", "2 - i'", "ep".
std::string FormatAffine(const ir::Program& prog, const std::vector<std::string>& dims,
                         const Subscript& s, const std::string& suffix);

// Classification word used in reports and plans: "affine", "constant",
// "invariant", "indirect", "non-affine".
const char* SubscriptClass(const Subscript& s);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_ACCESS_H_
