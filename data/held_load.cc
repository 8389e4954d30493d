#include "data/held_load.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace rigel::data {

namespace {

constexpr int64_t kMinChunkBytes = int64_t{1} << 20;

// The elements of chunk k: [first_element[k], first_element[k + 1]).
ElementRange ChunkElements(const ScannedFile& scan, size_t k) {
  const std::vector<int64_t>& first = scan.facts.first_element;
  return {first[k], k + 1 < first.size() ? first[k + 1] : scan.facts.count};
}

// Marks `d`, a finished part of `count` elements, as elements [first,
// first + count) of a data set of `total` elements, held in part.
void AsHeldPart(int64_t first, int64_t total, Dataset* d) {
  const int64_t n = d->count;
  d->in_part = true;
  d->held = {{first, n, 0}};
  SetFastRange(d);
  d->count = total;
}

// Appends to `held` (held by a mask) the elements of `part`, a finished
// chunk whose first element is `first`, that `wanted` (sorted ranges within
// the chunk) holds or `keep` keeps.
void KeepElements(const Dataset& part, int64_t first, const std::vector<ElementRange>& wanted,
                  ElementFilter* keep, Dataset* held) {
  size_t r = 0;
  for (int64_t l = 0; l < part.count; ++l) {
    const int64_t e = first + l;
    while (r < wanted.size() && wanted[r].end <= e) ++r;
    const bool in_range = r < wanted.size() && wanted[r].first <= e;
    // Every element is shown to the filter, which may count them.
    if (keep->Keep(part, l, e) || in_range) {
      AppendColumnsAt(part, l, held);
      MarkHeld(e, held);
    }
  }
}

}  // namespace

int ChunksFor(int64_t bytes, int workers) {
  const int64_t by_size = std::max<int64_t>(1, bytes / kMinChunkBytes);
  return static_cast<int>(std::clamp<int64_t>(by_size, 1, 2 * std::max(1, workers)));
}

StatusOr<ScannedFile> ScanFile(const std::string& path, const LoadSpec& spec, int chunks) {
  if (chunks < 1) return InvalidArgument("ScanFile: chunks must be at least 1");
  ScannedFile scan;
  RIGEL_ASSIGN_OR_RETURN(scan.fingerprint, FingerprintFile(path));
  std::vector<PartFacts> facts;
  facts.reserve(static_cast<size_t>(chunks));
  std::vector<PartShape> shapes;
  DistinctSketch first_half, second_half;
  bool any_features = false;
  // Parsed in file order, one chunk held at a time, so that the first error
  // is the file's first (as LoadInParts).
  for (int k = 0; k < chunks; ++k) {
    RIGEL_ASSIGN_OR_RETURN(ByteRange r, CutsBetweenWords(spec) ? SplitFileWords(path, k, chunks)
                                                               : SplitFileLines(path, k, chunks));
    RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileRange(path, r));
    shapes.push_back(ShapeOf(text));
    PartPlace place = PlaceParts(shapes).back();
    place.parts = chunks;
    StatusOr<ParsedPart> p = ParsePart(text, path, spec, place);
    if (spec.kind == DataKind::kDenseCsv) {
      std::vector<const PartFacts*> before;
      for (const PartFacts& f : facts) before.push_back(&f);
      const FileColumns file = ColumnsBefore(before, k);
      if (ReparseNeeded(file, p.ok() ? &p->facts : nullptr, !p.ok())) {
        place.cols = file.cols;
        place.cols_line = file.line;
        p = ParsePart(text, path, spec, place);
      }
    }
    if (!p.ok()) return p.status();
    scan.column_bytes += ColumnBytes(p->data);
    scan.feature_entries += FeatureEntries(p->data);
    if (!p->data.feat_offset.empty()) {
      DistinctSketch& into = k < (chunks + 1) / 2 ? first_half : second_half;
      into.AddAll(p->data.feat_index);
      any_features = true;
    }
    facts.push_back(std::move(p->facts));
    scan.chunks.push_back({r, place});
  }
  if (any_features) {
    scan.distinct.first_half = first_half.Estimate();
    first_half.Merge(second_half);
    scan.distinct.distinct = first_half.Estimate();
  }
  std::vector<const PartFacts*> all;
  for (const PartFacts& f : facts) all.push_back(&f);
  RIGEL_ASSIGN_OR_RETURN(scan.facts, MergeParts(path, spec, all));
  // The vocabulary's bytes, counted as a whole load's (lent, not copied).
  Dataset vocabulary;
  vocabulary.words.swap(scan.facts.words);
  vocabulary.word_counts.swap(scan.facts.word_counts);
  scan.column_bytes += ColumnBytes(vocabulary);
  vocabulary.words.swap(scan.facts.words);
  vocabulary.word_counts.swap(scan.facts.word_counts);
  return scan;
}

StatusOr<ScannedFile> ScanFileFor(const std::string& path, const LoadSpec& spec, int workers) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ScanFile(path, spec, ec ? 1 : ChunksFor(static_cast<int64_t>(bytes), workers));
}

IndexEntry EntryOfScan(const LoadSpec& spec, const ScannedFile& scan) {
  IndexEntry e;
  e.spec = spec;
  e.fingerprint = scan.fingerprint;
  e.shape = ShapeOfScan("", spec, scan);  // the path is each reader's own
  e.warnings = scan.facts.warnings;
  e.pm1 = scan.facts.pm1;
  for (size_t k = 0; k < scan.chunks.size(); ++k) {
    e.chunks.push_back({scan.chunks[k].bytes, scan.chunks[k].place, scan.facts.first_element[k]});
  }
  return e;
}

ScannedFile ScanOfIndex(IndexEntry entry) {
  ScannedFile scan;
  DataFacts& f = scan.facts;
  f.kind = entry.spec.kind;
  f.count = entry.shape.count;
  f.rows = entry.shape.rows;
  f.cols = entry.shape.cols;
  f.dim = entry.shape.dim;
  f.docs = entry.shape.docs;
  f.pm1 = entry.pm1;
  f.words = std::move(entry.shape.words);
  f.distinct_words = entry.shape.distinct_words;
  f.word_counts = std::move(entry.shape.word_counts);
  f.warnings = std::move(entry.warnings);
  for (const IndexEntry::Chunk& c : entry.chunks) {
    scan.chunks.push_back({c.bytes, c.place});
    f.first_element.push_back(c.first_element);
  }
  scan.fingerprint = entry.fingerprint;
  scan.column_bytes = entry.shape.column_bytes;
  scan.feature_entries = entry.shape.feature_entries;
  scan.distinct = entry.shape.distinct_features;
  return scan;
}

Dataset ShapeOfScan(const std::string& path, const LoadSpec& spec, const ScannedFile& scan,
                    bool vocabulary) {
  const DataFacts& f = scan.facts;
  Dataset d;
  d.kind = spec.kind;
  d.path = path;
  d.shape_only = true;
  d.count = f.count;
  d.rows = f.rows;
  d.cols = f.cols;
  d.dim = f.dim;
  d.docs = f.docs;
  d.warnings = f.warnings;
  d.column_bytes = scan.column_bytes;
  d.feature_entries = scan.feature_entries;
  d.distinct_features = scan.distinct;
  d.origin.header = (spec.kind == DataKind::kTriples && spec.triples.skip_header) ||
                    (spec.kind == DataKind::kDenseCsv && spec.dense_csv.skip_header);
  if (spec.kind == DataKind::kTokens) {
    d.lines = spec.tokens.lines;
    d.vocab = static_cast<int64_t>(f.words.size());
    d.distinct_words = f.distinct_words;
    if (vocabulary) {
      d.words = f.words;
      d.word_counts = f.word_counts;
      d.negatives = NegativeSampler(d.word_counts);
    }
  }
  return d;
}

StatusOr<Dataset> LoadHeld(const std::string& path, const LoadSpec& spec, const ScannedFile& scan,
                           std::vector<ElementRange> ranges, ElementFilter* keep) {
  // From an index, a tokens chunk's ids are found by word: the vocabulary's
  // ids, -1 for a word rarer than min_count.
  const bool by_word = spec.kind == DataKind::kTokens && scan.facts.token_ids.empty();
  DataFacts facts;
  std::unordered_map<std::string_view, int32_t> ids;
  if (by_word) {
    // Every fact FinishPart reads but the vocabulary (with vocabulary=false
    // it reads only its size, which the held set takes from its shell): a
    // copy of the words would be one more of the corpus' vocabulary.
    const DataFacts& f = scan.facts;
    facts.kind = f.kind;
    facts.count = f.count;
    facts.rows = f.rows;
    facts.cols = f.cols;
    facts.dim = f.dim;
    facts.docs = f.docs;
    facts.pm1 = f.pm1;
    facts.first_element = f.first_element;
    facts.token_ids.resize(scan.chunks.size());
    for (size_t w = 0; w < f.words.size(); ++w) ids.emplace(f.words[w], static_cast<int32_t>(w));
  }
  const DataFacts& use = by_word ? facts : scan.facts;
  ranges = NormalizeRanges(std::move(ranges), scan.facts.count);
  RIGEL_ASSIGN_OR_RETURN(FileFingerprint now, FingerprintFile(path));
  if (!now.SameContents(scan.fingerprint)) {
    return FailedPrecondition(path + " changed after it was scanned: it was " +
                              FingerprintText(scan.fingerprint) + ", it is " +
                              FingerprintText(now));
  }
  // Nothing held yet: an empty data set of the file's shape.
  Dataset held = HoldingNothing(ShapeOfScan(path, spec, scan));
  if (keep != nullptr) UseMask(&held);
  // Kept by value, the count is known only at the end: the filter's guess.
  const size_t n =
      static_cast<size_t>(keep != nullptr ? keep->Expected(scan.facts.count) : RangesCount(ranges));
  held.tokens.reserve(spec.kind == DataKind::kTokens ? n : 0);
  if (spec.kind == DataKind::kTokens && spec.tokens.lines) held.token_doc.reserve(n);
  if (spec.kind == DataKind::kLibsvm || spec.kind == DataKind::kDenseCsv) held.labels.reserve(n);
  if (spec.kind == DataKind::kTriples) {
    held.ti.reserve(n);
    held.tj.reserve(n);
    held.tv.reserve(n);
  }
  for (size_t k = 0; k < scan.chunks.size(); ++k) {
    const ElementRange in_chunk = ChunkElements(scan, k);
    std::vector<ElementRange> wanted;
    for (const ElementRange& r : ranges) {
      const ElementRange c{std::max(r.first, in_chunk.first), std::min(r.end, in_chunk.end)};
      if (c.first < c.end) wanted.push_back(c);
    }
    if (wanted.empty() && keep == nullptr) continue;
    const FileChunk& chunk = scan.chunks[k];
    RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileRange(path, chunk.bytes));
    StatusOr<ParsedPart> p = ParsePart(text, path, spec, chunk.place);
    if (!p.ok()) {
      // It parsed when it was scanned.
      return FailedPrecondition(path + " changed while it was read: " + p.status().message());
    }
    ParsedPart parsed = std::move(p).value();
    text = std::string();
    if (by_word) {
      std::vector<int32_t>& chunk_ids = facts.token_ids[k];
      chunk_ids.clear();
      for (const std::string& w : parsed.facts.words) {
        const auto it = ids.find(w);
        chunk_ids.push_back(it == ids.end() ? -1 : it->second);
      }
    }
    const bool same_words =
        spec.kind != DataKind::kTokens || parsed.facts.words.size() == use.token_ids[k].size();
    if (parsed.facts.count != 0 && !same_words) {
      return FailedPrecondition(path + " changed while it was read: its part from byte " +
                                std::to_string(chunk.bytes.begin) + " holds other words");
    }
    Dataset part = FinishPart(use, static_cast<int>(k), std::move(parsed), /*vocabulary=*/false);
    if (part.count != in_chunk.end - in_chunk.first) {
      return FailedPrecondition(path + " changed while it was read: its part from byte " +
                                std::to_string(chunk.bytes.begin) + " holds " +
                                std::to_string(part.count) + " elements, not " +
                                std::to_string(in_chunk.end - in_chunk.first));
    }
    if (keep != nullptr) {
      KeepElements(part, in_chunk.first, wanted, keep, &held);
      continue;
    }
    AsHeldPart(in_chunk.first, scan.facts.count, &part);
    std::array<const Dataset*, 1> source = {&part};
    RIGEL_RETURN_IF_ERROR(AppendHeld(source, wanted, &held));
  }
  if (keep != nullptr) SetFastRange(&held);
  return held;
}

}  // namespace rigel::data
