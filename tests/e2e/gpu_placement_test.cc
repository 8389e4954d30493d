// Placing --device cuda workers on CUDA devices (collectives/devices.h):
// NCCL needs a device of its own for each worker, so `rigel run` refuses a
// local job with more workers than the host has devices, and scripts/rigel-ssh
// a host of the host file with more workers than it has devices, before any
// process starts, naming the host, the workers and the devices.
//
// CudaPlacementLaunch.* pretend a device count with RIGEL_FAKE_CUDA_DEVICES
// and need no GPU (in a build without CUDA, `rigel run` must say so first,
// still before anything starts); the rigel-ssh ones use a fake ssh that runs
// the remote command here and logs it. GpuPlacement.* use the real devices
// and skip, saying why, where there are none.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectives/devices.h"
#include "common/config.h"
#include "tests/e2e/launch_util.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

using collectives::kFakeCudaDevicesEnv;
using testing::Bin;
using testing::Child;
using testing::Example;
using Env = std::map<std::string, std::string>;

constexpr auto kTimeout = std::chrono::seconds(120);

// What a build without CUDA says before anything starts, whatever the count.
const char kNoCuda[] = "rigel run: --device cuda: this build of Rigel has no NCCL";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `rigel run examples/dense_lr.rgl --device cuda` with `flags`, its run
// directory DIR/run (which the launchers make before they start anything).
struct Outcome {
  int rc = -1;
  std::string err;
};
Outcome RunDenseOnCuda(const std::string& dir, const std::vector<std::string>& flags,
                       const Env& env) {
  std::vector<std::string> argv = {
      Bin("rigel"), "run", Example("dense_lr.rgl"), "--device", "cuda", "--run-dir", dir + "/run"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Child c(argv, dir + "/out", dir + "/err", env);
  Outcome r;
  r.rc = c.Wait(kTimeout);
  r.err = c.Stderr();
  return r;
}

TEST(CudaPlacementLaunch, MoreLocalWorkersThanDevicesIsRefusedBeforeAnyProcessStarts) {
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Outcome r = RunDenseOnCuda(dir.path, {"--workers", "2"}, {{kFakeCudaDevicesEnv, "1"}});
  if (!RIGEL_HAVE_CUDA) {
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(Count(r.err, kNoCuda), 1u) << r.err;
  } else {
    EXPECT_EQ(r.rc, 2) << r.err;
    // Said once, by `rigel run`, not by every process of the job.
    EXPECT_EQ(Count(r.err,
                    "rigel run: --device cuda puts 2 workers on localhost, which has 1 CUDA "
                    "device (RIGEL_FAKE_CUDA_DEVICES=1), and NCCL needs a device of its own for "
                    "each worker: use --workers 1 or --device cpu\n"),
              1u)
        << r.err;
    EXPECT_EQ(r.err.find("Duplicate GPU"), std::string::npos) << r.err;
  }
  // rigel-launch makes the run directory before it starts the scheduler.
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run")) << "the launcher ran:\n" << r.err;
}

TEST(CudaPlacementLaunch, NoDeviceAtAllIsRefusedSayingWhy) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA: the placement is never reached";
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Outcome r = RunDenseOnCuda(dir.path, {"--workers", "1"}, {{kFakeCudaDevicesEnv, "0"}});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("rigel run: --device cuda puts 1 worker on localhost, which has no usable "
                       "CUDA device (RIGEL_FAKE_CUDA_DEVICES=0): use --device cpu\n"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run"));
}

TEST(CudaPlacementLaunch, ABadFakeCountIsRefusedNamingTheVariable) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA: the hook is not read";
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Outcome r = RunDenseOnCuda(dir.path, {"--workers", "1"}, {{kFakeCudaDevicesEnv, "two"}});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("rigel run: --device cuda: RIGEL_FAKE_CUDA_DEVICES=two: expected a whole "
                       "number of CUDA devices from 0 to 1024"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run"));
}

// With as many devices as workers the check passes and the launcher starts
// the job (which then runs, or fails later in NCCL where the devices were
// pretended): the placement is not refused.
TEST(CudaPlacementLaunch, WorkersThatFitTheDevicesAreStarted) {
  if (!RIGEL_HAVE_CUDA)
    GTEST_SKIP() << "this build has no CUDA: every --device cuda job is refused";
  testing::ScopedTempDir dir("rigel-gpu-placement");
  std::vector<std::string> argv = {Bin("rigel"), "run",       Example("dense_lr.rgl"),
                                   "--device",   "cuda",      "--workers",
                                   "2",          "--run-dir", dir.path + "/run"};
  Child c(argv, dir.path + "/out", dir.path + "/err", {{kFakeCudaDevicesEnv, "2"}});
  const std::string started = dir.path + "/run/scheduler.log";
  EXPECT_TRUE(testing::WaitFor(
      [&] { return std::filesystem::exists(started) || c.Wait(std::chrono::milliseconds(0)) >= 0; },
      std::chrono::seconds(60)));
  // Anything the job does after it started is beside the point here.
  c.Kill();
  const std::string err = c.Stderr();
  EXPECT_TRUE(std::filesystem::exists(started)) << err;
  EXPECT_EQ(err.find("--device cuda puts"), std::string::npos) << err;
}

// --- through scripts/rigel-ssh, with a fake ssh --------------------------

// A fake ssh: logs "HOST COMMAND" to DIR/ssh.log and runs COMMAND here, or
// fails as an unreachable host does for "deadhost". Returns its path.
std::string WriteFakeSsh(const std::string& dir) {
  const std::string path = dir + "/fake-ssh";
  std::ofstream(path)
      << "#!/usr/bin/env bash\n"
      << "echo \"$1 $2\" >>" << dir << "/ssh.log\n"
      << "if [[ $1 == deadhost ]]; then\n"
      << "  echo \"ssh: connect to host deadhost port 22: Connection refused\" >&2\n"
      << "  exit 255\n"
      << "fi\n"
      << "exec bash -c \"$2\"\n";
  chmod(path.c_str(), 0755);
  return path;
}

// `rigel run --hostfile` of dense_lr with 1 server and 2 workers on `hosts`
// (host file lines); the ranks fill the slots in order: the scheduler, the
// server, then the workers.
Outcome RunOverSsh(const std::string& dir, const std::string& hosts,
                   const std::string& fake_devices) {
  std::ofstream(dir + "/hosts") << hosts;
  return RunDenseOnCuda(
      dir, {"--workers", "2", "--servers", "1", "--hostfile", dir + "/hosts", "--insecure-plain"},
      {{"RIGEL_SSH", WriteFakeSsh(dir)}, {kFakeCudaDevicesEnv, fake_devices}});
}

TEST(CudaPlacementLaunch, AHostWithMoreWorkersThanDevicesIsRefusedBeforeAnyRankStarts) {
  testing::ScopedTempDir dir("rigel-gpu-placement");
  // hostA: the scheduler and the server; hostB: both workers.
  Outcome r = RunOverSsh(dir.path, "hostA slots=2\nhostB slots=2\n", "1");
  const std::string ssh_log = testing::Slurp(dir.path + "/ssh.log");
  if (!RIGEL_HAVE_CUDA) {
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(Count(r.err, kNoCuda), 1u) << r.err;
    EXPECT_EQ(ssh_log, "");
  } else {
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(Count(r.err,
                    "rigel-ssh: --device cuda puts 2 workers on hostB, which has 1 CUDA device "
                    "(RIGEL_FAKE_CUDA_DEVICES=1), and NCCL needs a device of its own for each "
                    "worker: give it at most 1 worker (ranks fill the host file's slots in "
                    "order: the scheduler, the servers, then the workers) or use --device cpu\n"),
              1u)
        << r.err;
    // Only the host with workers was asked (`rigel devices` from rigel's
    // own folder, which may be RIGEL_BIN_DIR through a link), and no rank
    // was started.
    EXPECT_TRUE(ssh_log.starts_with("hostB /") && ssh_log.ends_with("/rigel devices\n") &&
                Count(ssh_log, "\n") == 1)
        << ssh_log;
  }
  EXPECT_EQ(ssh_log.find("rigel-node"), std::string::npos) << ssh_log;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run")) << r.err;
}

TEST(CudaPlacementLaunch, AHostThatCannotBeAskedIsNamed) {
  if (!RIGEL_HAVE_CUDA) GTEST_SKIP() << "this build has no CUDA: rigel run refuses first";
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Outcome r = RunOverSsh(dir.path, "hostA slots=3\ndeadhost slots=1\n", "4");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("rigel-ssh: cannot count the CUDA devices of deadhost for --device cuda: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("exited with status 255: ssh: connect to host deadhost port 22: "
                       "Connection refused\n"),
            std::string::npos)
      << r.err;
  const std::string ssh_log = testing::Slurp(dir.path + "/ssh.log");
  EXPECT_EQ(ssh_log.find("rigel-node"), std::string::npos) << ssh_log;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run")) << r.err;
}

// --- on the real devices ---------------------------------------------------

// With D devices here, D + 1 local workers are refused naming D devices.
TEST(GpuPlacement, OneLocalWorkerMoreThanTheDevicesIsRefused) {
  unsetenv(kFakeCudaDevicesEnv);
  auto devices = collectives::CountCudaDevices();
  if (!devices.ok()) GTEST_SKIP() << "no CUDA: " << devices.status().message();
  if (devices->count == 0) GTEST_SKIP() << "no CUDA device here: " << devices->note;
  const int d = devices->count;
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Outcome r = RunDenseOnCuda(dir.path, {"--workers", std::to_string(d + 1)}, {});
  EXPECT_EQ(r.rc, 2) << r.err;
  const std::string want = "rigel run: --device cuda puts " + std::to_string(d + 1) +
                           " workers on localhost, which has " + std::to_string(d) +
                           " CUDA device" + (d == 1 ? "" : "s") +
                           ", and NCCL needs a device of its own for each worker: use --workers " +
                           std::to_string(d) + " or --device cpu\n";
  EXPECT_EQ(Count(r.err, want), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path + "/run")) << r.err;
}

// `rigel devices` says the count the placement uses.
TEST(GpuPlacement, RigelDevicesPrintsTheRealCount) {
  unsetenv(kFakeCudaDevicesEnv);
  auto devices = collectives::CountCudaDevices();
  if (!devices.ok()) GTEST_SKIP() << "no CUDA: " << devices.status().message();
  if (devices->count == 0) GTEST_SKIP() << "no CUDA device here: " << devices->note;
  testing::ScopedTempDir dir("rigel-gpu-placement");
  Child c({Bin("rigel"), "devices"}, dir.path + "/out", dir.path + "/err");
  EXPECT_EQ(c.Wait(std::chrono::seconds(60)), 0) << c.Stderr();
  const int d = devices->count;
  EXPECT_EQ(c.Stdout(), std::to_string(d) + " CUDA device" + (d == 1 ? "" : "s") + "\n");
}

}  // namespace
}  // namespace rigel
