// What is LoopbackTransport's own: endpoint names, the inbox's capacity and
// the request window, responses that never wait, payloads shared. The
// contract every backend keeps is tested in conformance_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "ps/wire/messages.h"
#include "tests/transport/test_util.h"
#include "transport/loopback_transport.h"

namespace rigel::transport {
namespace {

using testing::Closer;
using testing::Gate;
using testing::GateOpener;
using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};

std::unique_ptr<Transport> Join(const std::shared_ptr<LoopbackNetwork>& net, PeerId id) {
  auto t = net->Join(id);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
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
  m.SetRows(m.InitBody<ps::wire::PullReply>().initRows(), b, 16);
  ASSERT_TRUE(worker->Send(kServer, std::move(m)).ok());
  InMessage in = got.get_future().get();
  RowsView rows = in.Rows(in.Body<ps::wire::PullReply>().getRows());
  EXPECT_EQ(rows.values.data(), values->data());
  EXPECT_EQ(rows.rows, 64u);
}

}  // namespace
}  // namespace rigel::transport
