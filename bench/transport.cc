// bench/transport: Rigel's ZeroMQ transport against raw libzmq in the same
// process layout (a forked receiver/server process and the parent as
// sender/client, over loopback TCP), with CURVE off and on; then, where the
// build has UCX, Rigel's UCX transport (shared memory, and TCP) against its
// ZeroMQ transport, both in the same processes taking turns as above.
//
//  - one-way throughput, message sizes 64 B .. 16 MiB: ours Send() of a `data`
//    message with one payload frame vs raw PUSH/PULL zmq_send/zmq_msg_recv;
//    the receiver stamps the time of the last message, the sender the time of
//    the first, so the figure is end to end (GB/s of payload);
//  - request/response latency, 64 B and 64 KiB: ours Call() answered by a
//    handler that echoes the payload vs raw REQ/REP echo; p50 and p99.
// Both implementations share the processes of a figure and take turns (bursts
// of messages for throughput, single round trips for latency), so drift in
// machine load hits both alike. Throughput figures are median bursts, latency
// figures the median over 5 runs (fresh processes) of each run's percentile.
//
// Output: a table on stderr and one JSON object per figure on stdout
// (DESIGN.md convention). --quick: one short trial per figure (CI smoke).
#include "transport/zmq/transport.h"

#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/logging.h"
#include "common/memory.h"
#include "transport/create.h"

namespace {

using rigel::transport::Buffer;
using rigel::transport::ClusterKey;
using rigel::transport::InMessage;
using rigel::transport::MakeDataMessage;
using rigel::transport::Millis;
using rigel::transport::PeerId;
using rigel::transport::Role;

const PeerId kReceiver{Role::kServer, 0};
const PeerId kSender{Role::kClient, 0};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "transport bench: %s\n", what.c_str());
  std::exit(1);
}

// Two pipes between the forked child and the parent, carrying fixed-size
// records: Put writes to the other process, Get reads what it wrote.
struct Channel {
  int up[2], down[2];  // child -> parent, parent -> child
  bool child = false;
  Channel() {
    if (::pipe(up) != 0 || ::pipe(down) != 0) Die("pipe");
  }
  template <typename T>
  void Put(const T& v) {
    int fd = child ? up[1] : down[1];
    if (::write(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) Die("pipe write");
  }
  template <typename T>
  T Get() {
    int fd = child ? down[0] : up[0];
    T v{};
    size_t got = 0;
    while (got < sizeof v) {
      ssize_t n = ::read(fd, reinterpret_cast<char*>(&v) + got, sizeof v - got);
      if (n <= 0) Die("the other process died");
      got += static_cast<size_t>(n);
    }
    return v;
  }
  void PutString(const std::string& s) {
    struct Buf {
      char c[256];
    } b{};
    std::snprintf(b.c, sizeof b.c, "%s", s.c_str());
    Put(b);
  }
  std::string GetString() {
    struct Buf {
      char c[256];
    } b = Get<Buf>();
    return std::string(b.c);
  }
  void Close() {
    for (int fd : {up[0], up[1], down[0], down[1]}) ::close(fd);
  }
};

// Runs `child` in a forked process and `parent` here; waits for the child.
template <typename C, typename P>
void Forked(C child, P parent) {
  Channel ch;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    ch.child = true;
    child(ch);
    ::_exit(0);
  }
  parent(ch);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ch.Close();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("the child process failed");
}

void SetCurve(void* s, const ClusterKey& k, bool server) {
  int one = 1;
  if (server) {
    zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, k.secret_key.c_str(), 41);
  } else {
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, k.public_key.c_str(), 41);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, k.public_key.c_str(), 41);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, k.secret_key.c_str(), 41);
  }
}

std::string BindAny(void* s) {
  if (zmq_bind(s, "tcp://127.0.0.1:*") != 0) Die("bind");
  char ep[256];
  size_t len = sizeof ep;
  zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len);
  return ep;
}

std::unique_ptr<rigel::transport::Transport> Ours(PeerId self,
                                                  const std::optional<ClusterKey>& key) {
  rigel::transport::ZmqOptions o;
  o.self = self;
  o.key = key;
  o.linger = Millis(0);
  auto t = rigel::transport::CreateZmqTransport(o);
  if (!t.ok()) Die(t.status().ToString());
  return std::move(t).value();
}

// UcxOptions::spin of the UCX endpoints the next figure makes.
std::chrono::microseconds g_spin{0};

// A Rigel endpoint of `backend` ("zmq", "ucx") restricted to UCX transports
// `tls` (ucx only), without a key (loopback).
std::unique_ptr<rigel::transport::Transport> Endpoint(PeerId self, const std::string& backend,
                                                      const std::string& tls) {
  rigel::transport::TransportOptions o;
  o.backend = backend;
  o.self = self;
  o.listen = rigel::transport::DefaultListen(backend);
  o.ucx.tls = tls;
  o.ucx.spin = g_spin;
  auto t = rigel::transport::Create(o);
  if (!t.ok()) Die(t.status().ToString());
  return std::move(t).value();
}

// --- one-way throughput ---
//
// One receiver process holds a raw PULL socket and our transport; the sender
// alternates bursts over the two (raw, ours, ours, raw, ...). Per burst the
// sender stamps the start and the receiver the arrival of the last message;
// each implementation's figure is the median burst (GB/s of payload).

struct Burst {
  int32_t ours;  // 1: our transport, 0: raw, -1: quit
  int64_t n;
};

struct Figures {
  std::vector<double> ours, raw;
};

Figures Throughput(size_t size, int64_t n, int rounds, const std::optional<ClusterKey>& key) {
  Figures out;
  Forked(
      [&](Channel& ch) {
        void* ctx = zmq_ctx_new();
        void* pull = zmq_socket(ctx, ZMQ_PULL);
        if (key) SetCurve(pull, *key, true);
        std::string raw_address = BindAny(pull);
        auto t = Ours(kReceiver, key);
        std::mutex mu;
        std::condition_variable cv;
        int64_t count = 0, target = -1, reached = 0;
        t->SetHandler([&](InMessage) {
          std::lock_guard<std::mutex> lock(mu);
          if (++count == target) {
            reached = NowNs();
            cv.notify_one();
          }
        });
        ch.PutString(raw_address);
        ch.PutString(t->address());
        zmq_msg_t m;
        zmq_msg_init(&m);
        for (Burst b = ch.Get<Burst>(); b.ours >= 0; b = ch.Get<Burst>()) {
          if (b.ours == 0) {
            ch.Put(int64_t{0});  // ready
            for (int64_t i = 0; i < b.n; ++i) zmq_msg_recv(&m, pull, 0);
            ch.Put(NowNs());
          } else {
            std::unique_lock<std::mutex> lock(mu);
            target = count + b.n;
            ch.Put(int64_t{0});  // ready
            cv.wait(lock, [&] { return count >= target; });
            ch.Put(reached);
          }
        }
        zmq_msg_close(&m);
      },
      [&](Channel& ch) {
        std::string raw_address = ch.GetString(), our_address = ch.GetString();
        void* ctx = zmq_ctx_new();
        void* push = zmq_socket(ctx, ZMQ_PUSH);
        if (key) SetCurve(push, *key, false);
        zmq_connect(push, raw_address.c_str());
        auto t = Ours(kSender, key);
        if (!t->Connect(kReceiver, our_address).ok()) Die("connect");
        std::vector<char> buf(size, 'x');
        // The payload Buffer is never modified, so every Send may share it.
        Buffer payload = Buffer::FromVector(std::vector<char>(size, 'x'));
        auto burst = [&](bool ours, int64_t count) {
          ch.Put(Burst{ours ? 1 : 0, count});
          ch.Get<int64_t>();
          int64_t start = NowNs();
          for (int64_t i = 0; i < count; ++i) {
            if (!ours) {
              zmq_send(push, buf.data(), size, 0);
            } else if (auto st = t->Send(kReceiver, MakeDataMessage(0, {payload})); !st.ok()) {
              Die(st.ToString());
            }
          }
          int64_t end = ch.Get<int64_t>();
          return double(size) * double(count) / double(end - start);
        };
        burst(false, std::max<int64_t>(1, n / 10));  // warm-up: connections, buffers
        burst(true, std::max<int64_t>(1, n / 10));
        for (int r = 0; r < rounds; ++r) {
          bool ours_first = r % 2 == 1;
          for (bool ours : {ours_first, !ours_first}) {
            (ours ? out.ours : out.raw).push_back(burst(ours, n));
          }
        }
        ch.Put(Burst{-1, 0});
        int zero = 0;
        zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(push);
        zmq_ctx_term(ctx);
      });
  return out;
}

// --- request/response latency ---
//
// One server process holds a raw REP socket echoing each message and our
// transport whose handler echoes the payload (the received frame, uncopied);
// the client alternates single round trips over the two. Microseconds.

struct Latency {
  double p50 = 0, p99 = 0;
};

Latency Percentiles(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)]};
}

std::pair<Latency, Latency> Latencies(size_t size, int warmup, int n,
                                      const std::optional<ClusterKey>& key) {
  std::pair<Latency, Latency> out;  // ours, raw
  Forked(
      [&](Channel& ch) {
        void* ctx = zmq_ctx_new();
        void* rep = zmq_socket(ctx, ZMQ_REP);
        if (key) SetCurve(rep, *key, true);
        std::string raw_address = BindAny(rep);
        auto t = Ours(kReceiver, key);
        t->SetHandler([&t](InMessage m) {
          auto refs = m.Body<rigel::transport::wire::Data>().getFrames();
          (void)t->Respond(m, MakeDataMessage(0, {m.Bytes(refs[0])}));
        });
        ch.PutString(raw_address);
        ch.PutString(t->address());
        zmq_msg_t m;
        zmq_msg_init(&m);
        for (int i = 0; i < warmup + n; ++i) {
          zmq_msg_recv(&m, rep, 0);
          zmq_msg_send(&m, rep, 0);  // echo without copying
        }
        ch.Get<int64_t>();  // the client is done
      },
      [&](Channel& ch) {
        std::string raw_address = ch.GetString(), our_address = ch.GetString();
        void* ctx = zmq_ctx_new();
        void* req = zmq_socket(ctx, ZMQ_REQ);
        if (key) SetCurve(req, *key, false);
        zmq_connect(req, raw_address.c_str());
        auto t = Ours(kSender, key);
        if (!t->Connect(kReceiver, our_address).ok()) Die("connect");
        std::vector<char> buf(size, 'x');
        Buffer payload = Buffer::FromVector(std::vector<char>(size, 'x'));
        zmq_msg_t m;
        zmq_msg_init(&m);
        std::vector<double> ours, raw;
        for (int i = 0; i < warmup + n; ++i) {
          for (bool use_ours : {i % 2 == 0, i % 2 != 0}) {
            int64_t t0 = NowNs();
            if (use_ours) {
              auto r = t->Call(kReceiver, MakeDataMessage(0, {payload}));
              if (!r.ok()) Die(r.status().ToString());
            } else {
              zmq_send(req, buf.data(), size, 0);
              zmq_msg_recv(&m, req, 0);
            }
            if (i >= warmup) (use_ours ? ours : raw).push_back(double(NowNs() - t0) / 1e3);
          }
        }
        zmq_msg_close(&m);
        ch.Put(int64_t{1});
        out = {Percentiles(ours), Percentiles(raw)};
        int zero = 0;
        zmq_setsockopt(req, ZMQ_LINGER, &zero, sizeof zero);
        zmq_close(req);
        zmq_ctx_term(ctx);
      });
  return out;
}

// --- Rigel's UCX transport against its ZeroMQ transport ---
//
// As above, but both sides of a figure are Rigel transports: the receiver
// (server) process holds one of each, the sender alternates bursts (round
// trips) between them. `a` is the one measured, `b` the reference.

struct Side {
  std::string backend, tls;
};

Figures PairThroughput(size_t size, int64_t n, int rounds, const Side& a, const Side& b) {
  Figures out;  // ours: a, raw: b
  Forked(
      [&](Channel& ch) {
        std::unique_ptr<rigel::transport::Transport> ts[2] = {
            Endpoint(kReceiver, b.backend, b.tls), Endpoint(kReceiver, a.backend, a.tls)};
        std::mutex mu;
        std::condition_variable cv;
        int64_t count = 0, target = -1, reached = 0;
        for (auto& t : ts) {
          t->SetHandler([&](InMessage) {
            std::lock_guard<std::mutex> lock(mu);
            if (++count == target) {
              reached = NowNs();
              cv.notify_one();
            }
          });
        }
        ch.PutString(ts[0]->address());
        ch.PutString(ts[1]->address());
        for (Burst burst = ch.Get<Burst>(); burst.ours >= 0; burst = ch.Get<Burst>()) {
          std::unique_lock<std::mutex> lock(mu);
          target = count + burst.n;
          ch.Put(int64_t{0});  // ready
          cv.wait(lock, [&] { return count >= target; });
          ch.Put(reached);
        }
      },
      [&](Channel& ch) {
        std::string addresses[2] = {ch.GetString(), ch.GetString()};
        std::unique_ptr<rigel::transport::Transport> ts[2] = {Endpoint(kSender, b.backend, b.tls),
                                                              Endpoint(kSender, a.backend, a.tls)};
        for (int i = 0; i < 2; ++i) {
          if (!ts[i]->Connect(kReceiver, addresses[i]).ok()) Die("connect");
        }
        Buffer payload = Buffer::FromVector(std::vector<char>(size, 'x'));
        auto burst = [&](int which, int64_t count) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // as in PairLatencies
          ch.Put(Burst{which, count});
          ch.Get<int64_t>();
          int64_t start = NowNs();
          for (int64_t i = 0; i < count; ++i) {
            if (auto st = ts[which]->Send(kReceiver, MakeDataMessage(0, {payload})); !st.ok()) {
              Die(st.ToString());
            }
          }
          int64_t end = ch.Get<int64_t>();
          return double(size) * double(count) / double(end - start);
        };
        burst(0, std::max<int64_t>(1, n / 10));  // warm-up: connections, buffers
        burst(1, std::max<int64_t>(1, n / 10));
        for (int r = 0; r < rounds; ++r) {
          const int first = r % 2;
          for (int which : {first, 1 - first}) {
            (which == 1 ? out.ours : out.raw).push_back(burst(which, n));
          }
        }
        ch.Put(Burst{-1, 0});
      });
  return out;
}

std::pair<Latency, Latency> PairLatencies(size_t size, int warmup, int n, const Side& a,
                                          const Side& b) {
  std::pair<Latency, Latency> out;  // a, b
  Forked(
      [&](Channel& ch) {
        std::unique_ptr<rigel::transport::Transport> ts[2] = {
            Endpoint(kReceiver, b.backend, b.tls), Endpoint(kReceiver, a.backend, a.tls)};
        for (auto& t : ts) {
          rigel::transport::Transport* self = t.get();
          t->SetHandler([self](InMessage m) {
            auto refs = m.Body<rigel::transport::wire::Data>().getFrames();
            (void)self->Respond(m, MakeDataMessage(0, {m.Bytes(refs[0])}));
          });
        }
        ch.PutString(ts[0]->address());
        ch.PutString(ts[1]->address());
        ch.Get<int64_t>();  // the client is done
      },
      [&](Channel& ch) {
        std::string addresses[2] = {ch.GetString(), ch.GetString()};
        std::unique_ptr<rigel::transport::Transport> ts[2] = {Endpoint(kSender, b.backend, b.tls),
                                                              Endpoint(kSender, a.backend, a.tls)};
        for (int i = 0; i < 2; ++i) {
          if (!ts[i]->Connect(kReceiver, addresses[i]).ok()) Die("connect");
        }
        Buffer payload = Buffer::FromVector(std::vector<char>(size, 'x'));
        // Blocks of round trips, taking turns, with a pause between blocks:
        // a UCX progress thread polls for UcxOptions::spin after traffic, and
        // on two cores that polling would slow the other transport's turn.
        std::vector<double> us[2];
        constexpr int kBlock = 200;
        for (int i = 0; i < warmup + n; i += kBlock) {
          for (int which : {(i / kBlock) % 2, 1 - (i / kBlock) % 2}) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            for (int j = i; j < std::min(i + kBlock, warmup + n); ++j) {
              int64_t t0 = NowNs();
              auto r = ts[which]->Call(kReceiver, MakeDataMessage(0, {payload}));
              if (!r.ok()) Die(r.status().ToString());
              if (j >= warmup) us[which].push_back(double(NowNs() - t0) / 1e3);
            }
          }
        }
        ch.Put(int64_t{1});
        out = {Percentiles(us[1]), Percentiles(us[0])};
      });
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string SizeName(size_t s) {
  if (s >= (1 << 20)) return std::to_string(s >> 20) + "MiB";
  if (s >= 1024) return std::to_string(s >> 10) + "KiB";
  return std::to_string(s) + "B";
}

void Emit(const std::string& name, const char* metric, double ours, double ref,
          const char* ref_name, std::optional<double> goal, const char* better) {
  std::string g = goal ? ", \"goal\": " + std::to_string(*goal).substr(0, 4) : "";
  std::printf(
      "{\"bench\": \"transport\", \"case\": \"%s\", \"metric\": \"%s\", \"ours\": %.4g, "
      "\"reference\": %.4g, \"reference_name\": \"%s\", \"ratio\": %.3f%s, \"better\": \"%s\"}\n",
      name.c_str(), metric, ours, ref, ref_name, ours / ref, g.c_str(), better);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // As rigel-server and rigel-worker do: message-sized buffers come from the
  // heap, not fresh pages (common/memory.h).
  rigel::KeepLargeBuffersInHeap();
  bool quick = false;
  int trials = 0;  // bursts per implementation and size
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--trials") == 0 && i + 1 < argc) {
      trials = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: transport [--quick] [--trials N] [--filter SUBSTRING]\n"
                   "  --quick   one short trial per figure (CI smoke)\n"
                   "  --trials  bursts per implementation and size (default 8, --quick 2)\n"
                   "  --filter  only the cases whose name contains SUBSTRING\n");
      return 2;
    }
  }
  const int rounds = trials > 0 ? trials : quick ? 2 : 8;
  auto wanted = [&](const std::string& name) {
    return filter.empty() || name.find(filter) != std::string::npos;
  };
  rigel::SetLogLevel(rigel::LogLevel::kWarning);
  auto key = rigel::transport::GenerateClusterKey();
  if (!key.ok()) Die(key.status().ToString());
  const std::vector<size_t> sizes = {64, 1024, 4096, 64 << 10, 1 << 20, 16 << 20};
  std::fprintf(stderr,
               "transport: loopback TCP, forked receiver; throughput: median of %d alternating "
               "bursts each; latency: alternating round trips\n",
               rounds);
  std::fprintf(stderr, "  %-28s %12s %12s %7s %6s\n", "case", "ours", "raw zmq", "ratio", "goal");
  for (bool curve : {false, true}) {
    std::optional<ClusterKey> k = curve ? std::optional<ClusterKey>(*key) : std::nullopt;
    const std::string mode = curve ? "curve" : "plain";
    for (size_t size : sizes) {
      std::string name = mode + "/push_pull/" + SizeName(size);
      if (!wanted(name)) continue;
      // Bytes per burst: about 40 ms of raw ZeroMQ uncontended (less with
      // --quick, half with CURVE); at most 25k messages.
      double bytes = (quick ? 4e6 : 40e6) * (curve ? 0.5 : 1);
      int64_t n =
          std::clamp<int64_t>(int64_t(bytes / double(std::max<size_t>(size, 1600))), 4, 25000);
      Figures f = Throughput(size, n, rounds, k);
      double o = Median(f.ours), r = Median(f.raw);
      std::optional<double> goal;
      if (size >= (64 << 10)) goal = 0.9;
      if (size == 1024) goal = 0.7;
      std::fprintf(stderr, "  %-28s %9.3f GB/s %7.3f GB/s %7.3f %6s\n", name.c_str(), o, r, o / r,
                   goal ? (">=" + std::to_string(*goal).substr(0, 3)).c_str() : "");
      Emit(name, "GB/s", o, r, "raw libzmq PUSH/PULL", goal, "higher");
    }
    for (size_t size : {size_t{64}, size_t{64 << 10}}) {
      std::string name = mode + "/req_rep/" + SizeName(size);
      if (!wanted(name)) continue;
      // Several runs in fresh processes, median of each percentile: where the
      // threads land on the two cores shifts a run's figures as a whole.
      const int n = quick ? 200 : 1000, runs = quick ? 1 : 5;
      std::vector<double> o50, o99, r50, r99;
      for (int run = 0; run < runs; ++run) {
        auto [ours, raw] = Latencies(size, n / 10, n, k);
        o50.push_back(ours.p50);
        o99.push_back(ours.p99);
        r50.push_back(raw.p50);
        r99.push_back(raw.p99);
      }
      const Latency o{Median(o50), Median(o99)}, r{Median(r50), Median(r99)};
      std::fprintf(stderr, "  %-28s %9.1f us   %7.1f us   %7.3f %6s\n", (name + "/p50").c_str(),
                   o.p50, r.p50, o.p50 / r.p50, "<=1.2");
      std::fprintf(stderr, "  %-28s %9.1f us   %7.1f us   %7.3f %6s\n", (name + "/p99").c_str(),
                   o.p99, r.p99, o.p99 / r.p99, "");
      Emit(name + "/p50", "us", o.p50, r.p50, "raw libzmq REQ/REP", 1.2, "lower");
      Emit(name + "/p99", "us", o.p99, r.p99, "raw libzmq REQ/REP", std::nullopt, "lower");
    }
  }
#if RIGEL_HAVE_UCX
  // UCX against ZeroMQ, both Rigel's, plain (loopback). "sm,tcp": shared
  // memory (UCX sets connections up over tcp); "tcp": UCX's TCP transport.
  const Side zmq{"zmq", ""};
  std::fprintf(stderr, "  %-28s %12s %12s %7s %6s\n", "case", "ucx", "zmq", "ratio", "goal");
  // "ucx_shm_poll": shared memory with the progress thread polling 100 us
  // for responses (UcxOptions::spin), what polling buys where cores are free.
  struct Mode {
    std::string name, tls;
    int spin_us;
  };
  for (const Mode& m : {Mode{"ucx_shm", "sm,tcp", 0}, Mode{"ucx_shm_poll", "sm,tcp", 100},
                        Mode{"ucx_tcp", "tcp", 0}}) {
    const std::string& mode = m.name;
    const std::string& tls = m.tls;
    g_spin = std::chrono::microseconds(m.spin_us);
    const Side ucx{"ucx", tls};
    for (size_t size : sizes) {
      std::string name = mode + "/send/" + SizeName(size);
      if (!wanted(name)) continue;
      double bytes = quick ? 4e6 : 40e6;
      int64_t n =
          std::clamp<int64_t>(int64_t(bytes / double(std::max<size_t>(size, 1600))), 4, 25000);
      Figures f = PairThroughput(size, n, rounds, ucx, zmq);
      double o = Median(f.ours), r = Median(f.raw);
      std::optional<double> goal;
      if (size >= (64 << 10) && mode == "ucx_shm") goal = 1.5;
      std::fprintf(stderr, "  %-28s %9.3f GB/s %7.3f GB/s %7.3f %6s\n", name.c_str(), o, r, o / r,
                   goal ? (">=" + std::to_string(*goal).substr(0, 3)).c_str() : "");
      Emit(name, "GB/s", o, r, "Rigel zmq transport", goal, "higher");
    }
    for (size_t size : {size_t{64}, size_t{64 << 10}}) {
      std::string name = mode + "/call/" + SizeName(size);
      if (!wanted(name)) continue;
      const int n = quick ? 200 : 1000, runs = quick ? 1 : 5;
      std::vector<double> o50, o99, r50, r99;
      for (int run = 0; run < runs; ++run) {
        auto [ours, ref] = PairLatencies(size, n / 10, n, ucx, zmq);
        o50.push_back(ours.p50);
        o99.push_back(ours.p99);
        r50.push_back(ref.p50);
        r99.push_back(ref.p99);
      }
      const Latency o{Median(o50), Median(o99)}, r{Median(r50), Median(r99)};
      std::optional<double> goal;
      if (size == 64 && mode == "ucx_shm") goal = 0.25;
      std::fprintf(stderr, "  %-28s %9.1f us   %7.1f us   %7.3f %6s\n", (name + "/p50").c_str(),
                   o.p50, r.p50, o.p50 / r.p50, goal ? "<=0.25" : "");
      std::fprintf(stderr, "  %-28s %9.1f us   %7.1f us   %7.3f %6s\n", (name + "/p99").c_str(),
                   o.p99, r.p99, o.p99 / r.p99, "");
      Emit(name + "/p50", "us", o.p50, r.p50, "Rigel zmq transport", goal, "lower");
      Emit(name + "/p99", "us", o.p99, r.p99, "Rigel zmq transport", std::nullopt, "lower");
    }
  }
#else
  std::fprintf(stderr, "transport: no UCX cases (this build has no UCX: install libucx-dev)\n");
#endif
  return 0;
}
