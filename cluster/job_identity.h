// What a member of a job was started with, sent when it registers so that
// the scheduler can refuse a process from another build or another job
// before any parameter moves: a host with an older install, or a launcher
// that started one rank on a different program or `--set`.
//
// Pure functions; thread-safe.
#ifndef RIGEL_CLUSTER_JOB_IDENTITY_H_
#define RIGEL_CLUSTER_JOB_IDENTITY_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace rigel::cluster {

struct JobIdentity {
  std::string version;  // BinaryVersion() of the process
  std::string key;      // JobKey() of its program; empty: started without one
  std::string name;     // the program's path as given, for messages
};

// "0.1.0 (commit 1a2b3c4d5e6f)": the project version and the commit the build
// was configured at.
std::string BinaryVersion();

// "xxh64:<16 hex digits>" over the program's text and every `--set
// NAME=VALUE` in the order given (the data paths are in one or the other).
std::string JobKey(std::string_view program_text, const std::vector<std::string>& sets);

// The identity of a process started on the program file `path` with `sets`.
// NotFound / Unavailable when the file cannot be read.
StatusOr<JobIdentity> ProgramIdentity(const std::string& path,
                                      const std::vector<std::string>& sets);

// OK when `member` (described as `who`, e.g. "worker:1 at tcp://10.0.0.2:4100")
// may join the job of `scheduler`: same version, and the same key unless
// either key is empty. Otherwise FailedPrecondition naming both values.
Status CheckJoin(const JobIdentity& scheduler, const JobIdentity& member, const std::string& who);

}  // namespace rigel::cluster

#endif  // RIGEL_CLUSTER_JOB_IDENTITY_H_
