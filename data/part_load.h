// Loading one part of a data file (issue 32: each worker reads only its part)
// and merging what the parts found into the facts of the whole file.
//
// A file is cut into line-aligned parts (data/line_split.h). Loading them
// takes three steps, each a pure function, so that the same code serves one
// process reading every part and workers reading one part each with the
// scheduler merging:
//
//   1. Place: ShapeOf(part's bytes) for every part (its '\n' count, whether
//      it holds a non-blank byte), then PlaceParts: each part's first line
//      number and whether a non-blank line comes before it (a header to skip
//      is the file's first non-blank line). Error messages then name the
//      file's lines as a whole load does.
//   2. Parse: Parse{Triples,Libsvm,Tokens,DenseCsv}Part reads a part's
//      elements (in the loader's columns, with tokens as part-local ids and
//      libsvm labels as read) and the facts a merge needs (PartFacts: largest
//      indices, label tallies, the part's words and counts, its column count).
//   3. Merge and finish: MergeParts combines the parts' facts, in file order,
//      into DataFacts (shape attributes, the vocabulary with global counts and
//      ids, the label mapping, each part's first global element, warnings);
//      FinishPart turns a parsed part into a Dataset with the whole file's
//      shape attributes and global ids.
//
// Whatever the number of parts, the elements of the finished parts, in part
// order, are the whole load's (dataset.h's Parse*), and a bad file gives the
// whole load's error: the parts' errors are reported in file order (the
// first part that failed), then the merge's. One exception: a dense_csv part
// whose lines have another column count than the file's first data line;
// ReparseNeeded says when a part must be parsed again with the file's count
// (PartPlace::cols) to give the whole load's message.
//
// Thread-safe: pure functions of their arguments.
#ifndef RIGEL_DATA_PART_LOAD_H_
#define RIGEL_DATA_PART_LOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"
#include "data/line_split.h"

namespace rigel::data {

// What a part's bytes say before they are parsed.
struct PartShape {
  int64_t bytes = 0;
  int64_t newlines = 0;      // '\n' bytes in the part
  bool has_content = false;  // a byte other than blanks and line ends
  bool ends_line = true;     // empty, or its last byte is '\n'
  int64_t tail = 0;          // bytes after its last '\n' (all of them without one)
};
PartShape ShapeOf(std::string_view text);

// Where a part sits in its file.
struct PartPlace {
  int part = 0;
  int parts = 1;
  int64_t line_base = 0;  // lines before the part: its first is line_base + 1
  // Bytes of its first line before the part (a part cut between words of a
  // line: tokens without lines=true, see CutsBetweenWords), for columns.
  int64_t col_base = 0;
  bool content_before = false;  // a non-blank line comes before the part
  // dense_csv: the column count of the file's first data line and that
  // line's number, when a part must be parsed knowing them; -1: unknown.
  int64_t cols = -1;
  int64_t cols_line = 0;
};
// The places of the parts whose shapes are `shapes`, in file order.
std::vector<PartPlace> PlaceParts(const std::vector<PartShape>& shapes);

// A position in the file, for a message the merge writes.
struct SourcePoint {
  int64_t line = 0;  // 0: none
  int64_t col = 0;
  std::string found;  // what an "expected ..., found X" message shows
};

// The largest index of one kind in a part (-1: none), the next largest
// distinct one (computed only when the largest may be far: see dataset.h's
// kFarIndexMin) and the line the largest was first read on.
struct IndexTop {
  int32_t max = -1;
  int32_t next = -1;
  int64_t line = 0;
};

// What a part tells the merge. Small: no per-element data but tokens' words.
struct PartFacts {
  DataKind kind = DataKind::kRange;
  int64_t count = 0;  // elements (tokens: before rare words are removed)
  PartShape shape;
  // triples: i and j; libsvm: feature indices.
  IndexTop top_i, top_j, top_feat;
  // libsvm: labels equal to -1, labels neither -1 nor +1, and the first of each.
  int64_t minus_one = 0;
  int64_t other = 0;
  SourcePoint first_minus_one, first_other;
  // tokens: the part's words in order of first appearance, with their counts
  // in the part (the part's token ids index them).
  std::vector<std::string> words;
  std::vector<int64_t> word_counts;
  int64_t words_first_half = 0;  // of them, those first seen in the first half of its text
  // dense_csv: the column count of the part's first data line and its line
  // (0 when the part has none).
  int64_t cols = -1;
  int64_t cols_line = 0;
};

// A parsed part: its elements, not yet finished, and its facts.
struct ParsedPart {
  Dataset data;
  PartFacts facts;
};

StatusOr<ParsedPart> ParseTriplesPart(std::string_view text, const std::string& path,
                                      const TriplesOptions& opts, const PartPlace& place);
StatusOr<ParsedPart> ParseLibsvmPart(std::string_view text, const std::string& path,
                                     const LibsvmOptions& opts, const PartPlace& place);
// The Criteo layout (data/load_criteo.cc) into libsvm-kind samples:
// opts.format is kCriteo; opts.buckets and opts.shared_buckets place the
// hashed categorical values. InvalidArgument for options CheckCriteoOptions
// refuses (data/dataset.h).
StatusOr<ParsedPart> ParseCriteoPart(std::string_view text, const std::string& path,
                                     const LibsvmOptions& opts, const PartPlace& place);
StatusOr<ParsedPart> ParseTokensPart(std::string_view text, const std::string& path,
                                     const TokensOptions& opts, const PartPlace& place);
StatusOr<ParsedPart> ParseDenseCsvPart(std::string_view text, const std::string& path,
                                       const DenseCsvOptions& opts, const PartPlace& place);

// Which loader and options, for code that handles every kind alike.
struct LoadSpec {
  DataKind kind = DataKind::kTriples;
  TriplesOptions triples;
  LibsvmOptions libsvm;
  TokensOptions tokens;
  DenseCsvOptions dense_csv;

  static LoadSpec Of(const TriplesOptions& o) {
    LoadSpec s;
    s.triples = o;
    return s;
  }
  static LoadSpec Of(const LibsvmOptions& o) {
    LoadSpec s;
    s.kind = DataKind::kLibsvm;
    s.libsvm = o;
    return s;
  }
  static LoadSpec Of(const TokensOptions& o) {
    LoadSpec s;
    s.kind = DataKind::kTokens;
    s.tokens = o;
    return s;
  }
  static LoadSpec Of(const DenseCsvOptions& o) {
    LoadSpec s;
    s.kind = DataKind::kDenseCsv;
    s.dense_csv = o;
    return s;
  }
};
StatusOr<ParsedPart> ParsePart(std::string_view text, const std::string& path, const LoadSpec& spec,
                               const PartPlace& place);

// dense_csv: true when part `part`'s result (`facts`, or its error when
// `failed`) may differ from a whole load's because the part did not know the
// file's column count: parse it again with place.cols and place.cols_line
// set to ColumnsBefore's. ColumnsBefore: the column count of the file's
// first data line among parts [0, part) (null entries: not parsed).
struct FileColumns {
  int64_t cols = -1;  // -1: no earlier part has a data line
  int64_t line = 0;
};
FileColumns ColumnsBefore(const std::vector<const PartFacts*>& parts, int part);
bool ReparseNeeded(const FileColumns& file, const PartFacts* facts, bool failed);

// The whole file's facts, from every part's, in file order.
struct DataFacts {
  DataKind kind = DataKind::kRange;
  int64_t count = 0;  // elements of the whole file
  int64_t rows = 0, cols = 0, dim = 0;
  int64_t docs = 0;  // tokens(lines=true)
  bool pm1 = false;  // libsvm: labels -1/+1 become 0/1
  std::vector<std::string> words;
  std::vector<int64_t> word_counts;
  // tokens: the distinct words before rare ones are removed, in the whole
  // file and in its first half (the parts before the middle one; of a
  // single part, the first half of its text).
  DistinctCounts distinct_words;
  // Per part: its first element's global number, and (tokens) its ids'
  // global ids (-1: a word rarer than min_count, removed).
  std::vector<int64_t> first_element;
  std::vector<std::vector<int32_t>> token_ids;
  std::vector<std::string> warnings;
};
StatusOr<DataFacts> MergeParts(const std::string& path, const LoadSpec& spec,
                               const std::vector<const PartFacts*>& parts);

// Part `part` of the file as a data set: its elements with global ids and
// labels mapped as the whole file's say, and the whole file's shape
// attributes (rows, cols, dim, vocab, words, docs). `origin` and `warnings`
// are left empty. Consumes `parsed`. Without `vocabulary`, a tokens part
// gets no words, counts or negative sampler (a caller that keeps only some
// of its elements, data/held_load.h, has them once already).
Dataset FinishPart(const DataFacts& facts, int part, ParsedPart parsed, bool vocabulary = true);

// A tokens corpus without lines=true is a stream of words, whose lines mean
// nothing: it is cut between words (line_split.h SplitWords), so that a
// corpus on one line (as text8's, or the Gutenberg corpus') still splits.
// Every other file is cut between lines.
bool CutsBetweenWords(const LoadSpec& spec);

// Reads the file at `path` and loads it whole with `spec` (dataset.h's
// Load* for any kind).
StatusOr<Dataset> LoadFile(const std::string& path, const LoadSpec& spec);

// Every part of `text` cut into `parts` (SplitLines) loaded as above, the
// finished parts concatenated: what a job's workers hold together. For
// tests and tools that check a split against a whole load.
StatusOr<Dataset> LoadInParts(std::string_view text, const std::string& path, const LoadSpec& spec,
                              int parts);

}  // namespace rigel::data

#endif  // RIGEL_DATA_PART_LOAD_H_
