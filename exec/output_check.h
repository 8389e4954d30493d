// Outputs checked before a run trains: a model file that cannot be written
// must stop the job before its first loop, not lose the trained model after
// the last one.
//
// Pure function of the file system; thread-safe.
#ifndef RIGEL_EXEC_OUTPUT_CHECK_H_
#define RIGEL_EXEC_OUTPUT_CHECK_H_

#include <string>

#include "common/status.h"

namespace rigel::exec {

// Opens `path` for writing (creating it when missing, truncating nothing) and
// removes it again when this call created it. IoError naming `flag`, the path
// and why (a directory that does not exist is named as such) when it cannot
// be written.
Status CheckOutputFile(const std::string& flag, const std::string& path);

// A model file's write failure after training (`st` from WriteParams or
// WriteVectors, whose message starts with the path) as the user reads it:
// "FLAG PATH: write failed: REASON; the trained values were not saved".
// Other errors (a value that cannot be written) and OK pass unchanged.
Status SaveFailed(const std::string& flag, Status st);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_OUTPUT_CHECK_H_
