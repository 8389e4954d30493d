// Driver's checkpoints and resumes (docs/operations.md, "Checkpoints"): when
// a checkpoint is due, what it writes and in which order, and how a resumed
// run gets the servers' rows back before any worker runs.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <filesystem>
#include <future>
#include <regex>

#include "cluster/job_identity.h"
#include "common/file.h"
#include "ps/wire/messages.h"
#include "scheduler/driver.h"
#include "transport/message.h"

namespace rigel::scheduler {

using Clock = std::chrono::steady_clock;
using transport::PeerId;
using transport::Role;
namespace fs = std::filesystem;

namespace {

// A server may take long to write a large shard; a dead one is noticed by
// its heartbeats long before this.
constexpr std::chrono::hours kServerTimeout{1};

bool HasTopLevelFor(const ir::Program& prog) {
  for (const ir::DStmt& s : prog.driver) {
    if (s.kind == ir::DStmt::kFor) return true;
  }
  return false;
}

}  // namespace

Status Driver::SetUpCheckpoints() {
  DriverOptions& o = opts_;
  std::vector<std::string> sets;
  for (const auto& [name, value] : o.sets) sets.push_back(name + "=" + value);
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(o.program));
  job_key_ = cluster::JobKey(text, sets);
  program_ir_ = ResumableForm(*prog_);
  for (size_t p = 0; p < setup_.params.size(); ++p) {
    shapes_.push_back(
        {setup_.params[p].decl.name, setup_.params[p].rows, setup_.Width(static_cast<int>(p))});
  }
  if (o.checkpoint_dir.empty() && o.resume.empty()) {
    if (!o.checkpoint_every.empty()) {
      return InvalidArgument("--checkpoint-every needs --checkpoint-dir (or --resume)");
    }
    return Status::Ok();
  }
  if (!HasTopLevelFor(*prog_)) {
    return InvalidArgument("--checkpoint-dir: " + o.program +
                           " has no top-level `for` loop; checkpoints are taken between its "
                           "iterations, so this program would never take one");
  }
  // The directory this job will write is locked before anything in it is
  // read: another job may be writing (or pruning) it.
  std::error_code ec;
  std::string lock_dir = o.checkpoint_dir;
  if (lock_dir.empty()) {
    lock_dir =
        fs::is_directory(o.resume, ec) ? o.resume : fs::path(o.resume).parent_path().string();
    if (lock_dir.empty()) lock_dir = ".";
  } else {
    RIGEL_RETURN_IF_ERROR(PrepareCheckpointDir(o.checkpoint_dir));
  }
  if (fs::is_directory(lock_dir, ec)) {
    RIGEL_ASSIGN_OR_RETURN(lock_, CheckpointLock::Acquire(lock_dir, o.program));
  }
  if (!o.resume.empty()) {
    RIGEL_ASSIGN_OR_RETURN(resumed_path_, FindManifest(o.resume));
    RIGEL_ASSIGN_OR_RETURN(CheckpointManifest m, ReadManifest(resumed_path_));
    RIGEL_RETURN_IF_ERROR(VerifyCheckpoint(resumed_path_, m, job_key_, program_ir_, shapes_));
    std::string dir = std::filesystem::path(resumed_path_).parent_path().string();
    if (dir.empty()) dir = ".";
    RIGEL_ASSIGN_OR_RETURN(exec::DriverState state, ReadDriverState(dir, m.driver));
    Status st = ex_->Restore(state);
    if (!st.ok()) return FailedPrecondition(resumed_path_ + ": " + st.message());
    // Resuming goes on checkpointing where the checkpoint was, as often.
    if (o.checkpoint_dir.empty()) o.checkpoint_dir = dir;
    if (o.checkpoint_every.empty()) o.checkpoint_every = m.every;
    iterations_ = m.iterations;
    next_seq_ = m.seq + 1;
    resumed_ = std::move(m);
  }
  if (o.checkpoint_every.empty()) o.checkpoint_every = "1";
  std::smatch match;
  if (!std::regex_match(o.checkpoint_every, match, std::regex("([0-9]{1,9})(s?)")) ||
      std::stoll(match[1]) == 0) {
    return InvalidArgument(
        "--checkpoint-every: expected N (top-level loop iterations) or Ns "
        "(seconds), N > 0; got '" +
        o.checkpoint_every + "'");
  }
  if (match[2].length() > 0) {
    every_seconds_ = static_cast<double>(std::stoll(match[1]));
  } else {
    every_iterations_ = std::stoll(match[1]);
  }
  o.checkpoint_dir = std::filesystem::absolute(o.checkpoint_dir).lexically_normal().string();
  RIGEL_RETURN_IF_ERROR(PrepareCheckpointDir(o.checkpoint_dir));
  if (!lock_.held()) {
    RIGEL_ASSIGN_OR_RETURN(lock_, CheckpointLock::Acquire(o.checkpoint_dir, o.program));
  }
  const std::string newest = NewestManifest(o.checkpoint_dir);
  if (!resumed_ && !newest.empty()) {
    return FailedPrecondition(o.checkpoint_dir + " already holds checkpoints (the newest is " +
                              newest + "): go on from it with --resume " + o.checkpoint_dir +
                              ", or give an empty or new --checkpoint-dir");
  }
  if (!newest.empty()) {
    // Resuming from an older checkpoint than the directory's newest: the new
    // ones must be numbered after every one there, so the newest stays newest.
    auto m = ReadManifest(newest);
    if (m.ok()) next_seq_ = std::max(next_seq_, m->seq + 1);
  }
  return Status::Ok();
}

std::string Driver::NewestCheckpoint() const {
  return opts_.checkpoint_dir.empty() ? "" : NewestManifest(opts_.checkpoint_dir);
}

Status Driver::ParamsSettled() {
  if (opts_.checkpoint_dir.empty()) return Status::Ok();
  const bool due = every_iterations_ > 0
                       ? (iterations_ + 1) % every_iterations_ == 0
                       : std::chrono::duration<double>(Clock::now() - last_checkpoint_).count() >=
                             every_seconds_;
  if (!due) return Status::Ok();
  copy_start_ = last_checkpoint_ = Clock::now();
  // The previous checkpoint must be complete before the next is taken.
  RIGEL_RETURN_IF_ERROR(FinishCheckpoint());
  // No loop that writes a parameter runs before the checkpoint point, so the
  // servers' rows (with those the workers held: FlushHeldRows) are already
  // the checkpoint's: they copy them while the rest of the iteration (a test
  // loop, prints) goes on.
  RIGEL_RETURN_IF_ERROR(FlushHeldRows());
  copy_due_ = true;
  copy_seq_ = next_seq_++;
  copies_ = AskServers(copy_seq_, false);
  copy_waited_ = std::chrono::duration<double>(Clock::now() - copy_start_).count();
  return Status::Ok();
}

Status Driver::AtCheckpointPoint() {
  ++iterations_;
  if (!copy_due_) return Status::Ok();
  copy_due_ = false;
  return TakeCheckpoint();
}

StatusOr<transport::InMessage> Driver::Await(std::future<StatusOr<transport::InMessage>>& reply) {
  // A server that died is not waited for: the coordinator aborts the job.
  while (reply.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    MutexLock l(&mu_);
    if (!aborted_.ok()) return aborted_;
  }
  return reply.get();
}

std::vector<std::future<StatusOr<transport::InMessage>>> Driver::ToServers(
    const std::function<void(transport::OutMessage&)>& fill) {
  transport::CallOptions co;
  co.timeout = kServerTimeout;
  std::vector<std::future<StatusOr<transport::InMessage>>> replies;
  for (int s = 0; s < opts_.servers; ++s) {
    transport::OutMessage msg;
    fill(msg);
    replies.push_back(transport_->RequestAsync(PeerId{Role::kServer, s}, std::move(msg), co));
  }
  return replies;
}

std::vector<std::future<StatusOr<transport::InMessage>>> Driver::AskServers(uint64_t seq,
                                                                            bool confirm) {
  return ToServers([&](transport::OutMessage& m) {
    auto c = m.InitBody<ps::wire::CheckpointRequest>();
    c.setDir(opts_.checkpoint_dir);
    c.setSeq(seq);
    c.setConfirm(confirm);
  });
}

Status Driver::TakeCheckpoint() {
  // The servers' copies (asked for by ParamsSettled) are all the job waits
  // for: the driver state and then the manifest are written while it goes
  // on (WriteCheckpoint, on a thread of its own).
  const auto wait_start = Clock::now();
  const uint64_t seq = copy_seq_;
  auto copies = std::move(copies_);
  copies_.clear();
  for (int s = 0; s < opts_.servers; ++s) {
    auto r = Await(copies[s]);
    if (!r.ok()) {
      return CheckpointFailed(seq, Status(r.status().code(), "server " + std::to_string(s) + ": " +
                                                                 r.status().message()));
    }
  }
  CheckpointManifest m;
  m.seq = seq;
  m.program = opts_.program;
  m.job_key = job_key_;
  m.program_ir = program_ir_;
  m.params = shapes_;
  m.servers = opts_.servers;
  m.workers = opts_.workers;
  m.iterations = iterations_;
  m.every = opts_.checkpoint_every;
  const double copy_s =
      copy_waited_ + std::chrono::duration<double>(Clock::now() - wait_start).count();
  writing_ = std::thread(
      [this, m = std::move(m), state = ex_->State(), start = copy_start_, copy_s]() mutable {
        // As the servers' writers (ps/service_checkpoint.cc): only the CPU time
        // the job leaves idle, so the driver's files and the manifest do not
        // slow the next epoch on a machine the job fills.
        sched_param idle{};
        (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
        Status st = WriteCheckpoint(std::move(m), state, start, copy_s);
        MutexLock l(&mu_);
        written_ = st;
      });
  return Status::Ok();
}

Status Driver::WriteCheckpoint(CheckpointManifest m, const exec::DriverState& state,
                               Clock::time_point start, double copy_s) {
  const std::string& dir = opts_.checkpoint_dir;
  auto files = AskServers(m.seq, true);
  auto driver = WriteDriverState(dir, m.seq, state);
  Status first = driver.status();
  uint64_t rows = 0, bytes = 0;
  for (int s = 0; s < opts_.servers; ++s) {
    auto r = Await(files[s]);
    if (!r.ok()) {
      if (first.ok()) {
        first =
            Status(r.status().code(), "server " + std::to_string(s) + ": " + r.status().message());
      }
      continue;
    }
    if (!r->Is<ps::wire::CheckpointReply>()) {
      // A peer's answer is input: another type is an error, not a crash.
      if (first.ok()) {
        first = Internal("server " + std::to_string(s) + " answered the checkpoint with " +
                         r->type_name());
      }
      continue;
    }
    for (auto f : r->Body<ps::wire::CheckpointReply>().getFiles()) {
      m.rows.push_back({f.getName().cStr(), f.getBytes(), f.getChecksum(), f.getRows()});
      rows += f.getRows();
      bytes += f.getBytes();
    }
  }
  if (first.ok()) {
    m.driver = *driver;
    first = WriteManifest(dir, m);
  }
  if (!first.ok()) return CheckpointFailed(m.seq, first);
  auto pruned = PruneCheckpoints(dir, 2);
  if (opts_.log) {
    *opts_.log << fmt::format(
        "driver: checkpoint {} written to {} after {} iteration(s): {} row(s) in {} file(s) "
        "({:.1f} MB) in {:.3f} s, of which the job waited {:.4f} s{}\n",
        m.seq, dir, m.iterations, rows, m.rows.size(), bytes / 1e6,
        std::chrono::duration<double>(Clock::now() - start).count(), copy_s,
        pruned.ok() ? fmt::format("; {} old file(s) removed", *pruned)
                    : "; old files not removed: " + pruned.status().message());
  }
  return Status::Ok();
}

Status Driver::FinishCheckpoint() {
  if (writing_.joinable()) writing_.join();
  MutexLock l(&mu_);
  Status st = written_;
  written_ = Status::Ok();
  return st;
}

Status Driver::CheckpointFailed(uint64_t seq, const Status& why) {
  const std::string previous = NewestManifest(opts_.checkpoint_dir);
  return IoError(fmt::format("checkpoint {} failed: {}{}", seq, why.message(),
                             previous.empty() ? std::string("; no earlier checkpoint exists")
                                              : "; the previous checkpoint, " + previous +
                                                    ", is intact (go on from it with --resume " +
                                                    opts_.checkpoint_dir + ")"));
}

Status Driver::RestoreServers() {
  const auto start = Clock::now();
  const std::string dir = std::filesystem::path(resumed_path_).parent_path().string();
  auto replies = ToServers([&](transport::OutMessage& m) {
    auto r = m.InitBody<ps::wire::RestoreRequest>();
    r.setDir(dir.empty() ? "." : dir);
    auto files = r.initFiles(static_cast<unsigned>(resumed_->rows.size()));
    for (size_t k = 0; k < resumed_->rows.size(); ++k) {
      files[k].setName(resumed_->rows[k].name);
      files[k].setBytes(resumed_->rows[k].bytes);
      files[k].setChecksum(resumed_->rows[k].checksum);
      files[k].setRows(resumed_->rows[k].rows);
    }
  });
  for (int s = 0; s < opts_.servers; ++s) {
    auto r = Await(replies[s]);
    if (!r.ok()) {
      return Status(r.status().code(), "restoring " + resumed_path_ + " on server " +
                                           std::to_string(s) + ": " + r.status().message());
    }
  }
  if (opts_.log) {
    *opts_.log << fmt::format(
        "driver: resumed from {} (written by {} server(s) and {} worker(s) after {} "
        "iteration(s)); the servers loaded its rows in {:.3f} s\n",
        resumed_path_, resumed_->servers, resumed_->workers, resumed_->iterations,
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  return Status::Ok();
}

}  // namespace rigel::scheduler
