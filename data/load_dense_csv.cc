// dense_csv(path, label, sep, skip_header): one sample per line, all lines with
// the same number of numeric columns; column `label` is the label, the others
// (in order) are the feature vector x.
#include <algorithm>
#include <string>
#include <string_view>

#include "common/file.h"
#include "data/dataset.h"
#include "data/part_load.h"
#include "data/text_scanner.h"

namespace rigel::data {

using internal::NumParse;
using internal::TextScanner;

StatusOr<ParsedPart> ParseDenseCsvPart(std::string_view text, const std::string& path,
                                       const DenseCsvOptions& opts, const PartPlace& place) {
  if (opts.label < 0) {
    return InvalidArgument(path + ": error: label column " + std::to_string(opts.label) +
                           " is negative");
  }
  RIGEL_RETURN_IF_ERROR(internal::CheckSeparator(opts.sep, path));
  TextScanner sc(text, path, opts.sep, place.line_base + 1);
  ParsedPart out;
  Dataset& d = out.data;
  PartFacts& f = out.facts;
  d.kind = f.kind = DataKind::kDenseCsv;
  d.path = path;
  d.origin.header = opts.skip_header;
  f.shape = ShapeOf(text);
  const size_t max_rows = static_cast<size_t>(f.shape.newlines) + 1;
  d.labels.reserve(max_rows);

  const bool blank_sep = TextScanner::IsBlank(opts.sep);
  const std::string sep_text = opts.sep == '\t'  ? std::string("a tab")
                               : opts.sep == ' ' ? std::string("a space")
                                                 : std::string("'") + opts.sep + "'";
  // The header is the file's first non-blank line, which may lie in an
  // earlier part.
  bool header_pending = opts.skip_header && !place.content_before;
  // Fixed by the file's first data line: known when the caller says so,
  // else taken from the part's first (the merge compares the parts').
  int64_t ncols = place.cols;
  int64_t first_line = place.cols_line;  // where ncols was fixed, for messages
  const bool cols_known = ncols >= 0;
  if (cols_known) {
    d.x.reserve(std::min(max_rows * static_cast<size_t>(std::max<int64_t>(ncols - 1, 0)),
                         text.size() / 2 + 1));
  }
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
  d.count = f.count = static_cast<int64_t>(d.labels.size());
  if (d.count > 0) {
    f.cols = ncols;
    f.cols_line = first_line;
  }
  return out;
}

StatusOr<Dataset> ParseDenseCsv(std::string_view text, const std::string& path,
                                const DenseCsvOptions& opts) {
  return LoadInParts(text, path, LoadSpec::Of(opts), 1);
}

StatusOr<Dataset> LoadDenseCsv(const std::string& path, const DenseCsvOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseDenseCsv(text, path, opts);
}

}  // namespace rigel::data
