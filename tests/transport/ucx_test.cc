// What only the UCX backend has (the conformance suite, conformance_test.cc,
// checks what every backend promises): its handshake's encoding and proofs,
// the transports UCX picks and the log line that names them, and the reasons
// it gives when it refuses a peer.
#include "common/config.h"

#if RIGEL_HAVE_UCX

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "transport/create.h"
#include "transport/ucx/address.h"
#include "transport/ucx/handshake.h"
#include "transport/ucx/transport.h"

namespace rigel::transport {
namespace {

using ucx_internal::DecodeHandshake;
using ucx_internal::DeriveAuthKey;
using ucx_internal::DiallerProof;
using ucx_internal::EncodeHandshake;
using ucx_internal::Handshake;
using ucx_internal::HandshakeType;
using ucx_internal::ListenerProof;
using ucx_internal::NewNonce;
using ucx_internal::SameMac;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 3};

// Log lines of component "transport" while alive.
class LogCapture {
 public:
  LogCapture() {
    old_level_ = GetLogLevel();
    SetLogLevel(LogLevel::kDebug);
    old_ = SetLogSink([this](LogLevel, std::string_view component, std::string_view message) {
      if (component != "transport") return;
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(message);
    });
  }
  ~LogCapture() {
    SetLogSink(old_);
    SetLogLevel(old_level_);
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  std::string Find(const std::string& needle) {
    for (const std::string& l : Lines()) {
      if (l.find(needle) != std::string::npos) return l;
    }
    return "";
  }

 private:
  LogSink old_;
  LogLevel old_level_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

std::unique_ptr<Transport> Make(PeerId self, const std::string& tls,
                                std::optional<ClusterKey> key = std::nullopt) {
  UcxOptions o;
  o.self = self;
  o.tls = tls;
  o.key = key;
  o.request_timeout = Millis(3000);
  o.send_timeout = Millis(1000);
  auto t = CreateUcxTransport(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

// Connects `client` to an echoing `server` and makes one call.
Status RoundTrip(Transport& client, Transport& server) {
  server.SetHandler([&server](InMessage in) { (void)server.Respond(in, MakeAckMessage()); });
  RIGEL_RETURN_IF_ERROR(client.Connect(server.self(), server.address()));
  return client.Call(server.self(), MakeAckMessage()).status();
}

TEST(UcxHandshake, EveryTypeRoundTripsAndJunkIsRejected) {
  Handshake hello;
  hello.type = HandshakeType::kHello;
  hello.peer = kWorker;
  hello.address = "ucx://10.0.0.7:4100";
  hello.nonce = NewNonce();
  auto back = DecodeHandshake(EncodeHandshake(hello));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->peer, kWorker);
  EXPECT_EQ(back->address, hello.address);
  EXPECT_EQ(back->nonce, hello.nonce);

  Handshake challenge;
  challenge.type = HandshakeType::kChallenge;
  challenge.nonce = NewNonce();
  challenge.proof = ucx_internal::Mac{};
  challenge.proof->fill(7);
  back = DecodeHandshake(EncodeHandshake(challenge));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->nonce, challenge.nonce);
  ASSERT_TRUE(back->proof.has_value());
  EXPECT_EQ(*back->proof, *challenge.proof);

  Handshake proof;
  proof.type = HandshakeType::kProof;
  back = DecodeHandshake(EncodeHandshake(proof));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->proof.has_value());

  Handshake refuse;
  refuse.type = HandshakeType::kRefuse;
  refuse.reason = "not a member";
  back = DecodeHandshake(EncodeHandshake(refuse));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->reason, "not a member");

  std::vector<uint8_t> bytes = EncodeHandshake(hello);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeHandshake({bytes.data(), n}).ok()) << "a prefix of " << n << " bytes";
  }
  bytes.push_back(0);
  EXPECT_FALSE(DecodeHandshake(bytes).ok()) << "a trailing byte";
  bytes = EncodeHandshake(hello);
  bytes[4] = 9;  // the format
  EXPECT_NE(DecodeHandshake(bytes).status().message().find("format 9"), std::string::npos);
  bytes = EncodeHandshake(hello);
  bytes[6] = 0;  // the role
  EXPECT_FALSE(DecodeHandshake(bytes).ok());
}

TEST(UcxHandshake, ProofsDependOnTheKeyTheNoncesAndTheIdentity) {
  auto k1 = GenerateClusterKey();
  auto k2 = GenerateClusterKey();
  ASSERT_TRUE(k1.ok() && k2.ok());
  auto a = DeriveAuthKey(*k1);
  auto b = DeriveAuthKey(*k2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  const auto n1 = NewNonce(), n2 = NewNonce();
  EXPECT_NE(n1, n2);
  const auto proof = DiallerProof(*a, n1, n2, kWorker, "ucx://h:1");
  EXPECT_TRUE(SameMac(proof, DiallerProof(*a, n1, n2, kWorker, "ucx://h:1")));
  EXPECT_FALSE(SameMac(proof, DiallerProof(*b, n1, n2, kWorker, "ucx://h:1")));
  EXPECT_FALSE(SameMac(proof, DiallerProof(*a, n2, n1, kWorker, "ucx://h:1")));
  EXPECT_FALSE(SameMac(proof, DiallerProof(*a, n1, n2, kServer, "ucx://h:1")));
  EXPECT_FALSE(SameMac(proof, DiallerProof(*a, n1, n2, kWorker, "ucx://h:2")));
  // A listener's proof is never a dialler's: one cannot be reflected as the other.
  EXPECT_FALSE(SameMac(ListenerProof(*a, n1, n2), DiallerProof(*a, n1, n2, kWorker, "")));
  ClusterKey bad = *k1;
  bad.secret_key = "not z85";
  EXPECT_FALSE(DeriveAuthKey(bad).ok());
}

TEST(UcxAddress, ParsedAndFormatted) {
  auto a = ucx_internal::ParseUcxAddress("ucx://[::1]:4100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 4100);
  EXPECT_EQ(ucx_internal::FormatUcxAddress("::1", 4100), "ucx://[::1]:4100");
  EXPECT_EQ(ucx_internal::ParseUcxAddress("ucx://h:*")->port, 0);
  for (const char* bad : {"tcp://h:1", "ucx://h", "ucx://:1", "ucx://h:0", "ucx://h:70000",
                          "ucx://h:1x", "ucx://a/b:1"}) {
    EXPECT_FALSE(ucx_internal::ParseUcxAddress(bad).ok()) << bad;
  }
}

TEST(UcxTransport, TheLogNamesTheTransportsUcxPickedForEachConnection) {
  struct Case {
    std::string tls;
    std::vector<std::string> expect;  // one of these in the line
  };
  for (const Case& c : {Case{"tcp", {"tcp/"}},
                        // Shared memory; UCX sets connections up over tcp.
                        Case{"", {"posix/", "sysv/"}}}) {
    LogCapture log;
    auto server = Make(kServer, c.tls);
    auto worker = Make(kWorker, c.tls);
    ASSERT_TRUE(server && worker);
    ASSERT_TRUE(RoundTrip(*worker, *server).ok()) << c.tls;
    const std::string line = log.Find("worker:3: connected to server:0");
    ASSERT_FALSE(line.empty()) << c.tls;
    bool found = false;
    for (const std::string& e : c.expect) found |= line.find(e) != std::string::npos;
    EXPECT_TRUE(found) << c.tls << ": " << line;
    EXPECT_FALSE(log.Find("server:0: accepted worker:3").empty()) << c.tls;
  }
}

TEST(UcxTransport, RefusalsNameTheReasonOnBothSides) {
  auto k1 = GenerateClusterKey();
  auto k2 = GenerateClusterKey();
  ASSERT_TRUE(k1.ok() && k2.ok());
  struct Case {
    std::optional<ClusterKey> server_key, worker_key;
    std::string worker_says;
  };
  for (const Case& c :
       {Case{*k1, *k2, "does not hold this cluster's key (its proof is for another key)"},
        Case{*k1, std::nullopt, "requires the cluster key and this process has none"},
        Case{std::nullopt, *k1, "does not hold this cluster's key (it runs without a key)"}}) {
    auto server = Make(kServer, "tcp", c.server_key);
    auto worker = Make(kWorker, "tcp", c.worker_key);
    ASSERT_TRUE(server && worker);
    bool delivered = false;
    server->SetHandler([&](InMessage in) {
      delivered = true;
      (void)server->Respond(in, MakeAckMessage());
    });
    ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
    auto r = worker->Call(kServer, MakeAckMessage());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find(c.worker_says), std::string::npos) << r.status().message();
    // Stays failed: the next call fails at once with the same reason.
    auto again = worker->Call(kServer, MakeAckMessage());
    EXPECT_NE(again.status().message().find(c.worker_says), std::string::npos)
        << again.status().message();
    EXPECT_FALSE(delivered);
    EXPECT_GE(worker->stats().auth_refused, 1u);
    for (int i = 0; i < 200 && server->stats().auth_refused == 0; ++i) {
      std::this_thread::sleep_for(Millis(5));
    }
    EXPECT_GE(server->stats().auth_refused, 1u);
  }
}

// Ranks that mpirun starts together dial the scheduler before it listens. A
// connection within the host hears of no failure (UCP_ERR_HANDLING_MODE_NONE),
// so a dial that gets no answer is tried again after a second, not after the
// ten-second handshake limit: the request waits and goes through.
TEST(UcxTransport, ADiallerThatStartsBeforeItsListenerReachesItWithinSeconds) {
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  ::close(probe);
  const std::string address = "ucx://127.0.0.1:" + std::to_string(port);

  auto worker = Make(kWorker, "");
  ASSERT_TRUE(worker);
  ASSERT_TRUE(worker->Connect(kServer, address).ok());
  const auto start = std::chrono::steady_clock::now();
  auto reply = worker->RequestAsync(kServer, MakeAckMessage(), {Millis(-1), Millis(8000)});
  std::this_thread::sleep_for(Millis(400));  // the first dial finds nobody
  UcxOptions o;
  o.self = kServer;
  o.listen = address;
  auto server = CreateUcxTransport(o);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->SetHandler(
      [s = server->get()](InMessage in) { (void)s->Respond(in, MakeAckMessage()); });
  auto r = reply.get();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

TEST(UcxTransport, PlainModeListensOnlyOnLoopbackAndWildcardsNeedAnAdvertisedAddress) {
  UcxOptions o;
  o.self = kServer;
  o.listen = "ucx://0.0.0.0:*";
  auto t = CreateUcxTransport(o);
  EXPECT_EQ(t.status().code(), StatusCode::kFailedPrecondition);
  o.key = GenerateClusterKey().value();
  t = CreateUcxTransport(o);
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("advertise"), std::string::npos);
  o.advertise = "ucx://127.0.0.1:4999";
  t = CreateUcxTransport(o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->address(), "ucx://127.0.0.1:4999");
  auto plain = Make(kWorker, "tcp");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->Connect(kServer, "ucx://10.1.2.3:4000").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(plain->Connect(kServer, "tcp://127.0.0.1:4000").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rigel::transport

#endif  // RIGEL_HAVE_UCX
