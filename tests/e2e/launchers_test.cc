// Starting a job the ways users' cluster launchers do: `mpirun -n 5
// rigel-node ...`, `rigel run --hostfile` over ssh into two network
// namespaces with sshd (keys made here), and rigel-node ranks started by
// hand; each must print exactly what `rigel run --workers 2 --servers 2`
// prints. And a bad launch (a rank on another program, a missing rank, a
// wrong scheduler address, a member alone) must fail within 5 s of the
// registration deadline, naming the cause, with no process left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/config.h"
#include "tests/e2e/launch_util.h"
#include "tests/e2e/netns_util.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

// The scheme the ranks' addresses have: ucx:// when $RIGEL_TRANSPORT says
// ucx (these tests then run the job on UCX), else tcp:// (ZeroMQ).
std::string Scheme() {
  const char* t = std::getenv("RIGEL_TRANSPORT");
  return t != nullptr && std::string(t) == "ucx" ? "ucx://" : "tcp://";
}

using std::chrono::seconds;
using testing::Child;
using testing::FreePort;
using testing::ProcessesWith;

std::string Bin(const std::string& name) { return std::string(RIGEL_BIN_DIR) + "/" + name; }
std::string Mf() { return std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl"; }

struct TempDir {
  std::string path = testing::MakeTempDir("rigel-launchers");
  ~TempDir() {
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(path);
  }
};

// What `rigel run examples/mf.rgl --workers 2 --servers 2` prints: the
// reference every launch must reproduce.
const std::string& LocalClusterOutput() {
  static const std::string out = [] {
    TempDir tmp;
    Child c({Bin("rigel"), "run", Mf(), "--workers", "2", "--servers", "2", "--run-dir",
             tmp.path + "/run"},
            tmp.path + "/out", tmp.path + "/err");
    EXPECT_EQ(c.Wait(std::chrono::seconds(120)), 0) << c.Stderr();
    return c.Stdout();
  }();
  return out;
}

TEST(Launchers, MpirunStartsTheJobThatRigelRunStarts) {
  const std::string mpirun = testing::FindBinary("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "no mpirun (openmpi-bin, installed by scripts/setup.sh)";
  ASSERT_FALSE(LocalClusterOutput().empty());
  TempDir tmp;
  std::vector<std::string> argv = {mpirun, "--oversubscribe", "-n", "5"};
  if (geteuid() == 0) argv.insert(argv.begin() + 1, "--allow-run-as-root");
  argv.insert(argv.end(), {Bin("rigel-node"), Mf(), "--servers", "2"});
  Child c(argv, tmp.path + "/out", tmp.path + "/err");
  ASSERT_EQ(c.Wait(seconds(120)), 0) << c.Stderr();
  EXPECT_EQ(c.Stdout(), LocalClusterOutput()) << c.Stderr();
  // Every rank said what it became.
  const std::string err = c.Stderr();
  EXPECT_NE(err.find("rank 0 of 5 (OpenMPI) is scheduler 0"), std::string::npos) << err;
  EXPECT_NE(err.find("rank 4 of 5 (OpenMPI) is worker 1"), std::string::npos) << err;
}

// dense_lr's allreduce parameter summed by Rigel's MPI backend: with two
// workers a sum has one rounding whichever rank adds, so the prints equal
// the Gloo run's exactly.
TEST(Launchers, MpiCollectivesUnderMpirunMatchGloo) {
  const std::string mpirun = testing::FindBinary("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "no mpirun (openmpi-bin, installed by scripts/setup.sh)";
  TempDir tmp;
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/examples/dense_lr.rgl";
  Child gloo({Bin("rigel"), "run", program, "--workers", "2", "--servers", "2", "--run-dir",
              tmp.path + "/run"},
             tmp.path + "/gloo.out", tmp.path + "/gloo.err");
  ASSERT_EQ(gloo.Wait(seconds(120)), 0) << gloo.Stderr();
  std::vector<std::string> argv = {mpirun, "--oversubscribe", "-n", "5"};
  if (geteuid() == 0) argv.insert(argv.begin() + 1, "--allow-run-as-root");
  argv.insert(argv.end(), {Bin("rigel-node"), program, "--servers", "2", "--collectives", "mpi"});
  // OpenMPI leaks in MPI_Init and MPI_Finalize from plugins it has unloaded
  // by exit, which LeakSanitizer can neither attribute nor suppress: the
  // sanitizer build checks these processes for everything but leaks.
  std::map<std::string, std::string> env;
  if (RIGEL_SANITIZE) {
    const char* asan = getenv("ASAN_OPTIONS");
    env["ASAN_OPTIONS"] = std::string(asan ? asan : "") + (asan ? ":" : "") + "detect_leaks=0";
  }
  Child mpi(argv, tmp.path + "/mpi.out", tmp.path + "/mpi.err", env);
  ASSERT_EQ(mpi.Wait(seconds(120)), 0) << mpi.Stderr();
  EXPECT_EQ(mpi.Stdout(), gloo.Stdout()) << mpi.Stderr();
  for (int w = 0; w < 2; ++w) {
    EXPECT_NE(mpi.Stderr().find("worker " + std::to_string(w) +
                                ": allreduce parameters summed over mpi (2 workers)"),
              std::string::npos)
        << mpi.Stderr();
  }
  // Outside mpirun the backend is refused before anything starts.
  Child alone({Bin("rigel"), "run", program, "--workers", "2", "--collectives", "mpi", "--run-dir",
               tmp.path + "/run2"},
              tmp.path + "/alone.out", tmp.path + "/alone.err");
  EXPECT_NE(alone.Wait(seconds(60)), 0);
  EXPECT_NE(alone.Stderr().find("needs every process of the job started by mpirun"),
            std::string::npos)
      << alone.Stderr();
}

TEST(Launchers, RanksStartedByHandRunTheSameJob) {
  TempDir tmp;
  const int port = FreePort();
  std::vector<std::unique_ptr<Child>> ranks;
  for (int r = 0; r < 5; ++r) {
    const std::string tag = tmp.path + "/rank" + std::to_string(r);
    ranks.push_back(std::make_unique<Child>(
        std::vector<std::string>{Bin("rigel-node"), Mf(), "--servers", "2", "--rank",
                                 std::to_string(r), "--size", "5", "--scheduler",
                                 "127.0.0.1:" + std::to_string(port)},
        tag + ".out", tag + ".err"));
  }
  ASSERT_EQ(ranks[0]->Wait(seconds(120)), 0) << ranks[0]->Stderr();
  EXPECT_EQ(ranks[0]->Stdout(), LocalClusterOutput());
  for (int r = 1; r < 5; ++r) EXPECT_EQ(ranks[r]->Wait(seconds(15)), 0) << ranks[r]->Stderr();
}

// rigel-node ranks on this host, started with Rank()'s flags or others.
struct BadLaunch {
  TempDir tmp;
  int port = FreePort();
  std::vector<std::unique_ptr<Child>> ranks;

  // Starts rank r with `args_of(r)`; none when that is empty. ranks[0] is
  // always rank 0.
  void Start(int count, const std::function<std::vector<std::string>(int)>& args_of) {
    for (int r = 0; r < count; ++r) {
      std::vector<std::string> args = args_of(r);
      if (args.empty()) continue;  // a rank the launcher never started
      std::vector<std::string> argv = {Bin("rigel-node")};
      for (const std::string& a : args) argv.push_back(a);
      const std::string tag = tmp.path + "/rank" + std::to_string(r);
      ranks.push_back(std::make_unique<Child>(argv, tag + ".out", tag + ".err"));
    }
  }
  // Rank r of 5 (2 servers) on `program`, told the scheduler is at
  // 127.0.0.1:scheduler_port, with a registration deadline of deadline_s.
  std::vector<std::string> Rank(int r, const std::string& program, int scheduler_port,
                                double deadline_s) const {
    return {program,
            "--servers",
            "2",
            "--rank",
            std::to_string(r),
            "--size",
            "5",
            "--scheduler",
            "127.0.0.1:" + std::to_string(scheduler_port),
            "--register-timeout-s",
            std::to_string(deadline_s)};
  }
  // Every rank has exited; nothing with this job's port runs.
  void ExpectAllGone() {
    for (auto& r : ranks) EXPECT_NE(r->Wait(seconds(10)), -1) << r->Stderr();
    EXPECT_EQ(ProcessesWith("127.0.0.1:" + std::to_string(port)), "");
  }
};

TEST(Launchers, ARankStartedOnAnotherProgramIsRefusedAtOnce) {
  BadLaunch job;
  const std::string other = std::string(RIGEL_SOURCE_DIR) + "/examples/dense_lr.rgl";
  job.Start(5, [&](int r) { return job.Rank(r, r == 4 ? other : Mf(), job.port, 5); });
  ASSERT_EQ(job.ranks[0]->Wait(seconds(15)), 1) << job.ranks[0]->Stderr();
  EXPECT_LT(job.ranks[0]->seconds(), 5 + 5.0);
  const std::string err = job.ranks[0]->Stderr();
  // Both programs and both job keys are named.
  EXPECT_NE(err.find("worker:1 at " + Scheme() + "127.0.0.1:"), std::string::npos) << err;
  EXPECT_NE(err.find("was started on another job: " + other + " (xxh64:"), std::string::npos)
      << err;
  EXPECT_NE(err.find("the scheduler runs " + Mf()), std::string::npos) << err;
  EXPECT_NE(job.ranks[4]->Wait(seconds(10)), 0);
  EXPECT_NE(job.ranks[4]->Stderr().find("refused this process"), std::string::npos)
      << job.ranks[4]->Stderr();
  job.ExpectAllGone();
}

TEST(Launchers, AMissingRankFailsTheJobAtTheDeadlineNamingIt) {
  BadLaunch job;
  const double deadline = 3;
  // Rank 3 (worker 0) is never started.
  job.Start(5, [&](int r) {
    return r == 3 ? std::vector<std::string>{} : job.Rank(r, Mf(), job.port, deadline);
  });
  ASSERT_EQ(job.ranks[0]->Wait(seconds(20)), 1) << job.ranks[0]->Stderr();
  EXPECT_GE(job.ranks[0]->seconds(), deadline);
  EXPECT_LT(job.ranks[0]->seconds(), deadline + 5);
  const std::string err = job.ranks[0]->Stderr();
  EXPECT_NE(err.find("registration deadline passed: 3 of 4 member(s) registered within 3 s"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("missing worker:0;"), std::string::npos) << err;
  job.ExpectAllGone();
}

TEST(Launchers, AWrongSchedulerAddressFailsEveryRankAtTheDeadline) {
  BadLaunch job;
  const double deadline = 3;
  const int wrong = FreePort();
  job.Start(5, [&](int r) { return job.Rank(r, Mf(), r == 0 ? job.port : wrong, deadline); });
  for (int r = 0; r < 5; ++r) {
    ASSERT_EQ(job.ranks[r]->Wait(seconds(20)), 1) << r << ": " << job.ranks[r]->Stderr();
    EXPECT_LT(job.ranks[r]->seconds(), deadline + 5) << r;
  }
  EXPECT_NE(job.ranks[0]->Stderr().find(
                "missing server:0, server:1, worker:0, worker:1. Check that every process was "
                "started, with --scheduler " +
                Scheme() + "127.0.0.1:" + std::to_string(job.port)),
            std::string::npos)
      << job.ranks[0]->Stderr();
  const std::string member = job.ranks[3]->Stderr();
  EXPECT_NE(member.find("could not reach the scheduler at " + Scheme() +
                        "127.0.0.1:" + std::to_string(wrong) + " within 3 s"),
            std::string::npos)
      << member;
  job.ExpectAllGone();
}

// Every process of a job speaks the scheduler's transport: a member told to
// use the other one is refused at once, by name, before it tries to connect.
TEST(Launchers, AMemberToldToSpeakAnotherTransportThanTheSchedulersIsRefusedByName) {
  TempDir tmp;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : {Case{{"--scheduler", "ucx://127.0.0.1:1", "--transport", "zmq"},
                             "--transport zmq: the scheduler at ucx://127.0.0.1:1 speaks ucx"},
                        Case{{"--scheduler", "tcp://127.0.0.1:1", "--listen", "ucx://127.0.0.1:*"},
                             "--listen ucx://127.0.0.1:* is a ucx address, but the scheduler at "
                             "tcp://127.0.0.1:1 speaks zmq"},
                        Case{{"--scheduler", "tcp://127.0.0.1:1", "--transport", "rdma"},
                             "--transport 'rdma': expected zmq or ucx"}}) {
    std::vector<std::string> argv = {Bin("rigel-worker"), "--rank", "0"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Child w(argv, tmp.path + "/out", tmp.path + "/err");
    EXPECT_EQ(w.Wait(seconds(10)), 2) << w.Stderr();
    EXPECT_LT(w.seconds(), 5);
    EXPECT_NE(w.Stderr().find(c.says), std::string::npos) << w.Stderr();
  }
}

TEST(Launchers, AMemberAloneGivesUpAfterTheDefaultDeadline) {
  TempDir tmp;
  Child w({Bin("rigel-worker"), "--scheduler", "tcp://127.0.0.1:1", "--rank", "0"},
          tmp.path + "/out", tmp.path + "/err");
  ASSERT_EQ(w.Wait(seconds(60)), 1) << w.Stderr();
  EXPECT_GE(w.seconds(), 30);
  EXPECT_LT(w.seconds(), 35);
  EXPECT_NE(w.Stderr().find("could not reach the scheduler at tcp://127.0.0.1:1 within 30 s"),
            std::string::npos)
      << w.Stderr();
}

// --- srun on a single-node Slurm made here --------------------------------

// munged, slurmctld and slurmd in the foreground, configured under `dir`
// with free ports and this test's munge key; nothing under /etc is touched.
// Started() is false (with the reason) when a daemon cannot start here.
struct SingleNodeSlurm {
  std::string dir, conf, why;
  std::vector<std::unique_ptr<Child>> daemons;

  bool Start(const std::string& d) {
    dir = d;
    for (const char* b : {"munged", "slurmctld", "slurmd", "srun", "sinfo"}) {
      if (testing::FindBinary(b).empty()) {
        why = std::string("no ") + b + " (slurm-wlm and munge, installed by scripts/setup.sh)";
        return false;
      }
    }
    if (geteuid() != 0) {
      why = "the test runs slurmd and munged as root";
      return false;
    }
    for (const char* sub : {"spool", "state"}) std::filesystem::create_directories(dir + "/" + sub);
    {
      std::ofstream key(dir + "/munge.key", std::ios::binary);
      for (int i = 0; i < 1024; ++i) key.put(static_cast<char>((i * 2654435761u) >> 13));
    }
    std::filesystem::permissions(dir + "/munge.key", std::filesystem::perms::owner_read);
    conf = dir + "/slurm.conf";
    std::ofstream(conf) << "ClusterName=rigeltest\nSlurmctldHost=localhost(127.0.0.1)\n"
                        << "SlurmctldPort=" << FreePort() << "\nSlurmdPort=" << FreePort()
                        << "\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << dir
                        << "/munge.sock\nSlurmUser=root\nSlurmdUser=root\nStateSaveLocation=" << dir
                        << "/state\nSlurmdSpoolDir=" << dir << "/spool\nSlurmctldPidFile=" << dir
                        << "/slurmctld.pid\nSlurmdPidFile=" << dir << "/slurmd.pid\n"
                        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                           "JobAcctGatherType=jobacct_gather/none\n"
                           "AccountingStorageType=accounting_storage/none\n"
                           "SchedulerType=sched/builtin\nSelectType=select/linear\n"
                           "MpiDefault=none\nReturnToService=2\n"
                           // Declared CPUs, not the machine's: srun -n 5 on 2 cores.
                           "SlurmdParameters=config_overrides\n"
                           "NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN\n"
                           "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE "
                           "State=UP OverSubscribe=YES\n";
    auto start = [&](const std::string& name, std::vector<std::string> argv) {
      daemons.push_back(std::make_unique<Child>(argv, dir + "/" + name + ".out",
                                                dir + "/" + name + ".log", Env()));
    };
    start("munged", {testing::FindBinary("munged"), "-F", "-f", "--key-file=" + dir + "/munge.key",
                     "--socket=" + dir + "/munge.sock", "--pid-file=" + dir + "/munged.pid",
                     "--log-file=" + dir + "/munged.file.log", "--seed-file=" + dir + "/seed"});
    for (int i = 0; i < 100 && !std::filesystem::exists(dir + "/munge.sock"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    start("slurmctld", {testing::FindBinary("slurmctld"), "-D", "-c"});
    start("slurmd", {testing::FindBinary("slurmd"), "-D", "-N", "localhost"});
    // Ready when the node is idle.
    for (int i = 0; i < 200; ++i) {
      std::string out;
      Child sinfo({testing::FindBinary("sinfo"), "-h", "-o", "%T"}, dir + "/sinfo.out",
                  dir + "/sinfo.err", Env());
      sinfo.Wait(seconds(10));
      if (sinfo.Stdout().rfind("idle", 0) == 0) return true;
      for (auto& d : daemons) {
        if (d->Wait(std::chrono::milliseconds(0)) != -1) {
          why = "a Slurm daemon exited: " + d->Stderr().substr(0, 2000);
          return false;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why = "the node never became idle: " + testing::Slurp(dir + "/sinfo.out") +
          testing::Slurp(dir + "/slurmd.log").substr(0, 2000);
    return false;
  }
  std::map<std::string, std::string> Env() const { return {{"SLURM_CONF", conf}}; }
  ~SingleNodeSlurm() {
    // slurmd before the controller, munged last.
    while (!daemons.empty()) {
      daemons.back()->Signal(SIGTERM);
      if (daemons.back()->Wait(seconds(5)) == -1) daemons.back()->Kill();
      daemons.pop_back();
    }
  }
};

TEST(Launchers, SrunStartsTheJobThatRigelRunStarts) {
  ASSERT_FALSE(LocalClusterOutput().empty());
  TempDir tmp;
  SingleNodeSlurm slurm;
  if (!slurm.Start(tmp.path)) GTEST_SKIP() << "no Slurm here: " << slurm.why;
  Child job({testing::FindBinary("srun"), "-n", "5", Bin("rigel-node"), Mf(), "--servers", "2"},
            tmp.path + "/job.out", tmp.path + "/job.err", slurm.Env());
  ASSERT_EQ(job.Wait(seconds(120)), 0) << job.Stderr();
  EXPECT_EQ(job.Stdout(), LocalClusterOutput()) << job.Stderr();
  EXPECT_NE(job.Stderr().find("rank 0 of 5 (Slurm) is scheduler 0"), std::string::npos)
      << job.Stderr();
}

// --- over ssh, into two network namespaces running sshd ------------------

// Runs `argv` and returns its output; fails the test on a non-zero exit.
std::string MustRun(const std::vector<std::string>& argv) {
  std::string out;
  int rc = testing::RunCommand(argv, &out);
  EXPECT_EQ(rc, 0) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << ": " << out;
  return out;
}

TEST(Launchers, HostfileOverSshSpreadsTheJobOverTwoHosts) {
  const std::string sshd = testing::FindBinary("sshd"), ssh = testing::FindBinary("ssh"),
                    keygen = testing::FindBinary("ssh-keygen");
  if (sshd.empty() || ssh.empty() || keygen.empty()) {
    GTEST_SKIP() << "no sshd/ssh/ssh-keygen (openssh-server and openssh-client, installed by "
                    "scripts/setup.sh)";
  }
  ASSERT_FALSE(LocalClusterOutput().empty());
  const pid_t pid = getpid();
  testing::NetnsNetwork::DeleteOrphans("rigel-ssh");
  auto net_or = testing::NetnsNetwork::Create("rigel-ssh" + std::to_string(pid), 2, pid % 250 + 1);
  if (!net_or.ok() && (net_or.status().code() == StatusCode::kFailedPrecondition ||
                       net_or.status().code() == StatusCode::kUnavailable)) {
    GTEST_SKIP() << "no network namespaces here: " << net_or.status().message();
  }
  ASSERT_TRUE(net_or.ok()) << net_or.status().message();
  testing::NetnsNetwork& net = **net_or;
  TempDir tmp;
  const std::string dir = tmp.path;

  // Keys: the client's, each host's, and the cluster's CURVE key.
  MustRun({keygen, "-q", "-t", "ed25519", "-N", "", "-f", dir + "/id"});
  MustRun({keygen, "-q", "-t", "ed25519", "-N", "", "-f", dir + "/host_key"});
  std::filesystem::copy_file(dir + "/id.pub", dir + "/authorized_keys");
  MustRun({Bin("rigel"), "keygen", "-o", dir + "/cluster.key"});
  // sshd refuses to start without its privilege separation directory.
  std::filesystem::create_directories("/run/sshd");
  std::vector<std::unique_ptr<testing::NetnsProcess>> daemons;
  for (int h = 0; h < 2; ++h) {
    const std::string cfg = dir + "/sshd" + std::to_string(h) + ".conf";
    std::ofstream(cfg) << "ListenAddress " << net.address(h) << "\nPort 22\nHostKey " << dir
                       << "/host_key\nAuthorizedKeysFile " << dir
                       << "/authorized_keys\nPermitRootLogin prohibit-password\n"
                          "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                          "UsePAM no\nStrictModes no\nPidFile "
                       << dir << "/sshd" << h << ".pid\n";
    daemons.push_back(std::make_unique<testing::NetnsProcess>(
        net.ip_binary(), net.name(h), std::vector<std::string>{sshd, "-D", "-e", "-f", cfg},
        dir + "/sshd" + std::to_string(h) + ".out", dir + "/sshd" + std::to_string(h) + ".log"));
  }
  const std::string ssh_cmd = ssh + " -i " + dir +
                              "/id -o BatchMode=yes -o StrictHostKeyChecking=no "
                              "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR";
  // Both daemons answer before the job starts.
  for (int h = 0; h < 2; ++h) {
    std::string out;
    int rc = -1;
    for (int tries = 0; tries < 50 && rc != 0; ++tries) {
      std::vector<std::string> argv = {net.ip_binary(), "netns", "exec", net.name(0)};
      std::stringstream words(ssh_cmd);
      for (std::string w; words >> w;) argv.push_back(w);
      argv.insert(argv.end(), {net.address(h), "true"});
      rc = testing::RunCommand(argv, &out);
      if (rc != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(rc, 0) << "sshd on " << net.address(h) << ": " << out
                     << testing::Slurp(dir + "/sshd" + std::to_string(h) + ".log");
  }

  std::ofstream(dir + "/hosts") << "# the scheduler and both servers on the first host\n"
                                << net.address(0) << " slots=3\n"
                                << net.address(1) << ":2\n";
  // `rigel run` runs on the first host, as a user logged in there would.
  Child job({net.ip_binary(), "netns", "exec", net.name(0), Bin("rigel"), "run", Mf(), "--hostfile",
             dir + "/hosts", "--workers", "2", "--servers", "2", "--key-file", dir + "/cluster.key",
             "--run-dir", dir + "/run"},
            dir + "/job.out", dir + "/job.err", {{"RIGEL_SSH", ssh_cmd}});
  ASSERT_EQ(job.Wait(seconds(180)), 0) << job.Stderr() << testing::Slurp(dir + "/run/rank-0.log");
  EXPECT_EQ(job.Stdout(), LocalClusterOutput()) << job.Stderr();
  // The workers ran on the second host and listened on its address.
  for (int r : {3, 4}) {
    const std::string log = testing::Slurp(dir + "/run/rank-" + std::to_string(r) + ".log");
    EXPECT_NE(log.find("listening on " + Scheme() + net.address(1) + ":*"), std::string::npos)
        << log;
  }
  // Nothing but the daemons is left in either namespace: no rank, no
  // remote shell or watcher.
  auto leftovers = [&] {
    std::string left;
    for (int h = 0; h < 2; ++h) {
      std::string pids;
      testing::RunCommand({net.ip_binary(), "netns", "pids", net.name(h)}, &pids);
      std::stringstream ss(pids);
      for (std::string p; ss >> p;) {
        std::string comm = testing::Slurp("/proc/" + p + "/comm");
        if (comm != "sshd\n" && !comm.empty()) left += net.name(h) + ": " + p + " " + comm;
      }
    }
    return left;
  };
  EXPECT_EQ(leftovers(), "");

  // Ctrl-C on a long job stops every rank on both hosts.
  Child endless({net.ip_binary(), "netns", "exec", net.name(0), Bin("rigel"), "run", Mf(), "--set",
                 "EPOCHS=100000", "--hostfile", dir + "/hosts", "--workers", "2", "--servers", "2",
                 "--key-file", dir + "/cluster.key", "--run-dir", dir + "/run2"},
                dir + "/endless.out", dir + "/endless.err", {{"RIGEL_SSH", ssh_cmd}});
  for (int i = 0;
       i < 600 && testing::Slurp(dir + "/endless.out").find("epoch 3 ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(testing::Slurp(dir + "/endless.out").find("epoch 3 "), std::string::npos)
      << endless.Stderr();
  endless.Signal(SIGINT);
  EXPECT_EQ(endless.Wait(seconds(20)), 130) << endless.Stderr();
  std::string left = leftovers();
  for (int i = 0; i < 100 && !left.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = leftovers();
  }
  EXPECT_EQ(left, "") << "5 s after the interrupt";

  // A worker rank on the second host killed with SIGKILL in the middle of
  // the job: rigel-ssh starts every rank again from the newest checkpoint
  // and the job prints what the uninterrupted one does, each line once.
  const std::string ckpt = dir + "/ckpt";
  Child local({Bin("rigel"), "run", Mf(), "--set", "EPOCHS=150", "--workers", "2", "--servers", "2",
               "--run-dir", dir + "/local150"},
              dir + "/local150.out", dir + "/local150.err");
  ASSERT_EQ(local.Wait(seconds(120)), 0) << local.Stderr();
  Child recovered({net.ip_binary(),
                   "netns",
                   "exec",
                   net.name(0),
                   Bin("rigel"),
                   "run",
                   Mf(),
                   "--set",
                   "EPOCHS=150",
                   "--hostfile",
                   dir + "/hosts",
                   "--workers",
                   "2",
                   "--servers",
                   "2",
                   "--key-file",
                   dir + "/cluster.key",
                   "--run-dir",
                   dir + "/run3",
                   "--checkpoint-dir",
                   ckpt},
                  dir + "/recovered.out", dir + "/recovered.err", {{"RIGEL_SSH", ssh_cmd}});
  auto worker_on_second_host = [&]() -> pid_t {
    std::string pids;
    testing::RunCommand({net.ip_binary(), "netns", "pids", net.name(1)}, &pids);
    std::stringstream ss(pids);
    for (std::string p; ss >> p;) {
      if (testing::Slurp("/proc/" + p + "/comm") == "rigel-worker\n") return std::stoi(p);
    }
    return 0;
  };
  for (int i = 0;
       i < 24000 && (testing::Slurp(dir + "/recovered.out").find("epoch 8 ") == std::string::npos ||
                     worker_on_second_host() == 0);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Killed after checkpoints exist (within 120 s: sanitizer builds start slowly).
  ASSERT_NE(testing::Slurp(dir + "/recovered.out").find("epoch 8 "), std::string::npos)
      << recovered.Stderr();
  const pid_t victim = worker_on_second_host();
  ASSERT_GT(victim, 0) << recovered.Stderr();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  ASSERT_EQ(recovered.Wait(seconds(180)), 0) << recovered.Stderr();
  EXPECT_EQ(recovered.Stdout(), local.Stdout()) << recovered.Stderr();
  // Not necessarily restart 1: a heartbeat late under the sanitizers can
  // cost one more (with the same result).
  EXPECT_NE(recovered.Stderr().find(" of 3 from " + ckpt + "/ckpt-0000"), std::string::npos)
      << recovered.Stderr();
  left = leftovers();
  for (int i = 0; i < 100 && !left.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = leftovers();
  }
  EXPECT_EQ(left, "") << "5 s after the recovered job ended";
  daemons.clear();
}

}  // namespace
}  // namespace rigel
