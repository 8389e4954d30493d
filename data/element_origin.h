// The file line an element of a data set was read from, for messages about
// one element ("index 7 out of range ..., in oor.csv:3").
//
// Data sets keep no per-element line numbers (they would cost as much memory
// as a column); instead the line is found again when a message needs it: the
// element is traced back through the splits that made its data set
// (DataOrigin) and the file is read once more with the loader's own line
// rules (blank lines and a header hold no element; a tokens position is the
// n-th word kept after min_count). Meant for error paths only.
//
// Thread-safe: pure functions of their arguments and the file.
#ifndef RIGEL_DATA_ELEMENT_ORIGIN_H_
#define RIGEL_DATA_ELEMENT_ORIGIN_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "data/dataset.h"

namespace rigel::data {

struct ElementLine {
  int64_t line = 0;  // 1-based line of data.path
  std::string text;  // that line without its newline, cut to 120 bytes
};

// The line element `e` of `data` was read from. NotFound for data sets not
// read from a file (grid, range); InvalidArgument when e is outside the data
// set; FailedPrecondition when the file no longer holds that element (it
// changed since it was loaded); the file's read errors as they are.
StatusOr<ElementLine> FindElementLine(const Dataset& data, int64_t e);

// "PATH:LINE: note: WHAT element E of data set 'NAME': TEXT\n", or
// "note: WHAT element E of data set 'NAME' (its line is unknown: why)\n"
// when FindElementLine fails; "" for grid and range spaces, whose elements
// are their coordinates. `what` is e.g. "while running".
std::string ElementNote(const Dataset& data, const std::string& name, int64_t e,
                        const std::string& what);

}  // namespace rigel::data

#endif  // RIGEL_DATA_ELEMENT_ORIGIN_H_
