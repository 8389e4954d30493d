// docs/operations.md's table of exit statuses against the runs it
// describes: each row's way of ending a run is scripted here, and the run
// must end with the row's status and say the row's words on stderr (its
// first quoted line, the placeholders PATH, REASON, N, FILE, LINE, COL and
// "..." standing for anything). A row this file cannot script fails the
// test, as does a scripted ending the table lacks: the table and the runs
// cannot drift apart.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "tests/e2e/launch_util.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

using std::chrono::seconds;
using testing::Child;
using testing::Example;
using testing::Slurp;
using testing::WaitFor;

struct Row {
  std::string how, words;
  int status = -1;
};

// The rows of the table headed "| how the run ends | exit status | ...".
std::vector<Row> Table() {
  std::istringstream in(Slurp(std::string(RIGEL_SOURCE_DIR) + "/docs/operations.md"));
  std::vector<Row> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| how the run ends | exit status |")) {
      inside = true;
      continue;
    }
    if (!inside || line.starts_with("|---")) continue;
    if (!line.starts_with("|")) break;
    std::vector<std::string> cells;
    std::istringstream cols(line.substr(1));
    for (std::string c; std::getline(cols, c, '|');) {
      c.erase(0, c.find_first_not_of(' '));
      c.erase(c.find_last_not_of(' ') + 1);
      cells.push_back(c);
    }
    if (cells.size() < 3) continue;
    Row r{cells[0], "", std::stoi(cells[1])};
    const size_t a = cells[2].find('`'), b = cells[2].find('`', a + 1);
    if (a != std::string::npos && b != std::string::npos)
      r.words = cells[2].substr(a + 1, b - a - 1);
    rows.push_back(r);
  }
  return rows;
}

// The literal parts of `words` (what the placeholders leave).
std::vector<std::string> Literals(const std::string& words) {
  static const std::regex placeholder(R"(\.\.\.|\b(PATH|REASON|FILE|LINE|COL|N)\b)");
  std::vector<std::string> out;
  std::sregex_token_iterator it(words.begin(), words.end(), placeholder, -1), end;
  for (; it != end; ++it) {
    std::string part = *it;
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.size() >= 3) out.push_back(part);
  }
  return out;
}

struct Ended {
  int status = -1;
  std::string err;
};

class ExitStatus : public ::testing::Test {
 protected:
  // `rigel run ARGS...` to its end.
  Ended Run(std::vector<std::string> args, const std::string& name) {
    return Wait(Start(std::move(args), name));
  }
  std::unique_ptr<Child> Start(std::vector<std::string> args, const std::string& name) {
    args.insert(args.begin(), {testing::Bin("rigel"), "run"});
    if (std::find(args.begin(), args.end(), "--workers") != args.end()) {
      args.insert(args.end(), {"--run-dir", tmp_.path + "/" + name});
    }
    return std::make_unique<Child>(args, tmp_.path + "/" + name + ".out",
                                   tmp_.path + "/" + name + ".err");
  }
  static Ended Wait(const std::unique_ptr<Child>& c) {
    return {c->Wait(seconds(120)), c->Stderr()};
  }
  // A long distributed MF job, once it has printed its first epoch.
  std::unique_ptr<Child> Running(std::vector<std::string> extra, const std::string& name) {
    std::vector<std::string> args = {Example("mf.rgl"), "--workers",    "2", "--servers", "2",
                                     "--set",           "EPOCHS=100000"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto c = Start(args, name);
    EXPECT_TRUE(WaitFor([&] { return !c->Stdout().empty(); }, seconds(60))) << c->Stderr();
    return c;
  }
  pid_t Pid(const std::string& name, const std::string& who) {
    std::istringstream in(Slurp(tmp_.path + "/" + name + "/pids"));
    std::string w;
    pid_t p = 0, found = 0;
    while (in >> w >> p) found = w == who ? p : found;
    return found;
  }
  testing::ScopedTempDir tmp_{"rigel-exit"};
};

TEST_F(ExitStatus, EveryWayARunEndsGivesTheDocumentedStatusAndWords) {
  const std::string mf = Example("mf.rgl");
  const std::vector<std::string> dist = {"--workers", "2", "--servers", "2"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string bad = tmp_.path + "/bad.rgl";
  std::ofstream(bad) << "param W[3] = 0\n";
  const std::map<std::string, std::function<Ended()>> scripted = {
      {"it finished",
       [&] {
         return Run({mf, "--set", "EPOCHS=1"}, "finished");
       }},
      {"a flag that does not exist",
       [&] {
         return Run({mf, "--no-such-flag"}, "flag");
       }},
      {"a program that does not compile", [&] { return Run({bad}, "compile"); }},
      {"a data file that is not there",
       [&] {
         return Run({mf, "--set", "ratings.path=" + tmp_.path + "/none.csv"}, "data");
       }},
      {"an output that cannot be written, serially",
       [&] {
         return Run({mf, "--log-json", tmp_.path + "/no/log.jsonl"}, "out");
       }},
      {"an output that cannot be written, distributed",
       [&] {
         return Run(with({mf, "--log-json", tmp_.path + "/no/log.jsonl"}, dist), "out_dist");
       }},
      {"a log on a full disk, distributed",
       [&] {
         return Run(with({mf, "--set", "EPOCHS=2", "--log-json", "/dev/full"}, dist), "full");
       }},
      {"a worker killed, no checkpoints",
       [&] {
         auto c = Running({}, "killed");
         kill(Pid("killed", "worker-0"), SIGKILL);
         return Wait(c);
       }},
      {"a worker killed, checkpoints, no restart left",
       [&] {
         auto c = Running({"--checkpoint-dir", tmp_.path + "/ckpt1", "--max-restarts", "0"},
                          "killed_ckpt");
         kill(Pid("killed_ckpt", "worker-0"), SIGKILL);
         return Wait(c);
       }},
      {"the scheduler hung, checkpoints, no restart left",
       [&] {
         auto c = Running({"--checkpoint-dir", tmp_.path + "/ckpt2", "--max-restarts", "0",
                           "--heartbeat-timeout-s", "3"},
                          "hung");
         const pid_t scheduler = Pid("hung", "scheduler");
         kill(scheduler, SIGSTOP);
         Ended e = Wait(c);
         kill(scheduler, SIGCONT);
         return e;
       }},
      {"SIGINT (Ctrl-C)",
       [&] {
         auto c = Running({}, "sigint");
         kill(c->pid(), SIGINT);
         return Wait(c);
       }},
      {"SIGTERM",
       [&] {
         auto c = Running({}, "sigterm");
         kill(c->pid(), SIGTERM);
         return Wait(c);
       }},
  };
  const std::vector<Row> rows = Table();
  ASSERT_GE(rows.size(), 10u) << "the table of exit statuses is not in docs/operations.md";
  std::set<std::string> documented;
  for (const Row& row : rows) {
    documented.insert(row.how);
    auto it = scripted.find(row.how);
    if (it == scripted.end()) {
      ADD_FAILURE() << "docs/operations.md documents '" << row.how << "', which is not scripted";
      continue;
    }
    const Ended e = it->second();
    EXPECT_EQ(e.status, row.status) << row.how << ":\n" << e.err;
    for (const std::string& part : Literals(row.words)) {
      EXPECT_NE(e.err.find(part), std::string::npos)
          << row.how << ": stderr lacks '" << part << "':\n"
          << e.err;
    }
    RecordProperty(row.how, e.status);
  }
  for (const auto& [how, run] : scripted) {
    EXPECT_TRUE(documented.count(how)) << "'" << how << "' is scripted but not documented";
  }
}

}  // namespace
}  // namespace rigel
