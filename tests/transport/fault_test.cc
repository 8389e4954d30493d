// FaultInjectingTransport: every fault must reach the caller as a timeout or
// an error, and never as wrong data.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "ps/wire/messages.h"
#include "tests/transport/test_util.h"
#include "transport/fault_injecting_transport.h"
#include "transport/loopback_transport.h"
#include "transport/zmq/transport.h"

namespace rigel::transport {
namespace {

using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};

// A pull request for the one key `key`.
OutMessage Pull(uint64_t key) {
  OutMessage m;
  auto p = m.InitBody<ps::wire::PullRequest>();
  p.setParam(1);
  p.setWidth(4);
  m.SetKeys(p.initKeys(), Buffer::FromVector(std::vector<uint64_t>{key}));
  return m;
}

std::vector<float> RowOf(uint64_t key) {
  return {float(key), float(key) + 0.5f, -float(key), 1.0f / float(key + 1)};
}

// Answers pull requests with the row of their key; records one-way tags.
void ServeRows(Transport& t, std::mutex* mu, std::vector<uint32_t>* tags) {
  t.SetHandler([&t, mu, tags](InMessage m) {
    if (m.Is<transport::wire::Data>()) {
      std::lock_guard<std::mutex> lock(*mu);
      tags->push_back(m.Body<transport::wire::Data>().getTag());
      return;
    }
    auto req = m.Body<ps::wire::PullRequest>();
    uint64_t key = m.Keys(req.getKeys())[0];
    OutMessage r;
    r.SetRows(r.InitBody<ps::wire::PullReply>().initRows(), Buffer::FromVector(RowOf(key)), 4);
    (void)t.Respond(m, std::move(r));
  });
}

// Checks that a pull reply holds the row of `key`.
bool IsRowOf(const InMessage& r, uint64_t key) {
  if (!r.Is<ps::wire::PullReply>()) return false;
  RowsView v = r.Rows(r.Body<ps::wire::PullReply>().getRows());
  return v.rows == 1 && std::vector<float>(v.values.begin(), v.values.end()) == RowOf(key);
}

struct Pair {
  // Declared first, destroyed last: the server's handler uses them.
  std::mutex mu;
  std::vector<uint32_t> tags;
  std::shared_ptr<LoopbackNetwork> net = LoopbackNetwork::Create();
  std::unique_ptr<FaultInjectingTransport> worker;  // faulty side
  std::unique_ptr<Transport> server;

  explicit Pair(const FaultOptions& o) {
    server = std::move(net->Join(kServer)).value();
    auto w = FaultInjectingTransport::Create(std::move(net->Join(kWorker)).value(), o);
    EXPECT_TRUE(w.ok());
    worker = std::move(w).value();
    ServeRows(*server, &mu, &tags);
  }
};

TEST(FaultTest, BadOptionsAreRejected) {
  auto net = LoopbackNetwork::Create();
  FaultOptions o;
  o.drop = 0.7;
  o.delay = 0.7;
  EXPECT_EQ(
      FaultInjectingTransport::Create(std::move(net->Join(kWorker)).value(), o).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_FALSE(FaultInjectingTransport::Create(nullptr, {}).ok());
}

TEST(FaultTest, DroppedRequestTimesOut) {
  FaultOptions o;
  o.drop = 1;
  Pair p(o);
  auto r = p.worker->Call(kServer, Pull(3), {.timeout = Millis(60)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos);
  EXPECT_EQ(p.worker->fault_counts().dropped, 1u);
  EXPECT_EQ(p.server->stats().messages_received, 0u);
}

TEST(FaultTest, DroppedResponseTimesOut) {
  auto net = LoopbackNetwork::Create();
  FaultOptions o;
  o.drop = 1;
  auto server =
      std::move(FaultInjectingTransport::Create(std::move(net->Join(kServer)).value(), o)).value();
  auto worker = std::move(net->Join(kWorker)).value();
  std::mutex mu;
  std::vector<uint32_t> tags;
  testing::Closer closer{server.get(), worker.get()};
  ServeRows(*server, &mu, &tags);
  auto r = worker->Call(kServer, Pull(3), {.timeout = Millis(60)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(server->fault_counts().dropped, 1u);
}

TEST(FaultTest, DuplicatedRequestsCompleteOnceWithTheRightData) {
  FaultOptions o;
  o.duplicate = 1;
  Pair p(o);
  for (uint64_t k = 1; k <= 20; ++k) {
    auto r = p.worker->Call(kServer, Pull(k), {.timeout = Millis(2000)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(IsRowOf(*r, k));
  }
  ASSERT_TRUE(WaitFor([&] { return p.server->stats().messages_received == 40; }));
}

TEST(FaultTest, DuplicatedResponsesAreCountedAsLateAndIgnored) {
  auto net = LoopbackNetwork::Create();
  FaultOptions o;
  o.duplicate = 1;
  auto server =
      std::move(FaultInjectingTransport::Create(std::move(net->Join(kServer)).value(), o)).value();
  auto worker = std::move(net->Join(kWorker)).value();
  std::mutex mu;
  std::vector<uint32_t> tags;
  testing::Closer closer{server.get(), worker.get()};
  ServeRows(*server, &mu, &tags);
  for (uint64_t k = 1; k <= 20; ++k) {
    auto r = worker->Call(kServer, Pull(k), {.timeout = Millis(2000)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(IsRowOf(*r, k));
  }
  // The second copy of each response finds no pending request.
  ASSERT_TRUE(WaitFor([&] { return worker->stats().late_responses == 20; }));
}

TEST(FaultTest, ReorderedMessagesAllArriveIntact) {
  FaultOptions o;
  o.reorder = 1;
  o.reorder_hold = Millis(5000);  // only the next message releases a held one
  Pair p(o);
  for (uint32_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(p.worker->Send(kServer, MakeDataMessage(i, {})).ok());
  }
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(p.mu);
    return p.tags.size() == 10;
  }));
  std::lock_guard<std::mutex> lock(p.mu);
  EXPECT_EQ(std::set<uint32_t>(p.tags.begin(), p.tags.end()).size(), 10u);
  EXPECT_EQ(p.tags, (std::vector<uint32_t>{1, 0, 3, 2, 5, 4, 7, 6, 9, 8}));
}

TEST(FaultTest, HeldMessageIsSentAfterTheHoldTime) {
  FaultOptions o;
  o.reorder = 1;
  o.reorder_hold = Millis(30);
  Pair p(o);
  auto r = p.worker->Call(kServer, Pull(5), {.timeout = Millis(2000)});  // held, then flushed
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(IsRowOf(*r, 5));
}

TEST(FaultTest, DelayBeyondTheTimeoutIsATimeoutAndWithinItIsFine) {
  FaultOptions o;
  o.delay = 1;
  o.delay_min = Millis(40);
  o.delay_max = Millis(60);
  Pair p(o);
  auto late = p.worker->Call(kServer, Pull(2), {.timeout = Millis(20)});
  EXPECT_EQ(late.status().code(), StatusCode::kUnavailable);
  auto fine = p.worker->Call(kServer, Pull(2), {.timeout = Millis(1000)});
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_TRUE(IsRowOf(*fine, 2));
  EXPECT_EQ(p.worker->fault_counts().delayed, 2u);
}

TEST(FaultTest, CutLinkTimesOutUntilHealed) {
  Pair p(FaultOptions{});
  ASSERT_TRUE(p.worker->Call(kServer, Pull(1)).ok());
  p.worker->Cut(kServer);
  auto r = p.worker->Call(kServer, Pull(1), {.timeout = Millis(50)});
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  // Incoming traffic from a cut peer is dropped too.
  std::atomic<int> got{0};
  testing::Closer closer{p.worker.get(), p.server.get()};
  p.worker->SetHandler([&](InMessage) { ++got; });
  ASSERT_TRUE(p.server->Send(kWorker, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return p.worker->fault_counts().cut >= 2; }));
  EXPECT_EQ(got.load(), 0);
  p.worker->Heal(kServer);
  auto healed = p.worker->Call(kServer, Pull(9));
  ASSERT_TRUE(healed.ok());
  EXPECT_TRUE(IsRowOf(*healed, 9));
}

TEST(FaultTest, ResponseOverACutLinkIsSwallowed) {
  // The request goes out, the link is cut while the server answers slowly:
  // the answer must not be delivered, the caller times out.
  auto net = LoopbackNetwork::Create();
  auto server = std::move(net->Join(kServer)).value();
  auto worker =
      std::move(FaultInjectingTransport::Create(std::move(net->Join(kWorker)).value(), {})).value();
  auto gate = std::make_shared<testing::Gate>();
  testing::GateOpener opener{gate};
  server->SetHandler([&, gate](InMessage m) {
    gate->Wait();
    (void)server->Respond(m, MakeAckMessage());
  });
  auto future = worker->RequestAsync(kServer, Pull(1), {.timeout = Millis(150)});
  ASSERT_TRUE(WaitFor([&] { return server->stats().messages_received == 1; }));
  worker->Cut(kServer);
  gate->Open();
  auto r = future.get();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

// Every fault at once over real sockets: each request completes exactly once,
// either with its own row or with an error.
TEST(FaultTest, MixedFaultsOverZmqNeverCorruptData) {
  ZmqOptions so;
  so.self = kServer;
  auto server = CreateZmqTransport(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ZmqOptions wo;
  wo.self = kWorker;
  auto inner = CreateZmqTransport(wo);
  ASSERT_TRUE(inner.ok());
  FaultOptions o;
  o.drop = 0.1;
  o.duplicate = 0.1;
  o.reorder = 0.1;
  o.delay = 0.1;
  o.delay_max = Millis(30);
  o.seed = 7;
  auto worker = std::move(FaultInjectingTransport::Create(std::move(inner).value(), o)).value();
  std::mutex mu;
  std::vector<uint32_t> tags;
  ServeRows(**server, &mu, &tags);
  ASSERT_TRUE(worker->Connect(kServer, (*server)->address()).ok());
  constexpr int kN = 300;
  std::mutex results_mu;
  std::map<uint64_t, int> calls;
  std::atomic<int> good{0}, errors{0}, wrong{0};
  testing::Closer closer{worker.get(), server->get()};
  for (uint64_t k = 1; k <= kN; ++k) {
    Status st = worker->Request(kServer, Pull(k),
                                [&, k](StatusOr<InMessage> r) {
                                  {
                                    std::lock_guard<std::mutex> lock(results_mu);
                                    ++calls[k];
                                  }
                                  if (!r.ok()) {
                                    ++errors;
                                  } else if (IsRowOf(*r, k)) {
                                    ++good;
                                  } else {
                                    ++wrong;
                                  }
                                },
                                {.timeout = Millis(400)});
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return good + errors + wrong == kN; }));
  std::this_thread::sleep_for(Millis(100));  // a second callback would show up now
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(good.load(), kN / 2);
  EXPECT_GT(errors.load(), 0);
  std::lock_guard<std::mutex> lock(results_mu);
  EXPECT_EQ(calls.size(), size_t(kN));
  for (auto& [k, n] : calls) EXPECT_EQ(n, 1) << "request " << k;
  FaultCounts c = worker->fault_counts();
  EXPECT_GT(c.dropped, 0u);
  EXPECT_GT(c.duplicated, 0u);
  EXPECT_GT(c.reordered, 0u);
  EXPECT_GT(c.delayed, 0u);
}

}  // namespace
}  // namespace rigel::transport
