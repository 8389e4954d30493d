// PsService's rowSync: the server end of the workers' write-back row caches
// (the contract is in ps/service.h and transport/wire/rigel.capnp; the
// bookkeeping in ps/row_versions.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/key_sort.h"
#include "ps/service.h"

namespace rigel::ps {

using transport::Buffer;
using transport::InMessage;
using transport::OutMessage;

namespace {

std::span<const int64_t> AsRows(std::span<const uint64_t> keys) {
  return {reinterpret_cast<const int64_t*>(keys.data()), keys.size()};
}

Buffer U64Buffer(std::vector<uint64_t> v) { return Buffer::FromVector(std::move(v)); }

}  // namespace

// Everything of one message is checked before anything is applied: a bad key
// or a non-finite delta leaves the rows, versions and holders as they were.
Status PsService::CheckRowSync(const InMessage& msg, int* worker) const {
  const transport::PeerId& from = msg.from();
  if (from.role != transport::Role::kWorker || from.rank < 0 || from.rank >= setup_.workers) {
    return InvalidArgument("rowSync from " + from.ToString() +
                           ", which is not a worker of this job");
  }
  *worker = from.rank;
  auto req = msg.header().getBody().getRowSync();
  for (auto sec : req.getSections()) {
    const uint32_t param = sec.getParam();
    if (param >= setup_.params.size()) {
      return InvalidArgument("rowSync: no parameter " + std::to_string(param) + " on this cluster");
    }
    if (!stores_[param]) {
      // A range-sharded parameter may have no rows here: a worker asks every
      // server anyway (for rows due to it), and must not name any row.
      if (sec.getPushKeys().getCount() + sec.getFetchKeys().getCount() +
              sec.getDropKeys().getCount() >
          0) {
        return InvalidArgument("rowSync: no rows of parameter " + std::to_string(param) +
                               " on server " + std::to_string(rank_));
      }
      continue;
    }
    const cluster::ParamSpec& p = setup_.params[param];
    const int64_t width = setup_.Width(static_cast<int>(param));
    transport::RowsView rows = msg.Rows(sec.getPushRows());
    std::span<const uint64_t> push = msg.Keys(sec.getPushKeys());
    if (!push.empty() && rows.width != width) {
      return InvalidArgument("rowSync: '" + p.decl.name + "' has rows of width " +
                             std::to_string(width) + ", not " + std::to_string(rows.width));
    }
    RIGEL_RETURN_IF_ERROR(CheckKeys(static_cast<int>(param), push));
    RIGEL_RETURN_IF_ERROR(CheckKeys(static_cast<int>(param), msg.Keys(sec.getFetchKeys())));
    RIGEL_RETURN_IF_ERROR(CheckKeys(static_cast<int>(param), msg.Keys(sec.getDropKeys())));
    for (size_t k = 0; k < push.size(); ++k) {
      std::span<const float> r = rows.row(k);
      for (size_t c = 0; c < r.size(); ++c) {
        if (!std::isfinite(r[c])) {
          return FailedPrecondition("a merged update of '" + p.decl.name + "' row " +
                                    std::to_string(push[k]) + " is not finite (" +
                                    std::to_string(r[c]) + " at column " + std::to_string(c) + ")");
        }
      }
    }
  }
  return Status::Ok();
}

void PsService::ServeRowSync(const InMessage& msg) {
  int w = -1;
  Status st = CheckRowSync(msg, &w);
  auto req = msg.header().getBody().getRowSync();
  const uint32_t bound = req.getStaleness();
  OutMessage reply;
  auto out = reply.header().getBody().initRowSyncReply().initSections(req.getSections().size());
  uint64_t pushed = 0, sent = 0;
  for (uint32_t i = 0; st.ok() && i < req.getSections().size(); ++i) {
    auto sec = req.getSections()[i];
    const int param = static_cast<int>(sec.getParam());
    auto o = out[i];
    o.setParam(static_cast<uint32_t>(param));
    if (!stores_[param]) {
      for (auto ref : {o.initKeys(), o.initAuditKeys()}) {
        reply.SetKeys(ref, Buffer::FromVector(std::vector<uint64_t>{}));
      }
      reply.SetRows(o.initRows(), Buffer::FromVector(std::vector<float>{}),
                    static_cast<uint32_t>(setup_.Width(param)));
      reply.SetBytes(o.initVersions(), Buffer::FromVector(std::vector<uint64_t>{}));
      reply.SetBytes(o.initAuditVersions(), Buffer::FromVector(std::vector<uint64_t>{}));
      continue;
    }
    RowVersions& versions = Versions(param);
    if (sec.getReset()) versions.DropAll(w);
    std::span<const uint64_t> push = msg.Keys(sec.getPushKeys());
    if (!push.empty()) {
      UpdateOptions add;
      add.rule = UpdateRule::kAdd;
      st = stores_[param]->Push(AsRows(push), msg.Rows(sec.getPushRows()).values.data(), add);
      if (!st.ok()) break;
      MarkChanged(param, push);
      for (uint64_t k : push) versions.Merge(static_cast<int64_t>(k), w, req.getReplica(), bound);
      pushed += push.size();
    }
    for (uint64_t k : msg.Keys(sec.getDropKeys())) versions.Drop(static_cast<int64_t>(k), w);
    // The rows to send: those asked for, and those the worker holds that now
    // lack too many merges; each once, ascending.
    std::vector<int64_t> send = versions.TakeDue(w, bound);
    for (uint64_t k : msg.Keys(sec.getFetchKeys())) send.push_back(static_cast<int64_t>(k));
    std::vector<int64_t> tmp;
    SortKeys(&send, &tmp);
    send.erase(std::unique(send.begin(), send.end()), send.end());
    const int64_t width = setup_.Width(param);
    std::vector<float> rows(send.size() * static_cast<size_t>(width));
    st = stores_[param]->Pull(send, rows.data());
    if (!st.ok()) break;
    std::vector<uint64_t> keys(send.begin(), send.end()), vers(send.size());
    for (size_t k = 0; k < send.size(); ++k) {
      versions.Hold(send[k], w);
      vers[k] = versions.version(send[k]);
    }
    sent += send.size();
    reply.SetKeys(o.initKeys(), U64Buffer(std::move(keys)));
    reply.SetRows(o.initRows(), Buffer::FromVector(std::move(rows)), static_cast<uint32_t>(width));
    reply.SetBytes(o.initVersions(), U64Buffer(std::move(vers)));
    std::vector<uint64_t> audit_keys, audit_versions;
    if (req.getAudit()) {
      std::vector<int64_t> held = versions.Held(w);
      SortKeys(&held, &tmp);
      for (int64_t r : held) {
        audit_keys.push_back(static_cast<uint64_t>(r));
        audit_versions.push_back(versions.version(r));
      }
    }
    reply.SetKeys(o.initAuditKeys(), U64Buffer(std::move(audit_keys)));
    reply.SetBytes(o.initAuditVersions(), U64Buffer(std::move(audit_versions)));
  }
  if (st.ok()) {
    (void)transport_->Respond(msg, std::move(reply));
  } else {
    (void)transport_->RespondError(msg, st);
  }
  MutexLock l(&mu_);
  if (st.ok()) {
    ++stats_.row_syncs;
    stats_.rows_pushed += pushed;
    stats_.rows_pulled += sent;
  } else {
    ++stats_.errors;
  }
}

RowVersions& PsService::Versions(int param) {
  if (versions_.empty()) versions_.resize(setup_.params.size());
  if (!versions_[param]) versions_[param] = std::make_unique<RowVersions>(setup_.workers);
  return *versions_[param];
}

}  // namespace rigel::ps
