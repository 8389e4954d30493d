#include "bench/proc.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace rigel::bench {

namespace fs = std::filesystem;

double Secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const fs::path& p, int lines) {
  std::string s = ReadFile(p);
  size_t pos = s.size();
  if (pos > 0 && s[pos - 1] == '\n') --pos;  // the final newline ends the last line
  for (int n = 0; n < lines; ++n) {
    size_t nl = pos == 0 ? std::string::npos : s.rfind('\n', pos - 1);
    if (nl == std::string::npos) return s;
    pos = nl;
  }
  return s.substr(pos + 1);
}

namespace {

std::string Quote(const std::string& a) {
  if (a.find_first_of(" \t'\"$\\") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += Quote(a);
  }
  return s;
}

ProcResult Run(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
               double timeout_s) {
  ProcResult r;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  auto t0 = Clock::now();
  int e = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (e != 0) {
    std::fprintf(stderr, "bench: cannot start %s: %s\n", args[0], std::strerror(e));
    return r;
  }
  int status = 0;
  rusage usage{};
  for (;;) {
    pid_t w = wait4(pid, &status, WNOHANG, &usage);
    if (w == pid) break;
    if (w < 0) return r;
    if (!r.timed_out && Secs(t0) > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGTERM);  // the launcher's trap stops its cluster
      auto t1 = Clock::now();
      while (wait4(pid, &status, WNOHANG, &usage) == 0 && Secs(t1) < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      kill(-pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.wall_s = Secs(t0);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  r.cpu_s = secs(usage.ru_utime) + secs(usage.ru_stime);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace rigel::bench
