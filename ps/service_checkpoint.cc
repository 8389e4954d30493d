// PsService's checkpoints and restores (the contract is in ps/service.h).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <bit>

#include "common/check.h"
#include "ps/service.h"
#include "ps/wire/messages.h"

namespace rigel::ps {

using transport::InMessage;
using transport::OutMessage;

namespace {

constexpr size_t kMaxChain = 8;  // rows files per server before a full one again

void SetBit(std::vector<uint64_t>& bits, uint64_t row) {
  bits[row >> 6] |= uint64_t{1} << (row & 63);
}

// The rows whose bits are set, ascending, into `out` (whose capacity is kept).
void Rows(const std::vector<uint64_t>& bits, std::vector<int64_t>* out) {
  out->clear();
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t b = bits[w]; b; b &= b - 1) {
      out->push_back(static_cast<int64_t>(w * 64 + std::countr_zero(b)));
    }
  }
}

std::vector<SnapshotFile> FilesOf(capnp::List<wire::CheckpointFile>::Reader list) {
  std::vector<SnapshotFile> out;
  for (auto f : list) {
    out.push_back(SnapshotFile{f.getName().cStr(), f.getBytes(), f.getChecksum(), f.getRows()});
  }
  return out;
}

}  // namespace

PsService::~PsService() {
  {
    MutexLock l(&ckpt_mu_);
    stopping_ = true;
  }
  queued_.NotifyAll();
  if (background_.joinable()) background_.join();
}

void PsService::MarkChanged(int param, std::span<const uint64_t> keys) {
  MutexLock l(&marks_mu_);
  std::vector<uint64_t>& changed = changed_[param];
  std::vector<uint64_t>& dirty = dirty_[param];
  for (uint64_t k : keys) {
    SetBit(changed, k);
    SetBit(dirty, k);
  }
}

void PsService::Enqueue(const InMessage& msg) {
  // A copy is taken here and answered at once, rather than after a
  // hand-over to the thread that writes it: the checkpoint point waits for
  // it, and loops that only read may be waiting behind it on this thread.
  // Everything else goes to that thread, in order.
  std::unique_ptr<Copy> copy;
  if (msg.Is<ps::wire::CheckpointRequest>() &&
      !msg.Body<ps::wire::CheckpointRequest>().getConfirm()) {
    auto req = msg.Body<ps::wire::CheckpointRequest>();
    copy = TakeCopy(req.getDir().cStr(), req.getSeq());
    OutMessage reply;
    reply.InitBody<transport::wire::Ack>();
    (void)transport_->Respond(msg, std::move(reply));
  }
  {
    MutexLock l(&ckpt_mu_);
    queue_.push_back(Task{msg, std::move(copy)});
    if (!background_.joinable()) background_ = std::thread([this] { Background(); });
  }
  queued_.NotifyAll();
}

void PsService::Background() {
  // Files are written while the next loop run goes on: this thread takes
  // only the CPU time the run leaves idle (Linux's SCHED_IDLE), so that on a
  // machine whose cores the workers fill, a checkpoint does not slow the
  // run; it then finishes while the run waits between steps or at its end.
  sched_param idle{};
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  for (;;) {
    Task task;
    {
      MutexLock l(&ckpt_mu_);
      while (!stopping_ && queue_.empty()) queued_.Wait(&ckpt_mu_);
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    Serve(task);
  }
}

void PsService::Serve(Task& task) {
  const InMessage& msg = task.msg;
  OutMessage reply;
  if (msg.Is<ps::wire::RestoreRequest>()) {
    auto req = msg.Body<ps::wire::RestoreRequest>();
    Status st = Restore(req.getDir().cStr(), FilesOf(req.getFiles()));
    reply.InitBody<transport::wire::Ack>();
    (void)(st.ok() ? transport_->Respond(msg, std::move(reply))
                   : transport_->RespondError(msg, st));
    return;
  }
  auto req = msg.Body<ps::wire::CheckpointRequest>();
  if (req.getConfirm()) {
    // Every copy queued before this one has been written by now.
    MutexLock l(&ckpt_mu_);
    if (!last_write_.ok()) {
      (void)transport_->RespondError(msg, last_write_);
      return;
    }
    auto files =
        reply.InitBody<ps::wire::CheckpointReply>().initFiles(static_cast<unsigned>(chain_.size()));
    for (size_t k = 0; k < chain_.size(); ++k) {
      files[k].setName(chain_[k].name);
      files[k].setBytes(chain_[k].bytes);
      files[k].setChecksum(chain_[k].checksum);
      files[k].setRows(chain_[k].rows);
    }
    (void)transport_->Respond(msg, std::move(reply));
    return;
  }
  // The copy was taken and answered (Enqueue); the scheduler asks for the
  // file (`confirm`) before it writes the manifest.
  Status st = task.copy ? WriteCopy(*task.copy) : Status::Ok();
  if (checkpoint_pause_.count() > 0) std::this_thread::sleep_for(checkpoint_pause_);
  MutexLock l(&ckpt_mu_);
  last_write_ = st;
  if (task.copy) spare_ = std::move(task.copy->sections);
}

std::unique_ptr<PsService::Copy> PsService::TakeCopy(const std::string& dir, uint64_t seq) {
  auto copy = std::make_unique<Copy>();
  copy->dir = dir;
  copy->seq = seq;
  copy->taken.resize(stores_.size());
  size_t chain = 0;
  uint64_t base_rows = 0, delta_rows = 0;
  {
    MutexLock l(&ckpt_mu_);
    chain = chain_.size();
    base_rows = chain ? chain_.front().rows : 0;
    delta_rows = delta_rows_;
    copy->sections.swap(spare_);
  }
  // A section per parameter (none for those not held here: WriteRowsFile
  // leaves out sections without rows), in the last copy's buffers.
  std::vector<SnapshotSection>& sections = copy->sections;
  sections.resize(stores_.size());
  bool unchanged = false;
  {
    MutexLock l(&marks_mu_);
    uint64_t dirty = 0;
    for (size_t p = 0; p < stores_.size(); ++p) {
      for (uint64_t w : dirty_[p]) dirty += static_cast<uint64_t>(std::popcount(w));
    }
    // Nothing changed since the last file: the chain as it is says it all.
    unchanged = chain > 0 && dirty == 0;
    // Deltas as large as the base would make a resume read every row twice.
    copy->full = chain == 0 || chain >= kMaxChain || delta_rows + dirty >= base_rows;
    for (size_t p = 0; p < stores_.size() && !unchanged; ++p) {
      sections[p].keys.clear();
      if (!stores_[p]) continue;
      Rows(copy->full ? changed_[p] : dirty_[p], &sections[p].keys);
      copy->taken[p].swap(dirty_[p]);
      dirty_[p].assign(copy->taken[p].size(), 0);
      copy->rows += sections[p].keys.size();
    }
  }
  if (unchanged) {
    MutexLock l(&ckpt_mu_);
    spare_ = std::move(copy->sections);
    return nullptr;
  }
  for (size_t p = 0; p < stores_.size(); ++p) {
    SnapshotSection& s = sections[p];
    if (s.keys.empty()) continue;
    s.param = static_cast<uint32_t>(p);
    s.width = static_cast<uint32_t>(stores_[p]->width());
    s.values.resize(s.keys.size() * s.width);
    // The keys are this store's own: a pull cannot fail.
    RIGEL_CHECK(stores_[p]->Pull(s.keys, s.values.data()).ok());
  }
  return copy;
}

Status PsService::WriteCopy(Copy& copy) {
  auto file =
      WriteRowsFile(copy.dir, RowsFileName(copy.seq, rank_), copy.seq, rank_, copy.sections);
  if (!file.ok()) {
    // Not written: the rows stay marked for the next checkpoint.
    MutexLock l(&marks_mu_);
    for (size_t p = 0; p < stores_.size(); ++p) {
      for (size_t w = 0; w < copy.taken[p].size(); ++w) dirty_[p][w] |= copy.taken[p][w];
    }
    return file.status();
  }
  MutexLock l(&ckpt_mu_);
  if (copy.full) {
    chain_.clear();
    delta_rows_ = 0;
  } else {
    delta_rows_ += copy.rows;
  }
  chain_.push_back(*file);
  return Status::Ok();
}

Status PsService::Restore(const std::string& dir, const std::vector<SnapshotFile>& files) {
  // Every file is read and checked before any row is assigned.
  std::vector<std::vector<SnapshotSection>> all;
  for (const SnapshotFile& f : files) {
    RIGEL_ASSIGN_OR_RETURN(auto sections, ReadRowsFile(dir, f));
    for (const SnapshotSection& s : sections) {
      if (s.param >= setup_.params.size() || s.width != setup_.Width(static_cast<int>(s.param))) {
        return IoError(dir + "/" + f.name + ": holds rows of parameter " + std::to_string(s.param) +
                       " of width " + std::to_string(s.width) +
                       ", which this program does not have");
      }
      for (int64_t k : s.keys) {
        if (k < 0 || k >= setup_.params[s.param].rows) {
          return IoError(dir + "/" + f.name + ": holds row " + std::to_string(k) + " of '" +
                         setup_.params[s.param].decl.name + "', which has " +
                         std::to_string(setup_.params[s.param].rows) + " rows");
        }
      }
    }
    all.push_back(std::move(sections));
  }
  UpdateOptions assign;
  assign.rule = UpdateRule::kAssign;
  for (const auto& sections : all) {
    for (const SnapshotSection& s : sections) {
      if (!stores_[s.param]) continue;
      std::vector<int64_t> keys;
      std::vector<float> values;
      for (size_t k = 0; k < s.keys.size(); ++k) {
        if (map_.ServerOf(static_cast<int>(s.param), s.keys[k]) != rank_) continue;
        keys.push_back(s.keys[k]);
        values.insert(values.end(), s.values.begin() + k * s.width,
                      s.values.begin() + (k + 1) * s.width);
      }
      RIGEL_RETURN_IF_ERROR(stores_[s.param]->Push(keys, values.data(), assign));
      MutexLock l(&marks_mu_);
      for (int64_t k : keys) SetBit(changed_[s.param], static_cast<uint64_t>(k));
    }
  }
  return Status::Ok();
}

}  // namespace rigel::ps
