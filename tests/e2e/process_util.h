// Small helpers shared by the tests that run cluster processes: a fresh
// temporary directory, a whole-file read, and a `rigel` command run to its
// end.
#ifndef RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_
#define RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace rigel::testing {

// A new directory /tmp/<prefix>-XXXXXX (or /tmp if it cannot be made).
inline std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  const char* d = mkdtemp(tmpl.data());
  return d ? std::string(d) : "/tmp";
}

// The whole file, or "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The numbers in `text` (whitespace-separated words that parse whole as
// numbers), in order.
inline std::vector<double> PrintedNumbers(const std::string& text) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    double v = std::strtod(tok.c_str(), &end);
    if (end && *end == '\0' && end != tok.c_str()) out.push_back(v);
  }
  return out;
}

// `text`'s words, those that PrintedNumbers reads as numbers written as
// "#", one space between words: what two runs print when only their numbers
// may differ.
inline std::string MaskNumbers(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    (void)std::strtod(tok.c_str(), &end);
    out += (end && *end == '\0' && end != tok.c_str()) ? std::string("#") : tok;
    out += ' ';
  }
  return out;
}

// What a finished `rigel` command printed.
struct RigelResult {
  int rc = -1;  // exit status; 128 + signal when killed
  std::string out, err;
};

// Runs RIGEL_BIN_DIR/rigel with `args` to completion, its standard output and
// error going to `dir`/out and `dir`/err (read back into the result).
inline RigelResult RunRigel(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> all = {std::string(RIGEL_BIN_DIR) + "/rigel"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (dir + "/out").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&fa, 2, (dir + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid;
  RigelResult r;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  r.out = Slurp(dir + "/out");
  r.err = Slurp(dir + "/err");
  return r;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SCHEDULER_PROCESS_UTIL_H_
