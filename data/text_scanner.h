// Byte scanner shared by the data loaders (internal to frontend/).
//
// Loaders see a whole file as one string_view and walk it once. The scanner
// keeps only a pointer, the current line number and where that line starts, so
// columns in error messages cost nothing until an error is actually reported.
// Numbers are parsed in place (common short forms by hand, the rest with
// std::from_chars): no per-field copies.
#ifndef RIGEL_DATA_TEXT_SCANNER_H_
#define RIGEL_DATA_TEXT_SCANNER_H_

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#include "common/status.h"

namespace rigel::data::internal {

// Result of parsing one numeric field.
enum class NumParse {
  kOk,
  kBad,       // not a number, or trailing junk before the next delimiter
  kOverflow,  // a well-formed number that does not fit the target type
};

class TextScanner {
 public:
  // `sep` is the field separator of the format ('\0' when fields are only
  // separated by blanks); it ends a token just like a blank does.
  TextScanner(std::string_view text, const std::string& path, char sep = '\0')
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        line_start_(text.data()),
        path_(path),
        sep_(sep) {}

  bool AtEnd() const { return p_ == end_; }
  // The current byte; callers check AtEnd() first.
  char Peek() const { return *p_; }
  const char* pos() const { return p_; }
  void Advance() { ++p_; }
  // Moves back to `p`, which must lie on the current line (fast paths use it
  // to re-read a line with the diagnosing parser).
  void Rewind(const char* p) { p_ = p; }
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
  }
  // Consumes the '\n' the scanner sits on, if any.
  void EndLine() {
    if (p_ != end_) {
      ++p_;
      ++line_;
      line_start_ = p_;
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
    std::string shown(tok.substr(0, kMaxShown));
    if (tok.size() > kMaxShown) shown += "...";
    return "'" + shown + "'";
  }

  // "PATH:LINE:COL: error: MESSAGE" for a position on the current line.
  Status ErrorAt(const char* at, std::string_view message) const {
    std::string m = path_;
    m += ':';
    m += std::to_string(line_);
    m += ':';
    m += std::to_string(at - line_start_ + 1);
    m += ": error: ";
    m += message;
    return InvalidArgument(std::move(m));
  }
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
  int64_t line_ = 1;
  const std::string& path_;
  char sep_;
};

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

}  // namespace rigel::data::internal

#endif  // RIGEL_DATA_TEXT_SCANNER_H_
