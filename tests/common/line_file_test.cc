// The checked writers (common/line_file.h, common/file.h) on a full disk and
// a failing device: injected faults (common/write_faults.h) for ENOSPC and
// EIO at each write, fsync and close, and the real /dev/full and a full
// tmpfs where the system gives them.
#include "common/line_file.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "common/file.h"
#include "common/write_faults.h"

namespace rigel {
namespace {

std::string Dir(const std::string& name) {
  const std::string d =
      ::testing::TempDir() + "/line_file_test." + std::to_string(::getpid()) + "." + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

std::string Read(const std::string& path) {
  auto s = ReadFileToString(path);
  return s.ok() ? *s : "<" + s.status().message() + ">";
}

bool Has(const Status& st, const std::string& what) {
  return st.message().find(what) != std::string::npos;
}

// Fails the `nth` (0-based) write to a path ending in `suffix`, and every
// one after it, with `err`.
WriteFaultRule FailWritesFrom(int nth, int err, const std::string& suffix) {
  auto count = std::make_shared<int>(0);
  return [=](const std::string& path, WriteOp op, size_t) {
    if (op != WriteOp::kWrite || !path.ends_with(suffix)) return 0;
    return (*count)++ >= nth ? err : 0;
  };
}

TEST(LineFile, ADiskThatFillsOrFailsMidLineLeavesTheWholeLinesBeforeAndTheErrorSticks) {
  for (int err : {ENOSPC, EIO}) {
    const std::string path = Dir("mid") + "/log.jsonl";
    auto f = LineFile::Open(path, LineFile::Mode::kTruncate);
    ASSERT_TRUE(f.ok()) << f.status().message();
    ScopedWriteFault fault(FailWritesFrom(3, err, "log.jsonl"));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(f->Append("line " + std::to_string(i)).ok());
    // Half of the line reaches the file before the error, as on a real
    // disk; it is cut off again.
    Status st = f->Append("line 3, which the disk does not take");
    EXPECT_EQ(st.code(), StatusCode::kIoError);
    EXPECT_TRUE(Has(st, path + ": write failed: " + std::strerror(err))) << st.message();
    EXPECT_TRUE(Has(st, "the 3 whole lines written before")) << st.message();
    EXPECT_EQ(Read(path), "line 0\nline 1\nline 2\n");
    // Sticky: no line after a gap, and Close says it too.
    EXPECT_EQ(f->Append("line 4").message(), st.message());
    EXPECT_EQ(f->Close().message(), st.message());
    EXPECT_EQ(Read(path), "line 0\nline 1\nline 2\n");
  }
}

TEST(LineFile, DevFullRefusesTheFirstLineWithTheSystemsReason) {
  auto f = LineFile::Open("/dev/full", LineFile::Mode::kTruncate);
  ASSERT_TRUE(f.ok()) << f.status().message();
  Status st = f->Append("{}");
  EXPECT_TRUE(Has(st, "/dev/full: write failed: No space left on device")) << st.message();
}

TEST(LineFile, AnUnwritablePathSaysWhy) {
  auto f = LineFile::Open(Dir("missing") + "/no/such/dir/log", LineFile::Mode::kAppend);
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(Has(f.status(), "cannot open for writing: No such file or directory"))
      << f.status().message();
}

TEST(LineFile, AppendingGoesOnAfterTheLastWholeLineAndCutsAKilledWritersHalfLine) {
  const std::string path = Dir("append") + "/printed";
  ASSERT_TRUE(WriteFileAtomically(path, "a 1\nb 2\nc, cut by a kill").ok());
  auto f = LineFile::Open(path, LineFile::Mode::kAppend);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(Read(path), "a 1\nb 2\n");
  ASSERT_TRUE(f->Append("c 3").ok());
  EXPECT_EQ(f->lines(), 3);
  // A failure then counts the lines the file held before too.
  {
    ScopedWriteFault full(
        [](const std::string&, WriteOp op, size_t) { return op == WriteOp::kWrite ? ENOSPC : 0; });
    EXPECT_TRUE(Has(f->Append("d 4"), "the 3 whole lines written before"));
  }
  EXPECT_EQ(Read(path), "a 1\nb 2\nc 3\n");
}

TEST(LineFile, AFailedCloseIsAnError) {
  const std::string path = Dir("close") + "/log";
  auto f = LineFile::Open(path, LineFile::Mode::kTruncate);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->Append("x").ok());
  ScopedWriteFault fault(
      [](const std::string&, WriteOp op, size_t) { return op == WriteOp::kClose ? EIO : 0; });
  Status st = f->Close();
  EXPECT_TRUE(Has(st, path + ": close failed: Input/output error")) << st.message();
}

// A real file system that fills while lines are written (root only).
TEST(LineFile, ATmpfsThatFillsEndsWithWholeLines) {
  const std::string dir = Dir("tmpfs");
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=16k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  }
  const std::string path = dir + "/log.jsonl";
  Status st;
  int written = 0;
  {
    auto f = LineFile::Open(path, LineFile::Mode::kTruncate);
    ASSERT_TRUE(f.ok());
    const std::string line(700, 'x');  // 16 KiB is 23.4 lines of 701 bytes
    for (; written < 1000 && (st = f->Append(line)).ok(); ++written) {
    }
  }
  const std::string text = Read(path);
  ::umount(dir.c_str());
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Has(st, "No space left on device")) << st.message();
  EXPECT_GT(written, 10);
  EXPECT_EQ(text.size(), static_cast<size_t>(written) * 701);
  EXPECT_EQ(text.back(), '\n');
}

TEST(WriteFile, ADeviceIsWrittenInPlaceAndDevFullSaysItIsFull) {
  for (const auto& write : {WriteFileAtomically, WriteFileDurably}) {
    Status st = write("/dev/full", "model");
    EXPECT_TRUE(Has(st, "/dev/full: write failed: No space left on device")) << st.message();
    struct stat s;
    ASSERT_EQ(::stat("/dev/full", &s), 0);
    EXPECT_TRUE(S_ISCHR(s.st_mode)) << "/dev/full was replaced";
    EXPECT_TRUE(write("/dev/null", "model").ok());
  }
}

TEST(WriteFile, EveryFailingStepLeavesTheOldFileAndNoTemporary) {
  struct Step {
    WriteOp op;
    int err;
    const char* words;
  };
  for (const Step& s : {Step{WriteOp::kWrite, ENOSPC, "write failed: No space left on device"},
                        Step{WriteOp::kWrite, EIO, "write failed: Input/output error"},
                        Step{WriteOp::kSync, EIO, "fsync failed: Input/output error"},
                        Step{WriteOp::kClose, ENOSPC, "close failed: No space left on device"}}) {
    const std::string dir = Dir("steps");
    const std::string path = dir + "/model.npz";
    ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
    Status st;
    {
      ScopedWriteFault fault([&](const std::string& p, WriteOp op, size_t) {
        return p == path && op == s.op ? s.err : 0;
      });
      st = WriteFileDurably(path, "new contents");
    }
    EXPECT_TRUE(Has(st, path + ": " + s.words)) << st.message();
    EXPECT_EQ(Read(path), "old");
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.exists();
    EXPECT_EQ(files, 1) << "a temporary file was left after " << s.words;
  }
}

}  // namespace
}  // namespace rigel
