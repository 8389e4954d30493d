#include "ps/service.h"

#include <algorithm>

#include "ir/param_init.h"
#include "ps/wire/messages.h"

namespace rigel::ps {

using cluster::ClusterSetup;
using cluster::ParamSpec;

using transport::InMessage;
using transport::OutMessage;

PsService::PsService(transport::Transport* t, int rank, cluster::ClusterSetup setup,
                     cluster::ShardMap map)
    : transport_(t), rank_(rank), setup_(std::move(setup)), map_(std::move(map)) {
  wire::RegisterMessages();
  workers_.resize(setup_.workers);
}

StatusOr<std::unique_ptr<PsService>> PsService::Create(transport::Transport* transport, int rank,
                                                       const cluster::ClusterSetup& setup) {
  if (rank < 0 || rank >= setup.servers) {
    return InvalidArgument("server rank " + std::to_string(rank) + " is outside 0.." +
                           std::to_string(setup.servers - 1));
  }
  RIGEL_ASSIGN_OR_RETURN(cluster::ShardMap map, setup.MakeShardMap());
  std::unique_ptr<PsService> s(new PsService(transport, rank, setup, std::move(map)));
  for (size_t p = 0; p < setup.params.size(); ++p) {
    const ir::ParamDecl decl = setup.params[p].decl;
    int64_t width = setup.Width(static_cast<int>(p));
    // A parameter started from --init-params reads its rows from the file,
    // which must be this process' to read too.
    RIGEL_RETURN_IF_ERROR(ir::OpenInitialValues(decl));
    RowInit init = [decl](int64_t row, float* out) { ir::InitialRow(decl, row, out); };
    if (setup.params[p].hash) {
      s->stores_.push_back(NewHashStore(width, std::move(init)));
      continue;
    }
    auto [begin, end] = s->map_.RangeOf(static_cast<int>(p), rank);
    if (begin >= end) {
      s->stores_.push_back(nullptr);
      continue;
    }
    RIGEL_ASSIGN_OR_RETURN(auto store, NewRangeStore(begin, end, width, init));
    s->stores_.push_back(std::move(store));
  }
  // Not shared yet; the lock only states the rule for these fields.
  MutexLock l(&s->marks_mu_);
  s->changed_.resize(setup.params.size());
  s->dirty_.resize(setup.params.size());
  for (size_t p = 0; p < setup.params.size(); ++p) {
    if (!s->stores_[p]) continue;
    const size_t words = static_cast<size_t>((setup.params[p].rows + 63) / 64);
    s->changed_[p].assign(words, 0);
    s->dirty_[p].assign(words, 0);
  }
  return s;
}

bool PsService::Handle(const InMessage& msg) {
  switch (msg.type()) {
    case transport::TypeId<ps::wire::PullRequest>():
      ServePull(msg);
      return true;
    case transport::TypeId<ps::wire::PushRequest>():
      ServePush(msg);
      return true;
    case transport::TypeId<ps::wire::ClockTick>():
      Tick(msg);
      return true;
    case transport::TypeId<ps::wire::RowSync>():
      ServeRowSync(msg);
      return true;
    case transport::TypeId<ps::wire::CheckpointRequest>():
    case transport::TypeId<ps::wire::RestoreRequest>():
      Enqueue(msg);
      return true;
    default:
      return false;
  }
}

Status PsService::CheckKeys(int param, std::span<const uint64_t> keys) const {
  const cluster::ParamSpec& p = setup_.params[param];
  const bool one_server = setup_.servers == 1;  // every row is ours: skip the hash
  for (uint64_t k : keys) {
    if (k >= static_cast<uint64_t>(p.rows)) {
      return OutOfRange("row " + std::to_string(k) + " of '" + p.decl.name + "' is outside 0.." +
                        std::to_string(p.rows - 1));
    }
    if (!one_server && map_.ServerOf(param, static_cast<int64_t>(k)) != rank_) {
      return InvalidArgument("row " + std::to_string(k) + " of '" + p.decl.name +
                             "' is not held by server " + std::to_string(rank_));
    }
  }
  return Status::Ok();
}

void PsService::ServePull(const InMessage& msg) {
  auto req = msg.Body<ps::wire::PullRequest>();
  uint32_t param = req.getParam();
  uint64_t clock = req.getClock();
  auto fail = [&](const Status& st) {
    MutexLock l(&mu_);
    ++stats_.errors;
    (void)transport_->RespondError(msg, st);
  };
  if (param >= setup_.params.size()) {
    return fail(InvalidArgument("no parameter " + std::to_string(param) + " on this cluster"));
  }
  int64_t width = setup_.Width(static_cast<int>(param));
  if (req.getWidth() != 0 && req.getWidth() != width) {
    return fail(InvalidArgument("'" + setup_.params[param].decl.name + "' has rows of width " +
                                std::to_string(width) + ", not " + std::to_string(req.getWidth())));
  }
  const uint64_t staleness = static_cast<uint64_t>(cluster::ClockStaleness(setup_.options));
  if (clock > staleness && min_clock_ < clock - staleness) {
    waiting_pulls_.push_back(msg);
    MutexLock l(&mu_);
    ++stats_.deferred_pulls;
    return;
  }
  std::span<const uint64_t> keys = msg.Keys(req.getKeys());
  Status st = CheckKeys(static_cast<int>(param), keys);
  if (!st.ok()) return fail(st);
  // Every value is overwritten by the store: no need to zero the rows first.
  size_t n = keys.size() * static_cast<size_t>(width);
  std::shared_ptr<float[]> rows(std::make_unique_for_overwrite<float[]>(n ? n : 1));
  std::span<const int64_t> ikeys(reinterpret_cast<const int64_t*>(keys.data()), keys.size());
  st = stores_[param]->Pull(ikeys, rows.get());
  if (!st.ok()) return fail(st);
  OutMessage reply;
  auto body = reply.InitBody<ps::wire::PullReply>();
  body.setParam(param);
  body.setMinClock(min_clock_);
  const float* data = rows.get();
  reply.SetRows(body.initRows(), transport::Buffer(std::move(rows), data, n * sizeof(float)),
                static_cast<uint32_t>(width));
  (void)transport_->Respond(msg, std::move(reply));
  MutexLock l(&mu_);
  ++stats_.pulls;
  stats_.rows_pulled += keys.size();
}

void PsService::ServePush(const InMessage& msg) {
  auto req = msg.Body<ps::wire::PushRequest>();
  uint32_t param = req.getParam();
  Status st;
  std::span<const uint64_t> keys;
  if (param >= setup_.params.size()) {
    st = InvalidArgument("no parameter " + std::to_string(param) + " on this cluster");
  } else {
    keys = msg.Keys(req.getKeys());
    transport::RowsView rows = msg.Rows(req.getRows());
    int64_t width = setup_.Width(static_cast<int>(param));
    if (rows.width != width || rows.rows != keys.size()) {
      st = InvalidArgument("push to '" + setup_.params[param].decl.name + "' has " +
                           std::to_string(rows.rows) + " rows of width " +
                           std::to_string(rows.width) + " for " + std::to_string(keys.size()) +
                           " keys of width " + std::to_string(width));
    } else {
      st = CheckKeys(static_cast<int>(param), keys);
    }
    if (st.ok()) {
      UpdateOptions o;
      switch (req.getRule()) {
        case wire::UpdateRule::ADD:
          o.rule = UpdateRule::kAdd;
          break;
        case wire::UpdateRule::ASSIGN:
          o.rule = UpdateRule::kAssign;
          break;
        case wire::UpdateRule::SGD:
          o.rule = UpdateRule::kSgd;
          break;
        case wire::UpdateRule::ADAGRAD:
          o.rule = UpdateRule::kAdagrad;
          break;
      }
      o.lr = req.getLr();
      std::span<const int64_t> ikeys(reinterpret_cast<const int64_t*>(keys.data()), keys.size());
      st = stores_[param]->Push(ikeys, rows.values.data(), o);
      if (st.ok()) MarkChanged(static_cast<int>(param), keys);
    }
  }
  if (st.ok()) {
    OutMessage reply;
    auto body = reply.InitBody<ps::wire::PushReply>();
    body.setParam(param);
    body.setApplied(keys.size());
    (void)transport_->Respond(msg, std::move(reply));
  } else {
    (void)transport_->RespondError(msg, st);
  }
  {
    MutexLock l(&mu_);
    if (st.ok()) {
      ++stats_.pushes;
      stats_.rows_pushed += keys.size();
    } else {
      ++stats_.errors;
    }
  }
  // A push counts towards its sender's clock whether or not it applied:
  // the tick that follows it must not wait forever.
  const transport::PeerId& from = msg.from();
  if (from.role == transport::Role::kWorker && from.rank >= 0 && from.rank < setup_.workers) {
    ++workers_[from.rank].pushes_applied;
    Advance();
  }
}

void PsService::Tick(const InMessage& msg) {
  const transport::PeerId& from = msg.from();
  if (from.role != transport::Role::kWorker || from.rank < 0 || from.rank >= setup_.workers) return;
  auto t = msg.Body<ps::wire::ClockTick>();
  workers_[from.rank].ticks.emplace_back(t.getClock(), t.getPushes());
  Advance();
}

void PsService::Advance() {
  uint64_t min = UINT64_MAX;
  for (WorkerClock& w : workers_) {
    while (!w.ticks.empty() && w.pushes_applied >= w.ticks.front().second) {
      w.clock = std::max(w.clock, w.ticks.front().first);
      w.ticks.erase(w.ticks.begin());
    }
    min = std::min(min, w.clock);
  }
  if (min == min_clock_ || min == UINT64_MAX) return;
  min_clock_ = min;
  {
    MutexLock l(&mu_);
    shared_min_clock_ = min;
  }
  std::vector<InMessage> waiting;
  waiting.swap(waiting_pulls_);
  for (const InMessage& m : waiting) ServePull(m);  // those still too early wait again
}

PsStats PsService::stats() const {
  MutexLock l(&mu_);
  return stats_;
}

uint64_t PsService::min_clock() const {
  MutexLock l(&mu_);
  return shared_min_clock_;
}

size_t PsService::bytes() const {
  size_t b = 0;
  for (const auto& s : stores_) b += s ? s->bytes() : 0;
  return b;
}

int64_t PsService::rows() const {
  int64_t n = 0;
  for (const auto& s : stores_) n += s ? s->rows() : 0;
  return n;
}

}  // namespace rigel::ps
