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

#include "cluster/wire/messages.h"
#include "ps/wire/messages.h"
#include "transport/codec.h"
#include "transport/message.h"
#include "transport/transport.h"
#include "worker/wire/messages.h"

namespace rigel::transport::testing {

// Every body type of every layer (registered here, as the layers register
// them in their programs).
inline std::vector<uint64_t> AllTypes() {
  cluster::wire::RegisterMessages();
  ps::wire::RegisterMessages();
  worker::wire::RegisterMessages();
  namespace cw = cluster::wire;
  namespace pw = ps::wire;
  return {TypeId<wire::Ack>(),
          TypeId<wire::Error>(),
          TypeId<wire::Data>(),
          TypeId<cw::Register>(),
          TypeId<cw::RegisterReply>(),
          TypeId<cw::Heartbeat>(),
          TypeId<cw::Plan>(),
          TypeId<pw::PullRequest>(),
          TypeId<pw::PullReply>(),
          TypeId<pw::PushRequest>(),
          TypeId<pw::PushReply>(),
          TypeId<cw::Barrier>(),
          TypeId<cw::BarrierRelease>(),
          TypeId<cw::Step>(),
          TypeId<worker::wire::BlockHandoff>(),
          TypeId<cw::Metrics>(),
          TypeId<cw::Shutdown>(),
          TypeId<pw::ClockTick>(),
          TypeId<cw::PeerDown>(),
          TypeId<cw::Task>(),
          TypeId<cw::TaskDone>(),
          TypeId<cw::StoreSet>(),
          TypeId<cw::StoreGet>(),
          TypeId<cw::StoreValue>(),
          TypeId<pw::CheckpointRequest>(),
          TypeId<pw::CheckpointReply>(),
          TypeId<pw::RestoreRequest>(),
          TypeId<pw::RowSync>(),
          TypeId<pw::RowSyncReply>()};
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
inline OutMessage MakeSample(uint64_t type, int seed) {
  OutMessage m;
  const uint32_t width = 3 + seed % 5;
  const size_t nkeys = 5 + seed % 11;
  switch (type) {
    case TypeId<wire::Ack>():
      m.InitBody<wire::Ack>();
      break;
    case TypeId<wire::Error>(): {
      auto e = m.InitBody<transport::wire::Error>();
      e.setCode(static_cast<uint16_t>(StatusCode::kNotFound));
      e.setMessage("no row " + std::to_string(seed));
      break;
    }
    case TypeId<cluster::wire::Register>(): {
      auto r = m.InitBody<cluster::wire::Register>();
      r.setRole(wire::Role::WORKER);
      r.setRank(seed);
      r.setAddress("tcp://10.0.0." + std::to_string(seed % 250) + ":5555");
      r.setIncarnation(seed * 77);
      r.setThreads(4);
      break;
    }
    case TypeId<cluster::wire::RegisterReply>(): {
      auto r = m.InitBody<cluster::wire::RegisterReply>();
      r.setRank(seed);
      auto peers = r.initPeers(3);
      for (unsigned i = 0; i < 3; ++i) {
        peers[i].setRole(wire::Role::SERVER);
        peers[i].setRank(static_cast<int32_t>(i));
        peers[i].setAddress("ipc:///tmp/s" + std::to_string(i + seed));
      }
      break;
    }
    case TypeId<cluster::wire::Heartbeat>(): {
      auto h = m.InitBody<cluster::wire::Heartbeat>();
      h.setSeq(seed);
      h.setIncarnation(seed + 1);
      h.setSentUnixMicros(seed + 2);
      break;
    }
    case TypeId<cluster::wire::Plan>(): {
      auto p = m.InitBody<cluster::wire::Plan>();
      p.setPlanId(seed);
      p.setServers(static_cast<uint32_t>(seed) + 1);
      p.initJob().setProgram("/p/" + std::to_string(seed) + ".rgl");
      break;
    }
    case TypeId<ps::wire::PullRequest>(): {
      auto p = m.InitBody<ps::wire::PullRequest>();
      p.setParam(seed);
      p.setWidth(width);
      m.SetKeys(p.initKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      break;
    }
    case TypeId<ps::wire::PullReply>(): {
      auto p = m.InitBody<ps::wire::PullReply>();
      p.setParam(seed);
      m.SetRows(p.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case TypeId<ps::wire::PushRequest>(): {
      auto p = m.InitBody<ps::wire::PushRequest>();
      p.setParam(seed);
      p.setRule(ps::wire::UpdateRule::ASSIGN);
      p.setClock(seed * 3);
      m.SetKeys(p.initKeys(), Buffer::FromVector(SampleKeys(seed, nkeys)));
      m.SetRows(p.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case TypeId<ps::wire::PushReply>(): {
      auto p = m.InitBody<ps::wire::PushReply>();
      p.setParam(seed);
      p.setApplied(nkeys);
      break;
    }
    case TypeId<cluster::wire::Barrier>():
    case TypeId<cluster::wire::BarrierRelease>(): {
      auto fill = [&](auto x) {
        x.setId(seed);
        x.setEpoch(seed + 1);
        x.setStep(seed + 2);
      };
      if (type == TypeId<cluster::wire::Barrier>()) {
        fill(m.InitBody<cluster::wire::Barrier>());
      } else {
        fill(m.InitBody<cluster::wire::BarrierRelease>());
      }
      break;
    }
    case TypeId<cluster::wire::Step>(): {
      auto s = m.InitBody<cluster::wire::Step>();
      s.setEpoch(seed);
      s.setStep(seed + 1);
      s.setLoop(2);
      s.setCommand(cluster::wire::StepCommand::FINISHED);
      break;
    }
    case TypeId<worker::wire::BlockHandoff>(): {
      auto x = m.InitBody<worker::wire::BlockHandoff>();
      x.setParam(seed);
      x.setBlock(seed % 4);
      x.setRowBegin(100);
      x.setRowEnd(100 + nkeys);
      x.setEpoch(1);
      x.setStep(seed);
      m.SetRows(x.initRows(), Buffer::FromVector(SampleRows(seed, nkeys * width)), width);
      break;
    }
    case TypeId<cluster::wire::Metrics>(): {
      auto x = m.InitBody<cluster::wire::Metrics>();
      x.setRank(seed);
      x.setStep(seed + 5);
      auto e = x.initEntries(2);
      e[0].setName("loss");
      e[0].setValue(0.5 + seed);
      e[1].setName("rows/s");
      e[1].setValue(1e6);
      break;
    }
    case TypeId<cluster::wire::Shutdown>():
      m.InitBody<cluster::wire::Shutdown>().setReason("done " + std::to_string(seed));
      break;
    case TypeId<wire::Data>(): {
      std::vector<Buffer> frames;
      frames.push_back(Buffer::FromVector(std::vector<uint8_t>(17 + seed, uint8_t(seed))));
      frames.push_back(Buffer::FromVector(std::vector<uint8_t>()));
      m = MakeDataMessage(seed, std::move(frames));
      break;
    }
    case TypeId<ps::wire::ClockTick>(): {
      auto t = m.InitBody<ps::wire::ClockTick>();
      t.setClock(seed + 3);
      t.setPushes(seed * 2);
      break;
    }
    case TypeId<cluster::wire::PeerDown>(): {
      auto p = m.InitBody<cluster::wire::PeerDown>();
      p.setRole(wire::Role::SERVER);
      p.setRank(seed);
      p.setReason("silent for 3 intervals");
      break;
    }
    case TypeId<cluster::wire::Task>(): {
      auto t = m.InitBody<cluster::wire::Task>();
      t.setLoop(seed % 3);
      t.setLaunch(seed + 7);
      t.initRun().setSpaceN(seed + 11);
      t.setEnd(seed % 2 == 1);
      break;
    }
    case TypeId<cluster::wire::TaskDone>(): {
      auto t = m.InitBody<cluster::wire::TaskDone>();
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
    case TypeId<cluster::wire::StoreSet>():
    case TypeId<cluster::wire::StoreGet>():
    case TypeId<cluster::wire::StoreValue>(): {
      auto fill = [&](auto e) {
        e.setKey("allreduce/rank_" + std::to_string(seed));
        auto v = e.initValue(3);
        for (unsigned k = 0; k < 3; ++k) v.set(k, static_cast<uint8_t>(seed + k));
      };
      if (type == TypeId<cluster::wire::StoreGet>()) {
        auto g = m.InitBody<cluster::wire::StoreGet>();
        g.setKey("allreduce/rank_" + std::to_string(seed));
        g.setTimeoutMillis(1000);
      } else if (type == TypeId<cluster::wire::StoreSet>()) {
        fill(m.InitBody<cluster::wire::StoreSet>());
      } else {
        fill(m.InitBody<cluster::wire::StoreValue>());
      }
      break;
    }
    case TypeId<ps::wire::CheckpointRequest>(): {
      auto c = m.InitBody<ps::wire::CheckpointRequest>();
      c.setDir("/ckpt/" + std::to_string(seed));
      c.setSeq(seed + 3);
      break;
    }
    case TypeId<ps::wire::CheckpointReply>():
    case TypeId<ps::wire::RestoreRequest>(): {
      auto files = type == TypeId<ps::wire::RestoreRequest>()
                       ? m.InitBody<ps::wire::RestoreRequest>().initFiles(2)
                       : m.InitBody<ps::wire::CheckpointReply>().initFiles(2);
      if (type == TypeId<ps::wire::RestoreRequest>()) {
        m.header().getBody().getAs<ps::wire::RestoreRequest>().setDir("/ckpt");
      }
      for (unsigned k = 0; k < 2; ++k) {
        files[k].setName("ckpt-" + std::to_string(seed + k) + ".rows");
        files[k].setBytes(100 + k);
        files[k].setChecksum(0xabcdef00u + k);
        files[k].setRows(7 + k);
      }
      break;
    }
    case TypeId<ps::wire::RowSync>(): {
      auto r = m.InitBody<ps::wire::RowSync>();
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
    case TypeId<ps::wire::RowSyncReply>(): {
      auto sec = m.InitBody<ps::wire::RowSyncReply>().initSections(1)[0];
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
inline void ExpectSample(const InMessage& in, uint64_t type, int seed) {
  ASSERT_TRUE(in.valid());
  ASSERT_EQ(in.type(), type) << in.type_name();
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
    case TypeId<wire::Ack>():
      break;
    case TypeId<wire::Error>():
      EXPECT_EQ(in.Body<transport::wire::Error>().getCode(),
                static_cast<uint16_t>(StatusCode::kNotFound));
      EXPECT_EQ(std::string(in.Body<transport::wire::Error>().getMessage().cStr()),
                "no row " + std::to_string(seed));
      break;
    case TypeId<cluster::wire::Register>(): {
      auto r = in.Body<cluster::wire::Register>();
      EXPECT_EQ(r.getRole(), wire::Role::WORKER);
      EXPECT_EQ(r.getRank(), seed);
      EXPECT_EQ(std::string(r.getAddress().cStr()),
                "tcp://10.0.0." + std::to_string(seed % 250) + ":5555");
      EXPECT_EQ(r.getIncarnation(), uint64_t(seed) * 77);
      EXPECT_EQ(r.getThreads(), 4u);
      break;
    }
    case TypeId<cluster::wire::RegisterReply>(): {
      auto r = in.Body<cluster::wire::RegisterReply>();
      EXPECT_EQ(r.getRank(), seed);
      ASSERT_EQ(r.getPeers().size(), 3u);
      EXPECT_EQ(std::string(r.getPeers()[2].getAddress().cStr()),
                "ipc:///tmp/s" + std::to_string(2 + seed));
      EXPECT_EQ(r.getPeers()[1].getRank(), 1);
      break;
    }
    case TypeId<cluster::wire::Heartbeat>():
      EXPECT_EQ(in.Body<cluster::wire::Heartbeat>().getSeq(), uint64_t(seed));
      EXPECT_EQ(in.Body<cluster::wire::Heartbeat>().getSentUnixMicros(), uint64_t(seed) + 2);
      break;
    case TypeId<cluster::wire::Plan>():
      EXPECT_EQ(in.Body<cluster::wire::Plan>().getPlanId(), uint64_t(seed));
      EXPECT_EQ(in.Body<cluster::wire::Plan>().getServers(), uint32_t(seed) + 1);
      EXPECT_EQ(std::string(in.Body<cluster::wire::Plan>().getJob().getProgram().cStr()),
                "/p/" + std::to_string(seed) + ".rgl");
      break;
    case TypeId<ps::wire::PullRequest>():
      EXPECT_EQ(in.Body<ps::wire::PullRequest>().getParam(), uint32_t(seed));
      EXPECT_EQ(in.Body<ps::wire::PullRequest>().getWidth(), width);
      expect_keys(in.Body<ps::wire::PullRequest>().getKeys());
      break;
    case TypeId<ps::wire::PullReply>():
      EXPECT_EQ(in.Body<ps::wire::PullReply>().getParam(), uint32_t(seed));
      expect_rows(in.Body<ps::wire::PullReply>().getRows());
      break;
    case TypeId<ps::wire::PushRequest>():
      EXPECT_EQ(in.Body<ps::wire::PushRequest>().getRule(), ps::wire::UpdateRule::ASSIGN);
      EXPECT_EQ(in.Body<ps::wire::PushRequest>().getClock(), uint64_t(seed) * 3);
      expect_keys(in.Body<ps::wire::PushRequest>().getKeys());
      expect_rows(in.Body<ps::wire::PushRequest>().getRows());
      break;
    case TypeId<ps::wire::PushReply>():
      EXPECT_EQ(in.Body<ps::wire::PushReply>().getApplied(), nkeys);
      break;
    case TypeId<cluster::wire::Barrier>():
    case TypeId<cluster::wire::BarrierRelease>(): {
      auto check = [&](auto x) {
        EXPECT_EQ(x.getId(), uint64_t(seed));
        EXPECT_EQ(x.getEpoch(), uint32_t(seed) + 1);
        EXPECT_EQ(x.getStep(), uint64_t(seed) + 2);
      };
      if (type == TypeId<cluster::wire::Barrier>()) {
        check(in.Body<cluster::wire::Barrier>());
      } else {
        check(in.Body<cluster::wire::BarrierRelease>());
      }
      break;
    }
    case TypeId<cluster::wire::Step>():
      EXPECT_EQ(in.Body<cluster::wire::Step>().getStep(), uint64_t(seed) + 1);
      EXPECT_EQ(in.Body<cluster::wire::Step>().getCommand(), cluster::wire::StepCommand::FINISHED);
      break;
    case TypeId<worker::wire::BlockHandoff>():
      EXPECT_EQ(in.Body<worker::wire::BlockHandoff>().getRowEnd(), 100 + nkeys);
      expect_rows(in.Body<worker::wire::BlockHandoff>().getRows());
      break;
    case TypeId<cluster::wire::Metrics>():
      ASSERT_EQ(in.Body<cluster::wire::Metrics>().getEntries().size(), 2u);
      EXPECT_EQ(std::string(in.Body<cluster::wire::Metrics>().getEntries()[1].getName().cStr()),
                "rows/s");
      EXPECT_EQ(in.Body<cluster::wire::Metrics>().getEntries()[0].getValue(), 0.5 + seed);
      break;
    case TypeId<cluster::wire::Shutdown>():
      EXPECT_EQ(std::string(in.Body<cluster::wire::Shutdown>().getReason().cStr()),
                "done " + std::to_string(seed));
      break;
    case TypeId<wire::Data>(): {
      auto d = in.Body<transport::wire::Data>();
      EXPECT_EQ(d.getTag(), uint32_t(seed));
      ASSERT_EQ(d.getFrames().size(), 2u);
      Buffer f0 = in.Bytes(d.getFrames()[0]);
      ASSERT_EQ(f0.size(), size_t(17 + seed));
      for (size_t i = 0; i < f0.size(); ++i) ASSERT_EQ(uint8_t(f0.data()[i]), uint8_t(seed));
      EXPECT_EQ(in.Bytes(d.getFrames()[1]).size(), 0u);
      break;
    }
    case TypeId<ps::wire::ClockTick>():
      EXPECT_EQ(in.Body<ps::wire::ClockTick>().getClock(), uint64_t(seed + 3));
      EXPECT_EQ(in.Body<ps::wire::ClockTick>().getPushes(), uint64_t(seed * 2));
      break;
    case TypeId<cluster::wire::PeerDown>():
      EXPECT_EQ(in.Body<cluster::wire::PeerDown>().getRole(), wire::Role::SERVER);
      EXPECT_EQ(in.Body<cluster::wire::PeerDown>().getRank(), seed);
      EXPECT_EQ(std::string(in.Body<cluster::wire::PeerDown>().getReason().cStr()),
                "silent for 3 intervals");
      break;
    case TypeId<cluster::wire::Task>():
      EXPECT_EQ(in.Body<cluster::wire::Task>().getLoop(), uint32_t(seed % 3));
      EXPECT_EQ(in.Body<cluster::wire::Task>().getLaunch(), uint64_t(seed + 7));
      EXPECT_EQ(in.Body<cluster::wire::Task>().getRun().getSpaceN(), seed + 11);
      EXPECT_EQ(in.Body<cluster::wire::Task>().getEnd(), seed % 2 == 1);
      break;
    case TypeId<cluster::wire::TaskDone>():
      ASSERT_EQ(in.Body<cluster::wire::TaskDone>().getAccums().size(), 2u);
      EXPECT_EQ(in.Body<cluster::wire::TaskDone>().getAccums()[0], 0.25 + seed);
      EXPECT_EQ(in.Body<cluster::wire::TaskDone>().getMetrics()[0].getValue(), 42);
      EXPECT_EQ(in.Body<cluster::wire::TaskDone>().getLaunch(), uint64_t(seed));
      break;
    case TypeId<cluster::wire::StoreSet>():
    case TypeId<cluster::wire::StoreGet>():
    case TypeId<cluster::wire::StoreValue>(): {
      auto check = [&](auto e) {
        EXPECT_EQ(std::string(e.getKey().cStr()), "allreduce/rank_" + std::to_string(seed));
        ASSERT_EQ(e.getValue().size(), 3u);
        EXPECT_EQ(e.getValue()[2], static_cast<uint8_t>(seed + 2));
      };
      if (type == TypeId<cluster::wire::StoreGet>()) {
        auto g = in.Body<cluster::wire::StoreGet>();
        EXPECT_EQ(std::string(g.getKey().cStr()), "allreduce/rank_" + std::to_string(seed));
        EXPECT_EQ(g.getTimeoutMillis(), 1000u);
      } else if (type == TypeId<cluster::wire::StoreSet>()) {
        check(in.Body<cluster::wire::StoreSet>());
      } else {
        check(in.Body<cluster::wire::StoreValue>());
      }
      break;
    }
    case TypeId<ps::wire::CheckpointRequest>():
      EXPECT_EQ(std::string(in.Body<ps::wire::CheckpointRequest>().getDir().cStr()),
                "/ckpt/" + std::to_string(seed));
      EXPECT_EQ(in.Body<ps::wire::CheckpointRequest>().getSeq(), uint64_t(seed + 3));
      break;
    case TypeId<ps::wire::CheckpointReply>():
    case TypeId<ps::wire::RestoreRequest>(): {
      auto files = type == TypeId<ps::wire::RestoreRequest>()
                       ? in.Body<ps::wire::RestoreRequest>().getFiles()
                       : in.Body<ps::wire::CheckpointReply>().getFiles();
      ASSERT_EQ(files.size(), 2u);
      EXPECT_EQ(std::string(files[1].getName().cStr()),
                "ckpt-" + std::to_string(seed + 1) + ".rows");
      EXPECT_EQ(files[1].getBytes(), 101u);
      EXPECT_EQ(files[1].getChecksum(), 0xabcdef01u);
      EXPECT_EQ(files[1].getRows(), 8u);
      break;
    }
    case TypeId<ps::wire::RowSync>(): {
      auto r = in.Body<ps::wire::RowSync>();
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
    case TypeId<ps::wire::RowSyncReply>(): {
      auto sec = in.Body<ps::wire::RowSyncReply>().getSections()[0];
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
