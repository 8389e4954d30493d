// Reading only some elements of a data file (data/held.h): a worker first
// learns the whole file's facts chunk by chunk, holding one chunk at a time
// (ScanFile), then reads and keeps only the elements it needs (LoadHeld),
// parsing only the chunks that hold them. Both use part_load.h's steps, so
// the elements kept are exactly the whole load's, with the same numbers and
// ids, and a bad file gives the whole load's error.
//
// Errors: those of a whole load (part_load.h); FailedPrecondition when a
// chunk read again no longer holds what the scan found (the file changed).
//
// Thread-safe: pure functions of their arguments and the file.
#ifndef RIGEL_DATA_HELD_LOAD_H_
#define RIGEL_DATA_HELD_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/data_index.h"
#include "data/dataset.h"
#include "data/feature_sketch.h"
#include "data/held.h"
#include "data/line_split.h"
#include "data/part_load.h"

namespace rigel::data {

// A line-aligned chunk of a file and where it sits.
struct FileChunk {
  ByteRange bytes;
  PartPlace place;  // with dense_csv's file column count when its parse needs it
};

// What a scan learnt: the whole file's facts (DataFacts::first_element and
// token_ids per chunk) and its chunks.
struct ScannedFile {
  DataFacts facts;
  std::vector<FileChunk> chunks;
  FileFingerprint fingerprint;  // the file's when the scan began
  // What a whole load's columns would take (dataset.h ColumnBytes; a tokens
  // corpus' rare words counted), its libsvm feature entries and the
  // distinct ids they name (data/feature_sketch.h; the first half: the
  // chunks before the middle one).
  int64_t column_bytes = 0;
  int64_t feature_entries = 0;
  DistinctCounts distinct;
};

// The chunk count ScanFile uses for a file of `bytes` read by `workers`
// workers: about 2 per worker, none much below 1 MiB.
int ChunksFor(int64_t bytes, int workers);

// Parses the file at `path` in `chunks` line-aligned chunks, one at a time,
// keeping only their facts.
StatusOr<ScannedFile> ScanFile(const std::string& path, const LoadSpec& spec, int chunks);
// ScanFile in ChunksFor(the file's size, `workers`) chunks (one when the
// file cannot be sized: the scan then gives its error).
StatusOr<ScannedFile> ScanFileFor(const std::string& path, const LoadSpec& spec, int workers);

// What a scan would learn, from a current index entry with chunks
// (data_index.h): the facts without the chunks' token ids, which LoadHeld
// then finds by word.
// The entry is taken by value: a caller done with it moves it in, and its
// vocabulary is not copied.
ScannedFile ScanOfIndex(IndexEntry entry);

// The index entry (data_index.h) a scan gives, without the whole load's
// digest: what a process that scanned the file sends to those that read
// parts of it (scheduler/driver.cc to the workers).
IndexEntry EntryOfScan(const LoadSpec& spec, const ScannedFile& scan);

// A shape-only data set (dataset.h) of the scanned file: count, shape
// attributes, column bytes and vocabulary (with its negative sampler), no
// columns.
// Without `vocabulary`, a tokens corpus' words, counts and negative sampler
// are left out (the vocab size stays): for code that needs only the count
// and shape attributes.
Dataset ShapeOfScan(const std::string& path, const LoadSpec& spec, const ScannedFile& scan,
                    bool vocabulary = true);

// Elements a reader keeps by their values, beside its ranges: Keep is
// called once for every element of the file, in order, with the finished
// chunk (global ids, the file's shape) and the element's position in it.
// Not thread-safe: a filter may count what it has seen.
class ElementFilter {
 public:
  virtual ~ElementFilter() = default;
  virtual bool Keep(const Dataset& chunk, int64_t local, int64_t e) = 0;
  // About how many of a file's `count` elements it will keep (the columns
  // are reserved for them; 0: no guess).
  virtual int64_t Expected(int64_t count) const { return 0; }
};

// The elements `ranges` of the scanned file as a data set held in part (its
// count and shape the whole file's), reading and parsing only the chunks
// that hold them, one at a time. With `keep` (not owned), every chunk is
// read and the elements it keeps are held too, by a mask
// (Dataset::held_masked). FailedPrecondition when the file's fingerprint is
// no longer the scan's, or a chunk no longer parses as it did.
StatusOr<Dataset> LoadHeld(const std::string& path, const LoadSpec& spec, const ScannedFile& scan,
                           std::vector<ElementRange> ranges, ElementFilter* keep = nullptr);

}  // namespace rigel::data

#endif  // RIGEL_DATA_HELD_LOAD_H_
