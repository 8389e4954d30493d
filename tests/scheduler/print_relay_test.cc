// The relay of a job's printed lines (scheduler/print_relay.h): whole lines
// reach the output and then the file, a line cut off by a killed writer
// reaches neither, a file left with a cut line by a killed relay goes on
// after its last whole line, and an output or a file that cannot be written
// stops the relay, saying which and why.
#include "scheduler/print_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rigel::scheduler {
namespace {

namespace fs = std::filesystem;

// Each test's files in a directory of its own, removed after it.
class PrintRelay : public ::testing::Test {
 protected:
  void SetUp() override {
    char buf[] = "/tmp/rigel-relay-XXXXXX";
    ASSERT_NE(mkdtemp(buf), nullptr);
    dir_ = buf;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A pipe holding `text`, its writing end closed (a writer that ended, or
// was killed, after writing it); returns the reading end.
int PipeOf(const std::string& text) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  EXPECT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fds[1]);
  return fds[0];
}

TEST_F(PrintRelay, WholeLinesReachTheOutputAndTheFileAndACutLastLineNeither) {
  const std::string out = dir_ + "/out", printed = dir_ + "/printed";
  auto file = LineFile::Open(printed, LineFile::Mode::kAppend);
  ASSERT_TRUE(file.ok()) << file.status().message();
  const int in = PipeOf("epoch 0 rmse 1.5\n\nepoch 1 rmse 0.9\nepoch 2 rm");
  const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(out_fd, 0);
  auto counts = RelayPrints(in, out_fd, &*file);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->lines, 3);
  EXPECT_EQ(counts->cut_bytes, 10);  // "epoch 2 rm"
  EXPECT_EQ(Slurp(out), "epoch 0 rmse 1.5\n\nepoch 1 rmse 0.9\n");
  EXPECT_EQ(Slurp(printed), Slurp(out));
  close(in);
  close(out_fd);
}

TEST_F(PrintRelay, TheNextAttemptsRelayGoesOnAfterTheLastWholeLine) {
  const std::string printed = dir_ + "/printed";
  {
    std::ofstream f(printed);
    f << "epoch 0\nepoch 1\nepo";  // a relay killed in the middle of a line
  }
  auto file = LineFile::Open(printed, LineFile::Mode::kAppend);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->lines(), 2);
  const int in = PipeOf("epoch 2\n");
  const int out_fd = open("/dev/null", O_WRONLY);
  ASSERT_TRUE(RelayPrints(in, out_fd, &*file).ok());
  EXPECT_EQ(Slurp(printed), "epoch 0\nepoch 1\nepoch 2\n");
  close(in);
  close(out_fd);
}

TEST_F(PrintRelay, AnOutputThatCannotBeWrittenStopsItBeforeTheLineIsRecorded) {
  const std::string printed = dir_ + "/printed";
  auto file = LineFile::Open(printed, LineFile::Mode::kAppend);
  ASSERT_TRUE(file.ok());
  const int in = PipeOf("epoch 0\nepoch 1\n");
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  auto counts = RelayPrints(in, full, &*file);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message(),
            "the printed lines cannot be written to the standard output: No space left on device");
  EXPECT_EQ(Slurp(printed), "");
  close(in);
  close(full);
}

TEST_F(PrintRelay, AFileThatCannotBeWrittenStopsItAfterTheLineWasPrinted) {
  const std::string out = dir_ + "/out";
  auto file = LineFile::Open("/dev/full", LineFile::Mode::kAppend);
  ASSERT_TRUE(file.ok()) << file.status().message();
  const int in = PipeOf("epoch 0\nepoch 1\n");
  const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  auto counts = RelayPrints(in, out_fd, &*file);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message().rfind(
                "the run directory's printed lines: /dev/full: write failed: No space left on "
                "device",
                0),
            0u)
      << counts.status().message();
  EXPECT_EQ(Slurp(out), "epoch 0\n");
  close(in);
  close(out_fd);
}

}  // namespace
}  // namespace rigel::scheduler
