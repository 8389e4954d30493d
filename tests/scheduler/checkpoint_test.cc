// A checkpoint directory's own files (scheduler/checkpoint.h): manifests and
// driver states read back exactly, damage and foreign checkpoints refused by
// file name, the newest found, only the last two kept, and directories that
// cannot take a checkpoint (read-only, full) named before anything runs.
#include "scheduler/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "common/file.h"

namespace rigel::scheduler {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    char buf[] = "/tmp/rigel-ckpt-XXXXXX";
    path = mkdtemp(buf);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

exec::DriverState SomeState() {
  exec::DriverState st;
  st.stmt = 3;
  st.next = 7;
  st.slots = {{true, -42, 0},
              {false, 0, 0.1},
              {false, 0, std::numeric_limits<double>::quiet_NaN()},
              {false, 0, -0.0}};
  st.accums = {1e-300, 3.25, -std::numeric_limits<double>::infinity()};
  st.launches = {7, 0, 123456789012ull};
  st.prints = 9;
  return st;
}

// A complete checkpoint `seq` in `dir` with one rows file of its own.
CheckpointManifest WriteCheckpoint(const std::string& dir, uint64_t seq,
                                   const std::string& key = "xxh64:1") {
  CheckpointManifest m;
  m.seq = seq;
  m.program = "/p/mf.rgl";
  m.job_key = key;
  m.params = {{"W", 10, 4}, {"b", 3, 1}};
  m.servers = 2;
  m.workers = 3;
  m.iterations = static_cast<int64_t>(seq);
  m.every = "1";
  ps::SnapshotSection s;
  s.param = 1;
  s.keys = {2};
  s.values = {0.5f};
  m.rows.push_back(*ps::WriteRowsFile(dir, ps::RowsFileName(seq, 0), seq, 0, {s}));
  m.driver = *WriteDriverState(dir, seq, SomeState());
  EXPECT_TRUE(WriteManifest(dir, m).ok());
  return m;
}

TEST(Checkpoint, ManifestAndDriverStateReadBackExactly) {
  TempDir d;
  CheckpointManifest m = WriteCheckpoint(d.path, 4);
  auto back = ReadManifest(d.path + "/ckpt-000004.manifest");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->seq, 4u);
  EXPECT_EQ(back->params, m.params);
  EXPECT_EQ(back->rows[0].checksum, m.rows[0].checksum);
  EXPECT_EQ(back->driver.name, "ckpt-000004.driver");
  auto st = ReadDriverState(d.path, back->driver);
  ASSERT_TRUE(st.ok()) << st.status().message();
  const exec::DriverState want = SomeState();
  EXPECT_EQ(st->stmt, 3);
  EXPECT_EQ(st->next, 7);
  ASSERT_EQ(st->slots.size(), want.slots.size());
  for (size_t k = 0; k < want.slots.size(); ++k) {
    EXPECT_EQ(std::bit_cast<uint64_t>(st->slots[k].f), std::bit_cast<uint64_t>(want.slots[k].f));
    EXPECT_EQ(st->slots[k].i, want.slots[k].i);
    EXPECT_EQ(st->slots[k].is_int, want.slots[k].is_int);
  }
  for (size_t k = 0; k < want.accums.size(); ++k) {
    EXPECT_EQ(std::bit_cast<uint64_t>(st->accums[k]), std::bit_cast<uint64_t>(want.accums[k]));
  }
  EXPECT_EQ(st->launches, want.launches);
  EXPECT_EQ(st->prints, 9);
  EXPECT_TRUE(
      VerifyCheckpoint(d.path + "/ckpt-000004.manifest", *back, "xxh64:1", "", m.params).ok());
}

TEST(Checkpoint, DamageAndForeignCheckpointsAreRefusedByName) {
  TempDir d;
  CheckpointManifest m = WriteCheckpoint(d.path, 1);
  const std::string manifest = d.path + "/ckpt-000001.manifest";
  const std::string bytes = *ReadFileToString(manifest);

  // A byte flipped in the manifest.
  std::string flipped = bytes;
  flipped[20] ^= 0x01;
  ASSERT_TRUE(WriteFileAtomically(manifest, flipped).ok());
  auto r = ReadManifest(manifest);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(manifest + ": damaged checkpoint file: checksum"),
            std::string::npos)
      << r.status().message();
  // Truncated.
  ASSERT_TRUE(WriteFileAtomically(manifest, bytes.substr(0, bytes.size() / 2)).ok());
  r = ReadManifest(manifest);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(manifest + ": damaged checkpoint file"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomically(manifest, bytes).ok());

  // Another checkpoint's manifest under this one's name.
  TempDir other;
  WriteCheckpoint(other.path, 2);
  fs::copy_file(other.path + "/ckpt-000002.manifest", manifest,
                fs::copy_options::overwrite_existing);
  r = ReadManifest(manifest);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("it says it is ckpt-000002.manifest"), std::string::npos)
      << r.status().message();
  ASSERT_TRUE(WriteFileAtomically(manifest, bytes).ok());

  // Another program's checkpoint, or the same program's on other data.
  Status st = VerifyCheckpoint(manifest, m, "xxh64:2", "", m.params);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find(manifest + ": a checkpoint of another program"), std::string::npos)
      << st.message();
  std::vector<CheckpointParam> bigger = m.params;
  bigger[0].rows = 11;
  st = VerifyCheckpoint(manifest, m, "xxh64:1", "", bigger);
  EXPECT_NE(st.message().find("shapes differ"), std::string::npos) << st.message();

  // A rows file or the driver state altered after the manifest was written.
  const std::string rows = d.path + "/" + m.rows[0].name;
  std::string rb = *ReadFileToString(rows);
  rb[rb.size() - 20] ^= 0x40;
  ASSERT_TRUE(WriteFileAtomically(rows, rb).ok());
  st = VerifyCheckpoint(manifest, m, "xxh64:1", "", m.params);
  EXPECT_NE(st.message().find(rows + ": damaged checkpoint file"), std::string::npos)
      << st.message();
  const std::string driver = d.path + "/" + m.driver.name;
  ASSERT_TRUE(WriteFileAtomically(driver, "{}\n").ok());
  auto ds = ReadDriverState(d.path, m.driver);
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(ds.status().message().find(driver + ": damaged checkpoint file"), std::string::npos)
      << ds.status().message();
}

TEST(Checkpoint, TheNewestIsFoundAndOnlyTheLastTwoAreKept) {
  TempDir d;
  EXPECT_EQ(FindManifest(d.path).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FindManifest(d.path + "/nope").status().code(), StatusCode::kNotFound);
  for (uint64_t s = 1; s <= 4; ++s) WriteCheckpoint(d.path, s);
  // A rows file of an unfinished checkpoint 5, and a leftover temporary.
  ASSERT_TRUE(WriteFileAtomically(d.path + "/ckpt-000005.server-0.rows", "x").ok());
  ASSERT_TRUE(WriteFileAtomically(d.path + "/ckpt-000005.driver.tmp.77", "x").ok());
  EXPECT_EQ(*FindManifest(d.path), d.path + "/ckpt-000004.manifest");
  EXPECT_EQ(*FindManifest(d.path + "/ckpt-000002.manifest"), d.path + "/ckpt-000002.manifest");
  auto removed = PruneCheckpoints(d.path, 2);
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(*removed, 3 * 2 + 2);
  auto listing = [&] {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(d.path)) left.push_back(e.path().filename());
    std::sort(left.begin(), left.end());
    return left;
  };
  // The pruned rows files are kept as spares, the rest is gone.
  EXPECT_EQ(listing(),
            (std::vector<std::string>{
                ".spare.ckpt-000001.server-0.rows", ".spare.ckpt-000002.server-0.rows",
                ".spare.ckpt-000005.server-0.rows", "ckpt-000003.driver", "ckpt-000003.manifest",
                "ckpt-000003.server-0.rows", "ckpt-000004.driver", "ckpt-000004.manifest",
                "ckpt-000004.server-0.rows"}));

  // Checkpoint 5's rows file takes a spare over; its contents are its own.
  ps::SnapshotSection big;
  big.param = 0;
  big.width = 4;
  big.keys = {0, 1, 2};
  big.values.assign(12, 2.5f);
  auto f = ps::WriteRowsFile(d.path, ps::RowsFileName(5, 0), 5, 0, {big});
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto back = ps::ReadRowsFile(d.path, *f);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].keys, big.keys);
  EXPECT_EQ((*back)[0].values, big.values);
  EXPECT_EQ(fs::file_size(d.path + "/" + f->name), f->bytes);
  size_t spares = 0;
  for (const std::string& name : listing()) spares += name.rfind(".spare.", 0) == 0 ? 1 : 0;
  EXPECT_EQ(spares, 2u);
  // Checkpoint 6 (its rows file takes the other spare but one) completes:
  // the spare no one took goes, and the rows files of checkpoint 3 and of
  // the unfinished 5 become the spares.
  WriteCheckpoint(d.path, 6);
  auto again = PruneCheckpoints(d.path, 2);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, 1 + 2 + 2);
  EXPECT_EQ(listing(),
            (std::vector<std::string>{
                ".spare.ckpt-000003.server-0.rows", ".spare.ckpt-000005.server-0.rows",
                "ckpt-000004.driver", "ckpt-000004.manifest", "ckpt-000004.server-0.rows",
                "ckpt-000006.driver", "ckpt-000006.manifest", "ckpt-000006.server-0.rows"}));
}

TEST(Checkpoint, ASpareIsOverwrittenWholeAndNeverTakenTwice) {
  TempDir d;
  const std::string big(100000, 'a'), small = "short contents";
  ASSERT_TRUE(WriteFileAtomically(d.path + "/old", big).ok());
  ASSERT_TRUE(RetireToSpare(d.path + "/old").ok());
  EXPECT_TRUE(fs::exists(d.path + "/.spare.old"));
  const std::string_view whole = small;
  const std::vector<std::string_view> pieces = {whole.substr(0, 5), whole.substr(5)};
  // Shorter contents than the spare's: nothing of its tail is left.
  ASSERT_TRUE(WriteFileDataDurably(d.path + "/first", pieces, true).ok());
  EXPECT_EQ(*ReadFileToString(d.path + "/first"), small);
  EXPECT_FALSE(fs::exists(d.path + "/.spare.old"));
  // No spare left: a new file.
  ASSERT_TRUE(WriteFileDataDurably(d.path + "/second", pieces, true).ok());
  EXPECT_EQ(*ReadFileToString(d.path + "/second"), small);
  EXPECT_EQ(RetireToSpare(d.path + "/nope").code(), StatusCode::kIoError);
}

// A tmpfs of `options` mounted on a new directory for the test (root only).
struct Tmpfs {
  explicit Tmpfs(const std::string& options) {
    if (::mount("tmpfs", dir.path.c_str(), "tmpfs", 0, options.c_str()) == 0) mounted = true;
  }
  ~Tmpfs() {
    if (mounted) ::umount(dir.path.c_str());
  }
  TempDir dir;
  bool mounted = false;
};

TEST(Checkpoint, AReadOnlyDirectoryIsRefusedBeforeAnythingRuns) {
  Tmpfs ro("size=1m,mode=0755");
  if (!ro.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  ASSERT_EQ(::mount("tmpfs", ro.dir.path.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0);
  Status st = PrepareCheckpointDir(ro.dir.path);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot write checkpoints to " + ro.dir.path), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("Read-only file system"), std::string::npos) << st.message();
  st = PrepareCheckpointDir(ro.dir.path + "/sub");
  EXPECT_NE(st.message().find(ro.dir.path + "/sub: cannot make"), std::string::npos)
      << st.message();
}

TEST(Checkpoint, AFullDiskFailsTheWriteAndLeavesThePreviousCheckpointWhole) {
  Tmpfs full("size=64k");
  if (!full.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const std::string dir = full.dir.path;
  WriteCheckpoint(dir, 1);
  ps::SnapshotSection big;
  big.param = 0;
  big.width = 4;
  big.keys.assign(10000, 1);
  big.values.assign(40000, 1.0f);
  auto f = ps::WriteRowsFile(dir, ps::RowsFileName(2, 0), 2, 0, {big});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find(dir + "/ckpt-000002.server-0.rows: "), std::string::npos)
      << f.status().message();
  EXPECT_NE(f.status().message().find("No space left on device"), std::string::npos)
      << f.status().message();
  // Nothing of it is left, and checkpoint 1 is whole.
  EXPECT_FALSE(fs::exists(dir + "/ckpt-000002.server-0.rows"));
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }
  auto m = ReadManifest(*FindManifest(dir));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->seq, 1u);
  EXPECT_TRUE(VerifyCheckpoint(dir + "/ckpt-000001.manifest", *m, "xxh64:1", "", m->params).ok());
}

}  // namespace
}  // namespace rigel::scheduler
