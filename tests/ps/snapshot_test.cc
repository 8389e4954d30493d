// Checkpoints of parameter rows (ps/snapshot.h, PsService's checkpoint and
// restore): rows files read back bit for bit, damage found and named, only
// rows changed since the last file written (the copy taken when asked, the
// file confirmed after), and a checkpoint of S servers restored on another
// number of servers.
#include "ps/snapshot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/file.h"
#include "ps/wire/messages.h"
#include "tests/harness/ps_cluster.h"

namespace rigel::ps {
namespace {

using testing::PsCluster;
using testing::TestSetup;
using transport::PeerId;
using transport::Role;

struct TempDir {
  TempDir() {
    char buf[] = "/tmp/rigel-snapshot-XXXXXX";
    path = mkdtemp(buf);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

std::vector<SnapshotSection> SomeSections() {
  SnapshotSection a;
  a.param = 0;
  a.width = 3;
  a.keys = {5, 2, 99};
  a.values = {1, 2, 3, 4, 5, 6, -0.0f, 1e-30f, 7};
  SnapshotSection b;
  b.param = 1;
  b.width = 1;
  b.keys = {0};
  b.values = {42};
  return {a, b};
}

TEST(Snapshot, RowsFilesReadBackBitForBit) {
  TempDir d;
  auto f = WriteRowsFile(d.path, RowsFileName(3, 1), 3, 1, SomeSections());
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->name, "ckpt-000003.server-1.rows");
  EXPECT_EQ(f->rows, 4u);
  EXPECT_EQ(f->bytes, std::filesystem::file_size(d.path + "/" + f->name));
  auto back = ReadRowsFile(d.path, *f);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].keys, SomeSections()[0].keys);
  EXPECT_EQ(0, std::memcmp((*back)[0].values.data(), SomeSections()[0].values.data(), 9 * 4));
  EXPECT_EQ((*back)[1].values, std::vector<float>{42});
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d.path),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(Snapshot, TruncatedFlippedOrSwappedFilesAreRefusedByName) {
  TempDir d;
  auto f = WriteRowsFile(d.path, "a.rows", 1, 0, SomeSections());
  ASSERT_TRUE(f.ok());
  const std::string path = d.path + "/a.rows";
  std::string bytes = *ReadFileToString(path);

  ASSERT_TRUE(WriteFileAtomically(path, bytes.substr(0, bytes.size() - 5)).ok());
  auto r = ReadRowsFile(d.path, *f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ": damaged checkpoint file"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();

  std::string flipped = bytes;
  flipped[40] ^= 0x10;
  ASSERT_TRUE(WriteFileAtomically(path, flipped).ok());
  r = ReadRowsFile(d.path, *f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("checksum"), std::string::npos) << r.status().message();

  // Another whole file under this name: its own checksum holds, the
  // manifest's does not.
  auto other = WriteRowsFile(d.path, "b.rows", 2, 0, {SomeSections()[1]});
  ASSERT_TRUE(other.ok());
  std::filesystem::rename(d.path + "/b.rows", path);
  r = ReadRowsFile(d.path, *f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();

  std::filesystem::remove(path);
  r = ReadRowsFile(d.path, *f);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

struct Scheduler {
  // The scheduler's endpoint on `c`'s network, which owns and closes it.
  explicit Scheduler(PsCluster& c)
      : t(std::move(c.base().Join(PeerId{Role::kScheduler, 0})).value()) {}

  // Has server `s` copy its rows as checkpoint `seq` (confirm false), or
  // waits for that file (confirm true).
  StatusOr<transport::InMessage> Ask(int s, const std::string& dir, uint64_t seq, bool confirm) {
    transport::OutMessage m;
    auto c = m.InitBody<ps::wire::CheckpointRequest>();
    c.setDir(dir);
    c.setSeq(seq);
    c.setConfirm(confirm);
    return t->Call(PeerId{Role::kServer, s}, std::move(m));
  }

  // Checkpoint `seq` of every server: their files, in server order.
  std::vector<SnapshotFile> Checkpoint(int servers, const std::string& dir, uint64_t seq) {
    std::vector<SnapshotFile> out;
    for (int s = 0; s < servers; ++s) {
      auto copied = Ask(s, dir, seq, false);
      EXPECT_TRUE(copied.ok()) << copied.status().message();
      auto r = Ask(s, dir, seq, true);
      EXPECT_TRUE(r.ok()) << r.status().message();
      if (!r.ok()) continue;
      for (auto f : r->Body<ps::wire::CheckpointReply>().getFiles()) {
        out.push_back({f.getName().cStr(), f.getBytes(), f.getChecksum(), f.getRows()});
      }
    }
    return out;
  }

  Status Restore(int servers, const std::string& dir, const std::vector<SnapshotFile>& files) {
    for (int s = 0; s < servers; ++s) {
      transport::OutMessage m;
      auto r = m.InitBody<ps::wire::RestoreRequest>();
      r.setDir(dir);
      auto list = r.initFiles(static_cast<unsigned>(files.size()));
      for (size_t k = 0; k < files.size(); ++k) {
        list[k].setName(files[k].name);
        list[k].setBytes(files[k].bytes);
        list[k].setChecksum(files[k].checksum);
        list[k].setRows(files[k].rows);
      }
      RIGEL_RETURN_IF_ERROR(t->Call(PeerId{Role::kServer, s}, std::move(m)).status());
    }
    return Status::Ok();
  }

  transport::Transport* t;
};

uint64_t Rows(const std::vector<SnapshotFile>& files) {
  uint64_t n = 0;
  for (const SnapshotFile& f : files) n += f.rows;
  return n;
}

TEST(Snapshot, ServersWriteChangedRowsAndRestoreOnAnotherNumberOfServers) {
  TempDir d;
  std::vector<int64_t> emb_keys, bias_keys = {0, 500, 1000};
  for (int64_t k = 0; k < 300; ++k) emb_keys.push_back(k * 331);
  std::vector<float> emb_delta(emb_keys.size() * 8, 0.5f), bias_delta = {1, 2, 3};
  std::vector<float> emb_before, bias_before, emb_after, bias_after;
  std::vector<SnapshotFile> first, second;
  {
    auto started = PsCluster::Start(TestSetup(2, 1, 0));
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    Scheduler sched(c);
    PsClient& w = c.client(0);
    ASSERT_TRUE(w.Push(0, emb_keys, emb_delta.data()).ok());
    ASSERT_TRUE(w.Push(1, bias_keys, bias_delta.data()).ok());
    ASSERT_TRUE(w.WaitForPushes().ok());
    // Rows only pulled are not written: they hold their initial values.
    ASSERT_TRUE(w.Pull(0, std::vector<int64_t>{1, 2, 3}).get().ok());
    first = sched.Checkpoint(2, d.path, 1);
    EXPECT_EQ(Rows(first), emb_keys.size() + bias_keys.size());
    emb_before = *w.Pull(0, emb_keys).get();
    bias_before = *w.Pull(1, bias_keys).get();
    // A second checkpoint writes only what changed since: one row.
    ASSERT_TRUE(w.Push(1, std::vector<int64_t>{500}, bias_delta.data()).ok());
    ASSERT_TRUE(w.WaitForPushes().ok());
    second = sched.Checkpoint(2, d.path, 2);
    ASSERT_EQ(second.size(), first.size() + 1);  // one server's chain grew by a delta
    EXPECT_EQ(Rows(second), Rows(first) + 1);
    emb_after = *w.Pull(0, emb_keys).get();
    bias_after = *w.Pull(1, bias_keys).get();
  }
  for (int servers : {1, 3}) {
    auto started = PsCluster::Start(TestSetup(servers, 1, 0));
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    Scheduler sched(c);
    ASSERT_TRUE(sched.Restore(servers, d.path, second).ok());
    PsClient& w = c.client(0);
    EXPECT_EQ(*w.Pull(0, emb_keys).get(), emb_after) << servers << " servers";
    EXPECT_EQ(*w.Pull(1, bias_keys).get(), bias_after) << servers << " servers";
    // The first checkpoint of a restored server is a full one.
    auto files = sched.Checkpoint(servers, d.path, 10 + servers);
    EXPECT_EQ(files.size(), static_cast<size_t>(servers));
    EXPECT_EQ(Rows(files), emb_keys.size() + bias_keys.size());
  }
  {
    auto started = PsCluster::Start(TestSetup(2, 1, 0));
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    Scheduler sched(c);
    ASSERT_TRUE(sched.Restore(2, d.path, first).ok());
    EXPECT_EQ(*c.client(0).Pull(1, bias_keys).get(), bias_before);
    EXPECT_EQ(*c.client(0).Pull(0, emb_keys).get(), emb_before);
  }
}

TEST(Snapshot, ADamagedFileIsNamedAndNothingIsLoaded) {
  TempDir d;
  std::vector<SnapshotFile> files;
  std::vector<int64_t> keys = {0, 1, 2};
  std::vector<float> delta = {5, 6, 7};
  {
    auto started = PsCluster::Start(TestSetup(2, 1, 0));
    ASSERT_TRUE(started.ok()) << started.status().message();
    PsCluster& c = **started;
    Scheduler sched(c);
    ASSERT_TRUE(c.client(0).Push(1, keys, delta.data()).ok());
    ASSERT_TRUE(c.client(0).WaitForPushes().ok());
    files = sched.Checkpoint(2, d.path, 1);
  }
  ASSERT_EQ(files.size(), 2u);
  // Damage the second file: the first, read before it, must not be applied.
  const std::string path = d.path + "/" + files[1].name;
  std::string bytes = *ReadFileToString(path);
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  auto started = PsCluster::Start(TestSetup(1, 1, 0));
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Scheduler sched(c);
  auto initial = *c.client(0).Pull(1, keys).get();
  Status st = sched.Restore(1, d.path, files);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_EQ(*c.client(0).Pull(1, keys).get(), initial);
}

TEST(Snapshot, AFailedWriteKeepsItsRowsForTheNextCheckpoint) {
  TempDir d;
  auto started = PsCluster::Start(TestSetup(1, 1, 0));
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Scheduler sched(c);
  std::vector<int64_t> keys = {7, 8};
  std::vector<float> delta = {1, 1};
  ASSERT_TRUE(c.client(0).Push(1, keys, delta.data()).ok());
  ASSERT_TRUE(c.client(0).WaitForPushes().ok());
  ASSERT_EQ(Rows(sched.Checkpoint(1, d.path, 1)), 2u);
  ASSERT_TRUE(c.client(0).Push(1, std::vector<int64_t>{9}, delta.data()).ok());
  ASSERT_TRUE(c.client(0).WaitForPushes().ok());
  // A directory that does not exist stands for one that cannot be written:
  // the copy is taken, the file fails.
  ASSERT_TRUE(sched.Ask(0, d.path + "/missing", 2, false).ok());
  auto r = sched.Ask(0, d.path + "/missing", 2, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(d.path + "/missing/ckpt-000002.server-0.rows"),
            std::string::npos)
      << r.status().message();
  auto files = sched.Checkpoint(1, d.path, 3);
  ASSERT_EQ(files.size(), 2u);  // the full file of checkpoint 1 and a delta
  EXPECT_EQ(files[1].rows, 1u);
}

TEST(Snapshot, DeltasAsLargeAsTheFullFileAreWrittenAsAFullFile) {
  TempDir d;
  auto started = PsCluster::Start(TestSetup(1, 1, 0));
  ASSERT_TRUE(started.ok()) << started.status().message();
  PsCluster& c = **started;
  Scheduler sched(c);
  std::vector<float> delta = {1, 1};
  auto push = [&](std::vector<int64_t> keys) {
    ASSERT_TRUE(c.client(0).Push(1, keys, delta.data()).ok());
    ASSERT_TRUE(c.client(0).WaitForPushes().ok());
  };
  push({3, 4});
  ASSERT_EQ(sched.Checkpoint(1, d.path, 1).size(), 1u);
  // Every row changed again (mf's epochs): a delta would be the full file
  // over, and a resume would read each row twice.
  push({3, 4});
  auto files = sched.Checkpoint(1, d.path, 2);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, RowsFileName(2, 0));
  EXPECT_EQ(files[0].rows, 2u);
  push({3});
  files = sched.Checkpoint(1, d.path, 3);
  ASSERT_EQ(files.size(), 2u);  // a delta of one row
  EXPECT_EQ(files[1].rows, 1u);
  // With the one before, the deltas would hold both rows: a full file.
  push({4});
  files = sched.Checkpoint(1, d.path, 4);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, RowsFileName(4, 0));
}

}  // namespace
}  // namespace rigel::ps
