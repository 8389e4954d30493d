// Initial parameter values: a pure function of (initialiser, seed, row,
// column), so a row has the same start on any worker or server and in any
// run. Thread-safe.
//
//   zeros()                      0
//   fill(c)                      c
//   normal(mean, std, seed=S)    mean + std * N(0,1), N from Box-Muller over
//                                HashCoords(S, 1, row, col) and HashCoords(S, 2, row, col)
//   uniform(lo, hi, seed=S)      lo + (hi - lo) * UnitDouble(HashCoords(S, 3, row, col))
//   randint(n, seed=S)           floor(n * UnitDouble(HashCoords(S, 4, row, col))) (i32)
//   file (--init-params)         the value stored for (row, col) in the file
// `col` is 0 for 1-D parameters. Computed in double, rounded to f32.
//
// A parameter read from a file needs OpenInitialValues first in each
// process: it maps the file once (common/mapped_file.h) and keeps it mapped
// until the process ends, so that rows are read in place as they are made.
#ifndef RIGEL_IR_PARAM_INIT_H_
#define RIGEL_IR_PARAM_INIT_H_

#include <cstdint>

#include "common/status.h"
#include "ir/ir.h"

namespace rigel::ir {

float InitialValue(const ir::ParamDecl& p, int64_t row, int64_t col);

// Fills `out` (width floats, or 1 for a 1-D parameter) with row `row`.
void InitialRow(const ir::ParamDecl& p, int64_t row, float* out);

// For a parameter of kind kFile: maps its file in this process unless it is
// already, and checks that it still has file_bytes bytes and holds the rows
// at file_offset. NotFound/IoError when it cannot be read, FailedPrecondition
// naming the file when its size changed. Ok for every other kind.
Status OpenInitialValues(const ir::ParamDecl& p);

}  // namespace rigel::ir

#endif  // RIGEL_IR_PARAM_INIT_H_
