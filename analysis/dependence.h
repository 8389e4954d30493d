// Dependences between iterations of one `parallel for`.
//
// For each pair of accesses to the same parameter with at least one write
// (an access paired with itself too, across two iterations), the test decides
// exactly, for affine subscripts, whether two distinct iterations x and y of
// the space can touch the same element, and which of their coordinates must
// then agree:
//   - equations: subscript of the first access at x = subscript of the second
//     at y, per subscript position (GCD test over the integers, intsolve.h);
//   - bounds: 0 <= x_d, y_d < extent_d when the extent is a number, and
//     subscripts inside the parameter's rows (and width) when those are;
//   - x != y where the space's points are its iterations (grid, range, the
//     sample or position number of libsvm, dense_csv and tokens): a pair that
//     needs every coordinate equal is an iteration with itself and no
//     dependence. A triples file may list the same (i, j) on several lines
//     (Space::repeats), so there two iterations may share every coordinate:
//     such a pair is a dependence between elements at one point (same_point),
//     never assumed away.
// Subscripts that are not affine (indirect, non-affine) or that differ in a
// driver value constrain nothing: such a pair conflicts for every x, y.
// Parameters the loop relaxes still get their dependences computed (the
// schedule choice ignores them, and uses them to suggest `relax` clauses).
//
// Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_DEPENDENCE_H_
#define RIGEL_ANALYSIS_DEPENDENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/access.h"
#include "ir/ir.h"

namespace rigel::analysis {

// One class of lexicographically positive distances y - x (x runs first).
// Per dimension either a fixed distance (fixed[d] true, dist[d]) or a set of
// signs (sign[d]: "+", "-", "0+", "0-", "+-", "*").
struct Distance {
  int from = -1, to = -1;  // accesses at the earlier / later iteration
  std::vector<bool> fixed;
  std::vector<int64_t> dist;
  std::vector<std::string> sign;
  bool Constant() const;
  std::string ToString() const;  // "(1, 0)", "(0, +)"
};

struct Dependence {
  int param = -1;
  int a = -1, b = -1;    // indices into LoopAccesses::accesses; a <= b
  bool relaxed = false;  // the loop relaxes this parameter
  // The parameter is a sum in this loop (LoopAccesses::reductions): the pair
  // conflicts on paper, but its updates commute, so no schedule must keep it.
  bool reduction = false;
  // Some question could not be decided exactly (overflow, a system too
  // large); the answers below then assume a conflict.
  bool exact = true;
  // No subscript position constrained the pair: any two iterations conflict.
  bool always = false;
  // Only elements with every coordinate equal conflict (repeated triples
  // pairs): needs_equal is true for every dimension, distances is empty.
  bool same_point = false;
  std::string always_why;  // which subscript made it so
  // needs_equal[d]: every conflicting pair has equal coordinate d.
  std::vector<bool> needs_equal;
  // needs_either[d1][d2]: every conflicting pair has equal d1 or equal d2.
  std::vector<std::vector<bool>> needs_either;
  std::vector<Distance> distances;  // lexicographically positive classes
  std::string relation;             // "when i is equal", "distance (1, 0)", ...
  // Whether relaxing the parameter would change what the pair computes, not
  // only when it sees updates (`relax` merges updates as deltas: new value
  // minus the value read):
  //   kOverwrite   one access assigns the element (=) without reading it, so
  //                merged deltas would add assignments together;
  //   kRecurrence  one iteration reads an element another writes at another
  //                place (affine subscripts that differ, at least one
  //                following a loop variable: P[i] read, P[i + 1] written),
  //                a value carried from iteration to iteration.
  // kNone: updates of elements read in place (W[i] read and W[i] updated),
  // shared by iterations that happen to meet (SGD); relaxing only makes
  // reads stale.
  enum Carries : uint8_t { kNone, kOverwrite, kRecurrence };
  Carries carries = kNone;
  std::string carries_why;  // plain words for kOverwrite / kRecurrence
};

// The two accesses of `d` as text: "W[i] (write, 16:5) and W[i] (read,
// 14:24)", or "W[i] (write, 16:5) in two iterations" for an access paired
// with itself.
std::string DescribePair(const ir::Program& prog, const LoopAccesses& acc, const Dependence& d);

// Every dependence of loop `acc.loop`. Pairs that cannot conflict are left
// out; `independent` (optional) receives one line per such pair with the
// reason ("W[0] and W[1] never name the same row"), for reports.
std::vector<Dependence> ComputeDependences(const ir::Program& prog, const LoopAccesses& acc,
                                           std::vector<std::string>* independent = nullptr);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_DEPENDENCE_H_
