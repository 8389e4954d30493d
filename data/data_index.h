// A data file's index (issue 32): the whole-data facts a job needs before
// any element is loaded (element count, rows, cols, dim, docs, the
// vocabulary with its counts, the data set's digest and the loader's
// warnings), written by `rigel index` beside the file as FILE.rigel-index and
// reused while the file is unchanged. The scheduler reads a current index
// instead of loading the file; a worker checks its file against the index's
// fingerprint before it loads anything, so that a host whose file differs is
// refused at once.
//
// An index holds one entry per set of loader options (a tokens file read with
// min_count=5 and with min_count=1 has two). An entry is current when the
// file's fingerprint (size, modification time and checksums of its first and
// last MiB) equals the one recorded; an index written by another version of
// this format, or for other options, is ignored (never an error), and
// `rigel index` writes it again.
//
// Errors: IoError / NotFound naming the path for files that cannot be read or
// written; InvalidArgument naming the index file and the field for an index
// that is not valid JSON of this format. Thread-safe: pure functions of their
// arguments and the files.
#ifndef RIGEL_DATA_DATA_INDEX_H_
#define RIGEL_DATA_DATA_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"
#include "data/part_load.h"

namespace rigel::data {

// What identifies a file's contents without reading it all. Two hosts with
// identical files agree on everything but (maybe) mtime_ns.
struct FileFingerprint {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t head = 0;  // xxh64 of the first MiB (or of the whole file if smaller)
  uint64_t tail = 0;  // xxh64 of the last MiB
  bool SameContents(const FileFingerprint& o) const {
    return size == o.size && head == o.head && tail == o.tail;
  }
  bool operator==(const FileFingerprint&) const = default;
};
StatusOr<FileFingerprint> FingerprintFile(const std::string& path);
// "N bytes, head xxh64:H, tail xxh64:T": what hosts with identical files
// agree on (no mtime).
std::string FingerprintText(const FileFingerprint& f);

// "PATH.rigel-index".
std::string IndexPathFor(const std::string& data_path);

// One entry: the facts of `path` read with `spec`.
struct IndexEntry {
  LoadSpec spec;
  FileFingerprint fingerprint;
  // kind, count, rows, cols, dim, lines, docs, vocab, words, word_counts,
  // column_bytes, feature_entries
  Dataset shape;
  std::string digest;  // DatasetDigest of the whole load
  std::vector<std::string> warnings;
  bool pm1 = false;  // libsvm: labels -1/+1 read as 0/1 (part_load.h DataFacts::pm1)
  // The file cut into kIndexChunks chunks as data/held_load.h's ScanFile
  // cuts it, each with its place and first element: a worker holding part
  // of the file reads only the chunks it needs, without a scan.
  struct Chunk {
    ByteRange bytes;
    PartPlace place;
    int64_t first_element = 0;
  };
  std::vector<Chunk> chunks;
};
inline constexpr int kIndexChunks = 32;

// Loads `path` whole with `spec` and records its facts, then scans it in
// kIndexChunks chunks for their places.
StatusOr<IndexEntry> BuildIndexEntry(const std::string& path, const LoadSpec& spec);
// Adds `entry` to the index of `path` (replacing an entry for the same
// options), written atomically.
Status WriteIndexEntry(const std::string& path, const IndexEntry& entry);
// The current entry of `path`'s index for `spec`, or nullopt when there is
// no index, no entry for these options, or the file changed since.
StatusOr<std::optional<IndexEntry>> ReadCurrentIndexEntry(const std::string& path,
                                                          const LoadSpec& spec);

// An entry as text (one JSON object, as in the index file), and back:
// IndexEntryFromText refuses (InvalidArgument naming `what`) text that is
// not an entry of this format, or one for other loader options than `spec`.
std::string IndexEntryText(const IndexEntry& entry);
StatusOr<IndexEntry> IndexEntryFromText(const std::string& text, const LoadSpec& spec,
                                        const std::string& what);

// The data set the entry describes without its elements: shape attributes
// and count (Dataset::shape_only), for a process that needs only the facts.
Dataset ShapeOnly(const IndexEntry& entry, const std::string& path);

}  // namespace rigel::data

#endif  // RIGEL_DATA_DATA_INDEX_H_
