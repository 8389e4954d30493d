// libsvm(path, base, labels): one "label idx:val idx:val ..." sample per line.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "common/file.h"
#include "data/dataset.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

using internal::NumParse;
using internal::TextScanner;

constexpr const char* kKeepHint = " (labels=\"keep\" reads labels as they are)";

// What the parse saw of the labels, for the mapping decided once the whole
// file has been read.
struct LabelTally {
  int64_t minus_one = 0;  // labels equal to -1
  int64_t other = 0;      // labels neither -1 nor +1
  const char* first_minus_one = nullptr;
  const char* first_other = nullptr;
};

// "1 label", "2 labels".
std::string Labels(int64_t n) { return std::to_string(n) + (n == 1 ? " label" : " labels"); }

// Applies `mode` to the labels (LibsvmLabels says how). An ambiguous "auto"
// file is reported at its stray label, found again from its position: the
// scan has long left that line, and this is an error path only.
Status MapLabels(std::string_view text, const std::string& path, LibsvmLabels mode,
                 const LabelTally& t, std::vector<float>* labels) {
  if (mode == LibsvmLabels::kKeep) return Status::Ok();
  if (mode == LibsvmLabels::kAuto && t.other > 0) {
    if (t.minus_one == 0) return Status::Ok();  // 0/1, 1..K, regression: kept
    TextScanner sc(text, path);
    if (t.minus_one >= t.other) {
      sc.MoveTo(t.first_other);
      return sc.Expected("-1 or +1 for the label, like the file's " + Labels(t.minus_one) + " -1" +
                         kKeepHint);
    }
    sc.MoveTo(t.first_minus_one);
    // Here t.other > t.minus_one >= 1: "labels" is plural.
    return sc.Expected("a label other than -1, like the file's " + Labels(t.other) +
                       " that are neither -1 nor +1" + kKeepHint);
  }
  for (float& l : *labels) l = l > 0 ? 1.0f : 0.0f;  // kPm1 saw only -1 and +1
  return Status::Ok();
}

}  // namespace

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

  LabelTally tally;
  int32_t max_index = -1;
  int64_t max_line = 0;  // where max_index was first read, for the far-index warning
  while (sc.SkipBlankLines()) {
    const char* label_at = sc.pos();
    float label;
    NumParse lr = sc.ParseFloat(&label);
    if (lr != NumParse::kOk) return internal::FloatError(sc, lr, "the label");
    if (label == -1.0f) {
      if (tally.minus_one++ == 0) tally.first_minus_one = label_at;
    } else if (label != 1.0f) {
      if (tally.other++ == 0) tally.first_other = label_at;
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
  if (d.labels.empty()) return sc.EmptyFileError();
  RIGEL_RETURN_IF_ERROR(MapLabels(text, path, opts.labels, tally, &d.labels));
  d.count = static_cast<int64_t>(d.labels.size());
  d.dim = static_cast<int64_t>(max_index) + 1;
  std::string far = internal::FarIndexWarning(path, d.feat_index, max_index, max_line, opts.base,
                                              "feature", ".dim");
  if (!far.empty()) d.warnings.push_back(std::move(far));
  return d;
}

StatusOr<Dataset> LoadLibsvm(const std::string& path, const LibsvmOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseLibsvm(text, path, opts);
}

}  // namespace rigel::data
