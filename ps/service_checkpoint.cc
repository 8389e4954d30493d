// PsService's checkpoints and restores (the contract is in ps/service.h).
#include <algorithm>
#include <bit>

#include "ps/service.h"

namespace rigel::ps {

using transport::InMessage;
using transport::OutMessage;

namespace {

constexpr size_t kMaxChain = 8;  // rows files per server before a full one again

void SetBit(std::vector<uint64_t>& bits, uint64_t row) {
  bits[row >> 6] |= uint64_t{1} << (row & 63);
}

// The rows whose bits are set, ascending.
std::vector<int64_t> Rows(const std::vector<uint64_t>& bits) {
  std::vector<int64_t> out;
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t b = bits[w]; b; b &= b - 1) {
      out.push_back(static_cast<int64_t>(w * 64 + std::countr_zero(b)));
    }
  }
  return out;
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
  if (background_.joinable()) background_.join();
}

void PsService::MarkChanged(int param, std::span<const uint64_t> keys) {
  std::lock_guard<std::mutex> l(ckpt_mu_);
  std::vector<uint64_t>& changed = changed_[param];
  std::vector<uint64_t>& dirty = dirty_[param];
  for (uint64_t k : keys) {
    SetBit(changed, k);
    SetBit(dirty, k);
  }
}

void PsService::StartBackground(const InMessage& msg) {
  // The scheduler asks for one at a time, and only after the last answer.
  if (background_.joinable()) background_.join();
  background_ = std::thread([this, msg] {
    auto body = msg.header().getBody();
    Status st;
    OutMessage reply;
    if (msg.type() == transport::MessageType::CHECKPOINT) {
      auto req = body.getCheckpoint();
      st = WriteCheckpoint(req.getDir().cStr(), req.getSeq());
      if (checkpoint_pause_.count() > 0) std::this_thread::sleep_for(checkpoint_pause_);
      if (st.ok()) {
        std::lock_guard<std::mutex> l(ckpt_mu_);
        auto files = reply.header().getBody().initCheckpointReply().initFiles(
            static_cast<unsigned>(chain_.size()));
        for (size_t k = 0; k < chain_.size(); ++k) {
          files[k].setName(chain_[k].name);
          files[k].setBytes(chain_[k].bytes);
          files[k].setChecksum(chain_[k].checksum);
          files[k].setRows(chain_[k].rows);
        }
      }
    } else {
      auto req = body.getRestore();
      st = Restore(req.getDir().cStr(), FilesOf(req.getFiles()));
      reply.header().getBody().setAck();
    }
    if (st.ok()) {
      (void)transport_->Respond(msg, std::move(reply));
    } else {
      (void)transport_->RespondError(msg, st);
    }
  });
}

Status PsService::WriteCheckpoint(const std::string& dir, uint64_t seq) {
  // Take the rows to write and clear their marks; pushes that come meanwhile
  // (none should) mark rows for the next file.
  std::vector<std::vector<int64_t>> rows(stores_.size());
  std::vector<std::vector<uint64_t>> taken(stores_.size());
  bool full;
  uint64_t count = 0;
  {
    std::lock_guard<std::mutex> l(ckpt_mu_);
    uint64_t dirty = 0;
    for (size_t p = 0; p < stores_.size(); ++p) {
      for (uint64_t w : dirty_[p]) dirty += static_cast<uint64_t>(std::popcount(w));
    }
    // Nothing changed since the last file: the chain as it is says it all.
    if (!chain_.empty() && dirty == 0) return Status::Ok();
    full =
        chain_.empty() || chain_.size() >= kMaxChain || delta_rows_ + dirty > chain_.front().rows;
    for (size_t p = 0; p < stores_.size(); ++p) {
      if (!stores_[p]) continue;
      rows[p] = Rows(full ? changed_[p] : dirty_[p]);
      taken[p].swap(dirty_[p]);
      dirty_[p].assign(taken[p].size(), 0);
      count += rows[p].size();
    }
  }
  std::vector<SnapshotSection> sections;
  Status st;
  for (size_t p = 0; p < stores_.size() && st.ok(); ++p) {
    if (rows[p].empty()) continue;
    SnapshotSection s;
    s.param = static_cast<uint32_t>(p);
    s.width = static_cast<uint32_t>(stores_[p]->width());
    s.values.resize(rows[p].size() * s.width);
    st = stores_[p]->Pull(rows[p], s.values.data());
    s.keys = std::move(rows[p]);
    sections.push_back(std::move(s));
  }
  StatusOr<SnapshotFile> file = st;
  if (st.ok()) file = WriteRowsFile(dir, RowsFileName(seq, rank_), seq, rank_, sections);
  std::lock_guard<std::mutex> l(ckpt_mu_);
  if (!file.ok()) {
    // Not written: the rows stay marked for the next checkpoint.
    for (size_t p = 0; p < stores_.size(); ++p) {
      for (size_t w = 0; w < taken[p].size(); ++w) dirty_[p][w] |= taken[p][w];
    }
    return file.status();
  }
  if (full) {
    chain_.clear();
    delta_rows_ = 0;
  } else {
    delta_rows_ += count;
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
      std::lock_guard<std::mutex> l(ckpt_mu_);
      for (int64_t k : keys) SetBit(changed_[s.param], static_cast<uint64_t>(k));
    }
  }
  return Status::Ok();
}

}  // namespace rigel::ps
