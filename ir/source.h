// A program's source text and positions in it: what the IR keeps so that
// run-time errors can point at the line that caused them.
//
// Lines and columns are 1-based; columns count bytes. Value types;
// thread-compatible (SourceFile is immutable after construction).
#ifndef RIGEL_IR_SOURCE_H_
#define RIGEL_IR_SOURCE_H_

#include <string>
#include <string_view>
#include <vector>

namespace rigel::ir {

struct Loc {
  int line = 0;
  int col = 0;
};

// A program's text and name. Owns its text; other stages hold string_views
// into it, so it must outlive them.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  // The text of 1-based `line` without its newline; empty if out of range.
  std::string_view Line(int line) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

// "FILE:LINE:COL: error: MESSAGE", then the source line and a caret under the
// column (compile-time and run-time errors alike).
std::string FormatDiagnostic(const SourceFile& source, Loc loc, const std::string& message);

}  // namespace rigel::ir

#endif  // RIGEL_IR_SOURCE_H_
