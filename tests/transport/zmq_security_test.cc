// The ZeroMQ backend against hostile or mistaken peers: CURVE admission, and
// malformed, oversized or unidentifiable messages from raw sockets.
#include <gtest/gtest.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/logging.h"
#include "tests/transport/test_util.h"
#include "transport/zmq/address.h"
#include "transport/zmq/transport.h"

namespace rigel::transport {
namespace {

using testing::MakeSample;
using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};

ZmqOptions Options(PeerId self, std::optional<ClusterKey> key) {
  ZmqOptions o;
  o.self = self;
  o.key = std::move(key);
  o.linger = Millis(0);
  return o;
}

std::unique_ptr<Transport> Make(const ZmqOptions& o) {
  auto t = CreateZmqTransport(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

ClusterKey NewKey() { return std::move(GenerateClusterKey()).value(); }

// Collects log lines while alive.
class LogCapture {
 public:
  LogCapture() {
    previous_ = SetLogSink([this](LogLevel, std::string_view, std::string_view m) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(m);
    });
  }
  ~LogCapture() { SetLogSink(std::move(previous_)); }
  // Lines containing every one of `parts`.
  int Count(std::initializer_list<std::string_view> parts) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& l : lines_) {
      bool all = true;
      for (auto p : parts) all = all && l.find(p) != std::string::npos;
      n += all;
    }
    return n;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
  LogSink previous_;
};

void Answer(Transport& server) {
  server.SetHandler([&server](InMessage m) {
    if (m.is_request()) (void)server.Respond(m, MakeAckMessage());
  });
}

TEST(ZmqSecurityTest, ClusterKeyAdmitsMembersAndRefusesOthers) {
  LogCapture logs;
  ClusterKey key = NewKey();
  auto server = Make(Options(kServer, key));
  Answer(*server);

  auto member = Make(Options(kWorker, key));
  ASSERT_TRUE(member->Connect(kServer, server->address()).ok());
  auto ok = member->Call(kServer, MakeAckMessage(), {.timeout = Millis(5000)});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();

  // Another cluster's key: the handshake fails, nothing reaches the handler.
  auto stranger = Make(Options(PeerId{Role::kWorker, 1}, NewKey()));
  ASSERT_TRUE(stranger->Connect(kServer, server->address()).ok());
  auto refused = stranger->Call(kServer, MakeAckMessage(), {.timeout = Millis(300)});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  // A plain peer (its own loopback-only transport) is refused by a CURVE endpoint.
  auto plain = Make(Options(PeerId{Role::kWorker, 2}, std::nullopt));
  ASSERT_TRUE(plain->Connect(kServer, server->address()).ok());
  auto refused_plain = plain->Call(kServer, MakeAckMessage(), {.timeout = Millis(300)});
  EXPECT_EQ(refused_plain.status().code(), StatusCode::kUnavailable);

  ASSERT_TRUE(WaitFor([&] { return server->stats().auth_refused >= 2; }));
  EXPECT_EQ(server->stats().messages_received, 1u);
  EXPECT_GE(logs.Count({"server:0", "refused a connection"}), 1);
  // Members still work after the refusals.
  EXPECT_TRUE(member->Call(kServer, MakeAckMessage(), {.timeout = Millis(5000)}).ok());
}

// A raw CURVE client that knows the server's public key but presents its own
// key pair gets as far as ZAP, which refuses it and logs its address.
TEST(ZmqSecurityTest, ZapRefusesUnknownClientKeysAndLogsTheAddress) {
  LogCapture logs;
  ClusterKey key = NewKey();
  auto server = Make(Options(kServer, key));
  std::atomic<int> handled{0};
  testing::Closer closer{server.get()};
  server->SetHandler([&](InMessage) { ++handled; });

  ClusterKey own = NewKey();
  void* ctx = zmq_ctx_new();
  void* s = zmq_socket(ctx, ZMQ_DEALER);
  auto id = zmq_internal::EncodeRoutingId(PeerId{Role::kClient, 0}, "tcp://127.0.0.1:1");
  ASSERT_TRUE(id.ok());
  zmq_setsockopt(s, ZMQ_ROUTING_ID, id->data(), id->size());
  zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, key.public_key.c_str(), 41);
  zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, own.public_key.c_str(), 41);
  zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, own.secret_key.c_str(), 41);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  ASSERT_EQ(zmq_connect(s, server->address().c_str()), 0);
  zmq_send(s, "x", 1, ZMQ_DONTWAIT);
  ASSERT_TRUE(WaitFor([&] { return logs.Count({"refused a peer at 127.0.0.1"}) == 1; }))
      << "the ZAP refusal names the peer's address";
  EXPECT_GE(logs.Count({"did not present the cluster key"}), 1);
  ASSERT_TRUE(WaitFor([&] { return server->stats().auth_refused >= 1; }));
  std::this_thread::sleep_for(Millis(300));  // retries are refused but logged once
  EXPECT_EQ(logs.Count({"refused a peer at 127.0.0.1"}), 1);
  EXPECT_EQ(handled.load(), 0);
  zmq_close(s);
  zmq_ctx_term(ctx);
}

// When a server's ZAP handler refuses us, our connection to it fails for good
// and says why.
TEST(ZmqSecurityTest, ConnectionRefusedByZapStaysFailed) {
  ClusterKey key = NewKey();
  // A raw CURVE server whose ZAP handler refuses everyone.
  void* ctx = zmq_ctx_new();
  void* zap = zmq_socket(ctx, ZMQ_REP);
  ASSERT_EQ(zmq_bind(zap, "inproc://zeromq.zap.01"), 0);
  std::atomic<bool> stop{false};
  std::thread zap_thread([&] {
    while (!stop) {
      zmq_pollitem_t item{zap, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 50) <= 0) continue;
      std::vector<std::string> frames;
      int more = 1;
      while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        zmq_msg_recv(&m, zap, 0);
        frames.emplace_back(static_cast<char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
      }
      const std::string reply[] = {"1.0", frames.size() > 1 ? frames[1] : "", "400", "no", "", ""};
      for (int i = 0; i < 6; ++i)
        zmq_send(zap, reply[i].data(), reply[i].size(), i < 5 ? ZMQ_SNDMORE : 0);
    }
  });
  void* router = zmq_socket(ctx, ZMQ_ROUTER);
  int one = 1, zero = 0;
  zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one);
  zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, key.secret_key.c_str(), 41);
  zmq_setsockopt(router, ZMQ_ZAP_DOMAIN, "test", 4);
  zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
  ASSERT_EQ(zmq_bind(router, "tcp://127.0.0.1:*"), 0);
  char endpoint[256];
  size_t len = sizeof endpoint;
  zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);

  {
    auto worker = Make(Options(kWorker, key));
    ASSERT_TRUE(worker->Connect(kServer, endpoint).ok());
    Status st;
    ASSERT_TRUE(WaitFor([&] {
      st = worker->Send(kServer, MakeAckMessage(), {.send_timeout = Millis(0)});
      return st.message().find("authentication failed") != std::string::npos;
    })) << st.ToString();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    // Sticky: the same error again, at once.
    EXPECT_EQ(worker->Send(kServer, MakeAckMessage()).message(), st.message());
  }
  stop = true;
  zap_thread.join();
  zmq_close(router);
  zmq_close(zap);
  zmq_ctx_term(ctx);
}

TEST(ZmqSecurityTest, KeyFileErrorsStopCreation) {
  ZmqOptions o = Options(kServer, std::nullopt);
  o.key_file = "/nonexistent/rigel.key";
  EXPECT_EQ(CreateZmqTransport(o).status().code(), StatusCode::kNotFound);
}

// Raw sockets sending whatever they like to a plain server.
class RawPeer {
 public:
  RawPeer(void* ctx, const std::string& address, const std::string& routing_id) {
    s_ = zmq_socket(ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s_, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s_, ZMQ_ROUTING_ID, routing_id.data(), routing_id.size());
    EXPECT_EQ(zmq_connect(s_, address.c_str()), 0);
  }
  ~RawPeer() { zmq_close(s_); }
  void Send(const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
      zmq_send(s_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
    }
  }

 private:
  void* s_;
};

std::string HeaderOf(OutMessage m, wire::Kind kind = wire::Kind::ONE_WAY, uint64_t id = 0) {
  m.header().setKind(kind);
  m.header().setRequestId(id);
  std::string h(EncodedHeaderSize(m), '\0');
  EncodeHeader(m, {reinterpret_cast<std::byte*>(h.data()), h.size()});
  return h;
}

TEST(ZmqSecurityTest, MalformedMessagesAreDroppedCountedAndLoggedOncePerPeer) {
  LogCapture logs;
  ZmqOptions o = Options(kServer, std::nullopt);
  o.limits.max_message_bytes = 1 << 20;
  o.limits.max_frames = 4;
  auto server = Make(o);
  std::mutex mu;
  std::vector<uint32_t> good;
  testing::Closer closer{server.get()};
  server->SetHandler([&](InMessage m) {
    std::lock_guard<std::mutex> lock(mu);
    good.push_back(m.Body<transport::wire::Data>().getTag());
  });
  void* ctx = zmq_ctx_new();
  const PeerId raw_id{Role::kClient, 9};
  auto raw = std::make_unique<RawPeer>(ctx, server->address(),
                                       *zmq_internal::EncodeRoutingId(raw_id, "tcp://127.0.0.1:1"));

  std::string pull = HeaderOf(MakeSample(TypeId<ps::wire::PullRequest>(), 1));
  std::string zeros(8 * 6, '\0');                               // 6 keys, all zero: not ascending
  raw->Send({"garbage!"});                                      // malformed
  raw->Send({pull.substr(0, pull.size() - 8)});                 // truncated: malformed
  raw->Send({pull, std::string(8 * 7, '\1')});                  // 7 keys for a count of 6
  raw->Send({pull, zeros});                                     // unsorted keys
  raw->Send({HeaderOf(MakeDataMessage(1, {}))});                // fine
  raw->Send({HeaderOf(MakeAckMessage()), "", "", "", "", ""});  // 5 frames > max_frames
  raw->Send({HeaderOf(MakeDataMessage(2, {})), std::string(600000, 'a'),
             std::string(600000, 'b')});          // 1.2 MB in all > 1 MiB
  raw->Send({HeaderOf(MakeDataMessage(3, {}))});  // fine
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return good.size() == 2;
  }));
  TransportStats s = server->stats();
  EXPECT_EQ(s.dropped[size_t(DropReason::kMalformed)], 2u);
  EXPECT_EQ(s.dropped[size_t(DropReason::kBadPayload)], 2u);
  EXPECT_EQ(s.dropped[size_t(DropReason::kOversized)], 2u);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(good, (std::vector<uint32_t>{1, 3}));
  }
  // Logged once per peer (the count is bumped just before the line is written).
  ASSERT_TRUE(WaitFor([&] { return logs.Count({"client:9", "dropped"}) >= 1; }));
  EXPECT_EQ(logs.Count({"client:9", "dropped"}), 1);

  // A connection whose identity is not Rigel's is dropped too, logged with its address.
  auto anonymous = std::make_unique<RawPeer>(ctx, server->address(), "anon");
  anonymous->Send({HeaderOf(MakeDataMessage(4, {}))});
  ASSERT_TRUE(WaitFor([&] { return logs.Count({"unidentified peer at 127.0.0.1"}) == 1; }));
  EXPECT_EQ(server->stats().dropped[size_t(DropReason::kBadSender)], 1u);

  // A single frame over max_message_bytes: libzmq cuts that connection before
  // buffering it; the peer reconnects and is served again.
  raw->Send({HeaderOf(MakeDataMessage(5, {})), std::string(2 << 20, 'x')});
  ASSERT_TRUE(WaitFor([&] {
    raw->Send({HeaderOf(MakeDataMessage(6, {}))});
    std::lock_guard<std::mutex> lock(mu);
    return !good.empty() && good.back() == 6;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(std::count(good.begin(), good.end(), 5u), 0);
  }
  raw.reset();
  anonymous.reset();
  zmq_ctx_term(ctx);
}

// Issue 46: junk sent under a forged "worker:0" used up the real worker:0's
// one warning, which was keyed by the name a peer claims. It is keyed by
// connection now: the forger's junk is logged once, and so is the real
// worker's, each under the name it claims.
TEST(ZmqSecurityTest, AForgedNameDoesNotUseUpTheRealPeersWarning) {
  LogCapture logs;
  auto server = Make(Options(kServer, std::nullopt));
  testing::Closer closer{server.get()};
  std::atomic<int> good{0};
  server->SetHandler([&](InMessage) { ++good; });
  void* ctx = zmq_ctx_new();
  const PeerId worker{Role::kWorker, 0};
  auto forger = std::make_unique<RawPeer>(
      ctx, server->address(), *zmq_internal::EncodeRoutingId(worker, "tcp://127.0.0.1:1"));
  for (int i = 0; i < 5; ++i) forger->Send({"junk"});
  forger->Send({HeaderOf(MakeDataMessage(1, {}))});
  ASSERT_TRUE(WaitFor([&] { return good == 1; }));
  ASSERT_TRUE(WaitFor([&] { return logs.Count({"worker:0", "dropped"}) >= 1; }));
  EXPECT_EQ(logs.Count({"worker:0", "dropped"}), 1);
  // The real worker:0, on its own connection (its own address), sends one
  // bad message: it is logged.
  auto real = std::make_unique<RawPeer>(
      ctx, server->address(), *zmq_internal::EncodeRoutingId(worker, "tcp://127.0.0.1:2"));
  real->Send({"its one bad message"});
  real->Send({HeaderOf(MakeDataMessage(2, {}))});
  ASSERT_TRUE(WaitFor([&] { return good == 2; }));
  EXPECT_TRUE(WaitFor([&] {
    return logs.Count({"worker:0", "dropped"}) == 2;
  })) << "the real worker's drop was not logged";
  EXPECT_EQ(server->stats().dropped[size_t(DropReason::kMalformed)], 6u);
  forger.reset();
  real.reset();
  zmq_ctx_term(ctx);
}

}  // namespace
}  // namespace rigel::transport
