// dense_csv(path, label, sep, skip_header): one sample per line, all lines with
// the same number of numeric columns; column `label` is the label, the others
// (in order) are the feature vector x.
#include <algorithm>
#include <string>
#include <string_view>

#include "common/file.h"
#include "data/dataset.h"
#include "data/text_scanner.h"

namespace rigel::data {

using internal::NumParse;
using internal::TextScanner;

StatusOr<Dataset> ParseDenseCsv(std::string_view text, const std::string& path,
                                const DenseCsvOptions& opts) {
  if (opts.label < 0) {
    return InvalidArgument(path + ": error: label column " + std::to_string(opts.label) +
                           " is negative");
  }
  TextScanner sc(text, path, opts.sep);
  Dataset d;
  d.kind = DataKind::kDenseCsv;
  d.path = path;
  d.origin.header = opts.skip_header;
  const size_t max_rows = sc.CountByte('\n') + 1;
  d.labels.reserve(max_rows);

  const bool blank_sep = TextScanner::IsBlank(opts.sep);
  const std::string sep_text = opts.sep == '\t'  ? std::string("a tab")
                               : opts.sep == ' ' ? std::string("a space")
                                                 : std::string("'") + opts.sep + "'";
  bool header_pending = opts.skip_header;
  int64_t ncols = -1;      // fixed by the first data line
  int64_t first_line = 0;  // where ncols was fixed, for messages
  while (sc.SkipBlankLines()) {
    if (header_pending) {
      header_pending = false;
      sc.SkipLine();
      continue;
    }
    int64_t col = 0;  // 0-based index of the field being read
    for (;;) {
      float v;
      if (NumParse r = sc.ParseFloat(&v); r != NumParse::kOk) {
        // "1;2;3" read with sep=",": the separator is what is wrong.
        const char* foreign = r == NumParse::kBad ? sc.ForeignSeparator() : nullptr;
        if (foreign != nullptr) return sc.ExpectedAt(foreign, sep_text + " or end of line");
        return internal::FloatError(sc, r, "column " + std::to_string(col + 1));
      }
      if (col == opts.label) {
        d.labels.push_back(v);
      } else {
        d.x.push_back(v);
      }
      ++col;
      const char* field_end = sc.pos();
      sc.SkipBlanks();
      if (sc.AtEol()) break;
      if (col == ncols) {
        return sc.Expected("end of line (" + std::to_string(ncols) + " columns, as on line " +
                           std::to_string(first_line) + ")");
      }
      if (!blank_sep) {
        if (sc.Peek() != opts.sep) return sc.Expected(sep_text + " or end of line");
        sc.Advance();
        sc.SkipBlanks();
        if (sc.AtEol()) return sc.Expected("a number for column " + std::to_string(col + 1));
      } else if (sc.pos() == field_end) {
        return sc.Expected(sep_text + " or end of line");
      }
    }
    if (ncols < 0) {
      ncols = col;
      first_line = sc.line();
      if (opts.label >= ncols) {
        return sc.ExpectedAt(sc.pos(), "column " + std::to_string(opts.label + 1) + " (the label)");
      }
      // Every value takes at least two bytes (digit and delimiter), which
      // bounds the reserve where blank lines inflate max_rows: a wide first
      // line over many blank ones would otherwise reserve rows x columns.
      d.x.reserve(std::min(max_rows * static_cast<size_t>(ncols - 1), text.size() / 2 + 1));
    } else if (col < ncols) {
      return sc.Expected("column " + std::to_string(col + 1) + " of " + std::to_string(ncols) +
                         " (as on line " + std::to_string(first_line) + ")");
    }
    sc.EndLine();
  }
  if (d.labels.empty()) return sc.EmptyFileError();
  d.count = static_cast<int64_t>(d.labels.size());
  d.dim = ncols - 1;
  return d;
}

StatusOr<Dataset> LoadDenseCsv(const std::string& path, const DenseCsvOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseDenseCsv(text, path, opts);
}

}  // namespace rigel::data
