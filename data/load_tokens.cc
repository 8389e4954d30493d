// tokens(path, min_count, lines): a corpus of whitespace-separated words, with
// lines=true one document per line.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

StatusOr<Dataset> ParseTokens(std::string_view text, const std::string& path,
                              const TokensOptions& opts) {
  // Words are compared byte for byte and printed back (vocabularies, saved
  // vectors): a binary, compressed or UTF-16 file would tokenise into junk
  // without any other error.
  if (const char* junk = internal::FindNonText(text)) {
    internal::TextScanner sc(text, path);
    sc.MoveTo(junk);
    return sc.Expected("UTF-8 text");
  }
  // First pass: ids in order of first appearance, so that ties in the final
  // (by-count) order are broken by first appearance with a stable sort.
  std::unordered_map<std::string_view, int32_t> first_id;
  std::vector<std::string_view> first_words;
  std::vector<int64_t> first_counts;
  std::vector<int32_t> stream;
  std::vector<int32_t> stream_doc;      // lines=true: the line of each word
  stream.reserve(text.size() / 5 + 1);  // English averages ~5-6 bytes per word+space
  const char* p = text.data();
  const char* end = p + text.size();
  int64_t line = 0;
  for (;;) {
    while (p != end && IsSpace(*p)) line += *p++ == '\n';
    if (p == end) break;
    const char* w = p;
    while (p != end && !IsSpace(*p)) ++p;
    std::string_view word(w, static_cast<size_t>(p - w));
    auto [it, inserted] = first_id.try_emplace(word, static_cast<int32_t>(first_words.size()));
    if (inserted) {
      first_words.push_back(word);
      first_counts.push_back(0);
    }
    ++first_counts[it->second];
    stream.push_back(it->second);
    if (opts.lines) {
      if (line > INT32_MAX) return InvalidArgument(path + ": error: more than 2^31 lines");
      stream_doc.push_back(static_cast<int32_t>(line));
    }
  }
  if (stream.empty()) return InvalidArgument(path + ": error: empty file");

  std::vector<int32_t> order(first_words.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return first_counts[a] > first_counts[b]; });

  Dataset d;
  d.kind = DataKind::kTokens;
  d.path = path;
  std::vector<int32_t> new_id(first_words.size(), -1);  // -1: rarer than min_count
  for (int32_t old : order) {
    if (first_counts[old] < opts.min_count) break;  // sorted: all later ones are rarer
    new_id[old] = static_cast<int32_t>(d.words.size());
    d.words.emplace_back(first_words[old]);
    d.word_counts.push_back(first_counts[old]);
  }
  if (d.words.empty()) {
    return InvalidArgument(path + ": error: no word occurs at least min_count (" +
                           std::to_string(opts.min_count) + ") times");
  }
  // Rare words leave the stream entirely (as in word2vec), so windows span
  // across them.
  d.tokens.reserve(stream.size());
  for (size_t k = 0; k < stream.size(); ++k) {
    if (new_id[stream[k]] < 0) continue;
    d.tokens.push_back(new_id[stream[k]]);
    if (opts.lines) d.token_doc.push_back(stream_doc[k]);
  }
  if (opts.lines) {
    // Every line is a document, blank ones too, so d is the line number; a
    // last line without '\n' counts when it holds anything.
    d.lines = true;
    d.docs = line + (!text.empty() && text.back() != '\n');
  }
  d.count = static_cast<int64_t>(d.tokens.size());
  d.vocab = static_cast<int64_t>(d.words.size());
  d.negatives = NegativeSampler(d.word_counts);
  return d;
}

StatusOr<Dataset> LoadTokens(const std::string& path, const TokensOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseTokens(text, path, opts);
}

}  // namespace rigel::data
