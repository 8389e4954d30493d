// transport::Create (transport/create.h): the backend chosen by name, and
// the options reaching the zmq backend.
#include "transport/create.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

#include "common/config.h"

namespace rigel::transport {
namespace {

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};

TransportOptions Options(PeerId self) {
  TransportOptions o;
  o.self = self;
  return o;
}

std::unique_ptr<Transport> Make(const TransportOptions& o) {
  auto t = Create(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

void Answer(Transport& server) {
  server.SetHandler([&server](InMessage m) {
    if (m.is_request()) (void)server.Respond(m, MakeAckMessage());
  });
}

TEST(TransportCreate, ZmqIsTheDefaultAndTwoEndpointsTalk) {
  EXPECT_EQ(TransportOptions().backend, "zmq");
  auto server = Make(Options(kServer));
  auto worker = Make(Options(kWorker));
  ASSERT_TRUE(server && worker);
  EXPECT_EQ(server->self(), kServer);
  EXPECT_EQ(server->address().rfind("tcp://127.0.0.1:", 0), 0u) << server->address();
  Answer(*server);
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  auto ack = worker->Call(kServer, MakeAckMessage(), {.timeout = Millis(5000)});
  EXPECT_TRUE(ack.ok()) << ack.status().ToString();
}

TEST(TransportCreate, ListenAdvertiseAndInsecurePlainReachTheBackend) {
  TransportOptions o = Options(kServer);
  o.listen = "tcp://0.0.0.0:*";
  auto refused = Create(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
      << refused.status().ToString();

  o.insecure_plain = true;
  o.advertise = "tcp://127.0.0.1:1";
  auto plain = Create(o);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ((*plain)->address(), "tcp://127.0.0.1:1");
}

TEST(TransportCreate, TheClusterKeyReachesTheBackend) {
  auto key = GenerateClusterKey();
  if (!key.ok()) GTEST_SKIP() << key.status().ToString();
  TransportOptions so = Options(kServer);
  so.key = *key;
  auto server = Make(so);
  ASSERT_TRUE(server);
  Answer(*server);

  TransportOptions mo = Options(kWorker);
  mo.key = *key;
  auto member = Make(mo);
  ASSERT_TRUE(member);
  ASSERT_TRUE(member->Connect(kServer, server->address()).ok());
  EXPECT_TRUE(member->Call(kServer, MakeAckMessage(), {.timeout = Millis(5000)}).ok());

  // Without the key the server (a CURVE endpoint, if the key got there)
  // refuses the peer.
  auto plain = Make(Options(PeerId{Role::kWorker, 1}));
  ASSERT_TRUE(plain);
  ASSERT_TRUE(plain->Connect(kServer, server->address()).ok());
  auto refused = plain->Call(kServer, MakeAckMessage(), {.timeout = Millis(300)});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();

  TransportOptions bad = Options(PeerId{Role::kWorker, 2});
  bad.key_file = "/nonexistent/rigel-create-test.key";
  auto unread = Create(bad);
  ASSERT_FALSE(unread.ok());
  EXPECT_NE(unread.status().message().find(bad.key_file), std::string::npos)
      << unread.status().ToString();
}

TEST(TransportCreate, TheRequestTimeoutReachesTheBackend) {
  auto server = Make(Options(kServer));
  ASSERT_TRUE(server);
  server->SetHandler([](InMessage) {});  // never answers
  TransportOptions o = Options(kWorker);
  o.request_timeout = Millis(200);
  auto worker = Make(o);
  ASSERT_TRUE(worker);
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  const auto start = std::chrono::steady_clock::now();
  auto r = worker->Call(kServer, MakeAckMessage());  // the transport's default timeout
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  // The zmq default is 10 s.
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(TransportCreate, UcxIsMadeWhereBuiltAndOtherwiseUnavailableByName) {
  TransportOptions o = Options(kServer);
  o.backend = "ucx";
  o.listen = DefaultListen("ucx");
  auto t = Create(o);
#if RIGEL_HAVE_UCX
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->address().rfind("ucx://127.0.0.1:", 0), 0u) << (*t)->address();
  EXPECT_EQ(BuiltBackends(), "zmq, ucx");
#else
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(t.status().message(),
            "transport backend ucx is not built into this binary (built: zmq); install "
            "libucx-dev and rebuild");
#endif
}

TEST(TransportCreate, EachBackendRefusesTheOthersAddresses) {
  TransportOptions o = Options(kServer);
  o.listen = "ucx://127.0.0.1:*";
  EXPECT_EQ(Create(o).status().code(), StatusCode::kInvalidArgument);
#if RIGEL_HAVE_UCX
  o.backend = "ucx";
  o.listen = "tcp://127.0.0.1:*";
  auto t = Create(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("ucx://HOST:PORT"), std::string::npos)
      << t.status().message();
#endif
}

TEST(TransportCreate, AnUnknownBackendIsInvalidArgument) {
  TransportOptions o = Options(kServer);
  o.backend = "zqm";
  auto t = Create(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "transport backend 'zqm' is unknown (built: " + BuiltBackends() + ")");
}

}  // namespace
}  // namespace rigel::transport
