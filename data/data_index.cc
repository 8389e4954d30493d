#include "data/data_index.h"

#define XXH_INLINE_ALL
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/file.h"
#include "common/json_reader.h"
#include "data/feature_sketch.h"
#include "data/held_load.h"

namespace rigel::data {
namespace {

// Version of the index format: an index of another version is ignored.
constexpr int kIndexVersion = 2;  // 2: chunks and pm1
constexpr int64_t kEdgeBytes = 1 << 20;

StatusOr<uint64_t> HashRange(const ReadOnlyFile& f, int64_t from, int64_t n) {
  std::string buf(static_cast<size_t>(n), '\0');
  for (int64_t done = 0; done < n;) {
    RIGEL_ASSIGN_OR_RETURN(int64_t got, f.ReadAt(from + done, buf.data() + done, n - done));
    if (got == 0) return IoError(f.path() + ": shorter than its size while fingerprinted");
    done += got;
  }
  return XXH64(buf.data(), buf.size(), 0);
}

std::string Hex(uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "xxh64:%016" PRIx64, h);
  return buf;
}

// The loader and every option it reads, in a fixed order: two entries are
// for the same options when these objects are equal.
nlohmann::ordered_json SpecJson(const LoadSpec& s) {
  nlohmann::ordered_json j;
  j["kind"] = DataKindName(s.kind);
  switch (s.kind) {
    case DataKind::kTriples:
      j["sep"] = std::string(1, s.triples.sep);
      j["base"] = s.triples.base;
      j["skip_header"] = s.triples.skip_header;
      j["ignore_extra"] = s.triples.ignore_extra;
      break;
    case DataKind::kLibsvm:
      j["base"] = s.libsvm.base;
      j["labels"] = s.libsvm.labels == LibsvmLabels::kAuto  ? "auto"
                    : s.libsvm.labels == LibsvmLabels::kPm1 ? "pm1"
                                                            : "keep";
      if (s.libsvm.format == LibsvmFormat::kCriteo) {
        j["format"] = "criteo";
        j["buckets"] = s.libsvm.buckets;
        j["shared_buckets"] = s.libsvm.shared_buckets;
      }
      break;
    case DataKind::kTokens:
      j["min_count"] = s.tokens.min_count;
      j["lines"] = s.tokens.lines;
      break;
    case DataKind::kDenseCsv:
      j["label"] = s.dense_csv.label;
      j["sep"] = std::string(1, s.dense_csv.sep);
      j["skip_header"] = s.dense_csv.skip_header;
      break;
    default:
      break;
  }
  return j;
}

nlohmann::ordered_json FingerprintJson(const FileFingerprint& f) {
  return {{"size", f.size}, {"mtime_ns", f.mtime_ns}, {"head", Hex(f.head)}, {"tail", Hex(f.tail)}};
}

nlohmann::ordered_json EntryJson(const IndexEntry& e) {
  nlohmann::ordered_json j;
  j["loader"] = SpecJson(e.spec);
  j["fingerprint"] = FingerprintJson(e.fingerprint);
  j["digest"] = e.digest;
  j["count"] = e.shape.count;
  j["rows"] = e.shape.rows;
  j["cols"] = e.shape.cols;
  j["dim"] = e.shape.dim;
  j["lines"] = e.shape.lines;
  j["docs"] = e.shape.docs;
  j["words"] = e.shape.words;
  j["word_counts"] = e.shape.word_counts;
  j["column_bytes"] = e.shape.column_bytes;
  j["feature_entries"] = e.shape.feature_entries;
  j["distinct_features"] = e.shape.distinct_features.distinct;
  j["distinct_features_half"] = e.shape.distinct_features.first_half;
  j["distinct_words"] = e.shape.distinct_words.distinct;
  j["distinct_words_half"] = e.shape.distinct_words.first_half;
  j["warnings"] = e.warnings;
  j["pm1"] = e.pm1;
  // [first byte, end byte, line_base, col_base, content_before, cols,
  // cols_line, first element] per chunk.
  j["chunks"] = nlohmann::ordered_json::array();
  for (const IndexEntry::Chunk& c : e.chunks) {
    j["chunks"].push_back({c.bytes.begin, c.bytes.end, c.place.line_base, c.place.col_base,
                           c.place.content_before ? 1 : 0, c.place.cols, c.place.cols_line,
                           c.first_element});
  }
  return j;
}

StatusOr<IndexEntry> EntryFromJson(const JsonValue& j, const LoadSpec& spec) {
  IndexEntry e;
  e.spec = spec;
  RIGEL_ASSIGN_OR_RETURN(JsonValue f, j.GetObject("fingerprint"));
  RIGEL_ASSIGN_OR_RETURN(e.fingerprint.size, f.GetInt("size"));
  RIGEL_ASSIGN_OR_RETURN(e.fingerprint.mtime_ns, f.GetInt("mtime_ns"));
  for (auto [key, out] : {std::pair{"head", &e.fingerprint.head}, {"tail", &e.fingerprint.tail}}) {
    RIGEL_ASSIGN_OR_RETURN(std::string hex, f.GetString(key));
    if (hex.size() != 22 || hex.rfind("xxh64:", 0) != 0 ||
        std::sscanf(hex.c_str() + 6, "%" SCNx64, out) != 1) {
      return InvalidArgument(f.source() + ": " + f.path() + "." + key +
                             ": expected \"xxh64:\" and 16 hex digits, found \"" + hex + "\"");
    }
  }
  Dataset& d = e.shape;
  d.kind = spec.kind;
  RIGEL_ASSIGN_OR_RETURN(e.digest, j.GetString("digest"));
  RIGEL_ASSIGN_OR_RETURN(d.count, j.GetIntIn("count", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.rows, j.GetIntIn("rows", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.cols, j.GetIntIn("cols", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.dim, j.GetIntIn("dim", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.lines, j.GetBool("lines"));
  RIGEL_ASSIGN_OR_RETURN(d.docs, j.GetIntIn("docs", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.column_bytes, j.GetIntIn("column_bytes", 0, INT64_MAX));
  RIGEL_ASSIGN_OR_RETURN(d.feature_entries, j.GetIntIn("feature_entries", 0, INT64_MAX));
  // Absent from an index written before they were counted: unknown.
  RIGEL_ASSIGN_OR_RETURN(d.distinct_features.distinct, j.GetIntOr("distinct_features", -1));
  RIGEL_ASSIGN_OR_RETURN(d.distinct_features.first_half, j.GetIntOr("distinct_features_half", -1));
  RIGEL_ASSIGN_OR_RETURN(d.distinct_words.distinct, j.GetIntOr("distinct_words", -1));
  RIGEL_ASSIGN_OR_RETURN(d.distinct_words.first_half, j.GetIntOr("distinct_words_half", -1));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> words, j.GetArray("words"));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> counts, j.GetArray("word_counts"));
  if (words.size() != counts.size()) {
    return InvalidArgument(j.source() + ": " + j.path() + ": " + std::to_string(words.size()) +
                           " words but " + std::to_string(counts.size()) + " word_counts");
  }
  for (size_t w = 0; w < words.size(); ++w) {
    RIGEL_ASSIGN_OR_RETURN(std::string word, words[w].AsString());
    RIGEL_ASSIGN_OR_RETURN(int64_t count, counts[w].AsIntIn(1, INT64_MAX));
    d.words.push_back(std::move(word));
    d.word_counts.push_back(count);
  }
  d.vocab = static_cast<int64_t>(d.words.size());
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> warnings, j.GetArray("warnings"));
  for (const JsonValue& w : warnings) {
    RIGEL_ASSIGN_OR_RETURN(std::string text, w.AsString());
    e.warnings.push_back(std::move(text));
  }
  RIGEL_ASSIGN_OR_RETURN(e.pm1, j.GetBool("pm1"));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> chunks, j.GetArray("chunks"));
  for (const JsonValue& c : chunks) {
    RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> v, c.Elements());
    if (v.size() != 8) {
      return InvalidArgument(c.source() + ": " + c.path() + ": expected 8 numbers, found " +
                             std::to_string(v.size()));
    }
    int64_t n[8];
    for (size_t k = 0; k < 8; ++k) {
      RIGEL_ASSIGN_OR_RETURN(n[k], v[k].AsIntIn(k == 5 ? -1 : 0, INT64_MAX));
    }
    IndexEntry::Chunk chunk;
    chunk.bytes = {n[0], n[1]};
    chunk.place.part = static_cast<int>(e.chunks.size());
    chunk.place.parts = static_cast<int>(chunks.size());
    chunk.place.line_base = n[2];
    chunk.place.col_base = n[3];
    chunk.place.content_before = n[4] != 0;
    chunk.place.cols = n[5];
    chunk.place.cols_line = n[6];
    chunk.first_element = n[7];
    if (chunk.bytes.end < chunk.bytes.begin || chunk.first_element > d.count) {
      return InvalidArgument(c.source() + ": " + c.path() + ": not a chunk of this file");
    }
    e.chunks.push_back(chunk);
  }
  return e;
}

// The index's entries other than the one for `spec` (kept when it is
// written again), or none when there is no index of this version.
std::vector<nlohmann::ordered_json> OtherEntries(const std::string& index_path,
                                                 const LoadSpec& spec) {
  std::vector<nlohmann::ordered_json> out;
  StatusOr<std::string> text = ReadFileToString(index_path);
  if (!text.ok()) return out;
  StatusOr<JsonValue> j = ParseJson(*text, index_path);
  if (!j.ok()) return out;
  StatusOr<int64_t> version = j->GetIntOr("rigel_index", 0);
  if (!version.ok() || *version != kIndexVersion) return out;
  StatusOr<std::vector<JsonValue>> entries = j->GetArray("entries");
  if (!entries.ok()) return out;
  const std::string mine = SpecJson(spec).dump();
  for (const JsonValue& e : *entries) {
    std::optional<JsonValue> loader = e.Find("loader");
    if (loader && loader->raw().dump() != mine) out.push_back(e.raw());
  }
  return out;
}

}  // namespace

StatusOr<FileFingerprint> FingerprintFile(const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return IoError(path + ": cannot stat");
  FileFingerprint fp;
  fp.size = f.size();
  fp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  const int64_t edge = std::min(kEdgeBytes, fp.size);
  RIGEL_ASSIGN_OR_RETURN(fp.head, HashRange(f, 0, edge));
  RIGEL_ASSIGN_OR_RETURN(fp.tail, HashRange(f, fp.size - edge, edge));
  return fp;
}

std::string FingerprintText(const FileFingerprint& f) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%lld bytes, head xxh64:%016llx, tail xxh64:%016llx",
                static_cast<long long>(f.size), static_cast<unsigned long long>(f.head),
                static_cast<unsigned long long>(f.tail));
  return buf;
}

std::string IndexPathFor(const std::string& data_path) { return data_path + ".rigel-index"; }

StatusOr<IndexEntry> BuildIndexEntry(const std::string& path, const LoadSpec& spec) {
  IndexEntry e;
  e.spec = spec;
  // The fingerprint first: a file that changes while it is read is caught
  // by the next reader's check instead of being recorded as current.
  RIGEL_ASSIGN_OR_RETURN(e.fingerprint, FingerprintFile(path));
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  RIGEL_ASSIGN_OR_RETURN(Dataset d, LoadInParts(text, path, spec, 1));
  e.digest = DatasetDigest(d);
  e.shape.column_bytes = ColumnBytes(d);
  e.shape.feature_entries = FeatureEntries(d);
  e.shape.distinct_features = DistinctFeatures(d);
  e.warnings = d.warnings;
  e.shape.kind = d.kind;
  e.shape.count = d.count;
  e.shape.rows = d.rows;
  e.shape.cols = d.cols;
  e.shape.dim = d.dim;
  e.shape.lines = d.lines;
  e.shape.docs = d.docs;
  e.shape.vocab = d.vocab;
  e.shape.distinct_words = d.distinct_words;
  e.shape.words = std::move(d.words);
  e.shape.word_counts = std::move(d.word_counts);
  // The whole load is done with: the scan holds one chunk at a time.
  text = std::string();
  d = Dataset();
  RIGEL_ASSIGN_OR_RETURN(ScannedFile scan, ScanFileFor(path, spec, kIndexChunks / 2));
  e.pm1 = scan.facts.pm1;
  for (size_t k = 0; k < scan.chunks.size(); ++k) {
    e.chunks.push_back({scan.chunks[k].bytes, scan.chunks[k].place, scan.facts.first_element[k]});
  }
  return e;
}

Status WriteIndexEntry(const std::string& path, const IndexEntry& entry) {
  const std::string index_path = IndexPathFor(path);
  nlohmann::ordered_json j;
  j["rigel_index"] = kIndexVersion;
  j["file"] = path;
  j["entries"] = nlohmann::ordered_json::array();
  for (nlohmann::ordered_json& e : OtherEntries(index_path, entry.spec)) {
    j["entries"].push_back(std::move(e));
  }
  j["entries"].push_back(EntryJson(entry));
  return WriteFileAtomically(index_path, j.dump() + "\n");
}

StatusOr<std::optional<IndexEntry>> ReadCurrentIndexEntry(const std::string& path,
                                                          const LoadSpec& spec) {
  // A data file that cannot be read has no index: its load says why.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::optional<IndexEntry>();
  const std::string index_path = IndexPathFor(path);
  StatusOr<std::string> text = ReadFileToString(index_path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::optional<IndexEntry>();
    return text.status();
  }
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(*text, index_path));
  RIGEL_ASSIGN_OR_RETURN(int64_t version, j.GetIntOr("rigel_index", 0));
  if (version != kIndexVersion) return std::optional<IndexEntry>();
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> entries, j.GetArray("entries"));
  const std::string mine = SpecJson(spec).dump();
  for (const JsonValue& e : entries) {
    RIGEL_ASSIGN_OR_RETURN(JsonValue loader, e.GetObject("loader"));
    if (loader.raw().dump() != mine) continue;
    RIGEL_ASSIGN_OR_RETURN(IndexEntry entry, EntryFromJson(e, spec));
    RIGEL_ASSIGN_OR_RETURN(FileFingerprint now, FingerprintFile(path));
    if (!(now == entry.fingerprint)) return std::optional<IndexEntry>();
    return std::optional<IndexEntry>(std::move(entry));
  }
  return std::optional<IndexEntry>();
}

std::string IndexEntryText(const IndexEntry& entry) { return EntryJson(entry).dump(); }

StatusOr<IndexEntry> IndexEntryFromText(const std::string& text, const LoadSpec& spec,
                                        const std::string& what) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, what));
  RIGEL_ASSIGN_OR_RETURN(JsonValue loader, j.GetObject("loader"));
  if (loader.raw().dump() != SpecJson(spec).dump()) {
    return InvalidArgument(what + ": the facts are of a file read with the loader options " +
                           loader.raw().dump() + ", not " + SpecJson(spec).dump());
  }
  return EntryFromJson(j, spec);
}

Dataset ShapeOnly(const IndexEntry& entry, const std::string& path) {
  Dataset d = entry.shape;
  d.path = path;
  d.shape_only = true;
  d.digest = entry.digest;
  d.warnings = entry.warnings;
  d.vocab = static_cast<int64_t>(d.words.size());
  d.origin.header = (d.kind == DataKind::kTriples && entry.spec.triples.skip_header) ||
                    (d.kind == DataKind::kDenseCsv && entry.spec.dense_csv.skip_header);
  return d;
}

}  // namespace rigel::data
