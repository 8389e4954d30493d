// The error list every frontend stage reports to.
//
// Errors render as "FILE:LINE:COL: error: MESSAGE", then the source line and a
// caret under the column. Lines and columns are 1-based; columns count bytes.
// Not thread-safe: one Diagnostics per compilation.
#ifndef RIGEL_FRONTEND_DIAGNOSTICS_H_
#define RIGEL_FRONTEND_DIAGNOSTICS_H_

#include <string>
#include <string_view>
#include <vector>

#include "ir/source.h"

namespace rigel::frontend {

// The frontend reports at positions of the program the IR keeps.
using ir::Loc;
using ir::SourceFile;

class Diagnostics {
 public:
  // Errors past `limit` are counted but not kept; Render() says how many.
  explicit Diagnostics(const SourceFile* source, int limit = 20) : source_(source), limit_(limit) {}

  void Error(Loc loc, std::string message);
  bool has_errors() const { return count_ > 0; }
  int count() const { return count_; }
  // All kept errors in source order, each with its source line and caret.
  std::string Render() const;

 private:
  struct Entry {
    Loc loc;
    std::string message;
    int order;
  };
  const SourceFile* source_;
  int limit_;
  int count_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_DIAGNOSTICS_H_
