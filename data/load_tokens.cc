// tokens(path, min_count, lines): a corpus of whitespace-separated words, with
// lines=true one document per line.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/part_load.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The words of `text`: the non-space bytes that follow a space or the start.
// Each position independently (a word starts where a space precedes a
// non-space), with '\t' to '\r' as one range, so that the loop vectorises.
size_t CountWords(std::string_view text) {
  if (text.empty()) return 0;
  const auto* u = reinterpret_cast<const unsigned char*>(text.data());
  auto space = [](unsigned char c) -> unsigned { return (c == ' ') | (c - 9u < 5u); };
  size_t n = space(u[0]) ^ 1u;
  for (size_t i = 1; i < text.size(); ++i) n += space(u[i - 1]) & (space(u[i]) ^ 1u);
  return n;
}

}  // namespace

StatusOr<ParsedPart> ParseTokensPart(std::string_view text, const std::string& path,
                                     const TokensOptions& opts, const PartPlace& place) {
  // Words are compared byte for byte and printed back (vocabularies, saved
  // vectors): a binary, compressed or UTF-16 file would tokenise into junk
  // without any other error.
  if (const char* junk = internal::FindNonText(text)) {
    internal::TextScanner sc(text, path, '\0', place.line_base + 1, place.col_base);
    sc.MoveTo(junk);
    return sc.Expected("UTF-8 text");
  }
  ParsedPart out;
  Dataset& d = out.data;
  PartFacts& f = out.facts;
  d.kind = f.kind = DataKind::kTokens;
  d.path = path;
  f.shape = ShapeOf(text);
  // Ids in order of first appearance, so that the merge can break ties in
  // the final (by-count) order by first appearance in the file.
  std::unordered_map<std::string_view, int32_t> first_id;
  std::vector<std::string_view> first_words;
  // Exactly the words: a guess from the text's size (5 to 6 bytes a word in
  // English) would hold a fifth more, or copy the stream as it grows.
  d.tokens.reserve(CountWords(text));
  if (opts.lines) d.token_doc.reserve(d.tokens.capacity());
  const char* p = text.data();
  const char* end = p + text.size();
  const char* middle = p + text.size() / 2;
  f.words_first_half = -1;
  int64_t line = place.line_base;  // 0-based, as Dataset::token_doc
  for (;;) {
    while (p != end && IsSpace(*p)) line += *p++ == '\n';
    if (p == end) break;
    const char* w = p;
    if (w >= middle && f.words_first_half < 0) {
      f.words_first_half = static_cast<int64_t>(first_words.size());
    }
    while (p != end && !IsSpace(*p)) ++p;
    std::string_view word(w, static_cast<size_t>(p - w));
    auto [it, inserted] = first_id.try_emplace(word, static_cast<int32_t>(first_words.size()));
    if (inserted) {
      first_words.push_back(word);
      f.word_counts.push_back(0);
    }
    ++f.word_counts[it->second];
    d.tokens.push_back(it->second);
    if (opts.lines) {
      if (line > INT32_MAX) return InvalidArgument(path + ": error: more than 2^31 lines");
      d.token_doc.push_back(static_cast<int32_t>(line));
    }
  }
  f.words.assign(first_words.begin(), first_words.end());
  if (f.words_first_half < 0) f.words_first_half = static_cast<int64_t>(f.words.size());
  d.lines = opts.lines;
  d.count = f.count = static_cast<int64_t>(d.tokens.size());
  return out;
}

StatusOr<Dataset> ParseTokens(std::string_view text, const std::string& path,
                              const TokensOptions& opts) {
  return LoadInParts(text, path, LoadSpec::Of(opts), 1);
}

StatusOr<Dataset> LoadTokens(const std::string& path, const TokensOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseTokens(text, path, opts);
}

}  // namespace rigel::data
