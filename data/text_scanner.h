// Byte scanner and checks shared by the data loaders (internal to data/).
//
// Loaders see a whole file as one string_view and walk it once. The scanner
// keeps only a pointer, the current line number and where that line starts, so
// columns in error messages cost nothing until an error is actually reported.
// Numbers are parsed in place (common short forms by hand, the rest with
// std::from_chars): no per-field copies. Error messages show what was found
// with control bytes and bytes that are not UTF-8 escaped as \xNN.
#ifndef RIGEL_DATA_TEXT_SCANNER_H_
#define RIGEL_DATA_TEXT_SCANNER_H_

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"
#include "data/part_load.h"

namespace rigel::data::internal {

// Length of the well-formed UTF-8 sequence at `p` (1 to 4 bytes), or 0 when
// the bytes there are not UTF-8 (RFC 3629: no overlong forms, surrogates or
// code points past U+10FFFF). `p` < `end`.
inline int Utf8Length(const char* p, const char* end) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  const unsigned char c = u[0];
  if (c < 0x80) return 1;
  int n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (end - p < n || u[1] < lo || u[1] > hi) return 0;
  for (int k = 2; k < n; ++k) {
    if ((u[k] & 0xC0) != 0x80) return 0;
  }
  return n;
}

// The first byte of `text` that is a NUL or not part of well-formed UTF-8,
// or nullptr when there is none. Eight ASCII bytes at a time: corpora are
// mostly ASCII, so this costs a small fraction of tokenising them.
inline const char* FindNonText(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  while (p != end) {
    if (end - p >= 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      // No byte with its high bit set and no zero byte: all plain ASCII.
      if (((v | ((v - kOnes) & ~v)) & kHighs) == 0) {
        p += 8;
        continue;
      }
    }
    if (*p == '\0') return p;
    const int n = Utf8Length(p, end);
    if (n == 0) return p;
    p += n;
  }
  return nullptr;
}

// Result of parsing one numeric field.
enum class NumParse {
  kOk,
  kBad,        // not a number, or trailing junk before the next delimiter
  kOverflow,   // a well-formed number that does not fit the target type
  kNotFinite,  // "nan", "inf", "infinity" (any case, any sign)
};

class TextScanner {
 public:
  // `sep` is the field separator of the format ('\0' when fields are only
  // separated by blanks); it ends a token just like a blank does.
  // `first_line` numbers the text's first line: a part of a file that
  // starts after line_base lines (data/part_load.h) says line_base + 1, so
  // that messages name the file's lines; `first_col` bytes of that line lie
  // before the text (a part cut between words).
  TextScanner(std::string_view text, const std::string& path, char sep = '\0',
              int64_t first_line = 1, int64_t first_col = 0)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        line_start_(text.data()),
        col_base_(first_col),
        line_(first_line),
        path_(path),
        sep_(sep) {}

  bool AtEnd() const { return p_ == end_; }
  // The current byte; callers check AtEnd() first.
  char Peek() const { return *p_; }
  const char* pos() const { return p_; }
  const char* end() const { return end_; }
  void Advance() { ++p_; }
  // Moves back to `p`, which must lie on the current line (fast paths use it
  // to re-read a line with the diagnosing parser).
  void Rewind(const char* p) { p_ = p; }
  // Moves forward to `at` (at or after the cursor), counting the lines on the
  // way: for errors about a place the scan has already left (cold paths).
  void MoveTo(const char* at) {
    for (;;) {
      const void* nl = std::memchr(p_, '\n', static_cast<size_t>(at - p_));
      if (nl == nullptr) break;
      p_ = static_cast<const char*>(nl) + 1;
      ++line_;
      line_start_ = p_;
      col_base_ = 0;
    }
    p_ = at;
  }
  int64_t line() const { return line_; }

  // '\r' counts as a blank so that CRLF files need no special casing: it is
  // skipped before the '\n' like trailing spaces are.
  static bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
  bool IsDelim(char c) const { return IsBlank(c) || c == '\n' || c == sep_; }

  void SkipBlanks() {
    while (p_ != end_ && IsBlank(*p_)) ++p_;
  }
  // True at '\n' or at the end of the text (a last line may lack its '\n').
  bool AtEol() const { return p_ == end_ || *p_ == '\n'; }

  // Moves past the next '\n' (or to the end), starting a new line.
  void SkipLine() {
    const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
    if (nl == nullptr) {
      p_ = end_;
      return;
    }
    p_ = static_cast<const char*>(nl) + 1;
    ++line_;
    line_start_ = p_;
    col_base_ = 0;
  }
  // Consumes the '\n' the scanner sits on, if any.
  void EndLine() {
    if (p_ != end_) {
      ++p_;
      ++line_;
      line_start_ = p_;
      col_base_ = 0;
    }
  }
  // Skips lines holding only blanks. Returns false at the end of the text,
  // true when positioned on the first non-blank byte of a line.
  bool SkipBlankLines() {
    for (;;) {
      SkipBlanks();
      if (p_ == end_) return false;
      if (*p_ != '\n') return true;
      EndLine();
    }
  }

  // Parses an integer token ending at a delimiter (or at `extra_delim`,
  // e.g. ':' for libsvm indices). A leading '+' is accepted.
  NumParse ParseInt(int64_t* out, char extra_delim = '\0') {
    const char* s = SkipPlus(p_);
    const char* ptr = ScanInt(s, end_, out);
    std::errc ec = std::errc();
    if (ptr == nullptr) {  // long or malformed: let from_chars decide
      auto r = std::from_chars(s, end_, *out);
      ptr = r.ptr;
      ec = r.ec;
    }
    if (ec == std::errc::invalid_argument) return NumParse::kBad;
    if (ptr != end_ && !IsDelim(*ptr) && *ptr != extra_delim) return NumParse::kBad;
    if (ec == std::errc::result_out_of_range) return NumParse::kOverflow;
    p_ = ptr;
    return NumParse::kOk;
  }

  // Parses a float token ending at a delimiter. A leading '+' is accepted
  // (libsvm labels are often written "+1"), which from_chars does not do.
  NumParse ParseFloat(float* out) {
    const char* s = SkipPlus(p_);
    const char* ptr = ScanSimpleFloat(s, end_, out);
    std::errc ec = std::errc();
    if (ptr == nullptr) {
      auto r = std::from_chars(s, end_, *out);
      ptr = r.ptr;
      ec = r.ec;
    }
    if (ec == std::errc::invalid_argument) return NumParse::kBad;
    if (ptr != end_ && !IsDelim(*ptr)) return NumParse::kBad;
    // Only from_chars yields these (ScanSimpleFloat reads digits only): a NaN
    // or infinity in the data would poison every sum it enters.
    if (ec == std::errc() && !std::isfinite(*out)) return NumParse::kNotFinite;
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports underflow as out of range too; a tiny value is a
      // legitimate input that rounds to zero or a subnormal, a huge one is not.
      std::string tok(s, ptr);
      double d = std::strtod(tok.c_str(), nullptr);
      if (d > 3.4028234663852886e38 || d < -3.4028234663852886e38) return NumParse::kOverflow;
      *out = static_cast<float>(d);
    }
    p_ = ptr;
    return NumParse::kOk;
  }

  // Fast path for the integers data files are made of: an optional '-' and at
  // most 18 digits (so no int64 overflow is possible). Returns the end of the
  // digits, or nullptr to defer to std::from_chars (no digits, or longer).
  static const char* ScanInt(const char* s, const char* end, int64_t* out) {
    const bool neg = s != end && *s == '-';
    if (neg) ++s;
    const char* digits = s;
    uint64_t v = 0;
    while (s != end && static_cast<unsigned char>(*s - '0') < 10) {
      v = v * 10 + static_cast<unsigned char>(*s - '0');
      ++s;
    }
    if (s == digits || s - digits > 18) return nullptr;
    *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return s;
  }

  // Clinger's fast path: "[-]digits[.digits]" whose digits, read as an
  // integer m, satisfy m <= 2^24, with at most 10 decimals. Then m and 10^k
  // are exact floats and one IEEE division gives the correctly rounded
  // result, bit-identical to std::from_chars (libstdc++ 12's float
  // from_chars is several times slower). Anything else (exponents, long
  // mantissas, inf/nan) returns nullptr and goes to from_chars.
  static const char* ScanSimpleFloat(const char* s, const char* end, float* out) {
    static constexpr float kPow10[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                         1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
    const bool neg = s != end && *s == '-';
    if (neg) ++s;
    const char* start = s;
    uint64_t m = 0;
    while (s != end && static_cast<unsigned char>(*s - '0') < 10) {
      m = m * 10 + static_cast<unsigned char>(*s - '0');
      ++s;
    }
    int64_t ndigits = s - start;
    int64_t frac = 0;
    if (s != end && *s == '.') {
      const char* f = ++s;
      while (s != end && static_cast<unsigned char>(*s - '0') < 10) {
        m = m * 10 + static_cast<unsigned char>(*s - '0');
        ++s;
      }
      frac = s - f;
      ndigits += frac;
    }
    if (ndigits == 0 || ndigits > 18 || frac > 10 || m > (uint64_t{1} << 24)) return nullptr;
    if (s != end && (*s == 'e' || *s == 'E')) return nullptr;
    // Integral values ("1" in binary features) skip the division's latency.
    const float v = frac == 0 ? static_cast<float>(m) : static_cast<float>(m) / kPow10[frac];
    *out = neg ? -v : v;
    return s;
  }

  // True if the token at the cursor reads as a float (used only to choose the
  // wording of an error, e.g. "1.5" where an integer index was expected).
  bool TokenIsFloat() const {
    std::string_view tok = TokenAt(p_);
    if (!tok.empty() && tok[0] == '+') tok.remove_prefix(1);
    float f;
    auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), f);
    return ec == std::errc() && ptr == tok.data() + tok.size() && !tok.empty();
  }

  // The token starting at `at`: bytes up to the next delimiter, or the one
  // delimiter byte at `at` (unless that is a line end).
  std::string_view TokenAt(const char* at) const {
    const char* e = at;
    while (e != end_ && !IsDelim(*e)) ++e;
    if (e == at && at != end_ && *at != '\n') ++e;  // a lone separator or blank
    return std::string_view(at, static_cast<size_t>(e - at));
  }

  // How an error message shows what was found at `at`: the token in quotes,
  // or "end of line" where a line (or the file) ends.
  std::string FoundAt(const char* at) const {
    if (at == end_ || *at == '\n' || (*at == '\r' && at + 1 < end_ && at[1] == '\n') ||
        (*at == '\r' && at + 1 == end_)) {
      return "end of line";
    }
    std::string_view tok = TokenAt(at);
    constexpr size_t kMaxShown = 40;
    // Junk bytes (a binary or UTF-16 file) shown raw would garble the
    // terminal and hide what is actually there.
    std::string shown;
    size_t k = 0;
    while (k < tok.size() && k < kMaxShown) {
      const char* c = tok.data() + k;
      const int n = Utf8Length(c, tok.data() + tok.size());
      const auto b = static_cast<unsigned char>(*c);
      if (n > 0 && b >= 0x20 && b != 0x7f) {
        shown.append(c, static_cast<size_t>(n));
        k += static_cast<size_t>(n);
        continue;
      }
      char esc[8];
      std::snprintf(esc, sizeof esc, b == '\t' ? "\\t" : "\\x%02X", b);
      shown += esc;
      ++k;
    }
    if (k < tok.size()) shown += "...";
    return "'" + shown + "'";
  }

  // Where the token at the cursor, a number so far, goes on with ',', ';'
  // or '|' (a file written with another separator than the one in use), or
  // nullptr. Chooses the wording of an error only.
  const char* ForeignSeparator() const {
    std::string_view tok = TokenAt(p_);
    const char* s = SkipPlus(tok.data());
    const char* e = tok.data() + tok.size();
    float f;
    const char* ptr = std::from_chars(s, e, f).ptr;
    if (ptr == s || ptr == e || *ptr == '\0') return nullptr;
    return std::strchr(",;|", *ptr) != nullptr ? ptr : nullptr;
  }

  // "PATH:LINE:COL: error: MESSAGE" for a position on the current line.
  Status ErrorAt(const char* at, std::string_view message) const {
    std::string m = path_;
    m += ':';
    m += std::to_string(line_);
    m += ':';
    m += std::to_string(at - line_start_ + 1 + col_base_);
    m += ": error: ";
    m += message;
    return InvalidArgument(std::move(m));
  }
  // The column of `at`, which lies on the current line (1 for its first byte).
  int64_t ColumnOf(const char* at) const { return at - line_start_ + 1 + col_base_; }

  // "... error: expected WHAT, found 'TOKEN'" for the token at `at`.
  Status ExpectedAt(const char* at, std::string_view what) const {
    // A CRLF line ends where its '\r' is, as an editor shows it.
    if (at != end_ && *at == '\n' && at > line_start_ && at[-1] == '\r') --at;
    std::string m = "expected ";
    m += what;
    m += ", found ";
    m += FoundAt(at);
    return ErrorAt(at, m);
  }
  Status Expected(std::string_view what) const { return ExpectedAt(p_, what); }

  Status EmptyFileError() const { return InvalidArgument(path_ + ": error: empty file"); }

  // Number of occurrences of `c` in the text; loaders use it to size their
  // columns exactly up front (one vectorised pass, far cheaper than regrowth).
  size_t CountByte(char c) const { return static_cast<size_t>(std::count(begin_, end_, c)); }

 private:
  // Skips one leading '+', but not in "+-1", which from_chars would accept.
  const char* SkipPlus(const char* s) const {
    if (s != end_ && *s == '+' && (s + 1 == end_ || s[1] != '-')) return s + 1;
    return s;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  const char* line_start_;
  int64_t col_base_;  // bytes of the current line before line_start_ (see the constructor)
  int64_t line_;
  const std::string& path_;
  char sep_;
};

// A field separator that is a line end would make one entry span lines, and
// the data could no longer be cut into parts at line starts
// (data/part_load.h): refused, whatever the file holds.
inline Status CheckSeparator(char sep, const std::string& path) {
  if (sep == '\n' || sep == '\r') {
    return InvalidArgument(
        path + ": error: the field separator cannot be a line end (one entry per line)");
  }
  return Status::Ok();
}

// Shifts an index read from a file by `base`. False when it is below base or
// does not fit int32 (IndexError then says which).
inline bool ShiftIndex(int64_t raw, int64_t base, int32_t* out) {
  int64_t shifted;
  if (raw < base || __builtin_sub_overflow(raw, base, &shifted) || shifted > INT32_MAX) {
    return false;
  }
  *out = static_cast<int32_t>(shifted);
  return true;
}

// The error for an index ShiftIndex rejected, positioned at `at`; `what`
// names the field ("an index for column 1 (i)").
[[gnu::cold, gnu::noinline]] inline Status IndexError(const TextScanner& sc, const char* at,
                                                      int64_t raw, int64_t base,
                                                      std::string_view what) {
  if (raw < base) {
    return sc.ErrorAt(at,
                      "index " + std::to_string(raw) + " is below base " + std::to_string(base));
  }
  return sc.ExpectedAt(at, std::string(what) + " that fits in int32");
}

// The error for a float field ParseFloat rejected with `r`, at the cursor;
// `what` names the field ("the label", "column 3 (v)").
[[gnu::cold, gnu::noinline]] inline Status FloatError(const TextScanner& sc, NumParse r,
                                                      std::string_view what) {
  const std::string field(what);
  switch (r) {
    case NumParse::kNotFinite:
      return sc.Expected("a finite number for " + field);
    case NumParse::kOverflow:
      return sc.Expected("a number for " + field +
                         " that fits in f32 (at most 3.4e38 in magnitude)");
    default:
      return sc.Expected("a number for " + field);
  }
}

// The largest of `indices` below `max` (-1 when there is none): the "next
// largest" of dataset.h's far-index rule.
inline int32_t NextLargest(const std::vector<int32_t>& indices, int32_t max) {
  int32_t next = -1;
  for (int32_t x : indices) {
    if (x < max && x > next) next = x;
  }
  return next;
}

// A part's IndexTop (data/part_load.h) for `indices`, whose largest is
// `max`, first read on `line`: the next largest is only looked for when
// `max` may be far.
inline IndexTop TopOf(const std::vector<int32_t>& indices, int32_t max, int64_t line) {
  IndexTop t;
  t.max = max;
  t.line = line;
  if (max > kFarIndexMin) t.next = NextLargest(indices, max);
  return t;
}

// dataset.h's "far index" rule for one kind of index: `max` is the largest
// index (after the base shift), first read on line `line`, and `next` the
// next largest distinct one (-1: none); `unit` names what an index counts
// ("feature", "row") and `attr` the attribute it sizes (".dim"). Returns
// "PATH:LINE: warning: ..." with the indices as written in the file, or ""
// when `max` is not far.
[[gnu::cold, gnu::noinline]] inline std::string FarIndexWarning(const std::string& path,
                                                                int32_t max, int32_t next,
                                                                int64_t line, int64_t base,
                                                                std::string_view unit,
                                                                std::string_view attr) {
  if (max <= kFarIndexMin) return "";
  if (max <= kFarIndexRatio * std::max<int64_t>(next, 0)) return "";
  const std::string u(unit);
  char mb[32];
  std::snprintf(mb, sizeof mb, "%.1f", (static_cast<double>(max) + 1) * sizeof(float) / 1e6);
  std::string m = path + ":" + std::to_string(line) + ": warning: " + u + " index " +
                  std::to_string(max + base) + " is far beyond the file's other " + u +
                  " indices (";
  m += next >= 0 ? "the next largest is " + std::to_string(next + base) : "there are none";
  m += "): " + std::string(attr) + " = " + std::to_string(int64_t{max} + 1) + ", so one f32 per " +
       u + " takes " + mb + " MB";
  return m;
}

}  // namespace rigel::data::internal

#endif  // RIGEL_DATA_TEXT_SCANNER_H_
