#include "ir/source.h"

namespace rigel::ir {

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string_view SourceFile::Line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

std::string FormatDiagnostic(const SourceFile& source, Loc loc, const std::string& message) {
  std::string out = source.path() + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
                    ": error: " + message + "\n";
  std::string_view line = source.Line(loc.line);
  if (!line.empty()) {
    out += "  ";
    out += line;
    out += "\n  ";
    // Keep tabs so the caret lines up under tab-indented code.
    for (int i = 1; i < loc.col && static_cast<size_t>(i - 1) < line.size(); ++i) {
      out += line[i - 1] == '\t' ? '\t' : ' ';
    }
    out += "^\n";
  }
  return out;
}

}  // namespace rigel::ir
