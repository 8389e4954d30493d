// libsvm(path, base, labels): one "label idx:val idx:val ..." sample per line.
#include <string>
#include <string_view>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/part_load.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

using internal::NumParse;
using internal::TextScanner;

// The first label of its kind in a part, for the message the merge may
// write about it (MergeParts decides the mapping once every label is known).
SourcePoint PointAt(const TextScanner& sc, const char* at) {
  return {sc.line(), sc.ColumnOf(at), sc.FoundAt(at)};
}

}  // namespace

StatusOr<ParsedPart> ParseLibsvmPart(std::string_view text, const std::string& path,
                                     const LibsvmOptions& opts, const PartPlace& place) {
  TextScanner sc(text, path, '\0', place.line_base + 1);
  ParsedPart out;
  Dataset& d = out.data;
  PartFacts& f = out.facts;
  d.kind = f.kind = DataKind::kLibsvm;
  d.path = path;
  f.shape = ShapeOf(text);
  // Exact upper bounds: a sample per line, a feature per ':'.
  const size_t max_rows = static_cast<size_t>(f.shape.newlines) + 1;
  const size_t max_feats = sc.CountByte(':');
  d.labels.reserve(max_rows);
  d.feat_offset.reserve(max_rows + 1);
  d.feat_index.reserve(max_feats);
  d.feat_value.reserve(max_feats);
  d.feat_offset.push_back(0);

  int32_t max_index = -1;
  int64_t max_line = 0;  // where max_index was first read, for the far-index warning
  while (sc.SkipBlankLines()) {
    const char* label_at = sc.pos();
    float label;
    NumParse lr = sc.ParseFloat(&label);
    if (lr != NumParse::kOk) return internal::FloatError(sc, lr, "the label");
    if (label == -1.0f) {
      if (f.minus_one++ == 0) f.first_minus_one = PointAt(sc, label_at);
    } else if (label != 1.0f) {
      if (f.other++ == 0) f.first_other = PointAt(sc, label_at);
      if (opts.labels == LibsvmLabels::kPm1) {
        return sc.ExpectedAt(label_at, "-1 or +1 for the label (labels=\"pm1\")");
      }
    }
    d.labels.push_back(label);
    for (;;) {
      const char* field_end = sc.pos();
      sc.SkipBlanks();
      if (sc.AtEol()) break;
      // Features must be separated from what precedes them by a blank.
      if (sc.pos() == field_end) return sc.Expected("a blank before the next feature");
      const char* at = sc.pos();
      int64_t raw = 0;
      NumParse r = sc.ParseInt(&raw, ':');
      if (r == NumParse::kOverflow) return sc.Expected("a feature index that fits in int32");
      if (r == NumParse::kBad) return sc.Expected("a feature index");
      int32_t index;
      if (!internal::ShiftIndex(raw, opts.base, &index)) {
        return internal::IndexError(sc, at, raw, opts.base, "a feature index");
      }
      if (sc.AtEnd() || sc.Peek() != ':') return sc.Expected("':' after the feature index");
      sc.Advance();
      float value;
      NumParse vr = sc.ParseFloat(&value);
      if (vr != NumParse::kOk) return internal::FloatError(sc, vr, "the feature value");
      d.feat_index.push_back(index);
      d.feat_value.push_back(value);
      if (index > max_index) {
        max_index = index;
        max_line = sc.line();
      }
    }
    sc.EndLine();
    d.feat_offset.push_back(static_cast<int64_t>(d.feat_index.size()));
  }
  d.count = f.count = static_cast<int64_t>(d.labels.size());
  f.top_feat = internal::TopOf(d.feat_index, max_index, max_line);
  return out;
}

StatusOr<Dataset> ParseLibsvm(std::string_view text, const std::string& path,
                              const LibsvmOptions& opts) {
  return LoadInParts(text, path, LoadSpec::Of(opts), 1);
}

StatusOr<Dataset> LoadLibsvm(const std::string& path, const LibsvmOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseLibsvm(text, path, opts);
}

}  // namespace rigel::data
