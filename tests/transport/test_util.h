// Helpers shared by the transport tests: a sample message of every body type
// with contents derived from a seed, and a check that a received message has
// exactly those contents.
#ifndef RIGEL_TESTS_TRANSPORT_TEST_UTIL_H_
#define RIGEL_TESTS_TRANSPORT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "transport/codec.h"
#include "transport/message.h"
#include "transport/transport.h"

namespace rigel::transport::testing {

inline std::vector<MessageType> AllTypes() {
  std::vector<MessageType> out;
  for (int t = 0; t <= static_cast<int>(kLastMessageType); ++t) {
    out.push_back(static_cast<MessageType>(t));
  }
  return out;
}

inline std::vector<uint64_t> SampleKeys(int seed, size_t n) {
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = uint64_t(seed) * 1000003 + i * 7 + 1;
  return keys;
}

inline std::vector<float> SampleRows(int seed, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(seed) + 0.25f * float(i % 1024) - float(i / 1024);
  return v;
}

// A message of body `type` whose every field depends on `seed`.
inline OutMessage MakeSample(MessageType type, int seed) {
  OutMessage m;
  auto b = m.header().getBody();
  const uint32_t width = 3 + seed % 5;
  const size_t nkeys = 5 + seed % 11;
  switch (type) {
    case MessageType::ACK:
      b.setAck();
      break;
    case MessageType::ERROR: {
      auto e = b.initError();
      e.setCode(static_cast<uint16_t>(StatusCode::kNotFound));
      e.setMessage("no row " + std::to_string(seed));
      break;
    }
    case MessageType::REGISTER: {
      auto r = b.initRegister();
      r.setRole(wire::Role::WORKER);
      r.setRank(seed);
      r.setAddress("tcp://10.0.0." + std::to_string(seed % 250) + ":5555");
      r.setIncarnation(seed * 77);
      r.setThreads(4);
      break;
    }
    case MessageType::REGISTER_REPLY: {
      auto r = b.initRegisterReply();
      r.setRank(seed);
      auto peers = r.initPeers(3);
      for (unsigned i = 0; i < 3; ++i) {
        peers[i].setRole(wire::Role::SERVER);
        peers[i].setRank(static_cast<int32_t>(i));
        peers[i].setAddress("ipc:///tmp/s" + std::to_string(i + seed));
      }
      break;
    }
    case MessageType::HEARTBEAT: {
      auto h = b.initHeartbeat();
      h.setSeq(seed);
      h.setIncarnation(seed + 1);
      h.setSentUnixMicros(seed + 2);
      break;
    }
    case MessageType::PLAN: {
      auto p = b.initPlan();
      p.setPlanId(seed);
      p.setServers(static_cast<uint32_t>(seed) + 1);
      p.initJob().setProgram("/p/" + std::to_string(seed) + ".rgl");
      break;
    }
    case MessageType::PULL_REQUEST: {
      auto p = b.initPullRequest();
      p.setParam(seed);
      p.setWidth(width);
      m.SetKeys(p.initKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      break;
    }
    case MessageType::PULL_REPLY: {
      auto p = b.initPullReply();
      p.setParam(seed);
      m.SetRows(p.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case MessageType::PUSH_REQUEST: {
      auto p = b.initPushRequest();
      p.setParam(seed);
      p.setRule(wire::UpdateRule::ASSIGN);
      p.setClock(seed * 3);
      m.SetKeys(p.initKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      m.SetRows(p.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case MessageType::PUSH_REPLY: {
      auto p = b.initPushReply();
      p.setParam(seed);
      p.setApplied(nkeys);
      break;
    }
    case MessageType::BARRIER:
    case MessageType::BARRIER_RELEASE: {
      auto x = type == MessageType::BARRIER ? b.initBarrier() : b.initBarrierRelease();
      x.setId(seed);
      x.setEpoch(seed + 1);
      x.setStep(seed + 2);
      break;
    }
    case MessageType::STEP: {
      auto s = b.initStep();
      s.setEpoch(seed);
      s.setStep(seed + 1);
      s.setLoop(2);
      s.setCommand(wire::StepCommand::FINISHED);
      break;
    }
    case MessageType::BLOCK_HANDOFF: {
      auto x = b.initBlockHandoff();
      x.setParam(seed);
      x.setBlock(seed % 4);
      x.setRowBegin(100);
      x.setRowEnd(100 + nkeys);
      x.setEpoch(1);
      x.setStep(seed);
      m.SetRows(x.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case MessageType::METRICS: {
      auto x = b.initMetrics();
      x.setRank(seed);
      x.setStep(seed + 5);
      auto e = x.initEntries(2);
      e[0].setName("loss");
      e[0].setValue(0.5 + seed);
      e[1].setName("rows/s");
      e[1].setValue(1e6);
      break;
    }
    case MessageType::SHUTDOWN:
      b.initShutdown().setReason("done " + std::to_string(seed));
      break;
    case MessageType::DATA: {
      std::vector<Buffer> frames;
      frames.push_back(Buffer::FromVector(std::vector<uint8_t>(17 + seed, uint8_t(seed))));
      frames.push_back(Buffer::FromVector(std::vector<uint8_t>()));
      m = MakeDataMessage(seed, std::move(frames));
      break;
    }
    case MessageType::CLOCK_TICK: {
      auto t = b.initClockTick();
      t.setClock(seed + 3);
      t.setPushes(seed * 2);
      break;
    }
    case MessageType::PEER_DOWN: {
      auto p = b.initPeerDown();
      p.setRole(wire::Role::SERVER);
      p.setRank(seed);
      p.setReason("silent for 3 intervals");
      break;
    }
    case MessageType::TASK: {
      auto t = b.initTask();
      t.setLoop(seed % 3);
      t.setLaunch(seed + 7);
      t.setJson("{\"outer\": []}");
      t.setEnd(seed % 2 == 1);
      break;
    }
    case MessageType::TASK_DONE: {
      auto t = b.initTaskDone();
      t.setLoop(1);
      t.setLaunch(seed);
      auto a = t.initAccums(2);
      a.set(0, 0.25 + seed);
      a.set(1, -3);
      auto e = t.initMetrics(1);
      e[0].setName("updates");
      e[0].setValue(42);
      t.setError("");
      break;
    }
    case MessageType::STORE_SET:
    case MessageType::STORE_GET:
    case MessageType::STORE_VALUE: {
      auto e = type == MessageType::STORE_SET   ? b.initStoreSet()
               : type == MessageType::STORE_GET ? b.initStoreGet()
                                                : b.initStoreValue();
      e.setKey("allreduce/rank_" + std::to_string(seed));
      auto v = e.initValue(3);
      for (unsigned k = 0; k < 3; ++k) v.set(k, static_cast<uint8_t>(seed + k));
      e.setTimeoutMillis(1000);
      break;
    }
    case MessageType::CHECKPOINT: {
      auto c = b.initCheckpoint();
      c.setDir("/ckpt/" + std::to_string(seed));
      c.setSeq(seed + 3);
      break;
    }
    case MessageType::CHECKPOINT_REPLY:
    case MessageType::RESTORE: {
      auto files = type == MessageType::RESTORE ? b.initRestore().initFiles(2)
                                                : b.initCheckpointReply().initFiles(2);
      if (type == MessageType::RESTORE) b.getRestore().setDir("/ckpt");
      for (unsigned k = 0; k < 2; ++k) {
        files[k].setName("ckpt-" + std::to_string(seed + k) + ".rows");
        files[k].setBytes(100 + k);
        files[k].setChecksum(0xabcdef00u + k);
        files[k].setRows(7 + k);
      }
      break;
    }
    case MessageType::ROW_SYNC: {
      auto r = b.initRowSync();
      r.setStaleness(static_cast<uint32_t>(seed) % 4);
      r.setStep(seed + 9);
      auto sec = r.initSections(1)[0];
      sec.setParam(static_cast<uint32_t>(seed));
      sec.setReset(seed % 2 == 0);
      m.SetKeys(sec.initPushKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      m.SetRows(sec.initPushRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      m.SetKeys(sec.initFetchKeys(), Buffer::FromVector(SampleKeys(seed + 1, 3)));
      m.SetKeys(sec.initDropKeys(), Buffer::FromVector(std::vector<uint64_t>{}));
      m.SetBytes(sec.initPushScaled(), Buffer::FromVector(std::vector<uint8_t>(nkeys, 1)));
      break;
    }
    case MessageType::ROW_SYNC_REPLY: {
      auto sec = b.initRowSyncReply().initSections(1)[0];
      sec.setParam(static_cast<uint32_t>(seed));
      m.SetKeys(sec.initKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      m.SetRows(sec.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      std::vector<uint64_t> versions(nkeys);
      for (size_t k = 0; k < nkeys; ++k) versions[k] = seed + k;
      m.SetBytes(sec.initVersions(), Buffer::FromVector(std::move(versions)));
      m.SetKeys(sec.initAuditKeys(), Buffer::FromVector(std::vector<uint64_t>{}));
      m.SetBytes(sec.initAuditVersions(), Buffer::FromVector(std::vector<uint64_t>{}));
      break;
    }
  }
  return m;
}

// Checks that `in` carries exactly MakeSample(type, seed).
inline void ExpectSample(const InMessage& in, MessageType type, int seed) {
  ASSERT_TRUE(in.valid());
  ASSERT_EQ(in.type(), type) << MessageTypeName(in.type());
  auto b = in.header().getBody();
  const uint32_t width = 3 + seed % 5;
  const size_t nkeys = 5 + seed % 11;
  auto expect_keys = [&](wire::KeysRef::Reader ref) {
    auto keys = in.Keys(ref);
    auto want = SampleKeys(seed, nkeys);
    ASSERT_EQ(std::vector<uint64_t>(keys.begin(), keys.end()), want);
  };
  auto expect_rows = [&](wire::RowsRef::Reader ref) {
    RowsView v = in.Rows(ref);
    ASSERT_EQ(v.rows, nkeys);
    ASSERT_EQ(v.width, width);
    auto want = SampleRows(seed, nkeys * width);
    ASSERT_EQ(std::vector<float>(v.values.begin(), v.values.end()), want);
  };
  switch (type) {
    case MessageType::ACK:
      break;
    case MessageType::ERROR:
      EXPECT_EQ(b.getError().getCode(), static_cast<uint16_t>(StatusCode::kNotFound));
      EXPECT_EQ(std::string(b.getError().getMessage().cStr()), "no row " + std::to_string(seed));
      break;
    case MessageType::REGISTER: {
      auto r = b.getRegister();
      EXPECT_EQ(r.getRole(), wire::Role::WORKER);
      EXPECT_EQ(r.getRank(), seed);
      EXPECT_EQ(std::string(r.getAddress().cStr()),
                "tcp://10.0.0." + std::to_string(seed % 250) + ":5555");
      EXPECT_EQ(r.getIncarnation(), uint64_t(seed) * 77);
      EXPECT_EQ(r.getThreads(), 4u);
      break;
    }
    case MessageType::REGISTER_REPLY: {
      auto r = b.getRegisterReply();
      EXPECT_EQ(r.getRank(), seed);
      ASSERT_EQ(r.getPeers().size(), 3u);
      EXPECT_EQ(std::string(r.getPeers()[2].getAddress().cStr()),
                "ipc:///tmp/s" + std::to_string(2 + seed));
      EXPECT_EQ(r.getPeers()[1].getRank(), 1);
      break;
    }
    case MessageType::HEARTBEAT:
      EXPECT_EQ(b.getHeartbeat().getSeq(), uint64_t(seed));
      EXPECT_EQ(b.getHeartbeat().getSentUnixMicros(), uint64_t(seed) + 2);
      break;
    case MessageType::PLAN:
      EXPECT_EQ(b.getPlan().getPlanId(), uint64_t(seed));
      EXPECT_EQ(b.getPlan().getServers(), uint32_t(seed) + 1);
      EXPECT_EQ(std::string(b.getPlan().getJob().getProgram().cStr()),
                "/p/" + std::to_string(seed) + ".rgl");
      break;
    case MessageType::PULL_REQUEST:
      EXPECT_EQ(b.getPullRequest().getParam(), uint32_t(seed));
      EXPECT_EQ(b.getPullRequest().getWidth(), width);
      expect_keys(b.getPullRequest().getKeys());
      break;
    case MessageType::PULL_REPLY:
      EXPECT_EQ(b.getPullReply().getParam(), uint32_t(seed));
      expect_rows(b.getPullReply().getRows());
      break;
    case MessageType::PUSH_REQUEST:
      EXPECT_EQ(b.getPushRequest().getRule(), wire::UpdateRule::ASSIGN);
      EXPECT_EQ(b.getPushRequest().getClock(), uint64_t(seed) * 3);
      expect_keys(b.getPushRequest().getKeys());
      expect_rows(b.getPushRequest().getRows());
      break;
    case MessageType::PUSH_REPLY:
      EXPECT_EQ(b.getPushReply().getApplied(), nkeys);
      break;
    case MessageType::BARRIER:
    case MessageType::BARRIER_RELEASE: {
      auto x = type == MessageType::BARRIER ? b.getBarrier() : b.getBarrierRelease();
      EXPECT_EQ(x.getId(), uint64_t(seed));
      EXPECT_EQ(x.getEpoch(), uint32_t(seed) + 1);
      EXPECT_EQ(x.getStep(), uint64_t(seed) + 2);
      break;
    }
    case MessageType::STEP:
      EXPECT_EQ(b.getStep().getStep(), uint64_t(seed) + 1);
      EXPECT_EQ(b.getStep().getCommand(), wire::StepCommand::FINISHED);
      break;
    case MessageType::BLOCK_HANDOFF:
      EXPECT_EQ(b.getBlockHandoff().getRowEnd(), 100 + nkeys);
      expect_rows(b.getBlockHandoff().getRows());
      break;
    case MessageType::METRICS:
      ASSERT_EQ(b.getMetrics().getEntries().size(), 2u);
      EXPECT_EQ(std::string(b.getMetrics().getEntries()[1].getName().cStr()), "rows/s");
      EXPECT_EQ(b.getMetrics().getEntries()[0].getValue(), 0.5 + seed);
      break;
    case MessageType::SHUTDOWN:
      EXPECT_EQ(std::string(b.getShutdown().getReason().cStr()), "done " + std::to_string(seed));
      break;
    case MessageType::DATA: {
      auto d = b.getData();
      EXPECT_EQ(d.getTag(), uint32_t(seed));
      ASSERT_EQ(d.getFrames().size(), 2u);
      Buffer f0 = in.Bytes(d.getFrames()[0]);
      ASSERT_EQ(f0.size(), size_t(17 + seed));
      for (size_t i = 0; i < f0.size(); ++i) ASSERT_EQ(uint8_t(f0.data()[i]), uint8_t(seed));
      EXPECT_EQ(in.Bytes(d.getFrames()[1]).size(), 0u);
      break;
    }
    case MessageType::CLOCK_TICK:
      EXPECT_EQ(b.getClockTick().getClock(), uint64_t(seed + 3));
      EXPECT_EQ(b.getClockTick().getPushes(), uint64_t(seed * 2));
      break;
    case MessageType::PEER_DOWN:
      EXPECT_EQ(b.getPeerDown().getRole(), wire::Role::SERVER);
      EXPECT_EQ(b.getPeerDown().getRank(), seed);
      EXPECT_EQ(std::string(b.getPeerDown().getReason().cStr()), "silent for 3 intervals");
      break;
    case MessageType::TASK:
      EXPECT_EQ(b.getTask().getLoop(), uint32_t(seed % 3));
      EXPECT_EQ(b.getTask().getLaunch(), uint64_t(seed + 7));
      EXPECT_EQ(std::string(b.getTask().getJson().cStr()), "{\"outer\": []}");
      EXPECT_EQ(b.getTask().getEnd(), seed % 2 == 1);
      break;
    case MessageType::TASK_DONE:
      ASSERT_EQ(b.getTaskDone().getAccums().size(), 2u);
      EXPECT_EQ(b.getTaskDone().getAccums()[0], 0.25 + seed);
      EXPECT_EQ(b.getTaskDone().getMetrics()[0].getValue(), 42);
      EXPECT_EQ(b.getTaskDone().getLaunch(), uint64_t(seed));
      break;
    case MessageType::STORE_SET:
    case MessageType::STORE_GET:
    case MessageType::STORE_VALUE: {
      auto e = type == MessageType::STORE_SET   ? b.getStoreSet()
               : type == MessageType::STORE_GET ? b.getStoreGet()
                                                : b.getStoreValue();
      EXPECT_EQ(std::string(e.getKey().cStr()), "allreduce/rank_" + std::to_string(seed));
      ASSERT_EQ(e.getValue().size(), 3u);
      EXPECT_EQ(e.getValue()[2], static_cast<uint8_t>(seed + 2));
      EXPECT_EQ(e.getTimeoutMillis(), 1000u);
      break;
    }
    case MessageType::CHECKPOINT:
      EXPECT_EQ(std::string(b.getCheckpoint().getDir().cStr()), "/ckpt/" + std::to_string(seed));
      EXPECT_EQ(b.getCheckpoint().getSeq(), uint64_t(seed + 3));
      break;
    case MessageType::CHECKPOINT_REPLY:
    case MessageType::RESTORE: {
      auto files = type == MessageType::RESTORE ? b.getRestore().getFiles()
                                                : b.getCheckpointReply().getFiles();
      ASSERT_EQ(files.size(), 2u);
      EXPECT_EQ(std::string(files[1].getName().cStr()),
                "ckpt-" + std::to_string(seed + 1) + ".rows");
      EXPECT_EQ(files[1].getBytes(), 101u);
      EXPECT_EQ(files[1].getChecksum(), 0xabcdef01u);
      EXPECT_EQ(files[1].getRows(), 8u);
      break;
    }
    case MessageType::ROW_SYNC: {
      auto r = b.getRowSync();
      EXPECT_EQ(r.getStep(), uint64_t(seed + 9));
      ASSERT_EQ(r.getSections().size(), 1u);
      auto sec = r.getSections()[0];
      EXPECT_EQ(sec.getParam(), uint32_t(seed));
      EXPECT_EQ(sec.getReset(), seed % 2 == 0);
      expect_keys(sec.getPushKeys());
      expect_rows(sec.getPushRows());
      EXPECT_EQ(in.Keys(sec.getFetchKeys()).size(), 3u);
      EXPECT_TRUE(in.Keys(sec.getDropKeys()).empty());
      break;
    }
    case MessageType::ROW_SYNC_REPLY: {
      auto sec = b.getRowSyncReply().getSections()[0];
      EXPECT_EQ(sec.getParam(), uint32_t(seed));
      expect_keys(sec.getKeys());
      expect_rows(sec.getRows());
      transport::Buffer v = in.Bytes(sec.getVersions());
      ASSERT_EQ(v.size(), nkeys * 8);
      uint64_t last;
      std::memcpy(&last, v.data() + (nkeys - 1) * 8, 8);
      EXPECT_EQ(last, uint64_t(seed + nkeys - 1));
      break;
    }
  }
  // Every field can be read in full.
  EXPECT_FALSE(Describe(in).empty());
}

// A gate handlers can wait at (to make a receiver slow). Handlers hold it by
// shared_ptr; a GateOpener declared after the transports opens it on scope exit
// so a failing test cannot leave a receive thread blocked forever.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

struct GateOpener {
  std::shared_ptr<Gate> gate;
  ~GateOpener() { gate->Open(); }
};

// Closes transports on scope exit. Declare it after the state their handlers
// and callbacks use, so that state outlives every late delivery (Close joins
// the receive thread and runs the pending callbacks).
class Closer {
 public:
  Closer(std::initializer_list<Transport*> transports) : transports_(transports) {}
  ~Closer() {
    for (Transport* t : transports_) t->Close();
  }

 private:
  std::vector<Transport*> transports_;
};

// Waits up to `timeout` for `cond`; returns its final value.
template <typename Cond>
bool WaitFor(Cond cond, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return cond();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace rigel::transport::testing

#endif  // RIGEL_TESTS_TRANSPORT_TEST_UTIL_H_
