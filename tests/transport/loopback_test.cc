// LoopbackTransport: the request/response machinery, timeouts, errors,
// back-pressure and shutdown, without sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "tests/transport/test_util.h"
#include "transport/loopback_transport.h"

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

// Answers every request with the same message type and seed (so the response
// is checkable), and records one-way messages.
struct EchoServer {
  explicit EchoServer(Transport& t) : t(t) {
    t.SetHandler([this](InMessage m) {
      if (m.is_request()) {
        int seed = static_cast<int>(m.request_id() % 7);
        if (m.type() == MessageType::SHUTDOWN) {
          (void)this->t.RespondError(m, FailedPrecondition("not now"));
        } else {
          (void)this->t.Respond(m, MakeSample(m.type(), seed));
        }
      } else {
        std::lock_guard<std::mutex> lock(mu);
        one_way.push_back(m);
      }
    });
  }
  Transport& t;
  std::mutex mu;
  std::vector<InMessage> one_way;
};

std::unique_ptr<Transport> Join(const std::shared_ptr<LoopbackNetwork>& net, PeerId id) {
  auto t = net->Join(id);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(LoopbackTest, OneWayMessagesOfEveryTypeArriveInOrder) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  EchoServer echo(*server);
  Closer closer{server.get(), worker.get()};
  auto types = AllTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    ASSERT_TRUE(worker->Send(kServer, MakeSample(types[i], static_cast<int>(i))).ok());
  }
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(echo.mu);
    return echo.one_way.size() == types.size();
  }));
  std::lock_guard<std::mutex> lock(echo.mu);
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(echo.one_way[i].from(), kWorker);
    EXPECT_EQ(echo.one_way[i].kind(), wire::Kind::ONE_WAY);
    ExpectSample(echo.one_way[i], types[i], static_cast<int>(i));
  }
}

TEST(LoopbackTest, RequestsOfEveryTypeGetTheirResponses) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  EchoServer echo(*server);
  Closer closer{server.get(), worker.get()};
  for (MessageType t : AllTypes()) {
    if (t == MessageType::SHUTDOWN || t == MessageType::ERROR) continue;
    StatusOr<InMessage> r = worker->Call(kServer, MakeSample(t, 1));
    ASSERT_TRUE(r.ok()) << MessageTypeName(t) << ": " << r.status().ToString();
    EXPECT_EQ(r->kind(), wire::Kind::RESPONSE);
    ExpectSample(*r, t, static_cast<int>(r->request_id() % 7));
  }
}

TEST(LoopbackTest, ErrorResponsesBecomeTheCallersStatus) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  EchoServer echo(*server);
  Closer closer{server.get(), worker.get()};
  StatusOr<InMessage> r = worker->Call(kServer, MakeSample(MessageType::SHUTDOWN, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "server:0: not now");
}

TEST(LoopbackTest, ManyRequestsInFlightAllComplete) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  EchoServer echo(*server);
  constexpr int kN = 2000;
  std::atomic<int> ok{0}, bad{0};
  Closer closer{server.get(), worker.get()};
  for (int i = 0; i < kN; ++i) {
    Status st = worker->Request(kServer, MakeSample(MessageType::PULL_REPLY, 0),
                                [&](StatusOr<InMessage> r) {
                                  if (r.ok() && r->type() == MessageType::PULL_REPLY) {
                                    ++ok;
                                  } else {
                                    ++bad;
                                  }
                                });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return ok + bad == kN; }));
  EXPECT_EQ(ok.load(), kN);
  EXPECT_EQ(worker->stats().requests_sent, uint64_t(kN));
}

TEST(LoopbackTest, UnansweredRequestTimesOut) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  server->SetHandler([](InMessage) {});  // never answers
  auto start = Clock::now();
  StatusOr<InMessage> r =
      worker->Call(kServer, MakeAckMessage(), CallOptions{.timeout = Millis(80)});
  auto took = Clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().message();
  EXPECT_GE(took, Millis(80));
  EXPECT_LT(took, Millis(1000));
  EXPECT_EQ(worker->stats().requests_timed_out, 1u);
}

TEST(LoopbackTest, ShortTimeoutBehindLongOneStillFiresOnTime) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  server->SetHandler([](InMessage) {});
  auto slow = worker->RequestAsync(kServer, MakeAckMessage(), {.timeout = Millis(5000)});
  auto start = Clock::now();
  auto fast = worker->Call(kServer, MakeAckMessage(), {.timeout = Millis(50)});
  EXPECT_FALSE(fast.ok());
  EXPECT_LT(Clock::now() - start, Millis(1000));
  worker->Close();
  EXPECT_EQ(slow.get().status().code(), StatusCode::kUnavailable);  // failed by Close
}

TEST(LoopbackTest, UnknownPeerAndClosedTransportAreErrors) {
  auto net = LoopbackNetwork::Create();
  auto worker = Join(net, kWorker);
  EXPECT_EQ(worker->Send(kServer, MakeAckMessage()).code(), StatusCode::kUnavailable);
  bool called = false;
  EXPECT_FALSE(worker->Request(kServer, MakeAckMessage(), [&](auto) { called = true; }).ok());
  worker->Close();
  EXPECT_EQ(worker->Send(kServer, MakeAckMessage()).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(called);  // a failed Request never calls back
}

TEST(LoopbackTest, DuplicateEndpointIsRefused) {
  auto net = LoopbackNetwork::Create();
  auto a = Join(net, kWorker);
  EXPECT_EQ(net->Join(kWorker).status().code(), StatusCode::kInvalidArgument);
  a.reset();
  EXPECT_TRUE(net->Join(kWorker).ok());  // free again once the first is gone
}

// A handler that blocks until released: the receiver's inbox fills up.
TEST(LoopbackTest, FullInboxMakesSendTimeOutThenRecovers) {
  LoopbackOptions o;
  o.queue_capacity = 4;
  auto net = LoopbackNetwork::Create(o);
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  auto gate = std::make_shared<Gate>();
  GateOpener opener{gate};
  std::atomic<int> handled{0};
  Closer closer{server.get(), worker.get()};
  server->SetHandler([gate, &handled](InMessage) {
    gate->Wait();
    ++handled;
  });
  // 1 message in the handler + 4 queued; the 6th cannot fit.
  int sent = 0;
  Status st;
  for (; sent < 10; ++sent) {
    st = worker->Send(kServer, MakeAckMessage(), {.send_timeout = Millis(50)});
    if (!st.ok()) break;
  }
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("full"), std::string::npos) << st.message();
  EXPECT_GE(sent, 4);
  EXPECT_LE(sent, 5);
  EXPECT_EQ(worker->stats().send_queue_full, 1u);
  gate->Open();
  ASSERT_TRUE(WaitFor([&] { return handled == sent; }));
  EXPECT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
}

TEST(LoopbackTest, RequestWindowBoundsRequestsInFlight) {
  LoopbackOptions o;
  o.max_in_flight = 2;
  auto net = LoopbackNetwork::Create(o);
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  server->SetHandler([](InMessage) {});  // never answers
  std::atomic<int> done{0};
  auto count = [&](StatusOr<InMessage>) { ++done; };
  CallOptions opts{.send_timeout = Millis(50), .timeout = Millis(150)};
  ASSERT_TRUE(worker->Request(kServer, MakeAckMessage(), count, opts).ok());
  ASSERT_TRUE(worker->Request(kServer, MakeAckMessage(), count, opts).ok());
  auto start = Clock::now();
  Status third = worker->Request(kServer, MakeAckMessage(), count, opts);
  EXPECT_EQ(third.code(), StatusCode::kUnavailable);
  EXPECT_NE(third.message().find("in flight"), std::string::npos) << third.message();
  EXPECT_GE(Clock::now() - start, Millis(50));
  // Another peer has its own window.
  auto other = Join(net, PeerId{Role::kServer, 1});
  other->SetHandler([](InMessage) {});
  EXPECT_TRUE(worker->Request(PeerId{Role::kServer, 1}, MakeAckMessage(), count, opts).ok());
  // A waiting Request gets the slot a timed-out one frees.
  Status waited = worker->Request(kServer, MakeAckMessage(), count,
                                  {.send_timeout = Millis(2000), .timeout = Millis(150)});
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  ASSERT_TRUE(WaitFor([&] { return done == 4; }));
  // On the receive thread a full window fails at once instead of deadlocking.
  std::promise<Status> nested;
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(worker->Request(kServer, MakeAckMessage(), count, opts).ok());
  ASSERT_TRUE(worker
                  ->Request(kServer, MakeAckMessage(),
                            [&](StatusOr<InMessage>) {
                              nested.set_value(worker->Request(
                                  kServer, MakeAckMessage(), count,
                                  {.send_timeout = Millis(5000), .timeout = Millis(100)}));
                            },
                            {.timeout = Millis(10)})
                  .ok());
  // The 10 ms request times out first; its callback runs while the 150 ms one
  // still holds a slot, and the window (2) has room for exactly one: OK.
  EXPECT_TRUE(nested.get_future().get().ok());
}

TEST(LoopbackTest, ResponsesAreNeverDroppedForAFullInbox) {
  LoopbackOptions o;
  o.queue_capacity = 1;
  auto net = LoopbackNetwork::Create(o);
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  auto gate = std::make_shared<Gate>();
  GateOpener opener{gate};
  // The worker's receive thread is stuck in its handler, so its inbox fills.
  worker->SetHandler([gate](InMessage) { gate->Wait(); });
  std::vector<InMessage> requests;
  std::mutex mu;
  server->SetHandler([&](InMessage m) {
    std::lock_guard<std::mutex> lock(mu);
    requests.push_back(m);
  });
  ASSERT_TRUE(server->Send(kWorker, MakeAckMessage()).ok());  // occupies the handler
  ASSERT_TRUE(WaitFor([&] { return worker->stats().messages_received == 1; }));
  ASSERT_TRUE(server->Send(kWorker, MakeAckMessage()).ok());  // fills the inbox
  EXPECT_EQ(server->Send(kWorker, MakeAckMessage(), {.send_timeout = Millis(0)}).code(),
            StatusCode::kUnavailable);
  std::atomic<int> ok{0};
  Closer closer{server.get(), worker.get()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(worker->Request(kServer, MakeAckMessage(), [&](auto r) { ok += r.ok(); }).ok());
  }
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return requests.size() == 3;
  }));
  auto start = Clock::now();
  for (auto& r : requests) EXPECT_TRUE(server->Respond(r, MakeAckMessage()).ok());
  EXPECT_LT(Clock::now() - start, Millis(100));  // Respond never waits
  gate->Open();
  ASSERT_TRUE(WaitFor([&] { return ok == 3; }));
  EXPECT_EQ(server->stats().responses_dropped, 0u);
}

TEST(LoopbackTest, CallFromAHandlerFailsInsteadOfDeadlocking) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  std::promise<Status> nested;
  Closer closer{server.get(), worker.get()};
  server->SetHandler([&](InMessage m) {
    EXPECT_TRUE(server->InReceiveThread());
    nested.set_value(server->Call(kWorker, MakeAckMessage()).status());
  });
  EXPECT_FALSE(worker->InReceiveThread());
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  Status st = nested.get_future().get();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("would wait for itself"), std::string::npos) << st.message();
}

TEST(LoopbackTest, HandlerExceptionsAreCountedNotFatal) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  std::atomic<int> calls{0};
  Closer closer{server.get(), worker.get()};
  server->SetHandler([&](InMessage) {
    ++calls;
    throw std::runtime_error("bug in a handler");
  });
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return server->stats().handler_errors == 2; }));
  EXPECT_EQ(calls.load(), 2);
}

TEST(LoopbackTest, PayloadIsSharedNotCopied) {
  auto net = LoopbackNetwork::Create();
  auto server = Join(net, kServer);
  auto worker = Join(net, kWorker);
  std::promise<InMessage> got;
  Closer closer{server.get(), worker.get()};
  server->SetHandler([&](InMessage m) { got.set_value(m); });
  auto values = std::make_shared<std::vector<float>>(1024, 1.5f);
  Buffer b(values, values->data(), values->size() * 4);
  OutMessage m;
  m.SetRows(m.header().getBody().initPullReply().initRows(), b, 16);
  ASSERT_TRUE(worker->Send(kServer, std::move(m)).ok());
  InMessage in = got.get_future().get();
  RowsView rows = in.Rows(in.header().getBody().getPullReply().getRows());
  EXPECT_EQ(rows.values.data(), values->data());
  EXPECT_EQ(rows.rows, 64u);
}

}  // namespace
}  // namespace rigel::transport
