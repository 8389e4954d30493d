// Operations a user relies on, with real processes on loopback
// (docs/operations.md): a `rigel run` stopped by SIGTERM, SIGINT, SIGHUP or
// even SIGKILL leaves no process of its job behind; members stop when their
// scheduler is gone; a checkpoint directory serves one job at a time and is
// taken over from a killed one; a checkpointed job on a machine loaded far
// beyond its cores finishes with no restart; training goes on from a
// checkpoint with a larger EPOCHS; model files that cannot be written stop
// the job before it trains, and so does a log or printed-lines file that
// cannot be written later (/dev/full, a tmpfs that fills), which ends with
// whole lines, and so does a standard output that cannot be written; `rigel plot` draws a serial
// and a distributed run of examples/mf.rgl from their --log-json files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/config.h"
#include "scheduler/checkpoint_lock.h"
#include "tests/e2e/launch_util.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;
using testing::Child;
using testing::Slurp;

using testing::Bin;
using testing::Example;
using testing::WaitFor;

struct TempDir : testing::ScopedTempDir {
  TempDir() : ScopedTempDir("rigel-ops") {}
};

// A tmpfs of `options` mounted on `dir` (made if missing) while it lives
// (root only: `mounted` says whether it could be).
struct Tmpfs {
  Tmpfs(const std::string& dir, const std::string& options) : dir(dir) {
    fs::create_directories(dir);
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted) ::umount(dir.c_str());
  }
  std::string dir;
  bool mounted = false;
};

// `rigel run PROG ARGS...` (distributed when ARGS say --workers), output in
// DIR/NAME.out and .err, cluster logs in DIR/NAME.
std::unique_ptr<Child> Rigel(const std::string& dir, const std::string& name,
                             const std::string& prog, std::vector<std::string> args) {
  std::vector<std::string> argv = {Bin("rigel"), "run", prog};
  if (std::find(args.begin(), args.end(), "--workers") != args.end()) {
    args.insert(args.end(), {"--run-dir", dir + "/" + name});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Child>(argv, dir + "/" + name + ".out", dir + "/" + name + ".err");
}

// The pids the launcher wrote (scheduler, servers, workers).
std::map<std::string, pid_t> Pids(const std::string& run) {
  std::map<std::string, pid_t> out;
  std::istringstream in(Slurp(run + "/pids"));
  std::string who;
  pid_t pid;
  while (in >> who >> pid) out[who] = pid;
  return out;
}

// Whether no process holds the checkpoint lock file `path` (its flock).
bool LockIsFree(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  const bool free = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);  // releases it again
  return free;
}

// Whether `pid` still runs: /proc has it and it is not a zombie (a process
// whose parent is gone waits there for a reaper that may never come).
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// The children of `parent` (by /proc/PID/stat's ppid).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// A long distributed MF job, running its loops once every member is there.
struct LongJob {
  LongJob(const std::string& dir, const std::string& name, std::vector<std::string> extra = {}) {
    run = dir + "/" + name;
    std::vector<std::string> args = {"--workers", "2", "--servers", "2", "--set", "EPOCHS=100000"};
    args.insert(args.end(), extra.begin(), extra.end());
    job = Rigel(dir, name, Example("mf.rgl"), args);
    pid = job->pid();
    // Running: every member is listed and the first epoch printed.
    EXPECT_TRUE(
        WaitFor([&] { return Pids(run).size() == 5 && !job->Stdout().empty(); }, seconds(60)))
        << job->Stderr();
    launcher = ChildrenOf(pid);
  }
  std::string run;
  std::unique_ptr<Child> job;
  pid_t pid = -1;
  std::vector<pid_t> launcher;
};

// Every process of the job (launcher included) is gone within `limit`.
void ExpectAllGone(const LongJob& j, seconds limit, const std::string& what) {
  std::vector<pid_t> all = j.launcher;
  for (const auto& [who, pid] : Pids(j.run)) all.push_back(pid);
  ASSERT_EQ(all.size(), 6u) << what;
  const auto start = Clock::now();
  const bool gone = WaitFor(
      [&] {
        for (pid_t p : all) {
          if (Alive(p)) return false;
        }
        return true;
      },
      limit);
  std::string left;
  for (const auto& [who, pid] : Pids(j.run)) {
    if (Alive(pid)) left += who + " ";
  }
  EXPECT_TRUE(gone) << what << ": still running after " << limit.count() << " s: " << left;
  std::cerr << what << ": every process gone in "
            << std::chrono::duration<double>(Clock::now() - start).count() << " s\n";
}

TEST(Operations, SigtermSigintAndSighupToRigelRunStopEveryProcessOfTheJobWithin5s) {
  for (const auto& [sig, status] :
       std::vector<std::pair<int, int>>{{SIGTERM, 143}, {SIGINT, 130}, {SIGHUP, 129}}) {
    TempDir tmp;
    LongJob j(tmp.path, "job");
    ASSERT_EQ(j.launcher.size(), 1u);
    ASSERT_EQ(kill(j.pid, sig), 0);  // to `rigel run` alone, as `kill PID` does
    ExpectAllGone(j, seconds(5), strsignal(sig));
    EXPECT_EQ(j.job->Wait(seconds(5)), status) << j.job->Stderr();
    EXPECT_NE(j.job->Stderr().find("interrupted"), std::string::npos) << j.job->Stderr();
  }
}

TEST(Operations, AKilledRigelRunOrLauncherTakesItsJobAlong) {
  {
    TempDir tmp;
    LongJob j(tmp.path, "job");
    ASSERT_EQ(kill(j.pid, SIGKILL), 0);
    ExpectAllGone(j, seconds(5), "rigel run killed");
  }
  {
    TempDir tmp;
    LongJob j(tmp.path, "job");
    ASSERT_EQ(j.launcher.size(), 1u);
    ASSERT_EQ(kill(j.launcher[0], SIGKILL), 0);
    ExpectAllGone(j, seconds(5), "the launcher killed");
  }
}

TEST(Operations, MembersStopWhenTheSchedulerIsGoneAndNobodyStopsThem) {
  TempDir tmp;
  LongJob j(tmp.path, "job", {"--heartbeat-timeout-s", "2"});
  ASSERT_EQ(j.launcher.size(), 1u);
  // The launcher cannot clean up (stopped), and the scheduler dies without
  // a word: only the members' own watch can end them.
  ASSERT_EQ(kill(j.launcher[0], SIGSTOP), 0);
  const std::map<std::string, pid_t> pids = Pids(j.run);
  ASSERT_EQ(kill(pids.at("scheduler"), SIGKILL), 0);
  const bool gone = WaitFor(
      [&] {
        for (const auto& [who, pid] : pids) {
          if (Alive(pid)) return false;
        }
        return true;
      },
      seconds(8));
  kill(j.launcher[0], SIGCONT);
  EXPECT_TRUE(gone);
  EXPECT_NE(Slurp(j.run + "/worker-0.log").find("is gone: nothing from it for"), std::string::npos)
      << Slurp(j.run + "/worker-0.log");
}

TEST(Operations, ASecondJobOnALockedCheckpointDirectoryIsRefusedAndAKilledJobsLockIsTakenOver) {
  TempDir tmp;
  const std::string ckpt = tmp.path + "/ckpt";
  LongJob first(tmp.path, "first", {"--checkpoint-dir", ckpt});
  const pid_t scheduler = Pids(first.run).at("scheduler");
  auto second = Rigel(tmp.path, "second", Example("mf.rgl"),
                      {"--workers", "2", "--servers", "2", "--set", "EPOCHS=100000", "--resume",
                       ckpt, "--max-restarts", "0"});
  EXPECT_EQ(second->Wait(seconds(60)), 1) << second->Stderr();
  const std::string err = second->Stderr();
  for (const std::string& want : std::vector<std::string>{
           "the checkpoint directory " + ckpt + " is in use by another job", "host ",
           "pid " + std::to_string(scheduler), "started ", "program " + Example("mf.rgl")}) {
    EXPECT_NE(err.find(want), std::string::npos) << want << "\n" << err;
  }
  EXPECT_EQ(second->Stdout(), "");
  // The first job runs on, untouched.
  EXPECT_TRUE(Alive(scheduler));
  // Killed outright (no cleanup at all): its lock goes with it.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& e : fs::directory_iterator(ckpt)) {
          if (e.path().extension() == ".manifest") return true;
        }
        return false;
      },
      seconds(60)));
  first.job->Kill();
  for (const auto& [who, pid] : Pids(first.run)) kill(pid, SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return !Alive(scheduler); }, seconds(5)));
  // A killed scheduler's threads may still be exiting once /proc shows it a
  // zombie, and its lock goes with the last of them: on a loaded machine
  // (beside the eight-CPU-hog test under ctest -j2) later than the 3 s a new
  // job waits for it. The lock must go, whenever the kernel gets to it.
  ASSERT_TRUE(
      WaitFor([&] { return LockIsFree(ckpt + "/" + scheduler::kLockFileName); }, seconds(30)));
  auto third = Rigel(tmp.path, "third", Example("mf.rgl"),
                     {"--workers", "2", "--servers", "2", "--set", "EPOCHS=3", "--resume", ckpt});
  EXPECT_EQ(third->Wait(seconds(120)), 0) << third->Stderr();
  EXPECT_NE(Slurp(tmp.path + "/third/scheduler.log").find("resumed from"), std::string::npos);
}

// 8 processes that spin until destroyed.
struct CpuHogs {
  CpuHogs() {
    for (int k = 0; k < 8; ++k) {
      pid_t p = fork();
      if (p == 0) {
        volatile uint64_t x = 0;
        for (;;) x = x + 1;
      }
      pids.push_back(p);
    }
  }
  ~CpuHogs() {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
  }
  std::vector<pid_t> pids;
};

TEST(Operations, ACheckpointedJobUnderEightCpuHogsFinishesWithNoRestartAndTheUninterruptedOutput) {
  TempDir tmp;
  auto quiet = Rigel(tmp.path, "quiet", Example("mf.rgl"),
                     {"--workers", "2", "--servers", "2", "--set", "EPOCHS=8"});
  ASSERT_EQ(quiet->Wait(seconds(120)), 0) << quiet->Stderr();
  std::unique_ptr<Child> loaded;
  {
    CpuHogs hogs;
    loaded = Rigel(tmp.path, "loaded", Example("mf.rgl"),
                   {"--workers", "2", "--servers", "2", "--set", "EPOCHS=8", "--checkpoint-dir",
                    tmp.path + "/ckpt"});
    EXPECT_EQ(loaded->Wait(seconds(400)), 0) << loaded->Stderr();
  }
  EXPECT_EQ(loaded->Stdout(), quiet->Stdout());
  const std::string log = Slurp(tmp.path + "/loaded/scheduler.log");
  EXPECT_EQ(log.find("restart"), std::string::npos) << log;
  EXPECT_EQ(log.find("died"), std::string::npos) << log;
  EXPECT_EQ(loaded->Stderr().find("restart"), std::string::npos) << loaded->Stderr();
  std::cerr << "under 8 CPU hogs: " << loaded->seconds() << " s against " << quiet->seconds()
            << " s\n";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Operations, ResumeWithALargerEpochsGoesOnAsTheLongerRunAndOtherChangesAreRefused) {
  TempDir tmp;
  const std::string ckpt = tmp.path + "/ckpt";
  const std::vector<std::string> cluster = {"--workers", "2", "--servers", "2"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = cluster;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  auto longer = Rigel(tmp.path, "longer", Example("mf.rgl"), with({"--set", "EPOCHS=5"}));
  ASSERT_EQ(longer->Wait(seconds(120)), 0) << longer->Stderr();
  auto shorter = Rigel(tmp.path, "shorter", Example("mf.rgl"),
                       with({"--set", "EPOCHS=3", "--checkpoint-dir", ckpt}));
  ASSERT_EQ(shorter->Wait(seconds(120)), 0) << shorter->Stderr();
  // Another learning rate is another program: refused, naming the line.
  auto other = Rigel(tmp.path, "other", Example("mf.rgl"),
                     with({"--set", "EPOCHS=5", "--set", "lr=0.03", "--resume", ckpt}));
  EXPECT_EQ(other->Wait(seconds(60)), 1) << other->Stderr();
  EXPECT_NE(other->Stderr().find("only the top-level loop's bound"), std::string::npos)
      << other->Stderr();
  EXPECT_NE(other->Stderr().find("const 0.02`, this run's `"), std::string::npos)
      << other->Stderr();
  auto extended =
      Rigel(tmp.path, "extended", Example("mf.rgl"), with({"--set", "EPOCHS=5", "--resume", ckpt}));
  ASSERT_EQ(extended->Wait(seconds(120)), 0) << extended->Stderr();
  const std::vector<std::string> want = Lines(longer->Stdout());
  const std::vector<std::string> got = Lines(shorter->Stdout() + extended->Stdout());
  ASSERT_EQ(got.size(), want.size()) << shorter->Stdout() << extended->Stdout();
  for (size_t k = 0; k < want.size(); ++k) {
    const std::vector<double> a = testing::PrintedNumbers(want[k]);
    const std::vector<double> b = testing::PrintedNumbers(got[k]);
    ASSERT_EQ(a.size(), b.size()) << want[k] << " / " << got[k];
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0, std::abs(a[i]))) << want[k] << " / " << got[k];
    }
  }
}

TEST(Operations, ModelFilesThatCannotBeWrittenStopTheJobBeforeItTrains) {
  TempDir tmp;
  const std::string missing = tmp.path + "/no-such-dir/model.npz";
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{}, std::vector<std::string>{"--workers", "2"}}) {
    for (const std::vector<std::string>& out :
         {std::vector<std::string>{"--save-params", missing},
          std::vector<std::string>{"--save-vectors", "W=" + missing}}) {
      std::vector<std::string> args = mode;
      args.insert(args.end(), out.begin(), out.end());
      args.insert(args.end(), {"--set", "EPOCHS=2"});
      auto job = Rigel(tmp.path, "job", Example("mf.rgl"), args);
      const int rc = job->Wait(seconds(60));
      EXPECT_NE(rc, 0) << job->Stderr();
      const std::string err = job->Stderr();
      EXPECT_NE(err.find(out[0] + " " + missing), std::string::npos) << err;
      EXPECT_NE(err.find("the directory " + tmp.path + "/no-such-dir does not exist"),
                std::string::npos)
          << err;
      EXPECT_EQ(job->Stdout(), "") << "it trained first";
    }
  }
  // A file that can be written is left as it was found: not there.
  auto ok = Rigel(tmp.path, "ok", Example("mf.rgl"),
                  {"--set", "EPOCHS=0", "--save-params", tmp.path + "/m.npz"});
  EXPECT_EQ(ok->Wait(seconds(60)), 0) << ok->Stderr();
}

// Before issue 46 both runs exited 0 with an empty log and no word.
TEST(Operations, AJsonLogOnDevFullFailsTheRunNamingTheFlagAndTheReason) {
  TempDir tmp;
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{}, std::vector<std::string>{"--workers", "2", "--servers", "2"}}) {
    std::vector<std::string> args = mode;
    args.insert(args.end(), {"--set", "EPOCHS=3", "--log-json", "/dev/full"});
    auto job = Rigel(tmp.path, "job", Example("mf.rgl"), args);
    EXPECT_EQ(job->Wait(seconds(120)), 1) << job->Stderr();
    EXPECT_NE(job->Stderr().find("--log-json /dev/full: write failed: No space left on device"),
              std::string::npos)
        << job->Stderr();
  }
}

// Issue 46: distributed, an unwritable --log-json said "cannot write the JSON
// log PATH" with no reason nor flag, after the data load, under "the
// scheduler did not start" and the memory estimate's lines.
TEST(Operations, ADistributedJobWhoseLogCannotBeWrittenSaysWhyAndNothingElse) {
  TempDir tmp;
  const std::string missing = tmp.path + "/no-such-dir/log.jsonl";
  auto job =
      Rigel(tmp.path, "job", Example("mf.rgl"),
            {"--workers", "2", "--servers", "2", "--set", "EPOCHS=2", "--log-json", missing});
  EXPECT_EQ(job->Wait(seconds(60)), 1) << job->Stderr();
  const std::string err = job->Stderr();
  EXPECT_NE(err.find("rigel-launch: the scheduler did not start (exit 1):\nrigel-scheduler: "
                     "--log-json " +
                     missing + ": cannot write here (the directory " + tmp.path +
                     "/no-such-dir does not exist); nothing was run"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("expected peak memory"), std::string::npos) << err;
  EXPECT_EQ(job->Stdout(), "");
}

// A tmpfs (root only) with room for a few of the log's lines: the job stops
// at the epoch whose line does not fit, says so, and the log holds the
// epochs before it as whole lines. Before issue 46 it ran on and exited 0
// with a cut last line.
TEST(Operations, ALogOnADiskThatFillsEndsWithWholeLinesAndTheJobSaysSo) {
  TempDir tmp;
  const std::string mnt = tmp.path + "/mnt";
  const Tmpfs tmpfs(mnt, "size=12k");
  if (!tmpfs.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{}, std::vector<std::string>{"--workers", "2", "--servers", "2"}}) {
    const std::string log = mnt + "/log.jsonl";
    std::vector<std::string> args = mode;
    args.insert(args.end(), {"--set", "EPOCHS=100", "--log-json", log});
    auto job = Rigel(tmp.path, "job", Example("mf.rgl"), args);
    EXPECT_EQ(job->Wait(seconds(300)), 1) << job->Stderr();
    const std::string text = Slurp(log);
    const std::vector<std::string> lines = Lines(text);
    ASSERT_FALSE(lines.empty());
    EXPECT_LT(lines.size(), 100u);
    EXPECT_EQ(text.back(), '\n');
    for (const std::string& line : lines) EXPECT_NO_THROW(nlohmann::json::parse(line)) << line;
    EXPECT_NE(job->Stderr().find("--log-json " + log +
                                 ": write failed: No space left on device; it ends with the " +
                                 std::to_string(lines.size()) + " whole lines written before"),
              std::string::npos)
        << job->Stderr();
    // The job stopped there: it printed the epochs the log holds and the
    // one whose line did not fit, no more.
    EXPECT_EQ(Lines(job->Stdout()).size(), lines.size() + 1) << job->Stdout();
    fs::remove(log);
  }
}

// A run directory on a tmpfs (root only) of 9 pages: one for each of the
// launcher's 7 small files and 2 for the printed lines. Before issue 46 the
// file of printed lines stopped where the disk filled, and the job ran on.
TEST(Operations, PrintedLinesOnADiskThatFillsEndWithWholeLinesAndStopTheJob) {
  TempDir tmp;
  const std::string run = tmp.path + "/job";
  const Tmpfs tmpfs(run, "size=36k");
  if (!tmpfs.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  auto job = Rigel(tmp.path, "job", Example("mf.rgl"),
                   {"--workers", "2", "--servers", "2", "--set", "EPOCHS=100000"});
  EXPECT_EQ(job->Wait(seconds(300)), 1) << job->Stderr();
  const std::string text = Slurp(run + "/printed");
  const std::vector<std::string> printed = Lines(text), out = Lines(job->Stdout());
  ASSERT_GT(printed.size(), 10u);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(job->Stderr().find("the run directory's printed lines: " + run +
                               "/printed: write failed: No space left on device; it ends with "
                               "the " +
                               std::to_string(printed.size()) + " whole lines written before"),
            std::string::npos)
      << job->Stderr();
  // Every line it holds was printed, and the job stopped at the one that did
  // not fit.
  ASSERT_EQ(out.size(), printed.size() + 1);
  for (size_t k = 0; k < printed.size(); ++k) EXPECT_EQ(printed[k], out[k]);
}

// A distributed job whose standard output is full, or a pipe whose reader
// has gone (`| head -1`), stops at once with exit 1 and says why. Before the
// launcher relayed the prints, the second killed the scheduler with SIGPIPE,
// which a job with checkpoints took for a lost process: three restarts, each
// killed the same way, and exit 3.
TEST(Operations, ADistributedJobWhoseStandardOutputCannotBeWrittenStopsSayingWhy) {
  TempDir tmp;
  Child full({Bin("rigel"), "run", Example("mf.rgl"), "--workers", "2", "--servers", "2", "--set",
              "EPOCHS=3", "--run-dir", tmp.path + "/full"},
             "/dev/full", tmp.path + "/full.err");
  EXPECT_EQ(full.Wait(seconds(60)), 1) << Slurp(tmp.path + "/full.err");
  EXPECT_NE(Slurp(tmp.path + "/full.err")
                .find("rigel-launch: the printed lines cannot be written to the standard output: "
                      "No space left on device"),
            std::string::npos)
      << Slurp(tmp.path + "/full.err");
  const std::string cmd = "bash -c '" + Bin("rigel") + " run " + Example("mf.rgl") +
                          " --workers 2 --servers 2 --set EPOCHS=30 --run-dir " + tmp.path +
                          "/piped --checkpoint-dir " + tmp.path + "/ckpt 2>" + tmp.path +
                          "/piped.err | head -1 >" + tmp.path +
                          "/piped.out; exit ${PIPESTATUS[0]}'";
  const int status = std::system(cmd.c_str());
  const std::string err = Slurp(tmp.path + "/piped.err");
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << err;
  EXPECT_EQ(Slurp(tmp.path + "/piped.out"), "epoch 0 test_rmse 1.37311\n");
  EXPECT_NE(err.find("rigel-launch: the printed lines cannot be written to the standard output: "
                     "Broken pipe"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("restart"), std::string::npos) << err;
  EXPECT_TRUE(WaitFor([&] { return testing::ProcessesWith(tmp.path).empty(); }, seconds(5)))
      << testing::ProcessesWith(tmp.path);
}

// `rigel plot -o` on a full tmpfs (root only): the flag, the path and the
// reason, and no cut picture left there. gnuplot used to write -o itself,
// and a full disk gave "gnuplot wrote nothing here" at best.
TEST(Operations, APlotOnAFullDiskSaysWhyAndLeavesNoCutPicture) {
  TempDir tmp;
  auto serial = Rigel(tmp.path, "serial", Example("mf.rgl"),
                      {"--set", "EPOCHS=3", "--log-json", tmp.path + "/serial.jsonl"});
  ASSERT_EQ(serial->Wait(seconds(120)), 0) << serial->Stderr();
  const std::string mnt = tmp.path + "/mnt";
  const Tmpfs tmpfs(mnt, "size=4k");
  if (!tmpfs.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  std::ofstream(mnt + "/filler") << std::string(4096, 'x');
  const std::string png = mnt + "/mf.png";
  testing::RigelResult r =
      testing::RunRigel({"plot", tmp.path + "/serial.jsonl", "-o", png}, tmp.path);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("-o " + png + ": write failed: No space left on device"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(png));
}

TEST(Operations, PrintedValuesReachTheLogAndRigelPlotDrawsSerialAgainstDistributed) {
  TempDir tmp;
  auto serial = Rigel(tmp.path, "serial", Example("mf.rgl"),
                      {"--set", "EPOCHS=3", "--log-json", tmp.path + "/serial.jsonl"});
  ASSERT_EQ(serial->Wait(seconds(120)), 0) << serial->Stderr();
  auto dist = Rigel(tmp.path, "dist", Example("mf.rgl"),
                    {"--workers", "2", "--servers", "2", "--set", "EPOCHS=3", "--log-json",
                     tmp.path + "/dist.jsonl"});
  ASSERT_EQ(dist->Wait(seconds(120)), 0) << dist->Stderr();
  // Each epoch's line holds what the program printed in it.
  for (const auto& [name, child] : {std::make_pair(std::string("serial"), serial.get()),
                                    std::make_pair(std::string("dist"), dist.get())}) {
    const std::vector<std::string> log = Lines(Slurp(tmp.path + "/" + name + ".jsonl"));
    const std::vector<std::string> out = Lines(child->Stdout());
    ASSERT_EQ(log.size(), 3u);
    ASSERT_EQ(out.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      const nlohmann::json j = nlohmann::json::parse(log[k]);
      const std::vector<double> printed = testing::PrintedNumbers(out[k]);
      EXPECT_EQ(j.at("printed").at("epoch").get<double>(), static_cast<double>(k));
      EXPECT_NEAR(j.at("printed").at("test_rmse").get<double>(), printed.back(), 1e-5) << log[k];
    }
  }
  const std::string png = tmp.path + "/mf.png";
  testing::RigelResult r = testing::RunRigel(
      {"plot", tmp.path + "/serial.jsonl", "2 workers=" + tmp.path + "/dist.jsonl", "-o", png},
      tmp.path);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(Slurp(png).substr(0, 4), "\x89PNG");
  // A metric no log has is refused, naming what there is.
  r = testing::RunRigel({"plot", tmp.path + "/serial.jsonl", "--metric", "loss", "-o", png},
                        tmp.path);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("no 'loss' in any epoch; it has "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("test_rmse"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rigel
