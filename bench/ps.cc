// bench/ps: the parameter servers and worker client (ps/service.h,
// ps/client.h) against the transport alone moving the same bytes.
//
//  - sparse push and pull of Zipf(1.1)-distributed distinct keys over 10^6
//    rows, widths 16 and 64, batches of 1k, 10k and 100k keys, 1 and 2
//    servers, 1 and 2 workers: rows/s and GB/s. Ours is PsClient::Push +
//    Flush (split by server, merged, applied to a hash shard) and
//    PsClient::Pull with the cache off; the reference is the same messages
//    (keys + rows out, ack back; keys out, rows back) answered by a server
//    that does nothing else.
//  - dense range pull and push of 1, 16 and 64 MiB (rows of 256 floats).
//  - server memory per stored row of width 64 (10^6 rows).
//  - the ps-lite comparison case (1 server, 1 worker, 100k keys x 16) with
//    its goals: >= 15 Mkeys/s push, >= 18 Mkeys/s pull. Its keys are sorted,
//    as ps-lite requires of its callers; the other cases pass them unsorted.
//  - the hash shard alone (apply/...): the server's share of a request.
// Every process role is a thread with its own endpoint on loopback; ours and
// the reference alternate in the same process. Each case runs on the zmq
// transport and, where built, again on the ucx one (cases named ucx/...), both
// against their own transport alone. --quick: a few cases; --transport zmq|ucx:
// one of them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/config.h"
#include "common/logging.h"
#include "common/memory.h"
#include "ps/client.h"
#include "ps/row_store.h"
#include "ps/service.h"
#include "ps/wire/messages.h"
#include "transport/create.h"

namespace {

using namespace rigel;
using transport::PeerId;
using transport::Role;
using Clock = std::chrono::steady_clock;

constexpr int64_t kRows = 1000000;

double Secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// `n` distinct keys drawn from Zipf(1.1) over kRows ranks (rank r scattered
// to a row by a fixed permutation, so hot rows spread over hash shards).
std::vector<int64_t> ZipfKeys(size_t n, uint64_t seed) {
  static std::vector<double> cdf = [] {
    std::vector<double> c(kRows);
    double sum = 0;
    for (int64_t r = 0; r < kRows; ++r) c[r] = (sum += 1.0 / std::pow(r + 1.0, 1.1));
    for (double& x : c) x /= sum;
    return c;
  }();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::unordered_set<int64_t> seen;
  std::vector<int64_t> keys;
  while (keys.size() < n) {
    int64_t r = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    int64_t row = (r * 2654435761LL + 12345) % kRows;
    if (seen.insert(row).second) keys.push_back(row);
  }
  return keys;
}

// The backend the cases run on now ("zmq" or "ucx") and their names' prefix.
std::string g_backend = "zmq";
std::string Prefix() { return g_backend == "zmq" ? "" : g_backend + "/"; }

std::unique_ptr<transport::Transport> Endpoint(PeerId id) {
  transport::TransportOptions o;
  o.backend = g_backend;
  o.self = id;
  o.listen = transport::DefaultListen(g_backend);
  o.request_timeout = transport::Millis(60000);
  o.limits.max_message_bytes = size_t{1} << 30;
  auto t = transport::Create(o);
  if (!t.ok()) {
    std::fprintf(stderr, "ps bench: %s\n", t.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

// S servers (ours: PsService; raw: answer with an ack or prepared rows) and W
// workers, each with its own endpoint.
struct Bench {
  Bench(int servers, int workers, int64_t width, bool hash) {
    setup.servers = servers;
    setup.workers = workers;
    cluster::ParamSpec p;
    p.decl.name = "p";
    p.decl.width = width;
    p.rows = hash ? kRows : std::max<int64_t>(1, (int64_t{64} << 20) / (width * 4));
    p.hash = hash;
    setup.params = {p};
    for (int s = 0; s < servers; ++s) {
      auto t = Endpoint({Role::kServer, s});
      auto svc = ps::PsService::Create(t.get(), s, setup).value();
      ps::PsService* raw = svc.get();
      t->SetHandler([raw](transport::InMessage m) { raw->Handle(m); });
      // The reference server: same messages, no work.
      auto r = Endpoint({Role::kServer, s});
      transport::Transport* rt = r.get();
      r->SetHandler([rt, width](transport::InMessage m) {
        if (m.Is<ps::wire::PullRequest>()) {
          auto req = m.Body<ps::wire::PullRequest>();
          size_t n = m.Keys(req.getKeys()).size();
          static thread_local std::vector<float> rows;
          if (rows.size() < n * width) rows.assign(n * width, 1.0f);
          transport::OutMessage out;
          auto body = out.InitBody<ps::wire::PullReply>();
          out.SetRows(body.initRows(), transport::Buffer(nullptr, rows.data(), n * width * 4),
                      static_cast<uint32_t>(width));
          (void)rt->Respond(m, std::move(out));
        } else {
          (void)rt->Respond(m, transport::MakeAckMessage());
        }
      });
      server_addr.push_back(t->address());
      raw_addr.push_back(r->address());
      servers_t.push_back(std::move(t));
      services.push_back(std::move(svc));
      raw_t.push_back(std::move(r));
    }
    for (int w = 0; w < workers; ++w) {
      auto t = Endpoint({Role::kWorker, w});
      auto r = Endpoint({Role::kWorker, w});
      for (int s = 0; s < servers; ++s) {
        (void)t->Connect({Role::kServer, s}, server_addr[s]);
        (void)r->Connect({Role::kServer, s}, raw_addr[s]);
      }
      ps::PsClientOptions co;
      co.call.timeout = transport::Millis(60000);
      clients.push_back(std::make_unique<ps::PsClient>(t.get(), setup.MakeShardMap().value(), co));
      workers_t.push_back(std::move(t));
      raw_workers.push_back(std::move(r));
    }
  }
  ~Bench() {
    clients.clear();
    for (auto* v : {&workers_t, &raw_workers, &servers_t, &raw_t}) {
      for (auto& t : *v) t->Close();
    }
  }

  // Rows per second moved by all workers running `op` (one batch per call)
  // for about `secs` (at least one call each), timed after one warm-up call
  // per worker.
  template <typename Op>
  double Rate(const Op& op, size_t rows_per_op, double secs) {
    std::atomic<uint64_t> ops{0};
    std::atomic<size_t> warm{0};
    std::atomic<int64_t> start_ns{0};
    std::vector<std::thread> threads;
    const size_t n = clients.size();
    auto now_ns = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count();
    };
    for (size_t w = 0; w < n; ++w) {
      threads.emplace_back([&, w] {
        op(w);
        if (++warm == n) start_ns = now_ns();
        while (start_ns.load() == 0) std::this_thread::yield();
        do {
          op(w);
          ++ops;
        } while ((now_ns() - start_ns.load()) * 1e-9 < secs);
      });
    }
    for (auto& t : threads) t.join();
    return ops * rows_per_op / ((now_ns() - start_ns.load()) * 1e-9);
  }

  // Raw: the same per-server messages as the client sends, all servers at
  // once, waiting for every answer.
  void RawOp(size_t w, const std::vector<std::vector<uint64_t>>& by_server, int64_t width,
             bool push) {
    std::vector<std::future<StatusOr<transport::InMessage>>> f;
    static thread_local std::vector<float> rows;
    for (size_t s = 0; s < by_server.size(); ++s) {
      if (by_server[s].empty()) continue;
      const auto& keys = by_server[s];
      transport::OutMessage m;
      if (push) {
        if (rows.size() < keys.size() * width) rows.assign(keys.size() * width, 1.0f);
        auto req = m.InitBody<ps::wire::PushRequest>();
        m.SetKeys(req.initKeys(), transport::Buffer(nullptr, keys.data(), keys.size() * 8));
        m.SetRows(req.initRows(), transport::Buffer(nullptr, rows.data(), keys.size() * width * 4),
                  static_cast<uint32_t>(width));
      } else {
        auto req = m.InitBody<ps::wire::PullRequest>();
        m.SetKeys(req.initKeys(), transport::Buffer(nullptr, keys.data(), keys.size() * 8));
      }
      f.push_back(raw_workers[w]->RequestAsync({Role::kServer, static_cast<int>(s)}, std::move(m)));
    }
    for (auto& x : f) {
      if (!x.get().ok()) std::fprintf(stderr, "ps bench: a reference request failed\n");
    }
  }

  cluster::ClusterSetup setup;
  std::vector<std::string> server_addr, raw_addr;
  std::vector<std::unique_ptr<transport::Transport>> servers_t, raw_t, workers_t, raw_workers;
  std::vector<std::unique_ptr<ps::PsService>> services;
  std::vector<std::unique_ptr<ps::PsClient>> clients;
};

// Ours and the reference alternately, kTrials times each; the median rate
// of each, so a slow spell of the machine hits both alike.
template <typename Ours, typename Ref>
std::pair<double, double> Interleaved(Bench& b, const Ours& ours, const Ref& ref, size_t rows,
                                      double secs) {
  constexpr int kTrials = 3;
  std::vector<double> a, r;
  for (int t = 0; t < kTrials; ++t) {
    a.push_back(b.Rate(ours, rows, secs / kTrials));
    r.push_back(b.Rate(ref, rows, secs / kTrials));
  }
  std::sort(a.begin(), a.end());
  std::sort(r.begin(), r.end());
  return {a[kTrials / 2], r[kTrials / 2]};
}

void Emit(const std::string& c, const char* metric, double ours, double ref, const char* ref_name,
          double goal = 0) {
  std::printf(
      "{\"bench\": \"ps\", \"case\": \"%s\", \"metric\": \"%s\", \"ours\": %.4g, \"reference\": "
      "%.4g, "
      "\"reference_name\": \"%s\", \"ratio\": %.3f",
      c.c_str(), metric, ours, ref, ref_name, ref > 0 ? ours / ref : 0.0);
  if (goal > 0) std::printf(", \"goal\": %.3g", goal);
  std::printf(", \"better\": \"higher\"}\n");
  std::fflush(stdout);
  std::fprintf(stderr, "  %-44s %-9s ours %10.4g  ref %10.4g  ratio %.2f\n", c.c_str(), metric,
               ours, ref, ref > 0 ? ours / ref : 0.0);
}

void Sparse(int servers, int workers, int64_t width, size_t batch, double secs, bool pslite_goal) {
  Bench b(servers, workers, width, true);
  std::vector<std::vector<int64_t>> keys;
  std::vector<std::vector<std::vector<uint64_t>>> split(workers);
  for (int w = 0; w < workers; ++w) {
    keys.push_back(ZipfKeys(batch, 17 + w));
    // ps-lite takes only sorted keys; our client takes any order (and sorts).
    if (pslite_goal) std::sort(keys.back().begin(), keys.back().end());
    std::vector<int64_t> sorted = keys.back();
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::vector<int64_t>> by;
    b.clients[w]->map().Split(0, sorted, &by, nullptr);
    for (auto& v : by) split[w].emplace_back(v.begin(), v.end());
  }
  std::vector<float> deltas(batch * width, 0.5f);
  double bytes_per_row = width * 4.0 + 8;
  std::string name = Prefix() + "sparse/S" + std::to_string(servers) + "W" +
                     std::to_string(workers) + "/w" + std::to_string(width) + "/" +
                     std::to_string(batch / 1000) + "k";
  for (bool push : {true, false}) {
    auto op = [&](size_t w) {
      if (push) {
        (void)b.clients[w]->Push(0, keys[w], deltas.data());
        if (!b.clients[w]->Flush().get().ok()) std::fprintf(stderr, "ps bench: flush failed\n");
      } else {
        if (!b.clients[w]->Pull(0, keys[w]).get().ok())
          std::fprintf(stderr, "ps bench: pull failed\n");
      }
    };
    auto [ours, ref] = Interleaved(
        b, op, [&](size_t w) { b.RawOp(w, split[w], width, push); }, batch, secs);
    std::string c = name + (push ? "/push" : "/pull");
    Emit(c, "Mrows/s", ours / 1e6, ref / 1e6, "transport alone, same messages",
         batch >= 100000 ? 0.8 : 0);
    Emit(c, "GB/s", ours * bytes_per_row / 1e9, ref * bytes_per_row / 1e9,
         "transport alone, same messages");
    if (pslite_goal && g_backend == "zmq") {
      // ps-lite (ZeroMQ van, summing server), measured on this machine:
      // 7 Mkeys/s push, 9 Mkeys/s pull; goal 2x.
      Emit("pslite_case/S1W1/w16/100k" + std::string(push ? "/push" : "/pull"), "Mkeys/s",
           ours / 1e6, push ? 7.0 : 9.0, "ps-lite (measured on this machine, issue 5)",
           push ? 15.0 / 7.0 : 18.0 / 9.0);
    }
  }
}

void Dense(int64_t mib, double secs) {
  constexpr int64_t kWidth = 256;
  Bench b(1, 1, kWidth, false);
  int64_t rows = (mib << 20) / (kWidth * 4);
  std::vector<int64_t> keys(rows);
  for (int64_t r = 0; r < rows; ++r) keys[r] = r;
  std::vector<std::vector<uint64_t>> split(1, std::vector<uint64_t>(keys.begin(), keys.end()));
  std::vector<float> deltas(rows * kWidth, 0.5f);
  for (bool push : {true, false}) {
    auto op = [&](size_t w) {
      Status st =
          push ? (b.clients[w]->Push(0, keys, deltas.data()).ok() ? b.clients[w]->Flush().get()
                                                                  : Internal("push refused"))
               : b.clients[w]->Pull(0, keys).get().status();
      if (!st.ok()) std::fprintf(stderr, "ps bench: dense op failed: %s\n", st.message().c_str());
    };
    auto [ours, ref] = Interleaved(
        b, op, [&](size_t w) { b.RawOp(w, split, kWidth, push); }, rows, secs);
    double bpr = kWidth * 4.0;
    Emit(Prefix() + "dense/" + std::to_string(mib) + "MiB" + (push ? "/push" : "/pull"), "GB/s",
         ours * bpr / 1e9, ref * bpr / 1e9, "transport alone, same messages");
  }
}

void Memory() {
  auto store = ps::NewHashStore(64, [](int64_t, float* out) { std::fill(out, out + 64, 0.0f); });
  std::vector<int64_t> keys(kRows);
  for (int64_t k = 0; k < kRows; ++k) keys[k] = (k * 2654435761LL) % (int64_t{1} << 40);
  std::vector<float> out(keys.size() * 64);
  (void)store->Pull(keys, out.data());
  double per_row = static_cast<double>(store->bytes()) / store->rows();
  std::printf(
      "{\"bench\": \"ps\", \"case\": \"memory/hash/w64/1M\", \"metric\": \"bytes/row\", \"ours\": "
      "%.1f, "
      "\"reference\": 256, \"reference_name\": \"raw payload (64 x f32)\", \"ratio\": %.3f, "
      "\"goal\": 1.25, \"better\": \"lower\"}\n",
      per_row, per_row / 256);
  std::fprintf(stderr, "  memory: %.1f bytes per stored row of width 64 (%.3fx the payload)\n",
               per_row, per_row / 256);
}

// The hash shard alone (no transport): Push (add) and Pull of one batch of
// Zipf keys, the server's share of a sparse request.
void Apply(int64_t width, size_t batch, double secs) {
  auto store =
      ps::NewHashStore(width, [width](int64_t, float* out) { std::fill(out, out + width, 0.0f); });
  std::vector<int64_t> keys = ZipfKeys(batch, 5);
  std::sort(keys.begin(), keys.end());
  std::vector<float> rows(batch * width, 0.5f);
  ps::UpdateOptions add;
  for (bool push : {true, false}) {
    auto start = Clock::now();
    size_t ops = 0;
    while (Secs(start) < secs || ops < 2) {
      Status st = push ? store->Push(keys, rows.data(), add) : store->Pull(keys, rows.data());
      if (!st.ok()) std::fprintf(stderr, "ps bench: store failed: %s\n", st.ToString().c_str());
      ++ops;
    }
    double rate = ops * batch / Secs(start);
    std::string c = "apply/hash/w" + std::to_string(width) + "/" + std::to_string(batch / 1000) +
                    "k" + (push ? "/push" : "/pull");
    std::printf(
        "{\"bench\": \"ps\", \"case\": \"%s\", \"metric\": \"Mrows/s\", \"ours\": %.4g, "
        "\"better\": \"higher\"}\n",
        c.c_str(), rate / 1e6);
    std::fprintf(stderr, "  %-44s %-9s ours %10.4g\n", c.c_str(), "Mrows/s", rate / 1e6);
  }
}

}  // namespace

// Every case on the transport g_backend names; the exit status.
int RunCases(bool quick, bool pslite_only, bool dense_only);

int main(int argc, char** argv) {
  // As rigel-server and rigel-worker do.
  KeepLargeBuffersInHeap();
  SetLogLevel(LogLevel::kWarning);  // not a "plain mode" line per endpoint
  bool quick = false, pslite_only = false, dense_only = false;
  std::vector<std::string> backends = {"zmq"};
  if (RIGEL_HAVE_UCX) backends.push_back("ucx");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--transport") == 0 && i + 1 < argc) {
      backends = {argv[++i]};
    } else if (std::strcmp(argv[i], "--pslite") == 0) {
      pslite_only = true;
    } else if (std::strcmp(argv[i], "--dense") == 0) {
      dense_only = true;
    } else {
      std::fprintf(stderr, "usage: ps [--quick] [--pslite] [--dense] [--transport zmq|ucx]\n");
      return 2;
    }
  }
  for (const std::string& backend : backends) {
    g_backend = backend;
    if (int rc = RunCases(quick, pslite_only, dense_only); rc != 0) return rc;
  }
  return 0;
}

int RunCases(bool quick, bool pslite_only, bool dense_only) {
  double secs = quick ? 0.1 : 0.25;
  std::fprintf(stderr,
               "bench/ps (%s, %s transport): rows/s and GB/s, ours vs the transport alone\n",
               quick ? "quick" : "full", g_backend.c_str());
  if (dense_only) {
    for (int64_t mib : {1, 16, 64}) Dense(mib, secs * 2);
    return 0;
  }
  if (g_backend == "zmq") {  // no transport in these
    Memory();
    Apply(16, 100000, secs * 2);
    Apply(64, 100000, secs * 2);
  }
  Sparse(1, 1, 16, 100000, pslite_only ? 3.0 : secs * 2, true);
  if (pslite_only) return 0;
  if (quick) {
    Dense(1, secs);
    return 0;
  }
  for (int servers : {1, 2}) {
    for (int workers : {1, 2}) {
      for (int64_t width : {16, 64}) {
        for (size_t batch : {1000, 10000, 100000}) {
          if (servers == 1 && workers == 1 && width == 16 && batch == 100000)
            continue;  // done above
          Sparse(servers, workers, width, batch, secs, false);
        }
      }
    }
  }
  for (int64_t mib : {1, 16, 64}) Dense(mib, secs * 2);
  return 0;
}
