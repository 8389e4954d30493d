// PsService's rowSync: the server end of the workers' write-back row caches
// (the contract is in ps/service.h and ps/wire/ps.capnp; the
// bookkeeping in ps/row_versions.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/key_sort.h"
#include "ps/service.h"
#include "ps/wire/messages.h"

namespace rigel::ps {

using transport::Buffer;
using transport::InMessage;
using transport::OutMessage;

namespace {

std::span<const int64_t> AsRows(std::span<const uint64_t> keys) {
  return {reinterpret_cast<const int64_t*>(keys.data()), keys.size()};
}

Buffer U64Buffer(std::vector<uint64_t> v) { return Buffer::FromVector(std::move(v)); }

// Scaled merges of hot rows (docs/parameter_servers.md): worker w's delta of
// a row it holds lacking L merges by other workers was taken without them,
// and those workers' deltas were taken without it. For a row most elements
// write, each corrects the same error, and adding every one whole
// multiplies the row's step by the writers (summed stale deltas of a row
// every worker writes overshoot, and diverge from 3 workers on). The worker
// flags such rows' pushes (`flags`); each is scaled by 1 / (1 + L) (the
// staleness-aware step of Zhang et al., IJCAI 2016), which averages the
// deltas of a row all workers write at once. Other rows' deltas are added
// whole, as serial SGD applies them. Returns the deltas to add (`deltas`
// itself when none is scaled, else *scaled) and appends the scaled rows to
// *resend: the worker's copy took its delta whole.
const float* ScaleByLag(const RowVersions& versions, int w, std::span<const uint64_t> push,
                        std::span<const uint8_t> flags, const float* deltas, int64_t width,
                        std::vector<float>* scaled, std::vector<int64_t>* resend) {
  for (size_t k = 0; k < push.size() && k < flags.size(); ++k) {
    if (flags[k] == 0) continue;
    const int lag = versions.lacks(static_cast<int64_t>(push[k]), w);
    if (lag <= 0) continue;
    if (scaled->empty()) scaled->assign(deltas, deltas + push.size() * width);
    const float a = 1.0f / static_cast<float>(1 + lag);
    float* row = scaled->data() + k * width;
    for (int64_t c = 0; c < width; ++c) row[c] *= a;
    resend->push_back(static_cast<int64_t>(push[k]));
  }
  return scaled->empty() ? deltas : scaled->data();
}

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
  auto req = msg.Body<ps::wire::RowSync>();
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
    const size_t scaled = msg.Bytes(sec.getPushScaled()).size();
    if (scaled != 0 && scaled != push.size()) {
      return InvalidArgument("rowSync: '" + p.decl.name + "' has " + std::to_string(scaled) +
                             " pushScaled bytes for " + std::to_string(push.size()) + " pushes");
    }
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
  auto req = msg.Body<ps::wire::RowSync>();
  const uint32_t bound = req.getStaleness();
  OutMessage reply;
  auto out = reply.InitBody<ps::wire::RowSyncReply>().initSections(req.getSections().size());
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
    std::vector<int64_t> send;
    if (!push.empty()) {
      UpdateOptions add;
      add.rule = UpdateRule::kAdd;
      const float* deltas = msg.Rows(sec.getPushRows()).values.data();
      std::vector<float> scaled;
      if (!req.getReplica()) {
        const Buffer flags = msg.Bytes(sec.getPushScaled());
        deltas = ScaleByLag(versions, w, push,
                            {reinterpret_cast<const uint8_t*>(flags.data()), flags.size()}, deltas,
                            setup_.Width(param), &scaled, &send);
      }
      st = stores_[param]->Push(AsRows(push), deltas, add);
      if (!st.ok()) break;
      MarkChanged(param, push);
      for (uint64_t k : push) versions.Merge(static_cast<int64_t>(k), w, req.getReplica(), bound);
      pushed += push.size();
    }
    for (uint64_t k : msg.Keys(sec.getDropKeys())) versions.Drop(static_cast<int64_t>(k), w);
    // The rows to send: those scaled, those asked for, and those the worker
    // holds that now lack too many merges; each once, ascending.
    const std::vector<int64_t> due = versions.TakeDue(w, bound);
    send.insert(send.end(), due.begin(), due.end());
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
