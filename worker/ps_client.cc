#include "worker/ps_client.h"

#include <algorithm>
#include <cstring>

#include "worker/flat_index.h"

namespace rigel::worker {

using transport::Buffer;
using transport::InMessage;
using transport::OutMessage;
using transport::PeerId;
using transport::Role;

// Rows this worker has seen, with the server's minimum clock when fetched.
struct PsClient::Cache {
  int64_t width = 1;
  FlatIndex slot;
  std::vector<uint64_t> version;
  std::vector<float> values;

  float* Row(uint32_t s) { return values.data() + s * width; }
  uint32_t Slot(int64_t key) {
    bool fresh;
    uint32_t s = slot.FindOrInsert(key, static_cast<uint32_t>(version.size()), &fresh);
    if (fresh) {
      version.push_back(0);
      values.resize(values.size() + width);
    }
    return s;
  }
  bool Fresh(int64_t key, uint64_t clock, int staleness) const {
    uint32_t s = slot.Find(key);
    return s != FlatIndex::kNone && version[s] + staleness >= clock;
  }
};

// Deltas not sent yet, one merged row per key.
struct PsClient::Pending {
  int64_t width = 1;
  FlatIndex slot;
  std::vector<int64_t> keys;
  std::vector<float> values;
};

namespace {

// Completes `done` once all `n` parts have reported, with the first error.
struct Join {
  Join(int n, std::function<void(Status)> d) : left(n), done(std::move(d)) {}
  void One(const Status& st) {
    bool last;
    {
      std::lock_guard<std::mutex> l(mu);
      if (!st.ok() && status.ok()) status = st;
      last = --left == 0;
    }
    if (last) done(status);
  }
  std::mutex mu;
  int left;
  Status status;
  std::function<void(Status)> done;
};

Buffer KeysBuffer(const std::shared_ptr<std::vector<uint64_t>>& keys) {
  return Buffer(keys, keys->data(), keys->size() * sizeof(uint64_t));
}

}  // namespace

PsClient::PsClient(transport::Transport* transport, analysis::ShardMap map, PsClientOptions options)
    : transport_(transport), map_(std::move(map)), opts_(options) {
  pushes_sent_.assign(map_.servers(), 0);
  for (const analysis::ShardedParam& p : map_.params()) {
    cache_.push_back(std::make_unique<Cache>());
    cache_.back()->width = p.width;
    pending_.push_back(std::make_unique<Pending>());
    pending_.back()->width = p.width;
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

void PsClient::Fetch(int param, std::vector<int64_t> keys, std::function<void(Status)> done) {
  std::vector<std::vector<int64_t>> by_server;
  map_.Split(param, keys, &by_server, nullptr);
  int parts = 0;
  for (const auto& v : by_server) parts += !v.empty();
  if (parts == 0) return done(Status::Ok());
  auto join = std::make_shared<Join>(parts, std::move(done));
  uint64_t clock;
  {
    std::lock_guard<std::mutex> l(mu_);
    clock = clock_;
  }
  int64_t width = map_.params()[param].width;
  for (int s = 0; s < map_.servers(); ++s) {
    if (by_server[s].empty()) continue;
    auto skeys = std::make_shared<std::vector<uint64_t>>(by_server[s].begin(), by_server[s].end());
    OutMessage msg;
    auto req = msg.header().getBody().initPullRequest();
    req.setParam(static_cast<uint32_t>(param));
    req.setWidth(static_cast<uint32_t>(width));
    req.setClock(clock);
    msg.SetKeys(req.initKeys(), KeysBuffer(skeys));
    auto on_reply = [this, param, skeys, join](StatusOr<InMessage> r) {
      if (!r.ok()) return join->One(r.status());
      if (r->type() != transport::MessageType::PULL_REPLY) {
        return join->One(Internal(std::string("a pull was answered with ") +
                                  transport::MessageTypeName(r->type())));
      }
      auto reply = r->header().getBody().getPullReply();
      transport::RowsView rows = r->Rows(reply.getRows());
      uint64_t version = reply.getMinClock();
      if (rows.rows != skeys->size() || rows.width != map_.params()[param].width) {
        return join->One(Internal("a pull reply has " + std::to_string(rows.rows) + " rows for " +
                                  std::to_string(skeys->size()) + " keys"));
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        Cache& c = *cache_[param];
        Pending& p = *pending_[param];
        for (size_t k = 0; k < skeys->size(); ++k) {
          int64_t key = static_cast<int64_t>((*skeys)[k]);
          uint32_t s = c.Slot(key);
          float* row = c.Row(s);
          std::memcpy(row, rows.row(k).data(), sizeof(float) * c.width);
          c.version[s] = version;
          // Deltas not sent yet are ours to see.
          uint32_t pd = p.slot.Find(key);
          if (pd != FlatIndex::kNone) {
            const float* d = p.values.data() + pd * p.width;
            for (int64_t w = 0; w < c.width; ++w) row[w] += d[w];
          }
        }
        ++stats_.pull_requests;
        stats_.rows_pulled += skeys->size();
      }
      join->One(Status::Ok());
    };
    Status st = transport_->Request(PeerId{Role::kServer, s}, std::move(msg), on_reply, opts_.call);
    if (!st.ok()) join->One(st);
  }
}

std::future<Status> PsClient::Prefetch(int param, std::span<const int64_t> keys) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> f = promise->get_future();
  Status st = CheckKeys(param, keys);
  if (!st.ok()) {
    promise->set_value(st);
    return f;
  }
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> l(mu_);
    Cache& c = *cache_[param];
    for (int64_t k : keys) {
      if (!opts_.cache || !c.Fresh(k, clock_, opts_.staleness)) missing.push_back(k);
    }
    std::vector<int64_t> tmp;
    SortKeys(&missing, &tmp);
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    stats_.cache_misses += missing.size();
  }
  Fetch(param, std::move(missing), [promise](Status s) { promise->set_value(s); });
  return f;
}

std::future<StatusOr<std::vector<float>>> PsClient::Pull(int param, std::span<const int64_t> keys) {
  auto promise = std::make_shared<std::promise<StatusOr<std::vector<float>>>>();
  auto f = promise->get_future();
  Status st = CheckKeys(param, keys);
  if (!st.ok()) {
    promise->set_value(st);
    return f;
  }
  auto want = std::make_shared<std::vector<int64_t>>(keys.begin(), keys.end());
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> l(mu_);
    Cache& c = *cache_[param];
    for (int64_t k : *want) {
      if (!opts_.cache || !c.Fresh(k, clock_, opts_.staleness)) {
        missing.push_back(k);
      } else {
        ++stats_.cache_hits;
      }
    }
    std::vector<int64_t> tmp;
    SortKeys(&missing, &tmp);
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    stats_.cache_misses += missing.size();
  }
  Fetch(param, std::move(missing), [this, param, want, promise](Status s) {
    if (!s.ok()) return promise->set_value(s);
    std::vector<float> out;
    {
      std::lock_guard<std::mutex> l(mu_);
      Cache& c = *cache_[param];
      out.resize(want->size() * c.width);
      for (size_t k = 0; k < want->size(); ++k) {
        std::memcpy(out.data() + k * c.width, c.Row(c.slot.Find((*want)[k])),
                    sizeof(float) * c.width);
      }
    }
    promise->set_value(std::move(out));
  });
  return f;
}

Status PsClient::Push(int param, std::span<const int64_t> keys, const float* deltas) {
  RIGEL_RETURN_IF_ERROR(CheckKeys(param, keys));
  std::lock_guard<std::mutex> l(mu_);
  Pending& p = *pending_[param];
  Cache& c = *cache_[param];
  for (size_t k = 0; k < keys.size(); ++k) {
    const float* d = deltas + k * p.width;
    bool fresh;
    uint32_t s = p.slot.FindOrInsert(keys[k], static_cast<uint32_t>(p.keys.size()), &fresh);
    if (fresh) {
      p.keys.push_back(keys[k]);
      p.values.insert(p.values.end(), d, d + p.width);
    } else {
      float* row = p.values.data() + s * p.width;
      for (int64_t w = 0; w < p.width; ++w) row[w] += d[w];
      ++stats_.merged;
    }
    uint32_t cached = c.slot.Find(keys[k]);
    if (cached != FlatIndex::kNone) {
      float* row = c.Row(cached);
      for (int64_t w = 0; w < c.width; ++w) row[w] += d[w];
    }
  }
  return Status::Ok();
}

std::future<Status> PsClient::Flush() {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> f = promise->get_future();
  struct Batch {
    int param, server;
    std::shared_ptr<std::vector<uint64_t>> keys;
    std::vector<float> rows;
  };
  std::vector<Batch> batches;
  uint64_t clock;
  {
    std::lock_guard<std::mutex> l(mu_);
    clock = clock_;
    for (size_t param = 0; param < pending_.size(); ++param) {
      Pending& p = *pending_[param];
      if (p.keys.empty()) continue;
      std::vector<int64_t> sorted = p.keys, tmp;
      SortKeys(&sorted, &tmp);
      std::vector<std::vector<int64_t>> by_server;
      map_.Split(static_cast<int>(param), sorted, &by_server, nullptr);
      for (int s = 0; s < map_.servers(); ++s) {
        if (by_server[s].empty()) continue;
        Batch b{static_cast<int>(param),
                s,
                std::make_shared<std::vector<uint64_t>>(by_server[s].begin(), by_server[s].end()),
                {}};
        b.rows.resize(by_server[s].size() * p.width);
        for (size_t k = 0; k < by_server[s].size(); ++k) {
          std::memcpy(b.rows.data() + k * p.width,
                      p.values.data() + p.slot.Find(by_server[s][k]) * p.width,
                      sizeof(float) * p.width);
        }
        ++pushes_sent_[s];
        ++stats_.push_requests;
        stats_.rows_pushed += by_server[s].size();
        batches.push_back(std::move(b));
      }
      p.slot.Clear();
      p.keys.clear();
      p.values.clear();
    }
  }
  if (batches.empty()) {
    promise->set_value(Status::Ok());
    return f;
  }
  auto join = std::make_shared<Join>(static_cast<int>(batches.size()),
                                     [promise](Status s) { promise->set_value(s); });
  for (Batch& b : batches) {
    OutMessage msg;
    auto req = msg.header().getBody().initPushRequest();
    req.setParam(static_cast<uint32_t>(b.param));
    req.setRule(wire::UpdateRule::ADD);
    req.setClock(clock);
    msg.SetKeys(req.initKeys(), KeysBuffer(b.keys));
    msg.SetRows(req.initRows(), Buffer::FromVector(std::move(b.rows)),
                static_cast<uint32_t>(map_.params()[b.param].width));
    Status st = transport_->Request(
        PeerId{Role::kServer, b.server}, std::move(msg),
        [join](StatusOr<InMessage> r) {
          join->One(r.ok() && r->type() != transport::MessageType::PUSH_REPLY
                        ? Internal("a push was not answered with pushReply")
                        : r.status());
        },
        opts_.call);
    if (!st.ok()) join->One(st);
  }
  return f;
}

Status PsClient::AdvanceClock() {
  RIGEL_RETURN_IF_ERROR(Flush().get());
  uint64_t clock;
  std::vector<uint64_t> pushes;
  {
    std::lock_guard<std::mutex> l(mu_);
    clock = ++clock_;
    pushes = pushes_sent_;
  }
  Status first;
  for (int s = 0; s < map_.servers(); ++s) {
    OutMessage msg;
    auto tick = msg.header().getBody().initClockTick();
    tick.setClock(clock);
    tick.setPushes(pushes[s]);
    Status st = transport_->Send(PeerId{Role::kServer, s}, std::move(msg), opts_.call);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

uint64_t PsClient::clock() const {
  std::lock_guard<std::mutex> l(mu_);
  return clock_;
}

PsClientStats PsClient::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

}  // namespace rigel::worker
