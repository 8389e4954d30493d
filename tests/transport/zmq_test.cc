// The ZeroMQ backend in one process, where it goes beyond the contract every
// backend keeps (conformance_test.cc): every message type over tcp, ipc and
// inproc, its queues' high-water marks against the request window, calls amid
// other traffic, options and plain-mode rules.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "ps/wire/messages.h"
#include "tests/transport/test_util.h"
#include "transport/zmq/transport.h"

namespace rigel::transport {
namespace {

using testing::AllTypes;
using testing::Closer;
using testing::ExpectSample;
using testing::Gate;
using testing::GateOpener;
using testing::MakeSample;
using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};

std::unique_ptr<Transport> Make(ZmqOptions o) {
  auto t = CreateZmqTransport(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

ZmqOptions Options(PeerId self, std::string listen = "tcp://127.0.0.1:*") {
  ZmqOptions o;
  o.self = self;
  o.listen = std::move(listen);
  o.linger = Millis(100);
  return o;
}

// Answers each request with a sample of the same type; keeps one-way messages.
struct Echo {
  explicit Echo(Transport& t) : t(t) {
    t.SetHandler([this](InMessage m) {
      if (m.is_request()) {
        (void)this->t.Respond(m, MakeSample(m.type(), static_cast<int>(m.request_id() % 5)));
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      one_way.push_back(m);
    });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return one_way.size();
  }
  Transport& t;
  std::mutex mu;
  std::vector<InMessage> one_way;
};

class ZmqSchemeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZmqSchemeTest, EveryMessageTypeBothWays) {
  auto ctx = ZmqContext::Create();
  ASSERT_TRUE(ctx.ok());
  std::string scheme = GetParam();
  std::string tag = std::to_string(::getpid());
  auto listen = [&](const char* name) {
    if (scheme == "tcp") return std::string("tcp://127.0.0.1:*");
    if (scheme == "ipc") return "ipc:///tmp/rigel-test-" + tag + "-" + name;
    return "inproc://rigel-test-" + tag + "-" + name;
  };
  ZmqOptions so = Options(kServer, listen("server"));
  so.context = *ctx;
  ZmqOptions wo = Options(kWorker, listen("worker"));
  wo.context = *ctx;
  auto server = Make(so);
  auto worker = Make(wo);
  ASSERT_TRUE(server && worker);
  Echo echo(*server);
  Closer echo_closer{server.get()};
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  auto types = AllTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    ASSERT_TRUE(worker->Send(kServer, MakeSample(types[i], int(i))).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return echo.count() == types.size(); }));
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(echo.one_way[i].from(), kWorker);
    ExpectSample(echo.one_way[i], types[i], int(i));
  }
  for (uint64_t t : types) {
    if (t == TypeId<wire::Error>()) continue;  // an error response is a Status, tested below
    auto r = worker->Call(kServer, MakeSample(t, 2), {.timeout = Millis(5000)});
    ASSERT_TRUE(r.ok()) << TypeName(t) << ": " << r.status().ToString();
    EXPECT_EQ(r->from(), kServer);
    ExpectSample(*r, t, int(r->request_id() % 5));
  }
  // The server learnt the worker's address from the connection and can send first.
  Echo back(*worker);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(server->Send(kWorker, MakeSample(TypeId<cluster::wire::Heartbeat>(), 3)).ok());
  ASSERT_TRUE(WaitFor([&] { return back.count() == 1; }));
  ExpectSample(back.one_way[0], TypeId<cluster::wire::Heartbeat>(), 3);
  EXPECT_EQ(server->stats().dropped_total(), 0u);
  EXPECT_EQ(worker->stats().dropped_total(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Schemes, ZmqSchemeTest, ::testing::Values("tcp", "ipc", "inproc"));

// Round trips faster than libzmq looks at a socket's commands: libzmq's send
// reads the socket's command mailbox, where the I/O thread reports what it
// has written out, at most about once a millisecond, so a queue it has drained
// can still look full to a non-blocking send. A requester whose window fits
// the responder's queue must still never lose a response to that.
TEST(ZmqTest, FastRoundTripsAtTheWindowLimitLoseNoResponse) {
  ZmqOptions so = Options(kServer);
  so.send_hwm = 2;  // the smallest queue that holds a window of 1 (transport.h)
  auto server = Make(so);
  ZmqOptions wo = Options(kWorker);
  wo.max_in_flight = 1;
  auto worker = Make(wo);
  Echo echo(*server);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  constexpr int kCalls = 2000;
  int answered = 0;
  Status first_error;
  for (; answered < kCalls; ++answered) {
    auto r = worker->Call(kServer, MakeAckMessage(), {.timeout = Millis(3000)});
    if (!r.ok()) {
      first_error = r.status();
      break;
    }
  }
  EXPECT_EQ(answered, kCalls) << "call " << answered << ": " << first_error.ToString();
  EXPECT_EQ(server->stats().responses_dropped, 0u);
}

// A requester that stops reading while it has more responses owed than the
// responder's queue holds: the responses that do not fit are dropped, and
// nothing is lost silently. Respond says so, and each such request ends in a
// timeout that names the peer and the deadline; every request has one outcome.
TEST(ZmqTest, ResponsesToARequesterThatStopsReadingAreAccountedFor) {
  ZmqOptions so = Options(kServer);
  so.send_hwm = 2;
  auto server = Make(so);
  ZmqOptions wo = Options(kWorker);
  wo.recv_hwm = 2;
  wo.max_in_flight = 64;  // far more than half the server's queue
  auto worker = Make(wo);
  std::mutex mu;
  std::vector<Status> responds, outcomes;
  server->SetHandler([&](InMessage m) {
    if (!m.is_request()) return;
    OutMessage r;  // 1 MiB, so that the kernel's buffers fill quickly
    r.SetRows(r.InitBody<ps::wire::PullReply>().initRows(),
              Buffer::FromVector(std::vector<float>(size_t{1} << 18, 1.0f)), 256);
    Status st = server->Respond(m, std::move(r));
    std::lock_guard<std::mutex> lock(mu);
    responds.push_back(st);
  });
  auto gate = std::make_shared<Gate>();
  std::atomic<bool> stopped{false};
  worker->SetHandler([&, gate](InMessage) {
    stopped = true;
    gate->Wait();  // the worker stops reading
  });
  Closer closer{server.get(), worker.get()};
  GateOpener opener{gate};  // after the closer: opens before Close joins
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  ASSERT_TRUE(worker->Call(kServer, MakeAckMessage()).ok());  // the server learns our address
  ASSERT_TRUE(server->Send(kWorker, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return stopped.load(); }));
  constexpr int kRequests = 64;
  constexpr Millis kTimeout{3000};
  for (int i = 0; i < kRequests; ++i) {
    OutMessage m;
    m.SetKeys(m.InitBody<ps::wire::PullRequest>().initKeys(),
              Buffer::FromVector(std::vector<uint64_t>{uint64_t(i)}));
    ASSERT_TRUE(worker
                    ->Request(kServer, std::move(m),
                              [&](StatusOr<InMessage> r) {
                                std::lock_guard<std::mutex> lock(mu);
                                outcomes.push_back(r.status());
                              },
                              {.timeout = kTimeout})
                    .ok());
  }
  ASSERT_TRUE(WaitFor([&] { return server->stats().responses_dropped > 0; }, Millis(10000)));
  gate->Open();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return outcomes.size() == kRequests && responds.size() == kRequests + 1;
      },
      Millis(20000)));
  std::lock_guard<std::mutex> lock(mu);
  uint64_t dropped = 0, timed_out = 0;
  for (const Status& st : responds) {
    if (st.ok()) continue;
    ++dropped;
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    EXPECT_NE(st.message().find("send queue to worker:0 is full"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("dropped"), std::string::npos) << st.message();
  }
  for (const Status& st : outcomes) {
    if (st.ok()) continue;
    ++timed_out;
    EXPECT_EQ(st.code(), StatusCode::kUnavailable);
    EXPECT_NE(st.message().find("to server:0 timed out after 3000 ms (deadline exceeded"),
              std::string::npos)
        << st.message();
  }
  EXPECT_EQ(server->stats().responses_dropped, dropped);
  EXPECT_EQ(worker->stats().requests_timed_out, timed_out);
  // Each dropped response surfaced as a timeout; the other timed-out
  // requests' responses come late, and are counted instead of delivered.
  ASSERT_GE(timed_out, dropped);
  EXPECT_TRUE(WaitFor([&] { return worker->stats().late_responses == timed_out - dropped; }))
      << worker->stats().late_responses << " late responses, " << timed_out << " timed out, "
      << dropped << " dropped";
}

// Blocking calls from several threads, asynchronous requests and one-way
// traffic at once: every response right, handler and callbacks on the receive
// thread, one-way messages in order.
TEST(ZmqTest, CallsFromSeveralThreadsAmidOtherTraffic) {
  auto server = Make(Options(kServer));
  auto worker = Make(Options(kWorker));
  std::atomic<int> answered{0};
  server->SetHandler([&](InMessage m) {
    if (!m.is_request()) return;
    // Echo the key back as a row; also push one-way traffic at the worker.
    auto keys = m.Keys(m.Body<ps::wire::PullRequest>().getKeys());
    OutMessage r;
    r.SetRows(r.InitBody<ps::wire::PullReply>().initRows(),
              Buffer::FromVector(std::vector<float>(2, float(keys[0]))), 2);
    (void)server->Respond(m, std::move(r));
    (void)server->Send(kWorker, MakeDataMessage(static_cast<uint32_t>(answered++), {}));
  });
  std::mutex mu;
  std::vector<uint32_t> tags;
  std::atomic<int> off_thread{0}, async_ok{0};
  Closer closer{server.get(), worker.get()};
  worker->SetHandler([&](InMessage m) {
    if (!worker->InReceiveThread()) ++off_thread;
    std::lock_guard<std::mutex> lock(mu);
    tags.push_back(m.Body<transport::wire::Data>().getTag());
  });
  ASSERT_TRUE(worker->Connect(kServer, server->address()).ok());
  auto pull = [](uint64_t key) {
    OutMessage m;
    auto p = m.InitBody<ps::wire::PullRequest>();
    m.SetKeys(p.initKeys(), Buffer::FromVector(std::vector<uint64_t>{key}));
    return m;
  };
  constexpr int kThreads = 3, kCalls = 200, kAsync = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        uint64_t key = uint64_t(t) * 1000 + i;
        auto r = worker->Call(kServer, pull(key), {.timeout = Millis(10000)});
        if (!r.ok() || r->Rows(r->Body<ps::wire::PullReply>().getRows()).values[0] != float(key)) {
          ++wrong;
        }
      }
    });
  }
  for (int i = 0; i < kAsync; ++i) {
    ASSERT_TRUE(worker
                    ->Request(kServer, pull(100000 + i),
                              [&](StatusOr<InMessage> r) {
                                if (r.ok() && worker->InReceiveThread()) ++async_ok;
                              })
                    .ok());
  }
  for (auto& t : threads) t.join();
  const int total = kThreads * kCalls + kAsync;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return int(tags.size()) == total && async_ok == kAsync;
      },
      Millis(20000)));
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(off_thread.load(), 0);
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < total; ++i) ASSERT_EQ(tags[i], uint32_t(i)) << "out of order at " << i;
}

TEST(ZmqTest, OptionsAndAddressesAreChecked) {
  EXPECT_EQ(CreateZmqTransport(Options(PeerId{})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateZmqTransport(Options(kServer, "udp://1.2.3.4:5")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateZmqTransport(Options(kServer, "tcp://127.0.0.1:99999")).status().code(),
            StatusCode::kInvalidArgument);
  // Plain mode: loopback only, both for listening and for connecting.
  Status wide = CreateZmqTransport(Options(kServer, "tcp://0.0.0.0:*")).status();
  EXPECT_EQ(wide.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wide.message().find("loopback"), std::string::npos) << wide.message();
  auto a = Make(Options(kServer));
  EXPECT_EQ(a->Connect(kWorker, "tcp://10.1.2.3:5555").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(a->Connect(kWorker, "tcp://127.0.0.1:*").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(a->Connect(kWorker, "tcp://localhost:5555").ok());
  EXPECT_TRUE(a->Connect(kWorker, "tcp://[::1]:5555").ok());
  // The same address twice: the second cannot bind.
  EXPECT_EQ(CreateZmqTransport(Options(kWorker, a->address())).status().code(),
            StatusCode::kUnavailable);
  // Unknown peer.
  EXPECT_EQ(a->Send(PeerId{Role::kClient, 3}, MakeAckMessage()).code(), StatusCode::kUnavailable);
  // An invalid outgoing message is refused before it is sent.
  OutMessage bad;
  bad.InitBody<ps::wire::PullRequest>();
  EXPECT_EQ(a->Send(kWorker, std::move(bad)).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rigel::transport
