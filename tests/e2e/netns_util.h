// Test helpers for running cluster processes on separate network stacks:
// a few Linux network namespaces joined by a bridge, and processes started
// inside them with `ip netns exec`. Gives multi-host tests real non-loopback
// addresses (and so the CURVE path of the ZeroMQ transport) on one machine.
//
// Needs root and iproute2; NetnsNetwork::Create says which is missing so the
// caller can skip. Everything made here is removed by the destructors, also
// when a test fails half-way: namespaces are deleted and processes are
// killed and reaped.
//
// Not thread-safe; use from the test's thread.
#ifndef RIGEL_TESTS_SCHEDULER_NETNS_UTIL_H_
#define RIGEL_TESTS_SCHEDULER_NETNS_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

extern char** environ;

namespace rigel::testing {

// The path of the program `name` (ip, sshd, mpirun, ...), or "" when there
// is none. Looks in the usual sbin directories as well as $PATH: a root
// shell's PATH has them, a test runner's environment may not.
inline std::string FindBinary(const std::string& name) {
  std::vector<std::string> dirs = {"/usr/sbin", "/sbin", "/usr/bin", "/bin"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  for (const std::string& d : dirs) {
    std::string p = d + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

inline std::string FindIpBinary() { return FindBinary("ip"); }

// Runs argv[0] (a path) with `argv`, stdin closed, and returns its exit status
// (128 + signal when killed, -1 when it could not start) with its stdout and
// stderr together in `*output`.
inline int RunCommand(const std::vector<std::string>& argv, std::string* output) {
  output->clear();
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *output = "cannot start " + argv[0];
    return -1;
  }
  // Read to EOF before reaping, so a chatty command never blocks on a full pipe.
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) output->append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Removes trailing whitespace (ip's messages end in a newline).
inline std::string TrimRight(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Network namespaces "<prefix>-a", "<prefix>-b", ... on one IPv4 /24: the
// first holds a bridge br0 (which carries its address, .1); every other one
// has an `eth0` whose veth peer is a port of that bridge (address .2, .3,
// ...), so every namespace reaches every other one directly. `lo` is up in
// each.
class NetnsNetwork {
 public:
  // Creates `count` (2..26) namespaces on 10.213.`subnet`.0/24 (subnet
  // 0..255). Namespaces left behind with the same names (an earlier run
  // killed half-way) are deleted first; see also DeleteOrphans. Errors: FailedPrecondition when not
  // root or `ip` is missing, Unavailable when `ip netns add` fails (no CAP_SYS_ADMIN, as in many
  // containers; the message has ip's output): the callers skip on those. Internal (with the failing
  // command and its output) when a later step fails.
  static StatusOr<std::unique_ptr<NetnsNetwork>> Create(const std::string& prefix, int count,
                                                        int subnet) {
    if (geteuid() != 0) return FailedPrecondition("network namespaces need root");
    std::string ip = FindIpBinary();
    if (ip.empty()) return FailedPrecondition("no `ip` binary (iproute2) found");
    if (count < 2 || count > 26 || subnet < 0 || subnet > 255) {
      return InvalidArgument("NetnsNetwork: count 2..26 and subnet 0..255");
    }
    std::unique_ptr<NetnsNetwork> net(new NetnsNetwork);
    net->ip_ = ip;
    for (int i = 0; i < count; ++i) {
      net->names_.push_back(prefix + "-" + static_cast<char>('a' + i));
      net->addrs_.push_back("10.213." + std::to_string(subnet) + "." + std::to_string(i + 1));
    }
    for (const std::string& ns : net->names_) net->Ip({"netns", "delete", ns});
    for (const std::string& ns : net->names_) {
      std::string out;
      if (net->Ip({"netns", "add", ns}, &out) != 0) {
        return Unavailable("`ip netns add " + ns + "` failed: " + TrimRight(out));
      }
      net->created_.push_back(ns);
    }
    const std::string& hub = net->names_[0];
    std::vector<std::vector<std::string>> steps = {
        {"-n", hub, "link", "add", "br0", "type", "bridge"},
        {"-n", hub, "addr", "add", net->addrs_[0] + "/24", "dev", "br0"},
        {"-n", hub, "link", "set", "br0", "up"},
        {"-n", hub, "link", "set", "lo", "up"},
    };
    for (int i = 1; i < count; ++i) {
      const std::string& ns = net->names_[i];
      // Made inside the hub, with the peer moved straight into `ns`: no
      // interface ever appears in the host's namespace, so names cannot clash
      // with the host's or another run's.
      std::string port = std::string("v") + static_cast<char>('a' + i);
      std::vector<std::vector<std::string>> more = {
          {"-n", hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns},
          {"-n", hub, "link", "set", port, "master", "br0"},
          {"-n", hub, "link", "set", port, "up"},
          {"-n", ns, "addr", "add", net->addrs_[i] + "/24", "dev", "eth0"},
          {"-n", ns, "link", "set", "eth0", "up"},
          {"-n", ns, "link", "set", "lo", "up"},
      };
      steps.insert(steps.end(), more.begin(), more.end());
    }
    for (const auto& step : steps) {
      std::string out;
      if (net->Ip(step, &out) != 0) {
        std::string cmd = "ip";
        for (const std::string& a : step) cmd += " " + a;
        return Internal("`" + cmd + "` failed: " + TrimRight(out));
      }
    }
    return net;
  }

  ~NetnsNetwork() { Teardown(); }

  // Deletes every namespace this object made (their interfaces go with
  // them). Processes still inside keep them alive: kill those first.
  // Idempotent.
  void Teardown() {
    for (const std::string& ns : created_) Ip({"netns", "delete", ns});
    created_.clear();
  }

  // Deletes namespaces named "<stem><pid>-<letter>" whose pid is no longer a
  // live process: what a run of a test killed before its destructors ran
  // left behind (a live pid may be another run's, and is left alone). Does
  // nothing without root or `ip`. Returns how many it deleted.
  static int DeleteOrphans(const std::string& stem) {
    std::string ip = FindIpBinary();
    if (geteuid() != 0 || ip.empty()) return 0;
    std::string list;
    if (RunCommand({ip, "netns", "list"}, &list) != 0) return 0;
    std::stringstream ss(list);
    std::string line;
    int deleted = 0;
    while (std::getline(ss, line)) {
      std::string name = line.substr(0, line.find(' '));  // "NAME (id: N)"
      if (name.rfind(stem, 0) != 0) continue;
      size_t dash = name.find('-', stem.size());
      std::string digits = name.substr(stem.size(), dash - stem.size());
      if (dash == std::string::npos || dash + 2 != name.size() || digits.empty() ||
          digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      pid_t pid = static_cast<pid_t>(std::stol(digits));
      if (kill(pid, 0) == 0 || errno != ESRCH) continue;
      std::string out;
      if (RunCommand({ip, "netns", "delete", name}, &out) == 0) ++deleted;
    }
    return deleted;
  }

  const std::string& name(int i) const { return names_[i]; }
  const std::string& address(int i) const { return addrs_[i]; }
  const std::string& ip_binary() const { return ip_; }

  // `ip netns list` (names only, one a line).
  std::string List() const {
    std::string out;
    Ip({"netns", "list"}, &out);
    return out;
  }

 private:
  NetnsNetwork() = default;
  int Ip(std::vector<std::string> args, std::string* out = nullptr) const {
    std::string ignored;
    args.insert(args.begin(), ip_);
    return RunCommand(args, out ? out : &ignored);
  }

  std::string ip_;
  std::vector<std::string> names_;
  std::vector<std::string> addrs_;
  std::vector<std::string> created_;
};

// One process started with `ip netns exec NS argv...` (ip execs the program,
// so pid() is the program's), stdout and stderr to files. The destructor
// kills it (SIGKILL) if it still runs, and reaps it.
class NetnsProcess {
 public:
  NetnsProcess(const std::string& ip, const std::string& ns, const std::vector<std::string>& argv,
               std::string stdout_path, std::string stderr_path)
      : stdout_path_(std::move(stdout_path)), stderr_path_(std::move(stderr_path)) {
    std::vector<std::string> args = {ip, "netns", "exec", ns};
    args.insert(args.end(), argv.begin(), argv.end());
    std::vector<char*> cargv;
    for (std::string& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    if (posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    started_ = pid_ > 0;
  }
  ~NetnsProcess() { Kill(); }
  NetnsProcess(const NetnsProcess&) = delete;
  NetnsProcess& operator=(const NetnsProcess&) = delete;

  bool started() const { return started_; }
  pid_t pid() const { return pid_; }

  // The exit status (128 + signal when killed), or -1 if it still runs after
  // `timeout` (or never started). Once it has returned a status, returns the
  // same one again.
  int Wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return status_;
    auto end = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
      }
      if (std::chrono::steady_clock::now() >= end) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  bool Running() { return Wait(std::chrono::milliseconds(0)) == -1 && pid_ > 0; }

  // SIGKILL and reap, if it still runs.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

  std::string Stdout() const { return Slurp(stdout_path_); }
  std::string Stderr() const { return Slurp(stderr_path_); }
  // The last `lines` lines of stderr, for failure messages.
  std::string StderrTail(size_t lines = 40) const {
    std::stringstream ss(Stderr());
    std::deque<std::string> tail;
    std::string line;
    while (std::getline(ss, line)) {
      tail.push_back(line);
      if (tail.size() > lines) tail.pop_front();
    }
    std::string out;
    for (const std::string& l : tail) out += "    " + l + "\n";
    return out;
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string stdout_path_, stderr_path_;
  pid_t pid_ = -1;
  int status_ = -1;
  bool started_ = false;
};

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SCHEDULER_NETNS_UTIL_H_
