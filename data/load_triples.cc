// triples(path, sep, base, skip_header, extra): one "i SEP j SEP v" entry per
// line, and with extra="ignore" maybe further columns, which are skipped.
#include <algorithm>
#include <string>
#include <string_view>

#include "common/file.h"
#include "data/dataset.h"
#include "data/part_load.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

using internal::NumParse;
using internal::TextScanner;

constexpr const char* kColumnNames[3] = {"column 1 (i)", "column 2 (j)", "column 3 (v)"};
constexpr std::string_view kIndexWhat[2] = {"an index for column 1 (i)",
                                            "an index for column 2 (j)"};

// Describes `sep` the way a user would type it in an error message.
std::string SepName(char sep) {
  if (sep == '\t') return "a tab";
  if (sep == ' ') return "a space";
  return std::string("'") + sep + "'";
}

// Reads an index field; the scanner sits on its first byte.
Status ReadIndex(TextScanner& sc, int column, int64_t base, char sep, int32_t* out) {
  const char* at = sc.pos();
  int64_t raw;
  switch (sc.ParseInt(&raw)) {
    case NumParse::kOk:
      if (internal::ShiftIndex(raw, base, out)) return Status::Ok();
      return internal::IndexError(sc, at, raw, base, kIndexWhat[column]);
    case NumParse::kOverflow:
      return sc.Expected(std::string(kIndexWhat[column]) + " that fits in int32");
    case NumParse::kBad:
    case NumParse::kNotFinite:  // ParseInt never says this
      break;
  }
  // A fractional index is a number, just not an integer; say so precisely.
  if (sc.TokenIsFloat()) return sc.Expected(std::string("an integer for ") + kColumnNames[column]);
  // "0;1;2.5" read with sep=",": the separator is what is wrong.
  if (const char* foreign = sc.ForeignSeparator()) {
    return sc.ExpectedAt(foreign, SepName(sep) + " after " + kColumnNames[column]);
  }
  return sc.Expected(std::string("a number for ") + kColumnNames[column]);
}

// Moves from the end of field `column` to the start of the next one.
Status ReadSeparator(TextScanner& sc, char sep, int column) {
  const char* field_end = sc.pos();
  sc.SkipBlanks();
  if (sc.AtEol()) return sc.Expected(kColumnNames[column + 1]);
  if (TextScanner::IsBlank(sep)) {
    // Blank-separated: the blank run just skipped is the separator.
    if (sc.pos() == field_end) {
      return sc.Expected(SepName(sep) + " after " + kColumnNames[column]);
    }
  } else {
    if (sc.Peek() != sep) return sc.Expected(SepName(sep) + " after " + kColumnNames[column]);
    sc.Advance();
    sc.SkipBlanks();
    if (sc.AtEol()) return sc.Expected(kColumnNames[column + 1]);
  }
  return Status::Ok();
}

// Moves to the '\n' that ends the line (or to the end of the text).
void SkipToEol(TextScanner& sc) {
  while (!sc.AtEol()) sc.Advance();
}

// Reads one entry with blanks allowed anywhere between fields; on failure the
// Status says exactly what is wrong and where. Leaves the scanner at the '\n'.
[[gnu::noinline]] Status SlowLine(TextScanner& sc, const TriplesOptions& opts, int32_t* i,
                                  int32_t* j, float* v) {
  RIGEL_RETURN_IF_ERROR(ReadIndex(sc, 0, opts.base, opts.sep, i));
  RIGEL_RETURN_IF_ERROR(ReadSeparator(sc, opts.sep, 0));
  RIGEL_RETURN_IF_ERROR(ReadIndex(sc, 1, opts.base, opts.sep, j));
  RIGEL_RETURN_IF_ERROR(ReadSeparator(sc, opts.sep, 1));
  if (NumParse r = sc.ParseFloat(v); r != NumParse::kOk) {
    return internal::FloatError(sc, r, kColumnNames[2]);
  }
  sc.SkipBlanks();
  if (sc.AtEol()) return Status::Ok();
  if (!opts.ignore_extra) {
    return sc.Expected(std::string("end of line after ") + kColumnNames[2] +
                       " (a file with more columns needs triples(..., extra=\"ignore\"))");
  }
  // Blank-separated: the blanks just skipped were the separator.
  if (!TextScanner::IsBlank(opts.sep) && sc.Peek() != opts.sep) {
    return sc.Expected(SepName(opts.sep) + " or end of line after " + kColumnNames[2]);
  }
  SkipToEol(sc);
  return Status::Ok();
}

// The common shape "i,j,v\n" (or "\r\n") with nothing around the fields:
// no Status, no diagnostics. False means "not that shape or not valid", and
// the caller re-reads the line with SlowLine.
inline bool FastLine(TextScanner& sc, const TriplesOptions& opts, int32_t* i, int32_t* j,
                     float* v) {
  int64_t ri, rj;
  if (sc.ParseInt(&ri) != NumParse::kOk || sc.AtEnd() || sc.Peek() != opts.sep) return false;
  sc.Advance();
  if (sc.ParseInt(&rj) != NumParse::kOk || sc.AtEnd() || sc.Peek() != opts.sep) return false;
  sc.Advance();
  if (sc.ParseFloat(v) != NumParse::kOk) return false;
  if (opts.ignore_extra && !sc.AtEnd() && sc.Peek() == opts.sep) SkipToEol(sc);
  if (!sc.AtEnd() && sc.Peek() == '\r') sc.Advance();
  return sc.AtEol() && internal::ShiftIndex(ri, opts.base, i) &&
         internal::ShiftIndex(rj, opts.base, j);
}

}  // namespace

StatusOr<ParsedPart> ParseTriplesPart(std::string_view text, const std::string& path,
                                      const TriplesOptions& opts, const PartPlace& place) {
  RIGEL_RETURN_IF_ERROR(internal::CheckSeparator(opts.sep, path));
  TextScanner sc(text, path, opts.sep, place.line_base + 1);
  ParsedPart out;
  Dataset& d = out.data;
  PartFacts& f = out.facts;
  d.kind = f.kind = DataKind::kTriples;
  d.path = path;
  d.origin.header = opts.skip_header;
  f.shape = ShapeOf(text);
  // Every entry ends a line, so the line count bounds the entry count.
  const size_t max_entries = static_cast<size_t>(f.shape.newlines) + 1;
  d.ti.reserve(max_entries);
  d.tj.reserve(max_entries);
  d.tv.reserve(max_entries);

  // The header is the file's first non-blank line, which may lie in an
  // earlier part.
  bool header_pending = opts.skip_header && !place.content_before;
  int32_t max_i = -1, max_j = -1;
  int64_t max_i_line = 0, max_j_line = 0;  // where each was first read
  while (sc.SkipBlankLines()) {
    if (header_pending) {
      header_pending = false;
      sc.SkipLine();
      continue;
    }
    int32_t i, j;
    float v;
    const char* line_start = sc.pos();
    if (!FastLine(sc, opts, &i, &j, &v)) {
      sc.Rewind(line_start);
      RIGEL_RETURN_IF_ERROR(SlowLine(sc, opts, &i, &j, &v));
    }
    if (i > max_i) {
      max_i = i;
      max_i_line = sc.line();
    }
    if (j > max_j) {
      max_j = j;
      max_j_line = sc.line();
    }
    sc.EndLine();
    d.ti.push_back(i);
    d.tj.push_back(j);
    d.tv.push_back(v);
  }
  d.count = f.count = static_cast<int64_t>(d.ti.size());
  f.top_i = internal::TopOf(d.ti, max_i, max_i_line);
  f.top_j = internal::TopOf(d.tj, max_j, max_j_line);
  return out;
}

StatusOr<Dataset> ParseTriples(std::string_view text, const std::string& path,
                               const TriplesOptions& opts) {
  return LoadInParts(text, path, LoadSpec::Of(opts), 1);
}

StatusOr<Dataset> LoadTriples(const std::string& path, const TriplesOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseTriples(text, path, opts);
}

}  // namespace rigel::data
