#include "cluster/job_identity.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

#include "common/config.h"
#include "common/file.h"

namespace rigel::cluster {

std::string BinaryVersion() {
  return std::string(RIGEL_VERSION) + " (commit " + RIGEL_GIT_COMMIT + ")";
}

std::string JobKey(std::string_view program_text, const std::vector<std::string>& sets) {
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  XXH64_update(st, program_text.data(), program_text.size());
  for (const std::string& s : sets) {
    // The terminator keeps {"a=1", "b"} and {"a=1b"} apart.
    XXH64_update(st, s.data(), s.size() + 1);
  }
  const uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return fmt::format("xxh64:{:016x}", h);
}

StatusOr<JobIdentity> ProgramIdentity(const std::string& path,
                                      const std::vector<std::string>& sets) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return JobIdentity{BinaryVersion(), JobKey(text, sets), path};
}

Status CheckJoin(const JobIdentity& scheduler, const JobIdentity& member, const std::string& who) {
  if (member.version != scheduler.version) {
    return FailedPrecondition(fmt::format(
        "{} runs rigel {}, the scheduler rigel {}: install the same build on every host", who,
        member.version.empty() ? "(no version given)" : member.version, scheduler.version));
  }
  if (!member.key.empty() && !scheduler.key.empty() && member.key != scheduler.key) {
    return FailedPrecondition(
        fmt::format("{} was started on another job: {} ({}), the scheduler runs {} ({}); "
                    "start every process with the same program and --set flags",
                    who, member.name, member.key, scheduler.name, scheduler.key));
  }
  return Status::Ok();
}

}  // namespace rigel::cluster
