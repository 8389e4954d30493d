// The parts' places, the merge of their facts and the finishing of a part
// (data/part_load.h). The per-kind parsing lives in load_*.cc.
#include "data/part_load.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/file.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

constexpr const char* kKeepHint = " (labels=\"keep\" reads labels as they are)";

// "1 label", "2 labels".
std::string Labels(int64_t n) { return std::to_string(n) + (n == 1 ? " label" : " labels"); }

// TextScanner::ExpectedAt's message for a point a part recorded.
Status ExpectedAtPoint(const std::string& path, const SourcePoint& at, const std::string& what) {
  return InvalidArgument(path + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) +
                         ": error: expected " + what + ", found " + at.found);
}

Status EmptyFile(const std::string& path) { return InvalidArgument(path + ": error: empty file"); }

// The largest index over the parts, the line it was first read on (the
// earliest part holding it) and the next largest distinct one.
IndexTop MergeTops(const std::vector<const PartFacts*>& parts, IndexTop PartFacts::*which) {
  IndexTop t;
  for (const PartFacts* p : parts) {
    if ((p->*which).max > t.max) {
      t.max = (p->*which).max;
      t.line = (p->*which).line;
    }
  }
  for (const PartFacts* p : parts) {
    const IndexTop& q = p->*which;
    t.next = std::max(t.next, q.max < t.max ? q.max : q.next);
  }
  return t;
}

void AddFarWarning(const std::string& path, const IndexTop& t, int64_t base, std::string_view unit,
                   std::string_view attr, DataFacts* facts) {
  std::string w = internal::FarIndexWarning(path, t.max, t.next, t.line, base, unit, attr);
  if (!w.empty()) facts->warnings.push_back(std::move(w));
}

// libsvm(labels="auto" | "pm1" | "keep"), decided once every label is known
// (dataset.h's LibsvmLabels says how). An ambiguous "auto" file is reported
// at its first stray label.
Status DecideLabels(const std::string& path, LibsvmLabels mode,
                    const std::vector<const PartFacts*>& parts, DataFacts* facts) {
  if (mode == LibsvmLabels::kKeep) return Status::Ok();
  int64_t minus_one = 0, other = 0;
  const SourcePoint *first_minus_one = nullptr, *first_other = nullptr;
  for (const PartFacts* p : parts) {
    if (p->minus_one > 0 && first_minus_one == nullptr) first_minus_one = &p->first_minus_one;
    if (p->other > 0 && first_other == nullptr) first_other = &p->first_other;
    minus_one += p->minus_one;
    other += p->other;
  }
  if (mode == LibsvmLabels::kAuto && other > 0) {
    if (minus_one == 0) return Status::Ok();  // 0/1, 1..K, regression: kept
    if (minus_one >= other) {
      return ExpectedAtPoint(
          path, *first_other,
          "-1 or +1 for the label, like the file's " + Labels(minus_one) + " -1" + kKeepHint);
    }
    // Here other > minus_one >= 1: "labels" is plural.
    return ExpectedAtPoint(path, *first_minus_one,
                           "a label other than -1, like the file's " + Labels(other) +
                               " that are neither -1 nor +1" + kKeepHint);
  }
  facts->pm1 = true;  // kPm1 saw only -1 and +1, and so did this kAuto file
  return Status::Ok();
}

// The vocabulary: words ordered by descending count in the whole file, ties
// by first appearance; words rarer than min_count removed (word2vec's rule).
Status MergeVocabulary(const std::string& path, int64_t min_count,
                       const std::vector<const PartFacts*>& parts, DataFacts* facts) {
  // Global ids in order of first appearance: the parts are in file order and
  // each lists its words in order of first appearance.
  std::unordered_map<std::string_view, int32_t> first_id;
  std::vector<std::string_view> words;
  std::vector<int64_t> counts;
  std::vector<std::vector<int32_t>> part_first(parts.size());
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts.size() > 1 && k == (parts.size() + 1) / 2) {
      facts->distinct_words.first_half = static_cast<int64_t>(words.size());
    }
    const PartFacts& p = *parts[k];
    part_first[k].reserve(p.words.size());
    for (size_t w = 0; w < p.words.size(); ++w) {
      auto [it, inserted] = first_id.try_emplace(p.words[w], static_cast<int32_t>(words.size()));
      if (inserted) {
        words.push_back(p.words[w]);
        counts.push_back(0);
      }
      counts[it->second] += p.word_counts[w];
      part_first[k].push_back(it->second);
    }
  }
  if (words.empty()) return EmptyFile(path);
  facts->distinct_words.distinct = static_cast<int64_t>(words.size());
  if (parts.size() == 1) facts->distinct_words.first_half = parts[0]->words_first_half;
  std::vector<int32_t> order(words.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return counts[a] > counts[b]; });
  std::vector<int32_t> new_id(words.size(), -1);  // -1: rarer than min_count
  for (int32_t old : order) {
    if (counts[old] < min_count) break;  // sorted: all later ones are rarer
    new_id[old] = static_cast<int32_t>(facts->words.size());
    facts->words.emplace_back(words[old]);
    facts->word_counts.push_back(counts[old]);
  }
  if (facts->words.empty()) {
    return InvalidArgument(path + ": error: no word occurs at least min_count (" +
                           std::to_string(min_count) + ") times");
  }
  // Rare words leave the stream entirely (as in word2vec), so a part's
  // elements are its kept tokens.
  facts->token_ids.resize(parts.size());
  int64_t first = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    facts->first_element.push_back(first);
    std::vector<int32_t>& ids = facts->token_ids[k];
    ids.reserve(part_first[k].size());
    for (size_t w = 0; w < part_first[k].size(); ++w) {
      ids.push_back(new_id[part_first[k][w]]);
      if (ids.back() >= 0) first += parts[k]->word_counts[w];
    }
  }
  facts->count = first;
  return Status::Ok();
}

// Every line is a document, blank ones too; a last line without '\n' counts
// when the file ends there.
int64_t CountDocs(const std::vector<const PartFacts*>& parts) {
  int64_t lines = 0;
  bool open_line = false;
  for (const PartFacts* p : parts) {
    lines += p->shape.newlines;
    if (p->shape.bytes > 0) open_line = !p->shape.ends_line;
  }
  return lines + (open_line ? 1 : 0);
}

// Appends the elements of `part` (finished) to `whole`.
void AppendPart(Dataset part, Dataset* whole) {
  auto append = [](auto& to, auto& from) {
    if (to.empty()) {
      to = std::move(from);
    } else {
      to.insert(to.end(), from.begin(), from.end());
    }
  };
  switch (part.kind) {
    case DataKind::kTriples:
      append(whole->ti, part.ti);
      append(whole->tj, part.tj);
      append(whole->tv, part.tv);
      break;
    case DataKind::kLibsvm: {
      const int64_t shift = static_cast<int64_t>(whole->feat_index.size());
      if (whole->feat_offset.empty()) whole->feat_offset.push_back(0);
      for (size_t n = 1; n < part.feat_offset.size(); ++n) {
        whole->feat_offset.push_back(part.feat_offset[n] + shift);
      }
      append(whole->labels, part.labels);
      append(whole->feat_index, part.feat_index);
      append(whole->feat_value, part.feat_value);
      break;
    }
    case DataKind::kDenseCsv:
      append(whole->labels, part.labels);
      append(whole->x, part.x);
      break;
    case DataKind::kTokens:
      append(whole->tokens, part.tokens);
      append(whole->token_doc, part.token_doc);
      break;
    default:
      RIGEL_CHECK_MSG(false, "AppendPart on a kind without element columns");
  }
  whole->count += part.count;
}

}  // namespace

PartShape ShapeOf(std::string_view text) {
  PartShape s;
  s.bytes = static_cast<int64_t>(text.size());
  s.newlines = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
  s.has_content = std::any_of(text.begin(), text.end(), [](char c) {
    return !internal::TextScanner::IsBlank(c) && c != '\n';
  });
  s.ends_line = text.empty() || text.back() == '\n';
  const size_t nl = text.rfind('\n');
  s.tail = static_cast<int64_t>(nl == std::string_view::npos ? text.size() : text.size() - nl - 1);
  return s;
}

std::vector<PartPlace> PlaceParts(const std::vector<PartShape>& shapes) {
  std::vector<PartPlace> places(shapes.size());
  int64_t lines = 0;
  bool content = false;
  for (size_t k = 0; k < shapes.size(); ++k) {
    places[k].part = static_cast<int>(k);
    places[k].parts = static_cast<int>(shapes.size());
    places[k].line_base = lines;
    places[k].content_before = content;
    if (k > 0) {
      places[k].col_base = shapes[k - 1].newlines > 0
                               ? shapes[k - 1].tail
                               : places[k - 1].col_base + shapes[k - 1].bytes;
    }
    lines += shapes[k].newlines;
    content = content || shapes[k].has_content;
  }
  return places;
}

StatusOr<ParsedPart> ParsePart(std::string_view text, const std::string& path, const LoadSpec& spec,
                               const PartPlace& place) {
  switch (spec.kind) {
    case DataKind::kTriples:
      return ParseTriplesPart(text, path, spec.triples, place);
    case DataKind::kLibsvm:
      if (spec.libsvm.format == LibsvmFormat::kCriteo) {
        return ParseCriteoPart(text, path, spec.libsvm, place);
      }
      return ParseLibsvmPart(text, path, spec.libsvm, place);
    case DataKind::kTokens:
      return ParseTokensPart(text, path, spec.tokens, place);
    case DataKind::kDenseCsv:
      return ParseDenseCsvPart(text, path, spec.dense_csv, place);
    default:
      return InvalidArgument(std::string(DataKindName(spec.kind)) + " is not read from a file");
  }
}

FileColumns ColumnsBefore(const std::vector<const PartFacts*>& parts, int part) {
  for (int k = 0; k < part && k < static_cast<int>(parts.size()); ++k) {
    if (parts[k] != nullptr && parts[k]->cols_line > 0)
      return {parts[k]->cols, parts[k]->cols_line};
  }
  return {};
}

bool ReparseNeeded(const FileColumns& file, const PartFacts* facts, bool failed) {
  if (file.cols < 0) return false;  // the part's first data line is the file's
  if (failed) return true;          // maybe at a line the file's count rejects earlier
  return facts->cols_line > 0 && facts->cols != file.cols;
}

StatusOr<DataFacts> MergeParts(const std::string& path, const LoadSpec& spec,
                               const std::vector<const PartFacts*>& parts) {
  DataFacts facts;
  facts.kind = spec.kind;
  for (const PartFacts* p : parts) {
    if (p->kind != spec.kind) {
      return Internal(path + ": a " + DataKindName(p->kind) + " part merged into a " +
                      DataKindName(spec.kind) + " load");
    }
  }
  if (spec.kind == DataKind::kTokens) {
    RIGEL_RETURN_IF_ERROR(MergeVocabulary(path, spec.tokens.min_count, parts, &facts));
    if (spec.tokens.lines) facts.docs = CountDocs(parts);
    return facts;
  }
  for (const PartFacts* p : parts) {
    facts.first_element.push_back(facts.count);
    facts.count += p->count;
  }
  if (facts.count == 0) return EmptyFile(path);
  switch (spec.kind) {
    case DataKind::kTriples: {
      const IndexTop i = MergeTops(parts, &PartFacts::top_i);
      const IndexTop j = MergeTops(parts, &PartFacts::top_j);
      facts.rows = int64_t{i.max} + 1;
      facts.cols = int64_t{j.max} + 1;
      AddFarWarning(path, i, spec.triples.base, "row", ".rows", &facts);
      AddFarWarning(path, j, spec.triples.base, "column", ".cols", &facts);
      break;
    }
    case DataKind::kLibsvm: {
      RIGEL_RETURN_IF_ERROR(DecideLabels(path, spec.libsvm.labels, parts, &facts));
      if (spec.libsvm.format == LibsvmFormat::kCriteo) {
        // Hashed: every bucket is a feature, seen or not.
        facts.dim = CriteoDim(spec.libsvm);
        break;
      }
      const IndexTop f = MergeTops(parts, &PartFacts::top_feat);
      facts.dim = int64_t{f.max} + 1;
      AddFarWarning(path, f, spec.libsvm.base, "feature", ".dim", &facts);
      break;
    }
    case DataKind::kDenseCsv: {
      const FileColumns file = ColumnsBefore(parts, static_cast<int>(parts.size()));
      for (const PartFacts* p : parts) {
        // A caller that did not parse the part again (ReparseNeeded) still
        // gets the line at fault, if not the whole load's words.
        if (p->cols_line > 0 && p->cols != file.cols) {
          return InvalidArgument(path + ":" + std::to_string(p->cols_line) +
                                 ": error: " + std::to_string(p->cols) + " columns, where line " +
                                 std::to_string(file.line) + " has " + std::to_string(file.cols) +
                                 " (every line must have as many)");
        }
      }
      facts.dim = file.cols - 1;
      break;
    }
    default:
      return InvalidArgument(std::string(DataKindName(spec.kind)) + " is not read from a file");
  }
  return facts;
}

Dataset FinishPart(const DataFacts& facts, int part, ParsedPart parsed, bool vocabulary) {
  Dataset d = std::move(parsed.data);
  d.warnings.clear();
  d.rows = facts.rows;
  d.cols = facts.cols;
  d.dim = facts.dim;
  if (d.kind == DataKind::kLibsvm && facts.pm1) {
    for (float& l : d.labels) l = l > 0 ? 1.0f : 0.0f;
  }
  if (d.kind == DataKind::kTokens) {
    const std::vector<int32_t>& ids = facts.token_ids[static_cast<size_t>(part)];
    size_t kept = 0;
    for (size_t t = 0; t < d.tokens.size(); ++t) {
      const int32_t id = ids[static_cast<size_t>(d.tokens[t])];
      if (id < 0) continue;
      d.tokens[kept] = id;
      if (d.lines) d.token_doc[kept] = d.token_doc[t];
      ++kept;
    }
    d.tokens.resize(kept);
    if (d.lines) d.token_doc.resize(kept);
    // Rare words removed: give back what they held when it is worth a copy.
    if (kept < d.tokens.capacity() - d.tokens.capacity() / 8) {
      d.tokens.shrink_to_fit();
      d.token_doc.shrink_to_fit();
    }
    d.count = static_cast<int64_t>(kept);
    d.docs = facts.docs;
    d.vocab = static_cast<int64_t>(facts.words.size());
    d.distinct_words = facts.distinct_words;
    if (vocabulary) {
      d.words = facts.words;
      d.word_counts = facts.word_counts;
      d.negatives = NegativeSampler(d.word_counts);
    }
  }
  return d;
}

bool CutsBetweenWords(const LoadSpec& spec) {
  return spec.kind == DataKind::kTokens && !spec.tokens.lines;
}

StatusOr<Dataset> LoadFile(const std::string& path, const LoadSpec& spec) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return LoadInParts(text, path, spec, 1);
}

StatusOr<Dataset> LoadInParts(std::string_view text, const std::string& path, const LoadSpec& spec,
                              int parts) {
  std::vector<std::string_view> texts;
  std::vector<PartPlace> places;
  if (parts == 1) {
    // One part: its place needs no look at the text.
    texts.push_back(text);
    places.emplace_back();
  } else {
    std::vector<PartShape> shapes;
    for (int k = 0; k < parts; ++k) {
      RIGEL_ASSIGN_OR_RETURN(ByteRange r, CutsBetweenWords(spec) ? SplitWords(text, k, parts)
                                                                 : SplitLines(text, k, parts));
      texts.push_back(text.substr(static_cast<size_t>(r.begin), static_cast<size_t>(r.size())));
      shapes.push_back(ShapeOf(texts.back()));
    }
    places = PlaceParts(shapes);
  }
  // Parsed in file order, so that the first error is the file's first.
  std::vector<ParsedPart> parsed;
  std::vector<const PartFacts*> facts;
  parsed.reserve(texts.size());
  for (size_t k = 0; k < texts.size(); ++k) {
    StatusOr<ParsedPart> p = ParsePart(texts[k], path, spec, places[k]);
    if (spec.kind == DataKind::kDenseCsv) {
      const FileColumns file = ColumnsBefore(facts, static_cast<int>(k));
      if (ReparseNeeded(file, p.ok() ? &p->facts : nullptr, !p.ok())) {
        places[k].cols = file.cols;
        places[k].cols_line = file.line;
        p = ParsePart(texts[k], path, spec, places[k]);
      }
    }
    if (!p.ok()) return p.status();
    parsed.push_back(std::move(*p));
    facts.push_back(&parsed.back().facts);
  }
  RIGEL_ASSIGN_OR_RETURN(DataFacts merged, MergeParts(path, spec, facts));
  Dataset whole;
  for (size_t k = 0; k < parsed.size(); ++k) {
    Dataset d = FinishPart(merged, static_cast<int>(k), std::move(parsed[k]));
    if (k == 0) {
      whole = std::move(d);
    } else {
      AppendPart(std::move(d), &whole);
    }
  }
  whole.warnings = std::move(merged.warnings);
  return whole;
}

}  // namespace rigel::data
