// The per-epoch log line (exec/epoch_log.h): the JSON fields and the
// progress line, on hand-computed figures.
#include "exec/epoch_log.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/write_faults.h"

namespace rigel::exec {
namespace {

EpochFigures Figures() {
  EpochFigures f;
  f.epoch = 2;
  f.done = 3;
  f.epochs = 10;
  f.elapsed_s = 1.5;
  f.epoch_s = 0.5;
  f.updates = 2e6;
  f.compute_s = 0.4;
  f.comm_s = 0.05;
  f.wait_s = 0.01;
  f.cpu_s = 0.9;
  f.workers = 2;
  f.servers = 2;
  f.bytes = {{"ps", 3e6}, {"local.kept", 5e6}, {"rotate", 1e6}};
  f.batch = {{0, 32}};
  f.peak_bytes = {{"worker", 41 << 20}, {"server", -1}};
  return f;
}

TEST(EpochLog, JsonHasEveryFieldAndTheRate) {
  nlohmann::json j = nlohmann::json::parse(EpochJson(Figures()));
  EXPECT_EQ(j["epoch"], 2);
  EXPECT_EQ(j["epochs"], 10);
  EXPECT_DOUBLE_EQ(j["updates_per_s"].get<double>(), 4e6);  // 2e6 in 0.5 s
  EXPECT_DOUBLE_EQ(j["cpu_s"].get<double>(), 0.9);
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["servers"], 2);
  EXPECT_DOUBLE_EQ(j["bytes"]["local.kept"].get<double>(), 5e6);
  EXPECT_EQ(j["batch"]["0"], 32);
  EXPECT_EQ(j["peak_bytes"]["worker"], 41 << 20);
  EXPECT_EQ(j["peak_bytes"]["server"], -1);
  // A serial epoch: no bytes, no batch, and a zero-length epoch has rate 0.
  EpochFigures serial;
  nlohmann::json s = nlohmann::json::parse(EpochJson(serial));
  EXPECT_TRUE(s["bytes"].empty());
  EXPECT_TRUE(s["batch"].empty());
  EXPECT_EQ(s["updates_per_s"].get<double>(), 0.0);
}

TEST(EpochLog, ProgressLineCountsMovedBytesAndShowsTheMiniBatch) {
  // ETA: 1.5 s for 3 epochs, 7 to go: 3.5 s. Moved: ps + rotate, not the
  // rows kept (4.0 MB). Compute: 0.4 of 0.5 s.
  EXPECT_EQ(EpochProgressLine(Figures()),
            "[epoch 3/10] 1.5 s elapsed, ETA 3.5 s, 4e+06 updates/s, 4.0 MB moved, compute 80%, "
            "loop 0 mini-batch 32\n");
}

TEST(EpochLog, WritesOneLinePerEpochAndRefusesAnUnwritablePath) {
  const std::string path = ::testing::TempDir() + "/epoch_log_test.jsonl";
  {
    EpochLog log;
    ASSERT_TRUE(log.Open(path).ok());
    EpochFigures f = Figures();
    ASSERT_TRUE(log.Write(f).ok());
    f.epoch = 3;
    ASSERT_TRUE(log.Write(f).ok());
  }
  std::ifstream in(path);
  std::string a, b, c;
  ASSERT_TRUE(std::getline(in, a) && std::getline(in, b));
  EXPECT_FALSE(std::getline(in, c));
  EXPECT_EQ(nlohmann::json::parse(b)["epoch"], 3);
  EpochLog bad;
  Status st = bad.Open("/nonexistent/dir/log.jsonl");
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("--log-json /nonexistent/dir/log.jsonl: cannot write here (the "
                              "directory /nonexistent/dir does not exist)"),
            std::string::npos)
      << st.message();
}

// Before this check a full disk lost the log's lines without a word, and
// the run went on and exited 0 (issue 46).
TEST(EpochLog, AWriteThatFailsNamesTheFlagThePathAndWhyAndKeepsWholeLines) {
  const std::string path = ::testing::TempDir() + "/epoch_log_full.jsonl";
  EpochLog log;
  ASSERT_TRUE(log.Open(path).ok());
  ASSERT_TRUE(log.Write(Figures()).ok());
  Status st;
  {
    ScopedWriteFault full([&](const std::string& p, WriteOp op, size_t) {
      return p == path && op == WriteOp::kWrite ? ENOSPC : 0;
    });
    st = log.Write(Figures());
  }
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), "--log-json " + path +
                              ": write failed: No space left on device; it ends with the 1 "
                              "whole line written before")
      << st.message();
  std::ifstream in(path);
  std::string a, b;
  ASSERT_TRUE(std::getline(in, a));
  EXPECT_EQ(nlohmann::json::parse(a)["epoch"], 2);
  EXPECT_FALSE(std::getline(in, b));
  EpochLog dev_full;
  ASSERT_TRUE(dev_full.Open("/dev/full").ok());
  EXPECT_EQ(dev_full.Write(Figures()).message(),
            "--log-json /dev/full: write failed: No space left on device");
}

// Before, a job restarted from a checkpoint emptied its log: the epochs
// before the checkpoint were gone from it.
TEST(EpochLog, GoingOnFromACheckpointKeepsTheEpochsBeforeAndLogsTheRestOnce) {
  const std::string path = ::testing::TempDir() + "/epoch_log_go_on.jsonl";
  auto epochs_in = [&] {
    std::vector<int64_t> out;
    std::ifstream in(path);
    for (std::string l; std::getline(in, l);) out.push_back(nlohmann::json::parse(l)["epoch"]);
    return out;
  };
  EpochFigures f = Figures();
  {
    EpochLog first;
    ASSERT_TRUE(first.Open(path).ok());
    for (f.epoch = 0; f.epoch < 6; ++f.epoch) ASSERT_TRUE(first.Write(f).ok());
  }
  // The checkpoint was after epoch 2: epochs 3 to 5 are run and logged again.
  {
    EpochLog again;
    ASSERT_TRUE(again.OpenToGoOn(path).ok());
    for (f.epoch = 3; f.epoch < 10; ++f.epoch) ASSERT_TRUE(again.Write(f).ok());
  }
  EXPECT_EQ(epochs_in(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // A failure right at a checkpoint: nothing to drop, the lines go on.
  {
    EpochLog more;
    ASSERT_TRUE(more.OpenToGoOn(path).ok());
    f.epoch = 10;
    f.epochs = 11;
    ASSERT_TRUE(more.Write(f).ok());
  }
  EXPECT_EQ(epochs_in().size(), 11u);
}

}  // namespace
}  // namespace rigel::exec
