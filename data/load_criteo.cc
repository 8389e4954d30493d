// criteo(path, buckets, fields): the Criteo display-advertising layout, read
// into libsvm-kind samples. A line is 40 tab-separated fields: the label (0
// or 1), 13 integer features, 26 categorical ones (hexadecimal ids, 8 digits
// in Criteo's files); a missing value is an empty field. Integer field i
// (0-based) becomes feature i with value ln(1 + count) when its count is
// above 0 (a count of 0 or below, or a missing one, is no feature: the value
// would be 0), as DLRM and most Criteo baselines transform them. Categorical
// field k's value v becomes feature 13 + offset + h(k, v) mod buckets with
// value 1, where offset is 0 for the shared range and k x buckets for a range
// per field; h hashes the field with the value, so equal ids of two fields
// are two features.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/hash.h"
#include "data/dataset.h"
#include "data/part_load.h"
#include "data/text_scanner.h"

namespace rigel::data {
namespace {

using internal::NumParse;
using internal::TextScanner;

constexpr int kFields = 1 + kCriteoIntegers + kCriteoCategoricals;
// The hash's seed: fixed, so a saved model's rows keep their meaning.
constexpr uint64_t kCriteoSalt = 0x637269'74656f31ull;  // "criteo1"

bool AtFieldEnd(const TextScanner& sc) {
  return sc.AtEnd() || sc.Peek() == '\t' || sc.Peek() == '\n' || sc.Peek() == '\r';
}

// Reads up to 16 hexadecimal digits ending at a field's end.
bool ParseHex(TextScanner* sc, uint64_t* out) {
  uint64_t v = 0;
  int digits = 0;
  while (!AtFieldEnd(*sc)) {
    const char c = sc->Peek();
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (++digits > 16) return false;
    v = v << 4 | static_cast<uint64_t>(d);
    sc->Advance();
  }
  *out = v;
  return digits > 0;
}

// Where a line ends: at '\n', or at the '\r' of a CRLF line.
bool AtLineEnd(const TextScanner& sc) {
  return sc.AtEol() || (sc.Peek() == '\r' && (sc.pos() + 1 == sc.end() || sc.pos()[1] == '\n'));
}

}  // namespace

Status CheckCriteoOptions(const LibsvmOptions& opts) {
  if (opts.buckets < 1 || CriteoDim(opts) > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument(
        "buckets must be between 1 and " +
        std::to_string((int64_t{std::numeric_limits<int32_t>::max()} - kCriteoIntegers) /
                       (opts.shared_buckets ? 1 : kCriteoCategoricals)) +
        (opts.shared_buckets ? "" : " with a range per field") +
        " (feature indices are int32), got " + std::to_string(opts.buckets));
  }
  return Status::Ok();
}

StatusOr<ParsedPart> ParseCriteoPart(std::string_view text, const std::string& path,
                                     const LibsvmOptions& opts, const PartPlace& place) {
  if (Status st = CheckCriteoOptions(opts); !st.ok()) {
    return InvalidArgument(path + ": error: criteo: " + st.message());
  }
  TextScanner sc(text, path, '\t', place.line_base + 1);
  ParsedPart out;
  Dataset& d = out.data;
  PartFacts& f = out.facts;
  d.kind = f.kind = DataKind::kLibsvm;
  d.path = path;
  f.shape = ShapeOf(text);
  const size_t max_rows = static_cast<size_t>(f.shape.newlines) + 1;
  d.labels.reserve(max_rows);
  d.feat_offset.reserve(max_rows + 1);
  // A sample has at most 39 features; most Criteo lines miss a few.
  d.feat_index.reserve(max_rows * 36);
  d.feat_value.reserve(max_rows * 36);
  d.feat_offset.push_back(0);
  const uint64_t buckets = static_cast<uint64_t>(opts.buckets);
  int32_t max_index = -1;
  int64_t max_line = 0;
  while (!sc.AtEnd()) {
    if (AtLineEnd(sc)) {  // an empty line
      sc.SkipLine();
      continue;
    }
    for (int field = 0; field < kFields; ++field) {
      if (field > 0) {
        if (AtLineEnd(sc)) {
          return sc.Expected("a tab and field " + std::to_string(field + 1) +
                             " of 40 (a label, 13 integer and 26 categorical fields)");
        }
        if (sc.Peek() != '\t') return sc.Expected("a tab between fields");
        sc.Advance();
      }
      if (AtFieldEnd(sc)) {
        if (field == 0) return sc.Expected("a label of 0 or 1 (it may not be missing)");
        continue;  // a missing value: no feature
      }
      const char* at = sc.pos();
      if (field == 0) {
        int64_t label = 0;
        if (sc.ParseInt(&label) != NumParse::kOk || (label != 0 && label != 1)) {
          return sc.ExpectedAt(at, "a label of 0 or 1");
        }
        if (label == 0 && f.other++ == 0) {
          f.first_other = {sc.line(), sc.ColumnOf(at), sc.FoundAt(at)};
        }
        d.labels.push_back(static_cast<float>(label));
        continue;
      }
      int64_t index;
      float value = 1.0f;
      if (field <= kCriteoIntegers) {
        int64_t count = 0;
        NumParse r = sc.ParseInt(&count);
        if (r == NumParse::kOverflow) return sc.ExpectedAt(at, "an integer that fits in int64");
        if (r != NumParse::kOk) {
          return sc.ExpectedAt(at, "an integer for integer field " + std::to_string(field));
        }
        if (count <= 0) continue;
        index = field - 1;
        value = static_cast<float>(std::log1p(static_cast<double>(count)));
      } else {
        const int k = field - 1 - kCriteoIntegers;
        uint64_t id = 0;
        if (!ParseHex(&sc, &id)) {
          return sc.ExpectedAt(at, "a hexadecimal id for categorical field " +
                                       std::to_string(k + 1) + " (8 hex digits in Criteo's files)");
        }
        const uint64_t bucket = HashCoords(kCriteoSalt, static_cast<uint64_t>(k), id) % buckets;
        index = kCriteoIntegers + (opts.shared_buckets ? 0 : k * opts.buckets) +
                static_cast<int64_t>(bucket);
      }
      d.feat_index.push_back(static_cast<int32_t>(index));
      d.feat_value.push_back(value);
      if (index > max_index) {
        max_index = static_cast<int32_t>(index);
        max_line = sc.line();
      }
    }
    if (!AtLineEnd(sc)) {
      return sc.Expected(
          "the end of the line after 40 fields (a label, 13 integer and 26 "
          "categorical fields)");
    }
    sc.SkipLine();
    d.feat_offset.push_back(static_cast<int64_t>(d.feat_index.size()));
  }
  d.count = f.count = static_cast<int64_t>(d.labels.size());
  f.top_feat = internal::TopOf(d.feat_index, max_index, max_line);
  return out;
}

}  // namespace rigel::data
