// A checkpoint directory (docs/operations.md, "Checkpoints"): what the
// scheduler writes at a checkpoint besides the servers' rows files
// (ps/snapshot.h), how it finds and checks one to resume from, and which
// files it keeps.
//
// Checkpoint N is complete once its manifest, ckpt-N.manifest, exists: it
// is written last, durably, and lists every file the checkpoint needs (the
// driver state ckpt-N.driver and each server's rows files, which may be
// those of earlier checkpoints) with their sizes and checksums. A manifest is
// JSON followed by one line "checksum xxh64:<16 hex digits>" over the bytes
// before it.
//
// Errors name the file: NotFound for a missing one, IoError for a damaged
// one ("damaged checkpoint file: ...") or one that cannot be written,
// FailedPrecondition for a checkpoint of another program. Thread-safe for
// distinct directories.
#ifndef RIGEL_SCHEDULER_CHECKPOINT_H_
#define RIGEL_SCHEDULER_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "ps/snapshot.h"

namespace rigel::scheduler {

struct CheckpointParam {
  std::string name;
  int64_t rows = 0;
  int64_t width = 1;
  bool operator==(const CheckpointParam&) const = default;
};

struct CheckpointManifest {
  uint64_t seq = 0;
  std::string program;  // the program's path, for messages
  std::string job_key;  // cluster::JobKey of its text and --set overrides
  // ResumableForm() of the program: a resume whose job key differs goes on
  // when this is equal (only the top-level loops' bounds changed). Empty in
  // checkpoints written before it existed.
  std::string program_ir;
  std::vector<CheckpointParam> params;
  int servers = 0, workers = 0;        // the cluster that wrote it
  int64_t iterations = 0;              // top-level loop iterations done
  std::string every;                   // --checkpoint-every as given ("1", "30s")
  ps::SnapshotFile driver;             // the driver state file
  std::vector<ps::SnapshotFile> rows;  // every server's files, each's oldest first
};

std::string ManifestName(uint64_t seq);  // "ckpt-000007.manifest"

// Writes `state` as checkpoint `seq`'s driver state file, its data durably
// (its name becomes durable with the manifest's, WriteManifest).
StatusOr<ps::SnapshotFile> WriteDriverState(const std::string& dir, uint64_t seq,
                                            const exec::DriverState& state);
// Reads and checks (size, checksum, format) a driver state file.
StatusOr<exec::DriverState> ReadDriverState(const std::string& dir, const ps::SnapshotFile& file);

// Writes the manifest durably, then fsyncs the directory, which makes the names
// of the files written before it durable too: the checkpoint is complete once
// this returns OK.
Status WriteManifest(const std::string& dir, const CheckpointManifest& m);
// Reads and checks a manifest file.
StatusOr<CheckpointManifest> ReadManifest(const std::string& path);

// The manifest `--resume ARG` means: ARG itself when it names a file, else
// the newest manifest in the directory ARG. NotFound when there is none.
StatusOr<std::string> FindManifest(const std::string& arg);
// The newest manifest in `dir`, or "" when it holds none.
std::string NewestManifest(const std::string& dir);

// The program as a resume compares it: its loop IR as ir::Print writes it,
// without the const declarations (their values are in the IR where used)
// and with every top-level `for` loop's bound blanked, so that a program
// whose driver loop runs longer (`--set EPOCHS=12`) may go on from a
// checkpoint of the shorter run, and any other change may not.
std::string ResumableForm(const ir::Program& prog);

// Checks that `m` (read from `path`) belongs to this job (`job_key`, or else
// an equal `program_ir`, ResumableForm; and parameters of the same names and
// shapes) and that every file it lists is whole: reads each one and checks
// its size and checksum. Loads nothing. A program that differs in more than
// the top-level loops' bounds is FailedPrecondition naming the first
// differing line.
Status VerifyCheckpoint(const std::string& path, const CheckpointManifest& m,
                        const std::string& job_key, const std::string& program_ir,
                        const std::vector<CheckpointParam>& params);

// Removes the files in `dir` that none of the newest `keep` manifests lists,
// older manifests and leftover temporaries included. Rows files among them
// become spares (RetireToSpare, common/file.h) that the next checkpoint's
// rows files overwrite in place; spares left from the last pruning, which no
// server took, are deleted. Returns how many files went (spares made
// included).
StatusOr<int> PruneCheckpoints(const std::string& dir, int keep);

// Makes `dir` (and its parents) and checks that a file can be written there
// durably, so a read-only or missing target fails before training starts.
Status PrepareCheckpointDir(const std::string& dir);

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_CHECKPOINT_H_
