#include "ps/client.h"

#include <algorithm>
#include <cstring>

#include "common/key_sort.h"
#include "ps/wire/messages.h"

namespace rigel::ps {

using transport::Buffer;
using transport::InMessage;
using transport::OutMessage;
using transport::PeerId;
using transport::Role;

// Deltas not sent yet: per server, sorted runs (one per Push, oldest first),
// merged into one when they pile up and when flushed.
struct PsClient::Pending {
  int64_t width = 1;
  std::vector<std::vector<Run>> runs;  // [server]
};

namespace {

// Completes `done` once all `n` parts have reported, with the first error.
struct Join {
  Join(int n, std::function<void(Status)> d) : left(n), done(std::move(d)) {}
  void One(const Status& st) RIGEL_EXCLUDES(mu) {
    bool last;
    Status first;
    {
      MutexLock l(&mu);
      if (!st.ok() && status.ok()) status = st;
      last = --left == 0;
      if (last) first = status;
    }
    if (last) done(first);
  }
  Mutex mu;
  int left RIGEL_GUARDED_BY(mu);
  Status status RIGEL_GUARDED_BY(mu);
  std::function<void(Status)> done;
};

// Calls fn(i, j) for every key present in both sorted lists a and b.
template <typename Fn>
void ForCommonKeys(std::span<const uint64_t> a, std::span<const uint64_t> b, const Fn& fn) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      fn(i++, j++);
    }
  }
}

void AddRow(float* to, const float* from, int64_t width) {
  for (int64_t c = 0; c < width; ++c) to[c] += from[c];
}

}  // namespace

// Merges `runs` (oldest first) into one, adding rows of equal keys in run
// order, so the sums round as if the deltas had been added as they came.
PsClient::Run PsClient::MergeRuns(std::vector<Run> runs, int64_t width, uint64_t* merged) {
  Run acc = std::move(runs[0]);
  for (size_t r = 1; r < runs.size(); ++r) {
    const Run& b = runs[r];
    Run out;
    out.keys.reserve(acc.keys.size() + b.keys.size());
    out.values.reserve(out.keys.capacity() * width);
    size_t i = 0, j = 0;
    while (i < acc.keys.size() || j < b.keys.size()) {
      const float* ra = acc.values.data() + i * width;
      const float* rb = b.values.data() + j * width;
      if (j == b.keys.size() || (i < acc.keys.size() && acc.keys[i] < b.keys[j])) {
        out.keys.push_back(acc.keys[i++]);
        out.values.insert(out.values.end(), ra, ra + width);
      } else if (i == acc.keys.size() || b.keys[j] < acc.keys[i]) {
        out.keys.push_back(b.keys[j++]);
        out.values.insert(out.values.end(), rb, rb + width);
      } else {
        out.keys.push_back(acc.keys[i++]);
        out.values.insert(out.values.end(), ra, ra + width);
        AddRow(out.values.data() + (out.keys.size() - 1) * width, rb, width);
        ++j;
        ++*merged;
      }
    }
    acc = std::move(out);
  }
  return acc;
}

// One run per server of `keys`/`rows`: keys sorted, repeated keys merged (in
// input order) into one row.
std::vector<PsClient::Run> PsClient::MakeRuns(int param, std::span<const int64_t> keys,
                                              const float* rows, uint64_t* merged) const {
  const int servers = map_.servers();
  const int64_t width = map_.params()[param].width;
  std::vector<int64_t> sorted;
  std::vector<uint32_t> order = SortedOrder(keys, &sorted);
  // Count each server's distinct keys first so every run is sized once.
  std::vector<uint16_t> server_of;  // per distinct key, when servers > 1
  std::vector<size_t> count(servers, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && sorted[i] == sorted[i - 1]) continue;
    int s = servers == 1 ? 0 : map_.ServerOf(param, sorted[i]);
    if (servers > 1) server_of.push_back(static_cast<uint16_t>(s));
    ++count[s];
  }
  std::vector<Run> runs(servers);
  for (int s = 0; s < servers; ++s) {
    runs[s].keys.resize(count[s]);
    runs[s].values.resize(count[s] * width);
    count[s] = 0;  // now the fill position
  }
  float* last = nullptr;
  size_t distinct = 0;
  const size_t lines = std::min<size_t>((sizeof(float) * width + 63) / 64, 8);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < order.size(); ++i) {
    // The rows are read in key order, i.e. scattered: fetch ahead.
    if (i + kAhead < order.size()) {
      const char* ahead = reinterpret_cast<const char*>(rows + size_t{order[i + kAhead]} * width);
      for (size_t l = 0; l < lines; ++l) __builtin_prefetch(ahead + 64 * l);
    }
    const float* src = rows + static_cast<size_t>(order[i]) * width;
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      AddRow(last, src, width);
      ++*merged;
      continue;
    }
    int s = servers == 1 ? 0 : server_of[distinct];
    ++distinct;
    size_t j = count[s]++;
    runs[s].keys[j] = static_cast<uint64_t>(sorted[i]);
    last = runs[s].values.data() + j * width;
    std::memcpy(last, src, sizeof(float) * width);
  }
  return runs;
}

PsClient::PsClient(transport::Transport* transport, cluster::ShardMap map, PsClientOptions options)
    : transport_(transport), map_(std::move(map)), opts_(options) {
  wire::RegisterMessages();
  pushes_sent_.assign(map_.servers(), 0);
  for (const cluster::ShardedParam& p : map_.params()) {
    pending_.push_back(std::make_unique<Pending>());
    pending_.back()->width = p.width;
    pending_.back()->runs.resize(map_.servers());
  }
}

PsClient::~PsClient() = default;

Status PsClient::CheckKeys(int param, std::span<const int64_t> keys) const {
  if (param < 0 || param >= static_cast<int>(map_.params().size())) {
    return InvalidArgument("no parameter " + std::to_string(param));
  }
  int64_t rows = map_.params()[param].rows;
  for (int64_t k : keys) {
    if (k < 0 || k >= rows) {
      return InvalidArgument("row " + std::to_string(k) + " of '" + map_.params()[param].name +
                             "' is outside 0.." + std::to_string(rows - 1));
    }
  }
  return Status::Ok();
}

std::future<StatusOr<std::vector<float>>> PsClient::Pull(int param, std::span<const int64_t> keys) {
  auto promise = std::make_shared<std::promise<StatusOr<std::vector<float>>>>();
  auto f = promise->get_future();
  Status st = CheckKeys(param, keys);
  if (!st.ok()) {
    promise->set_value(st);
    return f;
  }
  PullDirect(param, keys, 0, true, std::move(promise));
  return f;
}

// The rows go straight from the replies to the result: the keys are sorted
// once (remembering where each came from), each server gets its distinct
// keys, and each reply row is copied to every position that asked for it.
std::future<StatusOr<std::vector<float>>> PsClient::PullSynchronous(int param,
                                                                    std::span<const int64_t> keys) {
  // Servers answer a pull at clock c once every worker finished c - s: asking
  // as if s clocks ahead makes them wait for clock() itself.
  return PullAhead(param, keys, static_cast<uint64_t>(opts_.staleness));
}

std::future<StatusOr<std::vector<float>>> PsClient::PullAhead(int param,
                                                              std::span<const int64_t> keys,
                                                              uint64_t clocks) {
  auto promise = std::make_shared<std::promise<StatusOr<std::vector<float>>>>();
  auto f = promise->get_future();
  Status st = CheckKeys(param, keys);
  if (st.ok() && clocks > static_cast<uint64_t>(opts_.staleness)) {
    st = InvalidArgument("a pull " + std::to_string(clocks) +
                         " clocks ahead would wait for this worker's own clocks (staleness " +
                         std::to_string(opts_.staleness) + ")");
  }
  if (!st.ok()) {
    promise->set_value(st);
    return f;
  }
  // The rows as the servers hold them: this worker's deltas pushed after the
  // request was sent may or may not be in them, but must not be added again
  // (a deferred answer can already hold deltas still listed as pending).
  PullDirect(param, keys, clocks, clocks == static_cast<uint64_t>(opts_.staleness),
             std::move(promise));
  return f;
}

void PsClient::PullDirect(int param, std::span<const int64_t> keys, uint64_t lead, bool own_writes,
                          std::shared_ptr<std::promise<StatusOr<std::vector<float>>>> promise) {
  struct State {
    std::vector<uint32_t> order;  // positions of the keys, in key order
    std::vector<uint32_t> first;  // distinct key u is at order[first[u] .. first[u + 1])
    std::vector<std::vector<uint32_t>> distinct;  // [server]: its request's distinct keys u
    std::vector<float> out;
  };
  const int servers = map_.servers();
  const int64_t width = map_.params()[param].width;
  auto state = std::make_shared<State>();
  std::vector<int64_t> sorted;
  state->order = SortedOrder(keys, &sorted);
  state->distinct.resize(servers);
  std::vector<std::shared_ptr<std::vector<uint64_t>>> request(servers);
  for (auto& r : request) r = std::make_shared<std::vector<uint64_t>>();
  for (size_t i = 0; i < sorted.size(); ++i) {
    int64_t key = sorted[i];
    if (i > 0 && key == sorted[i - 1]) continue;
    int s = servers == 1 ? 0 : map_.ServerOf(param, key);
    if (servers > 1) state->distinct[s].push_back(static_cast<uint32_t>(state->first.size()));
    state->first.push_back(static_cast<uint32_t>(i));
    request[s]->push_back(static_cast<uint64_t>(key));
  }
  state->first.push_back(static_cast<uint32_t>(state->order.size()));
  state->out.resize(keys.size() * width);
  int parts = 0;
  for (const auto& r : request)
    parts += static_cast<int>((r->size() + kChunkKeys - 1) / kChunkKeys);
  if (parts == 0) return promise->set_value(std::move(state->out));
  auto join = std::make_shared<Join>(parts, [state, promise](Status st) {
    if (st.ok()) {
      promise->set_value(std::move(state->out));
    } else {
      promise->set_value(st);
    }
  });
  uint64_t clock;
  {
    MutexLock l(&mu_);
    clock = clock_ + lead;
  }
  for (int s = 0; s < servers; ++s) {
    const std::vector<uint64_t>& all = *request[s];
    for (size_t begin = 0; begin < all.size(); begin += kChunkKeys) {
      size_t len = std::min(kChunkKeys, all.size() - begin);
      std::span<const uint64_t> skeys(all.data() + begin, len);
      OutMessage msg;
      auto req = msg.InitBody<ps::wire::PullRequest>();
      req.setParam(static_cast<uint32_t>(param));
      req.setWidth(static_cast<uint32_t>(width));
      req.setClock(clock);
      msg.SetKeys(req.initKeys(), Buffer(request[s], skeys.data(), len * sizeof(uint64_t)));
      auto on_reply = [this, param, s, begin, skeys, width, own_writes, keep = request[s], state,
                       join](StatusOr<InMessage> r) {
        if (!r.ok()) return join->One(r.status());
        if (!r->Is<ps::wire::PullReply>()) {
          return join->One(Internal(std::string("a pull was answered with ") + r->type_name()));
        }
        transport::RowsView rows = r->Rows(r->Body<ps::wire::PullReply>().getRows());
        if (rows.rows != skeys.size() || rows.width != width) {
          return join->One(Internal("a pull reply has " + std::to_string(rows.rows) + " rows for " +
                                    std::to_string(skeys.size()) + " keys"));
        }
        const bool one_server = state->distinct[s].empty();
        auto distinct = [&](size_t k) {
          return one_server ? begin + k : state->distinct[s][begin + k];
        };
        // Copies to every position of distinct key u, or adds to them.
        auto put = [&](size_t u, const float* row, bool add) {
          for (uint32_t i = state->first[u]; i < state->first[u + 1]; ++i) {
            float* to = state->out.data() + static_cast<size_t>(state->order[i]) * width;
            if (add) {
              AddRow(to, row, width);
            } else {
              std::memcpy(to, row, sizeof(float) * width);
            }
          }
        };
        const size_t lines = std::min<size_t>((sizeof(float) * width + 63) / 64, 8);
        for (size_t k = 0; k < skeys.size(); ++k) {
          // Positions are scattered over the result: fetch ahead for writing.
          if (k + 8 < skeys.size()) {
            const char* ahead = reinterpret_cast<const char*>(
                state->out.data() + size_t{state->order[state->first[distinct(k + 8)]]} * width);
            for (size_t l = 0; l < lines; ++l) __builtin_prefetch(ahead + 64 * l, 1);
          }
          put(distinct(k), rows.row(k).data(), false);
        }
        {
          MutexLock l(&mu_);
          // Deltas not sent yet are ours to see.
          for (const Run& run : own_writes ? pending_[param]->runs[s] : std::vector<Run>{}) {
            ForCommonKeys(skeys, run.keys, [&](size_t k, size_t j) {
              put(distinct(k), run.values.data() + j * width, true);
            });
          }
          ++stats_.pull_requests;
          stats_.rows_pulled += skeys.size();
        }
        // Last: once the caller has its rows it may destroy this client,
        // mutex included, so nothing of it may be touched after this.
        join->One(Status::Ok());
      };
      Status st =
          transport_->Request(PeerId{Role::kServer, s}, std::move(msg), on_reply, opts_.call);
      if (!st.ok()) join->One(st);
    }
  }
}

Status PsClient::Push(int param, std::span<const int64_t> keys, const float* deltas) {
  RIGEL_RETURN_IF_ERROR(CheckKeys(param, keys));
  // Sorting and merging need no lock; only adding the runs does.
  uint64_t merged = 0;
  std::vector<Run> runs = MakeRuns(param, keys, deltas, &merged);
  MutexLock l(&mu_);
  Pending& p = *pending_[param];
  for (int s = 0; s < map_.servers(); ++s) {
    if (runs[s].keys.empty()) continue;
    std::vector<Run>& mine = p.runs[s];
    mine.push_back(std::move(runs[s]));
    // Many small pushes: keep the runs few, so reads of pending deltas and
    // the flush stay cheap.
    constexpr size_t kMaxRuns = 8;
    if (mine.size() > kMaxRuns) {
      Run one = MergeRuns(std::move(mine), p.width, &merged);
      mine.clear();
      mine.push_back(std::move(one));
    }
  }
  stats_.merged += merged;
  return Status::Ok();
}

std::future<Status> PsClient::Flush() {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> f = promise->get_future();
  struct Batch {
    int param, server;
    Run run;
  };
  std::vector<Batch> batches;
  uint64_t clock;
  size_t requests = 0;
  {
    // Merged and counted under the lock: a clock tick sent meanwhile must
    // count every request of this flush.
    MutexLock l(&mu_);
    clock = clock_;
    for (size_t param = 0; param < pending_.size(); ++param) {
      Pending& p = *pending_[param];
      for (int s = 0; s < map_.servers(); ++s) {
        if (p.runs[s].empty()) continue;
        Run run = MergeRuns(std::move(p.runs[s]), p.width, &stats_.merged);
        p.runs[s].clear();
        size_t chunks = (run.keys.size() + kChunkKeys - 1) / kChunkKeys;
        pushes_sent_[s] += chunks;
        requests += chunks;
        stats_.push_requests += chunks;
        stats_.rows_pushed += run.keys.size();
        batches.push_back(Batch{static_cast<int>(param), s, std::move(run)});
      }
    }
  }
  if (batches.empty()) {
    promise->set_value(Status::Ok());
    return f;
  }
  auto join = std::make_shared<Join>(static_cast<int>(requests),
                                     [promise](Status s) { promise->set_value(s); });
  for (Batch& b : batches) {
    const size_t n = b.run.keys.size();
    const int64_t width = map_.params()[b.param].width;
    Buffer keys = Buffer::FromVector(std::move(b.run.keys));
    Buffer rows = Buffer::FromVector(std::move(b.run.values));
    // Chunks of one buffer, sent back to back: the server applies the first
    // while the next are still on the wire.
    for (size_t begin = 0; begin < n; begin += kChunkKeys) {
      size_t len = std::min(kChunkKeys, n - begin);
      OutMessage msg;
      auto req = msg.InitBody<ps::wire::PushRequest>();
      req.setParam(static_cast<uint32_t>(b.param));
      req.setRule(wire::UpdateRule::ADD);
      req.setClock(clock);
      msg.SetKeys(req.initKeys(), keys.Slice(begin * sizeof(uint64_t), len * sizeof(uint64_t)));
      msg.SetRows(req.initRows(),
                  rows.Slice(begin * width * sizeof(float), len * width * sizeof(float)),
                  static_cast<uint32_t>(width));
      Status st = transport_->Request(
          PeerId{Role::kServer, b.server}, std::move(msg),
          [join](StatusOr<InMessage> r) {
            join->One(r.ok() && !r->Is<ps::wire::PushReply>()
                          ? Internal("a push was not answered with pushReply")
                          : r.status());
          },
          opts_.call);
      if (!st.ok()) join->One(st);
    }
  }
  return f;
}

Status PsClient::AdvanceClock() {
  std::future<Status> flushed = Flush();
  if (opts_.staleness > 0) {
    // A pull may then be answered before this worker's own pushes are
    // applied, and would miss them: they are no longer pending.
    RIGEL_RETURN_IF_ERROR(flushed.get());
  } else {
    // With no staleness every pull waits at the server until each worker's
    // clock is finished, which the tick's push count makes include these
    // pushes: the tick need not wait for their answers, one round trip
    // less per clock. The previous clock's answers came meanwhile.
    RIGEL_RETURN_IF_ERROR(WaitForPushes());
    MutexLock l(&mu_);
    unacked_ = std::move(flushed);
  }
  uint64_t clock;
  std::vector<uint64_t> pushes;
  {
    MutexLock l(&mu_);
    clock = ++clock_;
    pushes = pushes_sent_;
  }
  Status first;
  for (int s = 0; s < map_.servers(); ++s) {
    OutMessage msg;
    auto tick = msg.InitBody<ps::wire::ClockTick>();
    tick.setClock(clock);
    tick.setPushes(pushes[s]);
    Status st = transport_->Send(PeerId{Role::kServer, s}, std::move(msg), opts_.call);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Status PsClient::WaitForPushes() {
  Status first = Flush().get();
  std::future<Status> earlier;
  {
    MutexLock l(&mu_);
    earlier = std::move(unacked_);
  }
  if (earlier.valid()) {
    Status st = earlier.get();
    if (first.ok()) first = st;
  }
  return first;
}

uint64_t PsClient::clock() const {
  MutexLock l(&mu_);
  return clock_;
}

PsClientStats PsClient::stats() const {
  MutexLock l(&mu_);
  return stats_;
}

}  // namespace rigel::ps
