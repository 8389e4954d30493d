// The cluster as processes, started by scripts/rigel-launch: pushes from
// several worker processes sum exactly; a killed server is detected and
// reported to the workers within 3 heartbeat intervals; nothing is left
// running after the job, a failure or an interrupt.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/process_util.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

using rigel::testing::Slurp;

std::string TempDir() { return rigel::testing::MakeTempDir("rigel-launch-test"); }

// name -> pid from the launcher's DIR/pids.
std::map<std::string, pid_t> Pids(const std::string& dir) {
  std::map<std::string, pid_t> out;
  std::ifstream in(dir + "/pids");
  std::string name;
  pid_t pid;
  while (in >> name >> pid) out[name] = pid;
  return out;
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

class Launch {
 public:
  Launch(const std::string& setup, int servers, int workers, int heartbeat_ms,
         const std::vector<std::string>& worker_args) {
    dir = TempDir();
    std::ofstream(dir + "/setup.json") << setup;
    std::vector<std::string> args = {
        std::string(RIGEL_SOURCE_DIR) + "/scripts/rigel-launch", "--bin-dir", RIGEL_BIN_DIR,
        "--setup", dir + "/setup.json", "--servers", std::to_string(servers), "--workers",
        std::to_string(workers), "--heartbeat-ms", std::to_string(heartbeat_ms),
        // Dead after 3 intervals, as before the
        // 10 s default: these tests time it.
        "--heartbeat-timeout-s", std::to_string(3 * heartbeat_ms / 1000.0), "--run-dir",
        dir + "/run", "--"};
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, (dir + "/launch.err").c_str(), O_WRONLY | O_CREAT,
                                     0600);
    EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Launch() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    for (auto& [name, p] : Pids(dir + "/run")) kill(p, SIGKILL);
  }
  // The launcher's exit status, or -1 if it did not exit within `timeout`.
  int Wait(std::chrono::seconds timeout) {
    auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  // Waits until `file` under the run directory contains `text`.
  bool WaitFor(const std::string& file, const std::string& text,
               std::chrono::milliseconds timeout) {
    auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      if (Slurp(dir + "/run/" + file).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  void ExpectNothingLeft() {
    auto pids = Pids(dir + "/run");
    EXPECT_FALSE(pids.empty());
    for (auto& [name, p] : pids)
      EXPECT_FALSE(Alive(p)) << name << " (pid " << p << ") is still running";
  }
  std::string Log(const std::string& name) { return Slurp(dir + "/run/" + name + ".log"); }

  std::string dir;
  pid_t pid = -1;
};

const char* kSetup =
    R"({"servers": 2, "workers": 3, "staleness": 0, "params": [{"name": "w", "rows": 5000, "width": 4, "shard": "hash", "init": "zeros"}]})";

TEST(Launch, PushesFromWorkerProcessesSumExactly) {
  Launch l(kSetup, 2, 3, 200, {"--selftest-pushes", "10", "--selftest-rows", "5000"});
  ASSERT_EQ(l.Wait(std::chrono::seconds(60)), 0)
      << Slurp(l.dir + "/launch.err") << l.Log("scheduler");
  for (int w = 0; w < 3; ++w) {
    // 3 workers x 10 clocks x 5000 rows x 4 floats of +1.
    EXPECT_NE(l.Log("worker-" + std::to_string(w)).find("row sum 600000"), std::string::npos)
        << l.Log("worker-" + std::to_string(w));
  }
  EXPECT_NE(l.Log("scheduler").find("shutting down: job finished"), std::string::npos);
  l.ExpectNothingLeft();
}

TEST(Launch, AKilledServerIsReportedToWorkersWithinThreeIntervals) {
  // Paced workers and a 300 ms interval: a busy CI machine must not starve a
  // live member's heartbeats into a false death.
  constexpr int kHeartbeatMs = 300;
  Launch l(kSetup, 2, 3, kHeartbeatMs,
           {"--selftest-pushes", "100000000", "--selftest-rows", "10", "--selftest-pace-ms", "5"});
  ASSERT_TRUE(l.WaitFor("server-1.log", "serving", std::chrono::seconds(20))) << l.Log("scheduler");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the job is running
  pid_t server1 = Pids(l.dir + "/run")["server-1"];
  ASSERT_GT(server1, 0);
  auto killed = Clock::now();
  ASSERT_EQ(kill(server1, SIGKILL), 0);
  // The scheduler tells the workers; on UCX a worker's own connection may
  // tell it first ("sending to server:1 failed: ... the peer is gone").
  const auto told = [&] {
    const std::string log = l.Log("worker-0");
    return log.find("server:1 died") != std::string::npos ||
           log.find("sending to server:1 failed") != std::string::npos;
  };
  for (auto end = Clock::now() + std::chrono::seconds(10); !told() && Clock::now() < end;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(told()) << l.Log("worker-0");
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - killed).count();
  RecordProperty("detect_ms", std::to_string(ms));
  // Silent for 3 intervals after its last heartbeat, which was at most one
  // interval before the kill; plus scheduling slack.
  EXPECT_LE(ms, 3 * kHeartbeatMs + 300) << "detected after " << ms << " ms";
  EXPECT_EQ(l.Wait(std::chrono::seconds(20)), 1);
  EXPECT_NE(l.Log("scheduler").find("job failed: server:1 died"), std::string::npos)
      << l.Log("scheduler");
  l.ExpectNothingLeft();
}

TEST(Launch, AnInterruptStopsEveryProcess) {
  Launch l(kSetup, 2, 3, 300,
           {"--selftest-pushes", "100000000", "--selftest-rows", "10", "--selftest-pace-ms", "5"});
  ASSERT_TRUE(l.WaitFor("worker-2.log", "transport", std::chrono::seconds(20)));
  ASSERT_TRUE(l.WaitFor("scheduler.log", "sending the setup", std::chrono::seconds(20)));
  ASSERT_EQ(kill(l.pid, SIGINT), 0);
  EXPECT_EQ(l.Wait(std::chrono::seconds(20)), 130);
  l.ExpectNothingLeft();
}

}  // namespace
