// A program run on a cluster whose members live on three network stacks
// (Linux network namespaces joined by a bridge): the scheduler and the server
// in one, a worker in each of the others, so every connection, including the
// workers' direct 2-D block hand-offs, crosses a real non-loopback link with
// CURVE. The distributed run of examples/mf.rgl must match the serial run in
// the schedule's equivalent order (analysis/order.h) to float rounding, print
// for print and parameter for parameter, and land within 1% of the plain
// serial run. examples/dense_lr.rgl runs the same way with its allreduce
// parameter summed over Gloo between the workers' namespaces. Skipped (with
// the reason) without root, iproute2 or the right to make namespaces.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "analysis/order.h"
#include "analysis/partition.h"
#include "analysis/plan.h"
#include "exec/executor.h"
#include "exec/param_file.h"
#include "frontend/compile.h"
#include "tests/e2e/netns_util.h"

namespace rigel {
namespace {

using Clock = std::chrono::steady_clock;
using testing::NetnsNetwork;
using testing::NetnsProcess;

constexpr int kWorkers = 2;

// The scheme of every address the cluster listens on: ucx:// when
// $RIGEL_TRANSPORT says ucx (CTest's netns-on-UCX entry, with UCX_TLS=tcp),
// else tcp:// (ZeroMQ).
std::string Scheme() {
  const char* t = std::getenv("RIGEL_TRANSPORT");
  return t != nullptr && std::string(t) == "ucx" ? "ucx://" : "tcp://";
}
constexpr int kEpochs = 20;  // EPOCHS in examples/mf.rgl

std::string Program() { return std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl"; }
std::string Bin(const std::string& name) { return std::string(RIGEL_BIN_DIR) + "/" + name; }

// The test RMSE of each "epoch N test_rmse X" line, indexed by N; NaN for an
// epoch that printed nothing.
std::vector<double> Rmses(const std::string& out) {
  std::vector<double> r(kEpochs, std::nan(""));
  std::stringstream ss(out);
  std::string word, key;
  int64_t epoch;
  double value;
  std::string line;
  while (std::getline(ss, line)) {
    std::stringstream ls(line);
    if (ls >> word >> epoch >> key >> value && word == "epoch" && key == "test_rmse" &&
        epoch >= 0 && epoch < kEpochs) {
      r[epoch] = value;
    }
  }
  return r;
}

struct SerialRun {
  std::string out;
  std::vector<exec::SavedParam> params;
};

// Runs mf.rgl serially in this process: in file order, or (equivalent_order)
// each loop in the order its schedule for kWorkers workers with balanced cuts
// completes the elements, which is what the distributed driver does.
StatusOr<SerialRun> RunSerial(bool equivalent_order) {
  RIGEL_ASSIGN_OR_RETURN(ir::Program prog, frontend::CompileFile(Program(), {}));
  analysis::PlanOptions po;
  po.workers = kWorkers;
  RIGEL_ASSIGN_OR_RETURN(analysis::Plan plan, analysis::MakePlan(prog, po));
  std::ostringstream out;
  exec::ExecutorOptions eo;
  eo.out = &out;
  // The data sets of mf do not change size between runs: one order per loop.
  std::map<int, std::vector<int64_t>> orders;
  if (equivalent_order) {
    eo.order = [&](int loop, const data::Dataset& data) -> StatusOr<std::vector<int64_t>> {
      auto it = orders.find(loop);
      if (it != orders.end()) return it->second;
      const analysis::LoopPlan& lp = plan.loops[loop];
      RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::MakeCuts(lp, kWorkers, data));
      RIGEL_ASSIGN_OR_RETURN(std::vector<int64_t> order, analysis::ScheduleOrder(lp, cuts, data));
      orders[loop] = order;
      return order;
    };
  }
  RIGEL_ASSIGN_OR_RETURN(auto ex, exec::SerialExecutor::Create(prog, eo));
  RIGEL_RETURN_IF_ERROR(ex->Run());
  SerialRun run;
  run.out = out.str();
  for (size_t p = 0; p < prog.params.size(); ++p) {
    exec::SavedParam sp;
    sp.name = prog.params[p].name;
    sp.values = ex->param(static_cast<int>(p));
    run.params.push_back(std::move(sp));
  }
  return run;
}

// max |a - b| / max |b| over two equally long vectors (inf if lengths differ).
double RelMaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

std::string MakeTempDir() {
  char tmpl[] = "/tmp/rigel-netns-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "";
}

// Removes the test's temporary directory at the end of the test, unless the
// test failed (the logs stay for a look).
struct TempDir {
  std::string path = MakeTempDir();
  ~TempDir() {
    if (!path.empty() && !::testing::Test::HasFailure()) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
};

// A cluster on `net`: the scheduler (running `program`, with `extra`
// arguments) and the server in namespace 0, worker w in namespace w + 1,
// every link keyed with CURVE (plain ZeroMQ is loopback only). Run() waits
// for the scheduler and then the members to end.
struct Cluster {
  std::vector<std::pair<std::string, std::unique_ptr<NetnsProcess>>> procs;
  NetnsProcess* sched = nullptr;
  double seconds = 0;  // from the members' start to the scheduler's exit
  std::string prefix;  // of the processes' output files in the directory

  std::string Logs(const std::string& dir) const {
    std::string s = "(logs in " + dir + ")\n";
    for (auto& [name, p] : procs) s += "--- " + name + " (stderr tail):\n" + p->StderrTail();
    return s;
  }
};

// Starts the cluster's processes (the key made once per directory).
void StartCluster(NetnsNetwork& net, const std::string& dir, const std::string& program,
                  const std::vector<std::string>& extra, Cluster* c) {
  std::string out;
  if (!std::filesystem::exists(dir + "/cluster.key")) {
    ASSERT_EQ(testing::RunCommand({Bin("rigel"), "keygen", "-o", dir + "/cluster.key"}, &out), 0)
        << out;
  }
  std::filesystem::remove(dir + "/addr");
  const std::string key = dir + "/cluster.key";
  const std::string ip = net.ip_binary();
  auto start = [&](const std::string& name, int ns, std::vector<std::string> argv) {
    const std::string file = dir + "/" + c->prefix + name;
    c->procs.emplace_back(
        name, std::make_unique<NetnsProcess>(ip, net.name(ns), argv, file + ".out", file + ".log"));
    return c->procs.back().second.get();
  };
  std::vector<std::string> sched_argv = {Bin("rigel-scheduler"),
                                         "--servers",
                                         "1",
                                         "--workers",
                                         std::to_string(kWorkers),
                                         "--program",
                                         program,
                                         "--listen",
                                         Scheme() + net.address(0) + ":*",
                                         "--key-file",
                                         key,
                                         "--address-file",
                                         dir + "/addr",
                                         "--heartbeat-ms",
                                         "500"};
  sched_argv.insert(sched_argv.end(), extra.begin(), extra.end());
  c->sched = start("scheduler", 0, sched_argv);
  ASSERT_TRUE(c->sched->started());
  // The scheduler writes the file (atomically) once it is bound.
  std::string addr;
  for (auto end = Clock::now() + std::chrono::seconds(20); Clock::now() < end;) {
    addr = NetnsProcess::Slurp(dir + "/addr");
    if (!addr.empty() || !c->sched->Running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  while (!addr.empty() && (addr.back() == '\n' || addr.back() == ' ')) addr.pop_back();
  ASSERT_FALSE(addr.empty()) << "the scheduler wrote no address\n" << c->Logs(dir);
  ASSERT_EQ(addr.rfind(Scheme() + net.address(0) + ":", 0), 0u) << addr;

  auto member = [&](const std::string& binary, int rank, int ns) {
    return std::vector<std::string>{Bin(binary),
                                    "--scheduler",
                                    addr,
                                    "--rank",
                                    std::to_string(rank),
                                    "--listen",
                                    Scheme() + net.address(ns) + ":*",
                                    "--key-file",
                                    key};
  };
  start("server-0", 0, member("rigel-server", 0, 0));
  for (int w = 0; w < kWorkers; ++w) {
    start("worker-" + std::to_string(w), w + 1, member("rigel-worker", w, w + 1));
  }
}

void RunCluster(NetnsNetwork& net, const std::string& dir, const std::string& program,
                const std::vector<std::string>& extra, Cluster* c) {
  StartCluster(net, dir, program, extra, c);
  if (::testing::Test::HasFatalFailure()) return;
  const auto dist_start = Clock::now();
  int rc = c->sched->Wait(std::chrono::seconds(120));
  if (rc == -1) {
    for (auto& [name, p] : c->procs) p->Kill();
    FAIL() << "the scheduler did not finish within 120 s\n" << c->Logs(dir);
  }
  ASSERT_EQ(rc, 0) << "scheduler exit status " << rc << "\n" << c->Logs(dir);
  c->seconds = std::chrono::duration<double>(Clock::now() - dist_start).count();
  // The members leave on the scheduler's shutdown.
  for (auto& [name, p] : c->procs) {
    int st = p->Wait(std::chrono::seconds(15));
    EXPECT_EQ(st, 0) << name << " exit status " << st << " (-1: still running)\n" << c->Logs(dir);
  }
}

// Three namespaces joined by a bridge in *out, left null when this machine
// cannot make them (the test is then skipped with the reason).
void MakeNetwork(std::unique_ptr<NetnsNetwork>* out) {
  // Names carry the pid, so two runs at once never share one, and
  // namespaces outliving a killed run (a CI timeout) can be told from a live
  // run's and removed. The subnet needs no care (the namespaces have no link
  // to the host's); it follows the pid so that logs of two runs differ.
  const pid_t pid = getpid();
  NetnsNetwork::DeleteOrphans("rigel-ns");
  auto net_or = NetnsNetwork::Create("rigel-ns" + std::to_string(pid), 3, pid % 250 + 1);
  if (!net_or.ok() && (net_or.status().code() == StatusCode::kFailedPrecondition ||
                       net_or.status().code() == StatusCode::kUnavailable)) {
    GTEST_SKIP() << "no network namespaces here: " << net_or.status().message();
  }
  ASSERT_TRUE(net_or.ok()) << net_or.status().message();
  *out = std::move(net_or).value();
}

// Nothing is left: no process in any of the namespaces, then no namespace.
void ExpectTornDown(NetnsNetwork& net, Cluster* c) {
  for (int i = 0; i < 3; ++i) {
    std::string pids;
    testing::RunCommand({net.ip_binary(), "netns", "pids", net.name(i)}, &pids);
    EXPECT_EQ(pids, "") << "processes left in " << net.name(i);
  }
  c->procs.clear();
  net.Teardown();
  const std::string left = net.List();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(left.find(net.name(i)), std::string::npos) << "namespace left: " << left;
  }
}

TEST(NetnsTest, MatrixFactorisationAcrossThreeNamespaces) {
  const auto t0 = Clock::now();
  std::unique_ptr<NetnsNetwork> net;
  MakeNetwork(&net);
  if (!net) return;
  ASSERT_TRUE(std::filesystem::exists(std::string(RIGEL_SOURCE_DIR) + "/examples/data/ratings.csv"))
      << "examples/data/ratings.csv is missing: build the example_data target";
  TempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  const std::string dir = tmp.path;
  // Declared after `net`: destroyed (killed and reaped) before the
  // namespaces are deleted, on every path out of the test.
  Cluster cluster;
  RunCluster(*net, dir, Program(), {"--save-params", dir + "/dist.params"}, &cluster);
  if (HasFatalFailure()) return;
  RecordProperty("distributed_s", std::to_string(cluster.seconds));

  auto plain = RunSerial(false);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  auto equiv = RunSerial(true);
  ASSERT_TRUE(equiv.ok()) << equiv.status().message();

  // Prints: exact against the equivalent order (merged partial sums differ
  // in float rounding only), within 1% of the plain serial run at the end
  // (the visiting order differs; early epochs may be further apart).
  const std::string dist_out = cluster.sched->Stdout();
  std::vector<double> d = Rmses(dist_out), e = Rmses(equiv->out), s = Rmses(plain->out);
  for (int ep = 0; ep < kEpochs; ++ep) {
    ASSERT_FALSE(std::isnan(d[ep])) << "no RMSE for epoch " << ep << " in\n" << dist_out;
    ASSERT_FALSE(std::isnan(e[ep])) << equiv->out;
    EXPECT_LE(std::abs(d[ep] - e[ep]), 1e-5 * std::abs(e[ep]))
        << "epoch " << ep << ": distributed " << d[ep] << ", serial in schedule order " << e[ep];
  }
  ASSERT_FALSE(std::isnan(s[kEpochs - 1])) << plain->out;
  EXPECT_LE(std::abs(d[kEpochs - 1] - s[kEpochs - 1]), 0.01 * s[kEpochs - 1])
      << "final RMSE: distributed " << d[kEpochs - 1] << ", serial " << s[kEpochs - 1];

  // Parameters: the servers' copy at the end equals the equivalent-order run.
  auto saved = exec::ReadParams(dir + "/dist.params");
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  for (const char* name : {"W", "H"}) {
    const exec::SavedParam* got = nullptr;
    const exec::SavedParam* want = nullptr;
    for (const auto& p : *saved) got = p.name == name ? &p : got;
    for (const auto& p : equiv->params) want = p.name == name ? &p : want;
    ASSERT_NE(got, nullptr) << name << " is not in the saved parameters";
    ASSERT_NE(want, nullptr);
    EXPECT_LE(RelMaxDiff(got->values, want->values), 1e-5)
        << name << ": distributed vs serial in schedule order (" << got->values.size() << " vs "
        << want->values.size() << " values)";
  }

  ExpectTornDown(*net, &cluster);
  RecordProperty("total_s",
                 std::to_string(std::chrono::duration<double>(Clock::now() - t0).count()));
}

// A worker killed with SIGKILL in its namespace in the middle of an epoch:
// the scheduler sees its heartbeats stop, ends the job with exit status 3
// and names the newest checkpoint; the cluster started again on every
// namespace with --resume (what an operator, or a launcher that cannot
// restart one rank, does) ends as the uninterrupted run, each epoch printed
// once (--print-log).
// Starts `c` with `extra`, waits for "epoch N " in its output, kills the
// member `who` ("worker-1", "server-0") in its namespace and expects the
// scheduler to see it die and end with exit status 3, naming the newest
// checkpoint in `ckpt` (what mpirun and srun users resume from); `*killed`
// is when.
void KillInNamespace(NetnsNetwork& net, const std::string& dir, const std::string& ckpt,
                     const std::vector<std::string>& extra, int epoch, const std::string& who,
                     const std::string& died, Cluster* c, Clock::time_point* killed) {
  StartCluster(net, dir, Program(), extra, c);
  if (::testing::Test::HasFatalFailure()) return;
  const std::string mark = "epoch " + std::to_string(epoch) + " ";
  for (auto end = Clock::now() + std::chrono::seconds(60);
       Clock::now() < end && c->sched->Stdout().find(mark) == std::string::npos;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(c->sched->Stdout().find(mark), std::string::npos) << c->Logs(dir);
  NetnsProcess* victim = nullptr;
  for (auto& [name, p] : c->procs) {
    if (name == who) victim = p.get();
  }
  ASSERT_NE(victim, nullptr) << who;
  *killed = Clock::now();
  ASSERT_EQ(kill(victim->pid(), SIGKILL), 0) << who;
  ASSERT_EQ(c->sched->Wait(std::chrono::seconds(30)), 3) << c->Logs(dir);
  const std::string err = NetnsProcess::Slurp(dir + "/" + c->prefix + "scheduler.log");
  EXPECT_NE(err.find(died + " died"), std::string::npos) << err;
  EXPECT_NE(err.find("the newest checkpoint is " + ckpt + "/ckpt-0000"), std::string::npos) << err;
  for (auto& [name, p] : c->procs) p->Kill();
}

TEST(NetnsTest, AWorkerAndThenAServerKilledInTheirNamespacesGoOnFromTheNewestCheckpoint) {
  std::unique_ptr<NetnsNetwork> net;
  MakeNetwork(&net);
  if (!net) return;
  TempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  const std::string dir = tmp.path, ckpt = dir + "/ckpt", printed = dir + "/printed";
  Cluster first, second, third;
  first.prefix = "first-";
  second.prefix = "second-";
  third.prefix = "third-";
  // The worker in its own namespace, then the server in the scheduler's.
  Clock::time_point killed;
  KillInNamespace(*net, dir, ckpt, {"--checkpoint-dir", ckpt, "--print-log", printed}, 8,
                  "worker-1", "worker:1", &first, &killed);
  if (HasFatalFailure()) return;
  KillInNamespace(*net, dir, ckpt, {"--resume", ckpt, "--print-log", printed}, 14, "server-0",
                  "server:0", &second, &killed);
  if (HasFatalFailure()) return;
  RunCluster(*net, dir, Program(), {"--resume", ckpt, "--print-log", printed}, &third);
  if (HasFatalFailure()) return;
  for (Cluster* c : {&second, &third}) {
    const std::string log = NetnsProcess::Slurp(dir + "/" + c->prefix + "scheduler.log");
    ASSERT_NE(log.find("driver: resumed from " + ckpt), std::string::npos) << log;
  }
  // From the server's kill to the end of the job started again after it.
  RecordProperty("kill_to_end_s",
                 std::to_string(std::chrono::duration<double>(Clock::now() - killed).count()));

  auto equiv = RunSerial(true);
  ASSERT_TRUE(equiv.ok()) << equiv.status().message();
  const std::string out = first.sched->Stdout() + second.sched->Stdout() + third.sched->Stdout();
  std::vector<double> d = Rmses(out), e = Rmses(equiv->out);
  int lines = 0;
  for (char ch : out) lines += ch == '\n';
  EXPECT_EQ(lines, kEpochs) << out;
  for (int ep = 0; ep < kEpochs; ++ep) {
    ASSERT_FALSE(std::isnan(d[ep])) << "no RMSE for epoch " << ep << " in\n" << out;
    EXPECT_LE(std::abs(d[ep] - e[ep]), 1e-5 * std::abs(e[ep]))
        << "epoch " << ep << ": after recovery " << d[ep] << ", serial in schedule order " << e[ep];
  }
  ExpectTornDown(*net, &third);
  first.procs.clear();
  second.procs.clear();
}

// dense_lr's allreduce parameter across namespaces: the workers' Gloo
// communicator joins through the scheduler's rendezvous store, each worker
// listening on its own namespace's address.
TEST(NetnsTest, DenseLogisticRegressionOverGlooAcrossNamespaces) {
  std::unique_ptr<NetnsNetwork> net;
  MakeNetwork(&net);
  if (!net) return;
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/examples/dense_lr.rgl";
  TempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  const std::string dir = tmp.path;
  Cluster cluster;
  RunCluster(*net, dir, program, {"--log-json", dir + "/log.json"}, &cluster);
  if (HasFatalFailure()) return;
  RecordProperty("distributed_s", std::to_string(cluster.seconds));

  auto prog = frontend::CompileFile(program, {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  std::ostringstream serial_out;
  exec::ExecutorOptions eo;
  eo.out = &serial_out;
  auto ex = exec::SerialExecutor::Create(*prog, eo);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_TRUE((*ex)->Run().ok());
  // "epoch 9 train_loss L test_accuracy A": the last word of each output.
  auto last_number = [](const std::string& text) {
    std::string word, last;
    std::istringstream in(text);
    while (in >> word) last = word;
    return std::strtod(last.c_str(), nullptr);
  };
  const double got = last_number(cluster.sched->Stdout()), want = last_number(serial_out.str());
  EXPECT_GT(want, 0.5);
  EXPECT_LE(std::abs(got - want), 0.01 * want)
      << "final test accuracy: distributed " << got << ", serial " << want;
  RecordProperty("accuracy", std::to_string(got) + " vs " + std::to_string(want));

  std::istringstream log(NetnsProcess::Slurp(dir + "/log.json"));
  int epochs = 0;
  for (std::string line; std::getline(log, line); ++epochs) {
    nlohmann::json e = nlohmann::json::parse(line);
    EXPECT_GT(e["bytes"].value("allreduce.collective", 0.0), 0.0) << line;
    EXPECT_EQ(e["replicas_checked"], 1) << line;
  }
  EXPECT_EQ(epochs, 10);
  ExpectTornDown(*net, &cluster);
}

// Data on many hosts (docs/launching.md): each host reads the data file at
// the program's path on its own file system. `ip netns exec` bind-mounts
// /etc/netns/NS/F over /etc/F in namespace NS, which gives each namespace
// its own copy of /etc/F: identical copies run (each worker holding its
// part), and a copy that differs is refused before its worker loads it.
struct EtcFiles {
  std::vector<std::string> paths;
  std::vector<std::string> dirs;  // made here, removed when empty
  ~EtcFiles() {
    std::error_code ec;
    for (const std::string& p : paths) std::filesystem::remove(p, ec);
    std::sort(dirs.begin(), dirs.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const std::string& d : dirs) std::filesystem::remove(d, ec);  // only if empty
  }
  bool Write(const std::string& path, const std::string& text) {
    std::error_code ec;
    // Each missing folder, removed deepest first.
    for (auto d = std::filesystem::path(path).parent_path(); !std::filesystem::exists(d);
         d = d.parent_path()) {
      dirs.push_back(d.string());
    }
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    paths.push_back(path);
    std::ofstream out(path);
    out << text;
    return static_cast<bool>(out);
  }
};

TEST(NetnsTest, EachHostReadsItsOwnCopyOfTheDataAndOneThatDiffersIsRefused) {
  std::unique_ptr<NetnsNetwork> net;
  MakeNetwork(&net);
  if (!net) return;
  TempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  const std::string dir = tmp.path;
  std::string svm;
  for (int k = 0; k < 20000; ++k) {
    svm += (k % 3 ? "+1" : "-1") + std::string(" ") + std::to_string(k % 7 + 1) + ":1\n";
  }
  const std::string file = "rigel-netns-" + std::to_string(getpid()) + ".svm";
  EtcFiles etc;
  ASSERT_TRUE(etc.Write("/etc/" + file, svm));
  for (int w = 0; w < kWorkers; ++w) {
    ASSERT_TRUE(etc.Write("/etc/netns/" + net->name(w + 1) + "/" + file, svm));
  }
  std::ofstream(dir + "/p.rgl") << "data all = libsvm(\"/etc/" << file << "\")\n"
                                << R"(
data train, test = split(all, 0.25, seed=3)
accum n: f32
for ep in 0..2 {
  n = 0
  parallel for (k, row) in train { for (f, x) in row.features { n += f * x * row.label } }
  print("ep", ep, "n", n, "train", train.count)
}
)";
  {
    Cluster cluster;
    RunCluster(*net, dir, dir + "/p.rgl", {}, &cluster);
    if (HasFatalFailure()) return;
    EXPECT_NE(cluster.sched->Stdout().find("train 15"), std::string::npos)
        << cluster.sched->Stdout();
    const std::string log = NetnsProcess::Slurp(dir + "/worker-1.log");
    EXPECT_NE(log.find(" of 20000 elements"), std::string::npos) << log;
  }
  // Worker 1's host has another copy: one label differs, the size is the same.
  std::string other = svm;
  char& sign = other[other.size() - 7];  // the last line's "+1" or "-1"
  ASSERT_TRUE(sign == '+' || sign == '-') << other.substr(other.size() - 7);
  sign = sign == '+' ? '-' : '+';
  ASSERT_NE(other, svm);
  ASSERT_TRUE(etc.Write("/etc/netns/" + net->name(2) + "/" + file, other));
  Cluster bad;
  bad.prefix = "bad-";
  StartCluster(*net, dir, dir + "/p.rgl", {}, &bad);
  if (HasFatalFailure()) return;
  EXPECT_NE(bad.sched->Wait(std::chrono::seconds(60)), 0) << bad.Logs(dir);
  const std::string log = NetnsProcess::Slurp(dir + "/bad-worker-1.log") +
                          NetnsProcess::Slurp(dir + "/bad-scheduler.log");
  EXPECT_NE(log.find("data set 'all': /etc/" + file + " differs from the scheduler's file"),
            std::string::npos)
      << bad.Logs(dir);
  for (auto& [name, p] : bad.procs) p->Kill();
  ExpectTornDown(*net, &bad);
}

}  // namespace
}  // namespace rigel
