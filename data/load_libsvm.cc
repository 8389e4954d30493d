// libsvm(path, base): one "label idx:val idx:val ..." sample per line.
#include <algorithm>
#include <string>
#include <string_view>

#include "common/file.h"
#include "data/dataset.h"
#include "data/text_scanner.h"

namespace rigel::data {

using internal::NumParse;
using internal::TextScanner;

StatusOr<Dataset> ParseLibsvm(std::string_view text, const std::string& path,
                              const LibsvmOptions& opts) {
  TextScanner sc(text, path);
  Dataset d;
  d.kind = DataKind::kLibsvm;
  d.path = path;
  // Exact upper bounds: a sample per line, a feature per ':'.
  const size_t max_rows = sc.CountByte('\n') + 1;
  const size_t max_feats = sc.CountByte(':');
  d.labels.reserve(max_rows);
  d.feat_offset.reserve(max_rows + 1);
  d.feat_index.reserve(max_feats);
  d.feat_value.reserve(max_feats);
  d.feat_offset.push_back(0);

  bool only_pm1 = true;  // every label is -1 or +1 so far
  int32_t max_index = -1;
  while (sc.SkipBlankLines()) {
    float label;
    if (sc.ParseFloat(&label) != NumParse::kOk) return sc.Expected("a number for the label");
    only_pm1 = only_pm1 && (label == 1.0f || label == -1.0f);
    d.labels.push_back(label);
    for (;;) {
      const char* field_end = sc.pos();
      sc.SkipBlanks();
      if (sc.AtEol()) break;
      // Features must be separated from what precedes them by a blank.
      if (sc.pos() == field_end) return sc.Expected("a blank before the next feature");
      const char* at = sc.pos();
      int64_t raw;
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
      if (sc.ParseFloat(&value) != NumParse::kOk) {
        return sc.Expected("a number for the feature value");
      }
      d.feat_index.push_back(index);
      d.feat_value.push_back(value);
      max_index = std::max(max_index, index);
    }
    sc.EndLine();
    d.feat_offset.push_back(static_cast<int64_t>(d.feat_index.size()));
  }
  if (d.labels.empty()) return sc.EmptyFileError();
  if (only_pm1) {
    for (float& l : d.labels) l = l > 0 ? 1.0f : 0.0f;
  }
  d.count = static_cast<int64_t>(d.labels.size());
  d.dim = static_cast<int64_t>(max_index) + 1;
  return d;
}

StatusOr<Dataset> LoadLibsvm(const std::string& path, const LibsvmOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseLibsvm(text, path, opts);
}

}  // namespace rigel::data
