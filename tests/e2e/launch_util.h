// Helpers for the launcher tests (launchers_test.cc): a process started with
// its own process group, its output in files and a time limit, a free TCP
// port, and which rigel processes are still alive.
//
// Not thread-safe; use from the test's thread.
#ifndef RIGEL_TESTS_E2E_LAUNCH_UTIL_H_
#define RIGEL_TESTS_E2E_LAUNCH_UTIL_H_

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/process_util.h"

extern char** environ;

namespace rigel::testing {

// A child process in a process group of its own (so that everything it
// starts, mpirun's ranks included, can be killed at once), stdin from
// /dev/null, stdout and stderr to files. Killed with its group when
// destroyed.
class Child {
 public:
  // `env`: variables to set on top of this process's environment.
  Child(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
        const std::map<std::string, std::string>& env = {})
      : out_(out), err_(err) {
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      if (!env.contains(kv.substr(0, kv.find('=')))) envs.push_back(kv);
    }
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    std::vector<char*> cenv;
    for (std::string& kv : envs) cenv.push_back(kv.data());
    cenv.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (std::string& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    if (posix_spawnp(&pid_, cargv[0], &fa, &attr, cargv.data(), cenv.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    start_ = std::chrono::steady_clock::now();
  }
  ~Child() { Kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0 || status_ != -1; }
  // The child's pid while it runs (not yet waited for), else -1.
  pid_t pid() const { return pid_; }

  // The exit status (128 + signal), or -1 when it still runs after `timeout`.
  int Wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return status_;
    auto end = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        elapsed_ = std::chrono::steady_clock::now() - start_;
        pid_ = -1;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
      }
      if (std::chrono::steady_clock::now() > end) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Seconds from the start to the exit Wait() saw.
  double seconds() const { return std::chrono::duration<double>(elapsed_).count(); }
  // Sends `sig` to the child's whole process group, as a terminal's Ctrl-C does.
  void Signal(int sig) {
    if (pid_ > 0) kill(-pid_, sig);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  std::string Stdout() const { return Slurp(out_); }
  std::string Stderr() const { return Slurp(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  int status_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::duration elapsed_{};
};

// A fresh directory /tmp/<prefix>-XXXXXX, removed when the test passed and
// kept for a look when it failed.
struct ScopedTempDir {
  explicit ScopedTempDir(const std::string& prefix) : path(MakeTempDir(prefix)) {}
  ~ScopedTempDir() {
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(path);
  }
  std::string path;
};

// A binary of this build, and a file under examples/.
inline std::string Bin(const std::string& name) { return std::string(RIGEL_BIN_DIR) + "/" + name; }
inline std::string Example(const std::string& name) {
  return std::string(RIGEL_SOURCE_DIR) + "/examples/" + name;
}

// Polls `done` every 5 ms; false when it still does not hold after `timeout`.
inline bool WaitFor(const std::function<bool()>& done, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A TCP port on 127.0.0.1 nobody listens on right now.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

// The pid and command line of every live process whose command line
// contains `needle`, one per line ("" when none).
inline std::string ProcessesWith(const std::string& needle) {
  std::string out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  const std::string self = std::to_string(getpid());
  while (dirent* e = readdir(d)) {
    std::string pid = e->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid == self) {
      continue;
    }
    std::string cmd = Slurp("/proc/" + pid + "/cmdline");
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    // Zombies have an empty command line and are not running.
    if (cmd.find(needle) != std::string::npos) out += pid + " " + cmd + "\n";
  }
  closedir(d);
  return out;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_E2E_LAUNCH_UTIL_H_
