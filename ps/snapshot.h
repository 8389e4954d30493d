// Checkpoint files of parameter rows: what a parameter server writes at a
// checkpoint and reads back on resume (docs/operations.md, "Checkpoints").
//
// A rows file holds, per parameter, rows as (row id, width floats). The
// layout, native byte order (little-endian on every machine Rigel builds
// for), all integers unsigned unless said:
//   "RIGELROW"  u32 version (1)  u32 server  u64 seq  u32 sections
//   per section: u32 param  u32 width  u64 count  i64 keys[count]
//                f32 values[count * width]
//   u64 xxh64 of every byte before it, "RIGELEND"
// A row absent from every file of a checkpoint holds its initial value (a
// pure function of the row, ir/param_init.h), so a server writes only the
// rows pushes changed: all of them in a full file, those changed since its
// previous file in a delta file; a reader applies a server's files oldest
// first.
//
// Pure functions over files; thread-safe for distinct files.
#ifndef RIGEL_PS_SNAPSHOT_H_
#define RIGEL_PS_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rigel::ps {

// One rows file as a checkpoint's manifest lists it.
struct SnapshotFile {
  std::string name;  // within the checkpoint directory
  uint64_t bytes = 0;
  uint64_t checksum = 0;  // xxh64 of the bytes before the trailer
  uint64_t rows = 0;
};

// The rows of one parameter in a rows file.
struct SnapshotSection {
  uint32_t param = 0;
  uint32_t width = 1;
  std::vector<int64_t> keys;
  std::vector<float> values;  // keys.size() * width
};

// The file name server `server` gives its rows of checkpoint `seq`.
std::string RowsFileName(uint64_t seq, int server);

// Writes `sections` (those with rows; the others are left out) to dir/name,
// its data durably (common/file.h WriteFileDataDurably): the name is made
// durable by the directory fsync that commits the manifest written after it.
// Errors: IoError naming the file and the reason (full disk, read-only
// directory); nothing is left under `name` then.
StatusOr<SnapshotFile> WriteRowsFile(const std::string& dir, const std::string& name, uint64_t seq,
                                     int server, const std::vector<SnapshotSection>& sections);

// Reads dir/file.name and checks it against `file` (size and checksum) and
// against the format. Errors: NotFound for a missing file, IoError
// ("damaged checkpoint file") naming the file and what is wrong with it
// (truncated, checksum mismatch, a malformed section).
StatusOr<std::vector<SnapshotSection>> ReadRowsFile(const std::string& dir,
                                                    const SnapshotFile& file);

// xxh64 (seed 0) of `bytes`: the checksum rows files and manifests carry.
uint64_t Checksum(const std::string& bytes);

}  // namespace rigel::ps

#endif  // RIGEL_PS_SNAPSHOT_H_
