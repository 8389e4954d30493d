#include "data/element_origin.h"

#include <string_view>
#include <unordered_set>

#include "common/file.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

// Element e of a split part, as an element of the data set that was split.
StatusOr<int64_t> ParentIndex(const DataOrigin::Split& s, DataKind kind, int64_t e) {
  if (kind == DataKind::kTokens) {
    const int64_t cut = s.parent_count - TokensTestCount(s.parent_count, s.test);
    return s.part == 1 ? cut + e : e;
  }
  int64_t seen = 0;
  for (int64_t p = 0; p < s.parent_count; ++p) {
    if (InTestPart(s.seed, p, s.test) != (s.part == 1)) continue;
    if (seen++ == e) return p;
  }
  return FailedPrecondition("element " + std::to_string(e) + " is not in its split part");
}

std::string LineText(std::string_view text, const char* line_start) {
  const char* end = text.data() + text.size();
  const char* p = line_start;
  while (p != end && *p != '\n' && *p != '\r' && p - line_start < 120) ++p;
  return std::string(line_start, p);
}

// Line-per-element formats: the n-th non-blank line after the header.
StatusOr<ElementLine> NthElementLine(std::string_view text, const Dataset& d, int64_t n) {
  internal::TextScanner sc(text, d.path);
  bool header = d.origin.header;
  int64_t k = 0;
  while (sc.SkipBlankLines()) {
    if (header) {
      header = false;
    } else if (k++ == n) {
      // SkipBlankLines stops on the first non-blank byte; the line starts at
      // the byte after the previous '\n'.
      const char* start = sc.pos();
      while (start != text.data() && start[-1] != '\n') --start;
      return ElementLine{sc.line(), LineText(text, start)};
    }
    sc.SkipLine();
  }
  return FailedPrecondition(d.path + " holds fewer than " + std::to_string(n + 1) +
                            " elements now; it changed since it was loaded");
}

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Token position n: the n-th word of the file that is in the vocabulary.
StatusOr<ElementLine> NthTokenLine(std::string_view text, const Dataset& d, int64_t n) {
  std::unordered_set<std::string_view> kept(d.words.begin(), d.words.end());
  const char* p = text.data();
  const char* end = p + text.size();
  const char* line_start = p;
  int64_t line = 1, k = 0;
  for (;;) {
    while (p != end && IsSpace(*p)) {
      if (*p == '\n') {
        ++line;
        line_start = p + 1;
      }
      ++p;
    }
    if (p == end) break;
    const char* w = p;
    while (p != end && !IsSpace(*p)) ++p;
    if (kept.count(std::string_view(w, static_cast<size_t>(p - w))) && k++ == n) {
      return ElementLine{line, LineText(text, line_start)};
    }
  }
  return FailedPrecondition(d.path + " holds fewer than " + std::to_string(n + 1) +
                            " tokens now; it changed since it was loaded");
}

}  // namespace

StatusOr<ElementLine> FindElementLine(const Dataset& data, int64_t e) {
  if (data.kind == DataKind::kGrid || data.kind == DataKind::kRange || data.path.empty()) {
    return NotFound("a " + std::string(DataKindName(data.kind)) + " space has no file");
  }
  if (e < 0 || e >= data.count) {
    return InvalidArgument("element " + std::to_string(e) + " is outside the data set's " +
                           std::to_string(data.count) + " elements");
  }
  int64_t n = e;
  for (auto s = data.origin.splits.rbegin(); s != data.origin.splits.rend(); ++s) {
    RIGEL_ASSIGN_OR_RETURN(n, ParentIndex(*s, data.kind, n));
  }
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(data.path));
  return data.kind == DataKind::kTokens ? NthTokenLine(text, data, n)
                                        : NthElementLine(text, data, n);
}

std::string ElementNote(const Dataset& data, const std::string& name, int64_t e,
                        const std::string& what) {
  if (data.kind == DataKind::kGrid || data.kind == DataKind::kRange) return "";
  const std::string which = what + " element " + std::to_string(e) + " of data set '" + name + "'";
  StatusOr<ElementLine> at = FindElementLine(data, e);
  if (!at.ok()) return "note: " + which + " (its line is unknown: " + at.status().message() + ")\n";
  return data.path + ":" + std::to_string(at->line) + ": note: " + which + ": " + at->text + "\n";
}

}  // namespace rigel::data
