// Source files, locations and the error list every frontend stage reports to.
//
// Errors render as "FILE:LINE:COL: error: MESSAGE", then the source line and a
// caret under the column. Lines and columns are 1-based; columns count bytes.
// Not thread-safe: one Diagnostics per compilation.
#ifndef RIGEL_FRONTEND_DIAGNOSTICS_H_
#define RIGEL_FRONTEND_DIAGNOSTICS_H_

#include <string>
#include <string_view>
#include <vector>

namespace rigel::frontend {

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

class Diagnostics {
 public:
  // Errors past `limit` are counted but not kept; Render() says how many.
  explicit Diagnostics(const SourceFile* source, int limit = 20)
      : source_(source), limit_(limit) {}

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

// Formats one diagnostic (used for run-time errors that point at the program).
std::string FormatDiagnostic(const SourceFile& source, Loc loc, const std::string& message);

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_DIAGNOSTICS_H_
