// The transport contract (transport/transport.h) over every backend that
// conformance.h lists: ordering, requests and timeouts, large payloads,
// back-pressure, malformed frames, peer death, authentication and Close.
// Backend-specific behaviour (addresses, options, queue sizes, zero copy,
// logging) stays in each backend's own test file.
#include "tests/transport/conformance.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/wire/messages.h"
#include "ps/wire/messages.h"
#include "tests/transport/test_util.h"

namespace rigel::transport {
namespace {

using testing::AllTypes;
using testing::Closer;
using testing::ConformanceCase;
using testing::ExpectSample;
using testing::Gate;
using testing::GateOpener;
using testing::MakeSample;
using testing::WaitFor;

const PeerId kServer{Role::kServer, 0};
const PeerId kWorker{Role::kWorker, 0};
constexpr Millis kSendTimeout{2000};
constexpr Millis kRequestTimeout{5000};
// How late a timeout may fire on a loaded 2-core VM.
constexpr Millis kSlack{1000};

Millis Since(Clock::time_point start) {
  return std::chrono::duration_cast<Millis>(Clock::now() - start);
}

// Keeps one-way messages; answers each request with a sample of its own type
// (seed: request id % 7).
class Echo {
 public:
  explicit Echo(Transport& t) : t_(t) {
    t.SetHandler([this](InMessage m) {
      if (m.is_request()) {
        (void)t_.Respond(m, MakeSample(m.type(), static_cast<int>(m.request_id() % 7)));
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      one_way_.push_back(std::move(m));
    });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return one_way_.size();
  }
  // The messages so far (hand-over: read them on one thread only).
  std::vector<InMessage> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return one_way_;
  }

 private:
  Transport& t_;
  std::mutex mu_;
  std::vector<InMessage> one_way_;
};

// Answers every request with an ack.
void Answer(Transport& t) {
  t.SetHandler([&t](InMessage m) {
    if (m.is_request()) (void)t.Respond(m, MakeAckMessage());
  });
}

// Makes `from` know where `to` listens.
Status Link(Transport& from, const Transport& to) { return from.Connect(to.self(), to.address()); }

// The encoded header of `m` as a raw wire frame (no packed payload).
std::string HeaderOf(OutMessage m, wire::Kind kind = wire::Kind::ONE_WAY, uint64_t id = 0) {
  m.header().setKind(kind);
  m.header().setRequestId(id);
  std::string h(EncodedHeaderSize(m), '\0');
  EncodeHeader(m, {reinterpret_cast<std::byte*>(h.data()), h.size()});
  return h;
}

OutMessage PullOf(uint64_t key) {
  OutMessage m;
  m.SetKeys(m.InitBody<ps::wire::PullRequest>().initKeys(),
            Buffer::FromVector(std::vector<uint64_t>{key}));
  return m;
}

class TransportConformanceTest : public ::testing::TestWithParam<ConformanceCase> {
 protected:
  void SetUp() override {
    auto c = GetParam().new_cluster();
    if (!c.ok()) {
      StatusCode code = c.status().code();
      if (code == StatusCode::kUnimplemented || code == StatusCode::kUnavailable) {
        GTEST_SKIP() << name() << " cannot run here: " << c.status().ToString();
      }
      FAIL() << name() << ": " << c.status().ToString();
    }
    cluster_ = std::move(c).value();
  }

  // An endpoint of this test's cluster, or null (and a failure).
  std::unique_ptr<Transport> Make(const PeerId& self, Millis send_timeout = kSendTimeout,
                                  Millis request_timeout = kRequestTimeout) {
    auto t = cluster_->make(self, send_timeout, request_timeout);
    EXPECT_TRUE(t.ok()) << name() << ": " << self.ToString() << ": " << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }

  const std::string& name() const { return GetParam().name; }

  // A stranger made by `make` (`what` says which) reaches a member of the
  // cluster: nothing it sends is delivered, now or after retrying, and the
  // refusal shows (the member's auth_refused, or the stranger's errors).
  void ExpectRefusedForGood(const std::string& what, const testing::MakeEndpoint& make);

  std::unique_ptr<testing::ConformanceCluster> cluster_;
};

TEST_P(TransportConformanceTest, OneWayMessagesOfEveryTypeArriveInOrder) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Echo echo(*server);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto types = AllTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    Status st = worker->Send(kServer, MakeSample(types[i], static_cast<int>(i)));
    ASSERT_TRUE(st.ok()) << TypeName(types[i]) << ": " << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return echo.count() == types.size(); }))
      << echo.count() << " of " << types.size();
  std::vector<InMessage> got = echo.messages();
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(got[i].from(), kWorker);
    EXPECT_EQ(got[i].kind(), wire::Kind::ONE_WAY);
    ExpectSample(got[i], types[i], static_cast<int>(i));
  }
  EXPECT_EQ(server->stats().dropped_total(), 0u);
}

TEST_P(TransportConformanceTest, SmallAndLargeMessagesArriveInSendOrder) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Echo echo(*server);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  // 64 B (small enough to travel packed behind the header, codec.h) and
  // 1-4 MiB, interleaved.
  constexpr uint32_t kMessages = 24;
  std::vector<Buffer> sent;
  for (uint32_t i = 0; i < kMessages; ++i) {
    size_t size = i % 2 == 0 ? 64 : size_t{1 + (i / 2) % 4} << 20;
    std::vector<uint8_t> bytes(size);
    for (size_t k = 0; k < size; ++k) bytes[k] = static_cast<uint8_t>(k * 131 + i * 7);
    sent.push_back(Buffer::FromVector(std::move(bytes)));
    Status st = worker->Send(kServer, MakeDataMessage(i, {sent.back()}));
    ASSERT_TRUE(st.ok()) << "message " << i << ": " << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return echo.count() == kMessages; }, Millis(20000)))
      << echo.count() << " of " << kMessages;
  std::vector<InMessage> got = echo.messages();
  for (uint32_t i = 0; i < kMessages; ++i) {
    auto data = got[i].Body<transport::wire::Data>();
    ASSERT_EQ(data.getTag(), i) << "out of order at " << i;
    ASSERT_EQ(data.getFrames().size(), 1u);
    Buffer b = got[i].Bytes(data.getFrames()[0]);
    ASSERT_EQ(b.size(), sent[i].size()) << "message " << i;
    EXPECT_EQ(std::memcmp(b.data(), sent[i].data(), b.size()), 0) << "message " << i;
  }
}

TEST_P(TransportConformanceTest, RequestsOfEveryTypeGetTheirResponses) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Echo echo(*server);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  for (uint64_t t : AllTypes()) {
    if (t == TypeId<wire::Error>()) continue;  // an error response is a Status (next test)
    StatusOr<InMessage> r = worker->Call(kServer, MakeSample(t, 1));
    ASSERT_TRUE(r.ok()) << TypeName(t) << ": " << r.status().ToString();
    EXPECT_EQ(r->kind(), wire::Kind::RESPONSE);
    EXPECT_EQ(r->from(), kServer);
    ExpectSample(*r, t, static_cast<int>(r->request_id() % 7));
  }
}

TEST_P(TransportConformanceTest, ErrorResponsesBecomeTheCallersStatus) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  server->SetHandler([s = server.get()](InMessage m) {
    if (m.Is<cluster::wire::Plan>()) {
      (void)s->RespondError(m, InvalidArgument("bad plan"));
    } else if (m.Is<cluster::wire::Step>()) {
      (void)s->RespondError(m, NotFound("no such step"));
    } else {
      (void)s->Respond(m, MakeAckMessage());
    }
  });
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto plan = worker->Call(kServer, MakeSample(TypeId<cluster::wire::Plan>(), 1));
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument) << plan.status().ToString();
  EXPECT_EQ(plan.status().message(), "server:0: bad plan");
  auto step = worker->RequestAsync(kServer, MakeSample(TypeId<cluster::wire::Step>(), 1)).get();
  EXPECT_EQ(step.status().code(), StatusCode::kNotFound) << step.status().ToString();
  EXPECT_EQ(step.status().message(), "server:0: no such step");
  EXPECT_TRUE(worker->Call(kServer, MakeAckMessage()).ok());  // errors leave no trace
}

// More requests than a peer's window (500 in every backend so far) from
// several threads: Request waits for room, and every response matches.
TEST_P(TransportConformanceTest, ManyRequestsFromSeveralThreadsAllComplete) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  server->SetHandler([s = server.get()](InMessage m) {
    auto keys = m.Keys(m.Body<ps::wire::PullRequest>().getKeys());
    OutMessage r;
    r.SetRows(r.InitBody<ps::wire::PullReply>().initRows(),
              Buffer::FromVector(std::vector<float>(4, float(keys[0]))), 4);
    (void)s->Respond(m, std::move(r));
  });
  constexpr int kThreads = 3, kPerThread = 400;
  std::atomic<int> good{0}, bad{0};
  std::mutex why_mu;
  std::vector<std::string> why;  // the first few failures, so a failure says what happened
  auto fail = [&](std::string reason) {
    ++bad;
    std::lock_guard<std::mutex> lock(why_mu);
    if (why.size() < 8) why.push_back(std::move(reason));
  };
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t key = uint64_t(t) * kPerThread + i;
        Status st = worker->Request(kServer, PullOf(key), [&, key](StatusOr<InMessage> r) {
          if (!r.ok()) return fail(fmt::format("key {}: {}", key, r.status().ToString()));
          float v = r->Rows(r->Body<ps::wire::PullReply>().getRows()).values[0];
          if (v != float(key)) return fail(fmt::format("key {}: response carries {}", key, v));
          ++good;
        });
        if (!st.ok()) fail(fmt::format("key {}: Request: {}", key, st.ToString()));
      }
    });
  }
  for (auto& t : threads) t.join();
  constexpr int kTotal = kThreads * kPerThread;
  ASSERT_TRUE(WaitFor([&] { return good + bad == kTotal; }, Millis(20000)))
      << good << " good, " << bad << " bad of " << kTotal;
  std::lock_guard<std::mutex> lock(why_mu);
  EXPECT_EQ(good.load(), kTotal) << "first failures: " << fmt::format("{}", fmt::join(why, " | "));
  EXPECT_EQ(worker->stats().requests_sent, uint64_t(kTotal));
  EXPECT_EQ(server->stats().responses_dropped, 0u);
}

// A short timeout behind a long one fires on time; the endpoint's default
// (Make's request_timeout) applies when a call names none.
TEST_P(TransportConformanceTest, UnansweredRequestTimesOutWithDeadlineExceeded) {
  auto server = Make(kServer);
  constexpr Millis kDefault{300}, kShort{100};
  auto worker = Make(kWorker, kSendTimeout, kDefault);
  ASSERT_TRUE(server && worker);
  server->SetHandler([](InMessage) {});  // never answers
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto slow = worker->RequestAsync(kServer, MakeAckMessage(), {.timeout = Millis(30000)});
  auto by_default_start = Clock::now();
  auto by_default = worker->RequestAsync(kServer, MakeAckMessage());
  auto start = Clock::now();
  auto fast = worker->Call(kServer, MakeAckMessage(), {.timeout = kShort});
  Millis took = Since(start);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(fast.status().message().find("deadline exceeded"), std::string::npos)
      << fast.status().message();
  EXPECT_GE(took, kShort);
  EXPECT_LT(took, kShort + kSlack);

  ASSERT_EQ(by_default.wait_for(kDefault + kSlack), std::future_status::ready);
  took = Since(by_default_start);
  auto d = by_default.get();
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable) << d.status().ToString();
  EXPECT_NE(d.status().message().find("deadline exceeded"), std::string::npos)
      << d.status().message();
  EXPECT_GE(took, kDefault);
  EXPECT_EQ(slow.wait_for(Millis(0)), std::future_status::timeout) << "the 30 s request ended";
  EXPECT_EQ(worker->stats().requests_timed_out, 2u);
  worker->Close();
  ASSERT_EQ(slow.wait_for(kSlack), std::future_status::ready);
  EXPECT_EQ(slow.get().status().code(), StatusCode::kUnavailable);  // failed by Close
}

TEST_P(TransportConformanceTest, SixtyFourMiBPayloadsArriveIntactBothWays) {
  auto server = Make(kServer);
  auto worker = Make(kWorker, kSendTimeout, Millis(20000));
  ASSERT_TRUE(server && worker);
  // Echo the rows back in the received frame.
  server->SetHandler([s = server.get()](InMessage m) {
    auto rows = m.Body<ps::wire::PullReply>().getRows();
    OutMessage r;
    r.SetRows(r.InitBody<ps::wire::PullReply>().initRows(), m.frame(rows.getFrame()),
              rows.getWidth());
    (void)s->Respond(m, std::move(r));
  });
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  constexpr size_t kFloats = size_t{16} << 20;  // 64 MiB
  std::vector<float> values(kFloats);
  for (size_t i = 0; i < kFloats; ++i) values[i] = float(i % 100003) * 0.5f;
  OutMessage m;
  m.SetRows(m.InitBody<ps::wire::PullReply>().initRows(), Buffer::FromVector(values), 256);
  auto r = worker->Call(kServer, std::move(m));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RowsView v = r->Rows(r->Body<ps::wire::PullReply>().getRows());
  ASSERT_EQ(v.rows * v.width, kFloats);
  EXPECT_EQ(v.width, 256u);
  EXPECT_EQ(std::memcmp(v.values.data(), values.data(), kFloats * 4), 0);
  EXPECT_GT(worker->stats().bytes_sent, kFloats * 4);
  EXPECT_GT(worker->stats().bytes_received, kFloats * 4);
  EXPECT_GT(server->stats().bytes_received, kFloats * 4);
}

// ValidateOutgoing refuses it before anything is queued: the bytes (never
// touched, so never resident) are not read.
TEST_P(TransportConformanceTest, MessageOverTheSizeLimitIsRefusedAtSend) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Echo echo(*server);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  const size_t size = Limits{}.max_message_bytes + 1;
  std::shared_ptr<std::byte[]> bytes(new std::byte[size]);
  Buffer big(bytes, bytes.get(), size);
  Status st = worker->Send(kServer, MakeDataMessage(1, {big}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("limit"), std::string::npos) << st.message();
  std::atomic<bool> called{false};
  st = worker->Request(kServer, MakeDataMessage(2, {big}), [&](auto) { called = true; });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  // The endpoint goes on: a small message and a call go through.
  ASSERT_TRUE(worker->Send(kServer, MakeDataMessage(3, {})).ok());
  EXPECT_TRUE(worker->Call(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return echo.count() == 1; }));
  EXPECT_EQ(echo.messages()[0].Body<transport::wire::Data>().getTag(), 3u);
  EXPECT_FALSE(called.load()) << "a refused Request called back";
}

// A receiver stuck in its handler: Send fails with kUnavailable after its
// send_timeout once the queues (and kernel buffers) between them are full,
// and nothing it accepted is lost. Bounded, so that a backend without
// back-pressure fails here instead of hanging or exhausting memory.
TEST_P(TransportConformanceTest, BlockedReceiverPushesBackThenEverythingAcceptedArrives) {
  constexpr Millis kSendWait{200};
  constexpr uint32_t kMaxSends = 16384;  // 1 GiB of 64 KiB payloads
  constexpr Millis kMaxTime{20000};
  auto server = Make(kServer);
  auto worker = Make(kWorker, kSendWait);
  ASSERT_TRUE(server && worker);
  // 256 payloads of 64 KiB, shared by the messages: message i carries
  // payload i % 256, every byte of which is i % 256.
  std::vector<Buffer> payloads;
  for (int p = 0; p < 256; ++p) {
    payloads.push_back(Buffer::FromVector(std::vector<uint8_t>(64 << 10, uint8_t(p))));
  }
  auto gate = std::make_shared<Gate>();
  std::mutex mu;
  std::vector<uint32_t> tags;
  std::atomic<int> corrupt{0};
  server->SetHandler([&, gate](InMessage m) {
    gate->Wait();
    auto d = m.Body<transport::wire::Data>();
    Buffer b = d.getFrames().size() == 1 ? m.Bytes(d.getFrames()[0]) : Buffer();
    const uint8_t want = uint8_t(d.getTag());
    if (b.size() != (64 << 10) || uint8_t(b.data()[0]) != want ||
        uint8_t(b.data()[b.size() / 2]) != want || uint8_t(b.data()[b.size() - 1]) != want) {
      ++corrupt;
    }
    std::lock_guard<std::mutex> lock(mu);
    tags.push_back(d.getTag());
  });
  Closer closer{server.get(), worker.get()};
  GateOpener opener{gate};  // after the closer: opens before Close joins
  ASSERT_TRUE(Link(*worker, *server).ok());
  uint32_t sent = 0;
  Status st;
  Millis last_send{0};
  auto start = Clock::now();
  for (; sent < kMaxSends && Since(start) < kMaxTime; ++sent) {
    auto send_start = Clock::now();
    st = worker->Send(kServer, MakeDataMessage(sent, {payloads[sent % 256]}));
    last_send = Since(send_start);
    if (!st.ok()) break;
  }
  ASSERT_FALSE(st.ok()) << "sent " << sent << " messages of 64 KiB in " << Since(start).count()
                        << " ms to a receiver that reads nothing, without back-pressure";
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("full"), std::string::npos) << st.message();
  EXPECT_GE(last_send, kSendWait - Millis(10)) << "gave up before its send_timeout";
  EXPECT_LT(last_send, kSendWait + kSlack);
  EXPECT_EQ(worker->stats().send_queue_full, 1u);
  gate->Open();
  // Everything accepted is delivered, in order and intact; then sending works again.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return tags.size() == sent;
      },
      Millis(20000)))
      << tags.size() << " of " << sent << " accepted messages arrived";
  {
    std::lock_guard<std::mutex> lock(mu);
    for (uint32_t i = 0; i < sent; ++i) ASSERT_EQ(tags[i], i) << "out of order at " << i;
  }
  EXPECT_EQ(corrupt.load(), 0);
  ASSERT_TRUE(worker->Send(kServer, MakeDataMessage(sent, {payloads[0]})).ok());
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return tags.size() == sent + 1;
  }));
}

// Frames no encoder would make, from a peer claiming a name: each is dropped
// and counted by reason; the same connection's next good message, and other
// peers' traffic, get through.
TEST_P(TransportConformanceTest, MalformedFramesAreDroppedAndCountedAndTheReceiverGoesOn) {
  if (!cluster_->send_raw) {
    GTEST_SKIP() << name() << " has no way to send raw frames (ConformanceCluster::send_raw)";
  }
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  std::mutex mu;
  std::vector<uint32_t> tags;
  server->SetHandler([&, s = server.get()](InMessage m) {
    if (m.is_request()) {
      (void)s->Respond(m, MakeAckMessage());
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    tags.push_back(m.Body<transport::wire::Data>().getTag());
  });
  Closer closer{server.get(), worker.get()};
  const PeerId raw_id{Role::kClient, 9};
  auto raw = [&](std::vector<std::string> frames) {
    Status st = cluster_->send_raw(*server, raw_id, std::move(frames));
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  const std::string pull = HeaderOf(MakeSample(TypeId<ps::wire::PullRequest>(), 1));  // 6 keys
  OutMessage future_version = MakeDataMessage(1, {});
  future_version.header().setVersion(wire::WIRE_VERSION + 1);
  raw({"garbage!"});                           // malformed
  raw({HeaderOf(std::move(future_version))});  // another wire version
  raw({pull.substr(0, pull.size() - 8)});      // truncated: malformed
  raw({pull, std::string(8 * 7, '\1')});       // 7 keys for a count of 6: bad payload
  raw({pull});                                 // a Ref to a frame that is not there
  raw({HeaderOf(MakeDataMessage(7, {}))});     // fine
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !tags.empty();
  })) << "the good message after the bad ones never arrived";
  TransportStats s = server->stats();
  EXPECT_EQ(s.dropped[size_t(DropReason::kMalformed)], 2u);
  EXPECT_EQ(s.dropped[size_t(DropReason::kVersion)], 1u);
  EXPECT_EQ(s.dropped[size_t(DropReason::kBadPayload)], 2u);
  EXPECT_EQ(s.dropped_total(), 5u);
  EXPECT_EQ(s.messages_received, 1u);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(tags, std::vector<uint32_t>{7});
  }
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto r = worker->Call(kServer, MakeAckMessage());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

// Requests pending when the peer closes end (timed out, or failed at once),
// and so does a call to the closed peer: neither waits past its timeout.
TEST_P(TransportConformanceTest, RequestsToAPeerThatClosedFailInsteadOfHanging) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  auto received = std::make_shared<std::atomic<int>>(0);
  server->SetHandler([received](InMessage) { ++*received; });  // never answers
  Closer closer{worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  constexpr Millis kTimeout{500};
  auto pending = worker->RequestAsync(kServer, MakeAckMessage(), {.timeout = kTimeout});
  ASSERT_TRUE(WaitFor([&] { return *received == 1; }));
  auto start = Clock::now();
  server->Close();
  server.reset();
  ASSERT_EQ(pending.wait_for(kTimeout + kSlack), std::future_status::ready)
      << "a request to a closed peer is still pending";
  auto r = pending.get();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_LT(Since(start), kTimeout + kSlack);

  constexpr Millis kShort{300};
  start = Clock::now();
  auto after = worker->RequestAsync(kServer, MakeAckMessage(), {.timeout = kShort});
  ASSERT_EQ(after.wait_for(kShort + kSlack), std::future_status::ready)
      << "a call to a closed peer outlived its timeout";
  r = after.get();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

// A peer that closed and came back (same PeerId, new endpoint and address) is
// reached once Connect names the new address; and a peer that comes back and
// speaks first is answered at its new address without one.
TEST_P(TransportConformanceTest, RestartedPeerIsReachedAtItsNewAddress) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Answer(*server);
  ASSERT_TRUE(Link(*worker, *server).ok());
  ASSERT_TRUE(worker->Call(kServer, MakeAckMessage()).ok());
  server->Close();
  server.reset();

  server = Make(kServer);
  ASSERT_TRUE(server);
  Answer(*server);
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto r = worker->Call(kServer, MakeAckMessage());
  ASSERT_TRUE(r.ok()) << "the restarted server was not reached: " << r.status().ToString();
  EXPECT_EQ(r->from(), kServer);

  worker->Close();
  worker.reset();
  worker = Make(kWorker);
  ASSERT_TRUE(worker);
  auto got = std::make_shared<std::atomic<int>>(0);
  worker->SetHandler([got](InMessage) { ++*got; });
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  r = worker->Call(kServer, MakeAckMessage());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Status st = server->Send(kWorker, MakeAckMessage());
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(WaitFor([&] { return *got == 1; })) << "the restarted worker was not reached";
}

void TransportConformanceTest::ExpectRefusedForGood(const std::string& what,
                                                    const testing::MakeEndpoint& make) {
  if (!make) GTEST_SKIP() << name() << " has no cluster key, so it admits " << what;
  auto server = Make(kServer);
  auto member = Make(kWorker);
  ASSERT_TRUE(server && member);
  const PeerId stranger_id{Role::kWorker, 1};
  auto made = make(stranger_id);
  ASSERT_TRUE(made.ok()) << what << ": " << made.status().ToString();
  std::unique_ptr<Transport> stranger = std::move(made).value();
  std::atomic<int> from_member{0}, from_others{0};
  server->SetHandler([&, s = server.get()](InMessage m) {
    ++(m.from() == kWorker ? from_member : from_others);
    if (m.is_request()) (void)s->Respond(m, MakeAckMessage());
  });
  Closer closer{server.get(), member.get(), stranger.get()};
  ASSERT_TRUE(Link(*member, *server).ok());
  ASSERT_TRUE(member->Call(kServer, MakeAckMessage()).ok());
  const uint64_t refused_before = server->stats().auth_refused;
  // Connect must not wait for the handshake, so it may succeed; an error is a refusal.
  bool refused_visibly = !Link(*stranger, *server).ok();
  auto attempt = [&] {
    Status st = stranger->Send(kServer, MakeAckMessage(), {.send_timeout = Millis(0)});
    refused_visibly |= !st.ok();
    auto r = stranger->Call(kServer, MakeAckMessage(),
                            {.send_timeout = Millis(0), .timeout = Millis(300)});
    EXPECT_FALSE(r.ok()) << what << ": a call was answered";
    // Anything but a plain timeout says why.
    refused_visibly |=
        !r.ok() && r.status().message().find("deadline exceeded") == std::string::npos;
  };
  attempt();
  bool counted =
      WaitFor([&] { return server->stats().auth_refused > refused_before; }, Millis(2000));
  // Later tries, after any reconnect interval, fare no better.
  std::this_thread::sleep_for(Millis(300));
  attempt();
  EXPECT_TRUE(counted || refused_visibly)
      << what << " was refused silently: the member's auth_refused stayed at " << refused_before
      << " and the stranger's sends and calls only timed out";
  EXPECT_EQ(from_others.load(), 0) << what << " got messages through";
  // The member still works, and the server received its messages only.
  EXPECT_TRUE(member->Call(kServer, MakeAckMessage()).ok());
  EXPECT_EQ(from_member.load(), 2);
  EXPECT_EQ(server->stats().messages_received, 2u);
}

TEST_P(TransportConformanceTest, PeerWithAnotherClustersKeyIsRefusedForGood) {
  ExpectRefusedForGood("a peer with another cluster's key", cluster_->make_foreign);
}

TEST_P(TransportConformanceTest, PeerWithoutAKeyIsRefusedForGood) {
  ExpectRefusedForGood("a peer without a key", cluster_->make_plain);
}

// Close ends a blocking call in progress and fails pending requests with
// kUnavailable; afterwards every call is kFailedPrecondition.
TEST_P(TransportConformanceTest, CloseFailsPendingRequestsAndLaterCalls) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  std::mutex mu;
  std::vector<InMessage> requests;
  server->SetHandler([&](InMessage m) {  // never answers
    std::lock_guard<std::mutex> lock(mu);
    requests.push_back(std::move(m));
  });
  auto count = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return requests.size();
  };
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  auto pending = worker->RequestAsync(kServer, MakeAckMessage(), {.timeout = Millis(30000)});
  std::thread closing([&] {
    EXPECT_TRUE(WaitFor([&] { return count() == 2; })) << "the requests never arrived";
    worker->Close();
  });
  auto start = Clock::now();
  auto blocked = worker->Call(kServer, MakeAckMessage(), {.timeout = Millis(30000)});
  closing.join();
  EXPECT_EQ(blocked.status().code(), StatusCode::kUnavailable) << blocked.status().ToString();
  EXPECT_LT(Since(start), Millis(5000) + kSlack);
  ASSERT_EQ(pending.wait_for(kSlack), std::future_status::ready);
  EXPECT_EQ(pending.get().status().code(), StatusCode::kUnavailable);

  EXPECT_EQ(worker->Send(kServer, MakeAckMessage()).code(), StatusCode::kFailedPrecondition);
  std::atomic<bool> called{false};
  EXPECT_EQ(worker->Request(kServer, MakeAckMessage(), [&](auto) { called = true; }).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(worker->Call(kServer, MakeAckMessage()).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(worker->Connect(kServer, server->address()).code(), StatusCode::kFailedPrecondition);
  worker->Close();  // idempotent
  EXPECT_FALSE(called.load()) << "a refused Request called back";

  // A request received before Close can no longer be answered.
  ASSERT_EQ(count(), 2u);
  InMessage request;
  {
    std::lock_guard<std::mutex> lock(mu);
    request = requests[0];
  }
  server->Close();
  EXPECT_EQ(server->Respond(request, MakeAckMessage()).code(), StatusCode::kFailedPrecondition);
}

TEST_P(TransportConformanceTest, CallFromAHandlerOrCallbackFailsInsteadOfDeadlocking) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  std::promise<Status> in_handler, in_callback;
  server->SetHandler([&, s = server.get()](InMessage m) {
    if (m.is_request()) {
      (void)s->Respond(m, MakeAckMessage());
      return;
    }
    EXPECT_TRUE(s->InReceiveThread());
    in_handler.set_value(s->Call(kWorker, MakeAckMessage()).status());
  });
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  EXPECT_FALSE(worker->InReceiveThread());
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  auto handler_result = in_handler.get_future();
  ASSERT_EQ(handler_result.wait_for(Millis(5000)), std::future_status::ready);
  Status st = handler_result.get();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("would wait for itself"), std::string::npos) << st.message();

  ASSERT_TRUE(worker
                  ->Request(kServer, MakeAckMessage(),
                            [&, w = worker.get()](StatusOr<InMessage>) {
                              in_callback.set_value(w->Call(kServer, MakeAckMessage()).status());
                            })
                  .ok());
  auto callback_result = in_callback.get_future();
  ASSERT_EQ(callback_result.wait_for(Millis(5000)), std::future_status::ready);
  EXPECT_EQ(callback_result.get().code(), StatusCode::kFailedPrecondition);
}

TEST_P(TransportConformanceTest, HandlerErrorsAreCountedNotFatal) {
  auto server = Make(kServer);
  auto worker = Make(kWorker);
  ASSERT_TRUE(server && worker);
  Closer closer{server.get(), worker.get()};
  ASSERT_TRUE(Link(*worker, *server).ok());
  // No handler installed: dropped and counted.
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return server->stats().handler_errors == 1; }));
  auto calls = std::make_shared<std::atomic<int>>(0);
  server->SetHandler([calls](InMessage) {
    ++*calls;
    throw std::runtime_error("bug in a handler");
  });
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(worker->Send(kServer, MakeAckMessage()).ok());
  ASSERT_TRUE(WaitFor([&] { return server->stats().handler_errors == 3; }))
      << server->stats().handler_errors;
  EXPECT_EQ(calls->load(), 2);
  Answer(*server);
  EXPECT_TRUE(worker->Call(kServer, MakeAckMessage()).ok());
}

TEST_P(TransportConformanceTest, UnknownPeersAndUnusableAddressesAreErrors) {
  auto worker = Make(kWorker);
  ASSERT_TRUE(worker);
  const PeerId nobody{Role::kClient, 3};
  EXPECT_EQ(worker->Send(nobody, MakeAckMessage()).code(), StatusCode::kUnavailable);
  std::atomic<bool> called{false};
  EXPECT_EQ(worker->Request(nobody, MakeAckMessage(), [&](auto) { called = true; }).code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(worker->Connect(nobody, "no-such-scheme://x").code(), StatusCode::kInvalidArgument);
  worker->Close();
  EXPECT_FALSE(called.load()) << "a refused Request called back";
}

INSTANTIATE_TEST_SUITE_P(Backends, TransportConformanceTest,
                         ::testing::ValuesIn(testing::ConformanceCases()),
                         [](const ::testing::TestParamInfo<ConformanceCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace rigel::transport
