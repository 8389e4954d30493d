// Every DSL.md example run distributed (`rigel run --workers M --servers 2`,
// real processes on loopback) against the serial executor:
//  - conflict-free schedules (mf's 2-D rotation, bias's 1-D partition, the
//    wavefront, and the data-parallel test loops) with 2 and 3 workers give
//    the parameters and prints of the serial run in the schedule's equivalent
//    order (analysis/order.h) within 1e-5 relative error;
//  - relaxed data-parallel runs (sparse_lr, word2vec) end within 2% of the
//    serial run's final metrics; dense_lr (allreduce over Gloo) within 1% on
//    accuracy, with every worker's replica bit for bit equal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/batch.h"
#include "analysis/order.h"
#include "analysis/partition.h"
#include "analysis/plan.h"
#include "analysis/relaxed.h"
#include "collectives/devices.h"
#include "collectives/nccl/communicator.h"
#include "common/config.h"
#include "exec/executor.h"
#include "exec/init_params.h"
#include "exec/param_file.h"
#include "frontend/compile.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

const std::string kExamples = std::string(RIGEL_SOURCE_DIR) + "/examples/";

using testing::Slurp;

std::string TempDir() { return testing::MakeTempDir("rigel-distributed-test"); }

using Result = testing::RigelResult;

// Runs RIGEL_BIN_DIR/rigel with `args`.
Result Rigel(const std::vector<std::string>& args, const std::string& dir) {
  return testing::RunRigel(args, dir);
}

using testing::PrintedNumbers;

// The last number `text` printed; a failure (and NaN, which every
// comparison below fails) when it printed none.
double LastNumber(const std::string& text) {
  const std::vector<double> n = PrintedNumbers(text);
  if (n.empty()) {
    ADD_FAILURE() << "no number printed:\n" << text;
    return std::nan("");
  }
  return n.back();
}

struct Serial {
  std::string out;
  std::vector<std::vector<float>> params;
  std::vector<std::string> names;
};

// The serial executor run of `program`, each non-data-parallel loop in the
// order of its schedule for `workers` workers with the balanced cuts the
// scheduler makes (empty `workers`: file order).
// `init_params`: as --init-params (none when empty).
Serial RunSerial(const std::string& program, const std::vector<std::string>& sets, int workers,
                 const std::string& init_params = "") {
  frontend::CompileOptions co;
  for (const std::string& s : sets) co.sets.push_back(*frontend::ParseSetFlag(s));
  // A failure is reported and an empty result returned: nothing below
  // dereferences a value that is not there.
  auto prog = frontend::CompileFile(program, co);
  if (!prog.ok()) {
    ADD_FAILURE() << prog.status().message();
    return {};
  }
  if (!init_params.empty()) {
    auto taken = exec::UseInitParams(init_params, &*prog);
    if (!taken.ok()) {
      ADD_FAILURE() << taken.status().message();
      return {};
    }
  }
  analysis::PlanOptions po;
  po.workers = std::max(workers, 1);
  auto plan = analysis::MakePlan(*prog, po);
  if (!plan.ok()) {
    ADD_FAILURE() << plan.status().message();
    return {};
  }
  std::ostringstream out;
  exec::ExecutorOptions eo;
  eo.out = &out;
  if (workers > 0) {
    eo.order = [&](int loop, const data::Dataset& data) -> StatusOr<std::vector<int64_t>> {
      const analysis::LoopPlan& lp = plan->loops[loop];
      if (lp.schedule.kind == analysis::ScheduleKind::kDataParallel) return std::vector<int64_t>{};
      RIGEL_ASSIGN_OR_RETURN(analysis::Cuts cuts, analysis::MakeCuts(lp, workers, data));
      return analysis::ScheduleOrder(lp, cuts, data);
    };
  }
  auto ex = exec::SerialExecutor::Create(*prog, eo);
  if (!ex.ok()) {
    ADD_FAILURE() << ex.status().message();
    return {};
  }
  Status st = (*ex)->Run();
  EXPECT_TRUE(st.ok()) << st.message();
  Serial s;
  s.out = out.str();
  for (size_t p = 0; p < prog->params.size(); ++p) {
    s.params.push_back((*ex)->param(static_cast<int>(p)));
    s.names.push_back(prog->params[p].name);
  }
  return s;
}

Result RunDistributed(const std::string& program, const std::vector<std::string>& sets, int workers,
                      const std::string& dir, const std::string& params_file,
                      const std::vector<std::string>& flags = {}) {
  std::vector<std::string> args = {
      "run", program,     "--workers",  std::to_string(workers), "--servers",
      "2",   "--run-dir", dir + "/run", "--save-params",         params_file};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), flags.begin(), flags.end());
  return Rigel(args, dir);
}

std::string Logs(const std::string& dir) {
  std::string out;
  for (const char* f : {"scheduler", "worker-0", "worker-1", "worker-2", "server-0"}) {
    std::string text = Slurp(dir + "/run/" + f + ".log");
    if (text.size() > 1500) text = "..." + text.substr(text.size() - 1500);
    out += std::string("--- ") + f + ".log\n" + text;
  }
  return out;
}

// `example`: a file in examples/, or an absolute path.
void ExpectEquivalent(const std::string& example, int workers,
                      const std::vector<std::string>& sets = {}) {
  SCOPED_TRACE(example + " on " + std::to_string(workers) + " workers");
  const std::string program = example.starts_with("/") ? example : kExamples + example;
  const std::string dir = TempDir();
  Result r = RunDistributed(program, sets, workers, dir, dir + "/params");
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(program, sets, workers);
  // Prints: the same numbers (each within 1e-5 relative; prints have 6 digits).
  std::vector<double> got = PrintedNumbers(r.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size()) << r.out << "\nvs serial\n" << s.out;
  ASSERT_FALSE(want.empty());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(std::fabs(got[k] - want[k]), 1e-5 * std::max(std::fabs(want[k]), 1e-6))
        << "number " << k << ": " << got[k] << " vs " << want[k];
  }
  // Parameters: max |a - b| / max |b| per parameter.
  auto saved = exec::ReadParams(dir + "/params");
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_EQ(saved->size(), s.params.size());
  for (size_t p = 0; p < s.params.size(); ++p) {
    const auto& a = (*saved)[p].values;
    const auto& b = s.params[p];
    ASSERT_EQ((*saved)[p].name, s.names[p]);
    ASSERT_EQ(a.size(), b.size());
    double diff = 0, scale = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      diff = std::max(diff, std::fabs(double(a[k]) - b[k]));
      scale = std::max(scale, std::fabs(double(b[k])));
    }
    EXPECT_LE(diff, 1e-5 * std::max(scale, 1e-30))
        << s.names[p] << ": max difference " << diff << " (largest value " << scale << ")";
    ::testing::Test::RecordProperty(s.names[p] + "_max_rel_diff",
                                    std::to_string(diff / std::max(scale, 1e-30)));
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// `rigel run --transport ucx`: the 2-D, 1-D and wavefront jobs print what
// they print on ZeroMQ (and the serial run in their order), and every
// process's log says what UCX carried its connections over: shared memory,
// these processes being on one host.
TEST(Distributed, JobsOnUcxPrintWhatTheyPrintOnZmqOverSharedMemory) {
#if !RIGEL_HAVE_UCX
  GTEST_SKIP() << "this build has no UCX transport (libucx-dev was not found)";
#else
  struct Case {
    std::string example;
    std::vector<std::string> sets;
  };
  for (const Case& c : {Case{"mf.rgl", {}}, Case{"bias.rgl", {}}, Case{"wavefront.rgl", {}}}) {
    SCOPED_TRACE(c.example);
    if (!std::filesystem::exists(kExamples + c.example)) {
      ADD_FAILURE() << kExamples + c.example << " is missing";
      continue;
    }
    const std::string dir = TempDir();
    std::filesystem::create_directories(dir + "/zmq");
    std::filesystem::create_directories(dir + "/ucx");
    Result zmq = RunDistributed(kExamples + c.example, c.sets, 2, dir + "/zmq",
                                dir + "/zmq.params", {"--transport", "zmq"});
    ASSERT_EQ(zmq.rc, 0) << zmq.err;
    Result ucx = RunDistributed(kExamples + c.example, c.sets, 2, dir + "/ucx",
                                dir + "/ucx.params", {"--transport", "ucx"});
    ASSERT_EQ(ucx.rc, 0) << ucx.err << Logs(dir + "/ucx");
    std::vector<double> a = PrintedNumbers(ucx.out), b = PrintedNumbers(zmq.out);
    ASSERT_EQ(a.size(), b.size()) << ucx.out << "\nvs zmq\n" << zmq.out;
    ASSERT_FALSE(a.empty());
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_LE(std::fabs(a[k] - b[k]), 1e-5 * std::max(std::fabs(b[k]), 1e-6)) << "number " << k;
    }
    for (const char* f : {"scheduler", "server-0", "worker-0", "worker-1"}) {
      const std::string log = Slurp(dir + "/ucx/run/" + f + ".log");
      const size_t at = log.find("over UCX: ");
      ASSERT_NE(at, std::string::npos) << f << ".log:\n" << log;
      const std::string line = log.substr(at, log.find('\n', at) - at);
      EXPECT_TRUE(line.find("sysv/") != std::string::npos ||
                  line.find("posix/") != std::string::npos)
          << f << ": " << line;
    }
    std::string cmd = "rm -rf " + dir;
    (void)std::system(cmd.c_str());
  }
#endif
}

// --init-params reaches every process that makes rows: the workers' held
// rows of W and whole copies, the servers' shards. A 2-D run started from a
// saved model matches the serial run started from it; a relaxed run that
// cannot change its weights (lr 0) evaluates the saved model exactly.
TEST(Distributed, EveryProcessStartsFromTheInitParamsFile) {
  const std::string dir = TempDir();
  const std::string saved = dir + "/saved.npz";
  Result first =
      Rigel({"run", kExamples + "mf.rgl", "--set", "EPOCHS=2", "--save-params", saved}, dir);
  ASSERT_EQ(first.rc, 0) << first.err;
  Result r = RunDistributed(kExamples + "mf.rgl", {"EPOCHS=1"}, 2, dir, dir + "/params",
                            {"--init-params", saved});
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(kExamples + "mf.rgl", {"EPOCHS=1"}, 2, saved);
  Serial fresh = RunSerial(kExamples + "mf.rgl", {"EPOCHS=1"}, 2);
  EXPECT_NE(s.out, fresh.out);  // the file changed where training starts
  std::vector<double> got = PrintedNumbers(r.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size()) << r.out << "\nvs serial\n" << s.out;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(std::fabs(got[k] - want[k]), 1e-5 * std::max(std::fabs(want[k]), 1e-6)) << k;
  }

  // Evaluation only: sparse LR with lr 0 on 2 workers and its relaxed cache.
  const std::string lr = kExamples + "sparse_lr.rgl";
  Result train = Rigel({"run", lr, "--set", "EPOCHS=1", "--save-params", saved}, dir);
  ASSERT_EQ(train.rc, 0) << train.err;
  const std::vector<std::string> eval = {"EPOCHS=1", "lr=0"};
  Result d = RunDistributed(lr, eval, 2, dir, dir + "/params", {"--init-params", saved});
  ASSERT_EQ(d.rc, 0) << d.err << Logs(dir);
  Serial e = RunSerial(lr, eval, 0, saved);
  got = PrintedNumbers(d.out);
  want = PrintedNumbers(e.out);
  ASSERT_EQ(got.size(), want.size()) << d.out << "\nvs serial\n" << e.out;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(std::fabs(got[k] - want[k]), 1e-5 * std::max(std::fabs(want[k]), 1e-6)) << k;
  }
  auto kept = exec::ReadParams(dir + "/params");
  auto original = exec::ReadParams(saved);
  ASSERT_TRUE(kept.ok() && original.ok());
  EXPECT_EQ((*kept)[0].values, (*original)[0].values);
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

TEST(Distributed, MatrixFactorisationTwoDMatchesTheSerialOrder) {
  ExpectEquivalent("mf.rgl", 2);
  ExpectEquivalent("mf.rgl", 3);
}

TEST(Distributed, MatrixFactorisationRmseWithinOnePercentOfFileOrder) {
  const std::string dir = TempDir();
  Result r = RunDistributed(kExamples + "mf.rgl", {}, 2, dir, dir + "/params");
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(kExamples + "mf.rgl", {}, 0);
  std::vector<double> got = PrintedNumbers(r.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size());
  // "epoch N test_rmse X": every second number is an RMSE. The first two
  // epochs follow a different SGD order and differ by about 2%; from epoch 2
  // on the orders have converged to within a fraction of a percent.
  for (size_t k = 5; k < got.size(); k += 2) {
    EXPECT_LE(std::fabs(got[k] - want[k]), 0.01 * want[k]) << "epoch " << got[k - 1];
  }
}

TEST(Distributed, BiasOneDMatchesTheSerialOrder) {
  ExpectEquivalent("bias.rgl", 2);
  ExpectEquivalent("bias.rgl", 3);
}

TEST(Distributed, WavefrontMatchesTheSerialOrder) {
  ExpectEquivalent("wavefront.rgl", 2);
  ExpectEquivalent("wavefront.rgl", 3, {"N=300", "M=200"});
}

// Vector accumulators: each worker's partial sums (every element of every
// accumulator, flat) reach the scheduler's driver, which reads and resets them.
TEST(Distributed, VectorAccumulatorsMatchTheSerialRun) {
  const std::string program =
      std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/vector_accum.rgl";
  ExpectEquivalent(program, 2);
  ExpectEquivalent(program, 3);
}

// Relaxed runs: the final line's metrics within 2% of the serial run's.
void ExpectClose(const std::string& example, const std::vector<std::string>& sets,
                 const std::vector<size_t>& metric_positions,
                 const std::vector<std::string>& run_flags = {}) {
  SCOPED_TRACE(example);
  const std::string program = kExamples + example;
  const std::string dir = TempDir();
  Result r = RunDistributed(program, sets, 2, dir, dir + "/params", run_flags);
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(program, sets, 0);
  std::vector<double> got = PrintedNumbers(r.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size()) << r.out << "\nvs serial\n" << s.out;
  for (size_t pos : metric_positions) {
    ASSERT_GE(got.size(), pos) << "fewer numbers printed than the metric's position:\n" << r.out;
    size_t k = got.size() - pos;
    EXPECT_LE(std::fabs(got[k] - want[k]), 0.02 * std::fabs(want[k]))
        << "final metric " << got[k] << " vs serial " << want[k] << "\n"
        << r.out;
    ::testing::Test::RecordProperty(example + "_metric_" + std::to_string(pos),
                                    std::to_string(got[k]) + " vs " + std::to_string(want[k]));
  }
}

TEST(Distributed, SparseLogisticRegressionWithinTwoPercent) {
  // "epoch N train_loss L test_accuracy A": the last two numbers' L and A.
  ExpectClose("sparse_lr.rgl", {}, {3, 1});
}

// Runs `program` serially and on each of `workers` at default flags; the
// last printed number (a test accuracy) must be within `points` of serial.
void ExpectAccuracyWithin(const std::string& program, const std::vector<std::string>& sets,
                          const std::vector<int>& workers, double points) {
  SCOPED_TRACE(program);
  Serial s = RunSerial(program, sets, 0);
  const double serial = LastNumber(s.out);
  for (int w : workers) {
    const std::string dir = TempDir();
    Result r = RunDistributed(program, sets, w, dir, dir + "/params");
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
    const double got = LastNumber(r.out);
    EXPECT_GE(got, serial - points) << w << " workers:\n" << r.out << "serial:\n" << s.out;
    ::testing::Test::RecordProperty(
        std::filesystem::path(program).stem().string() + "_accuracy_" + std::to_string(w),
        std::to_string(got) + " vs " + std::to_string(serial));
    std::string cmd = "rm -rf " + dir;
    (void)std::system(cmd.c_str());
  }
}

// The real a9a data (../shared/data, beside the repository); skipped when
// absent. A few features are in nearly every sample, and at a fixed
// mini-batch of 512 the merged deltas of those rows diverged: sparse_lr ended
// at test accuracy 0.764 on 2 workers (the majority class), the SVM 2.9
// points below serial. At the default, Rigel's choice of mini-batch
// (analysis/batch.h), 2 and 3 workers end within 1 point of serial
// (sparse_lr) and 2 points (the factorization machine and the SVM).
std::vector<std::string> A9aSets() {
  const std::string a9a = std::string(RIGEL_SOURCE_DIR) + "/../shared/data/a9a";
  if (!std::ifstream(a9a)) return {};
  return {"train.path=" + a9a, "test.path=" + a9a + ".t"};
}

TEST(Distributed, SparseLrOnA9aAtDefaultsWithinOnePointOfSerial) {
  const std::vector<std::string> sets = A9aSets();
  if (sets.empty()) GTEST_SKIP() << "real data not present beside the repository";
  ExpectAccuracyWithin(kExamples + "sparse_lr.rgl", sets, {2, 3}, 0.01);
}

// Programs users write (tests/e2e/programs/): every sample also writes a
// bias row, so the bias alone makes the rows shared.
const std::string kPrograms = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/";

TEST(Distributed, FmAndSvmOnA9aAtDefaultsWithinTwoPointsOfSerial) {
  const std::vector<std::string> sets = A9aSets();
  if (sets.empty()) GTEST_SKIP() << "real data not present beside the repository";
  ExpectAccuracyWithin(kPrograms + "fm.rgl", sets, {2, 3}, 0.02);
  ExpectAccuracyWithin(kPrograms + "svm.rgl", sets, {2, 3}, 0.02);
}

TEST(Distributed, FmAndSvmOnGeneratedDataAtDefaultsWithinTwoPointsOfSerial) {
  const std::string data = std::string(RIGEL_SOURCE_DIR) + "/examples/data/";
  const std::vector<std::string> sets = {"train.path=" + data + "train.svm",
                                         "test.path=" + data + "test.svm", "EPOCHS=3"};
  ExpectAccuracyWithin(kPrograms + "fm.rgl", sets, {2}, 0.02);
  ExpectAccuracyWithin(kPrograms + "svm.rgl", sets, {2}, 0.02);
}

// The other side of the rule: a GloVe-style factorization whose rows are
// each shared by few elements keeps the largest mini-batch, and its test
// RMSE stays within 2% of serial (at a push bound of 256 instead of 128 it
// drifted 3% from it: analysis/relaxed.h).
TEST(Distributed, GloveWithColdRowsKeepsTheLargestBatch) {
  const std::string ratings = std::string(RIGEL_SOURCE_DIR) + "/examples/data/ratings.csv";
  const std::vector<std::string> sets = {"pairs.path=" + ratings, "EPOCHS=3"};
  const std::string program = kPrograms + "glove.rgl";
  const std::string dir = TempDir();
  Result r =
      RunDistributed(program, sets, 2, dir, dir + "/params", {"--log-json", dir + "/log.json"});
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(program, sets, 0);
  const double got = LastNumber(r.out), want = LastNumber(s.out);
  EXPECT_LE(std::fabs(got - want), 0.02 * want) << r.out << "serial:\n" << s.out;
  std::istringstream lines(Slurp(dir + "/log.json"));
  int epochs = 0;
  for (std::string line; std::getline(lines, line); ++epochs) {
    // Relaxed rows go through the row caches (DSL.md v3): the largest
    // mini-batch of analysis/relaxed.h, and the push bound's rows pushed.
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j["batch"].value("0", 0), analysis::kMaxCachedBatch) << line;
    EXPECT_EQ(j["relaxed"]["0"].value("push_bound", 0.0), analysis::kPushBound) << line;
    EXPECT_GT(j["relaxed"]["0"].value("pushed.W", 0.0), 0) << line;
  }
  EXPECT_EQ(epochs, 3);
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// Staleness 1: each mini-batch's rows are pulled while the previous one
// computes (PsClient::PullAhead), the worker's own last updates kept.
TEST(Distributed, SparseLogisticRegressionWithStalenessOne) {
  ExpectClose("sparse_lr.rgl", {}, {3, 1}, {"--staleness", "1"});
}

// dense_lr's w is an allreduce parameter: replicated on the workers and
// summed with Gloo, not through the servers. Each run's replicas are compared
// (bit for bit, by hash) across workers by the scheduler.
struct DenseRun {
  Result result;
  std::vector<nlohmann::json> epochs;  // the --log-json lines
};

DenseRun RunDense(int workers, const std::vector<std::string>& flags) {
  const std::string dir = TempDir();
  std::vector<std::string> all = {"--log-json", dir + "/log.json"};
  all.insert(all.end(), flags.begin(), flags.end());
  DenseRun d;
  d.result = RunDistributed(kExamples + "dense_lr.rgl", {}, workers, dir, dir + "/params", all);
  if (d.result.rc != 0) d.result.err += Logs(dir);
  std::istringstream lines(Slurp(dir + "/log.json"));
  for (std::string line; std::getline(lines, line);)
    d.epochs.push_back(nlohmann::json::parse(line));
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
  return d;
}

TEST(Distributed, DenseLogisticRegressionOnGlooWithinOnePercentAccuracy) {
  DenseRun d = RunDense(2, {});
  ASSERT_EQ(d.result.rc, 0) << d.result.err;
  Serial s = RunSerial(kExamples + "dense_lr.rgl", {}, 0);
  std::vector<double> got = PrintedNumbers(d.result.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size()) << d.result.out << "\nvs serial\n" << s.out;
  const size_t acc = got.size() - 1, loss = got.size() - 3;
  EXPECT_LE(std::fabs(got[acc] - want[acc]), 0.01 * want[acc]) << d.result.out;
  EXPECT_LE(std::fabs(got[loss] - want[loss]), 0.02 * want[loss]) << d.result.out;
  ::testing::Test::RecordProperty("accuracy",
                                  std::to_string(got[acc]) + " vs " + std::to_string(want[acc]));
  ASSERT_EQ(d.epochs.size(), 10u);
  for (const nlohmann::json& e : d.epochs) {
    // Deltas went through the collective; the servers saw only worker 0's
    // one push of w per run (32 floats and keys), and the test loop's
    // reads were served by the replica.
    EXPECT_GT(e["bytes"].value("allreduce.collective", 0.0), 0.0) << e.dump();
    EXPECT_LT(e["bytes"].value("allreduce", 0.0), 4096.0) << e.dump();
    EXPECT_EQ(e["replicas_checked"], 1) << e.dump();
    // The workers' loop runs alone take CPU time.
    EXPECT_GT(e["cpu_s"].get<double>(), 0.0) << e.dump();
    // Every process has held memory, as it said: the workers with each run,
    // the scheduler itself, and the servers with their heartbeats (by the
    // last epoch at least).
    for (const char* role : {"worker", "scheduler"}) {
      EXPECT_GT(e["peak_bytes"].value(role, int64_t{0}), 1 << 20) << role << ": " << e.dump();
    }
    // w is updated whole: the dense mini-batch (analysis/batch.h).
    EXPECT_EQ(e["batch"].value("0", 0), 32) << e.dump();
  }
  EXPECT_GT(d.epochs.back()["peak_bytes"].value("server", int64_t{0}), 1 << 20)
      << d.epochs.back().dump();
}

TEST(Distributed, DenseReplicasStayIdenticalOnThreeWorkersSyncingEveryFourBatches) {
  DenseRun d = RunDense(3, {"--sync-every", "4"});
  ASSERT_EQ(d.result.rc, 0) << d.result.err;
  ASSERT_EQ(d.epochs.size(), 10u);
  for (const nlohmann::json& e : d.epochs) EXPECT_EQ(e["replicas_checked"], 2) << e.dump();
}

// --device cuda: the replicas live on the GPU and NCCL sums the deltas. With
// a GPU (and NCCL) one worker runs the whole path; without, the job is
// refused saying why: by `rigel run` when the build has no CUDA or the
// machine no device (gpu_placement_test.cc), else by the worker.
TEST(Distributed, DenseOnCudaRunsOrSaysWhyNot) {
  Status gpu = collectives::nccl_backend::Available();
  DenseRun d = RunDense(1, {"--device", "cuda"});
  if (!gpu.ok()) {
    EXPECT_NE(d.result.rc, 0);
    auto devices = collectives::CountCudaDevices();
    const std::string why =
        !devices.ok()         ? "rigel run: --device cuda: " + devices.status().message()
        : devices->count == 0 ? "rigel run: --device cuda puts 1 worker on localhost, which has "
                                "no usable CUDA device (" +
                                    devices->note + ")"
                              : "--device cuda: " + gpu.message();
    EXPECT_NE(d.result.err.find(why), std::string::npos) << d.result.err;
    return;
  }
  ASSERT_EQ(d.result.rc, 0) << d.result.err;
  Serial s = RunSerial(kExamples + "dense_lr.rgl", {}, 0);
  std::vector<double> got = PrintedNumbers(d.result.out), want = PrintedNumbers(s.out);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(got.empty()) << d.result.out;
  EXPECT_LE(std::fabs(got.back() - want.back()), 0.01 * want.back()) << d.result.out;
  for (const nlohmann::json& e : d.epochs) {
    EXPECT_GT(e["bytes"].value("allreduce.collective", 0.0), 0.0) << e.dump();
  }
}

// The training loss of word2vec on a small generated corpus (100k tokens,
// 2000 words, 2 epochs: early training, where every row is shared and staleness
// costs most). At the defaults, tuned on the real corpus below, it ends 5.7%
// above serial; with mini-batches of 64 and a push bound of 32 within 2%.
TEST(Distributed, Word2vecWithinTwoPercentAtSmallSteps) {
  const std::string dir = TempDir();
  Result g = Rigel(
      {"gen", "corpus", "--out", dir + "/corpus.txt", "--tokens", "100000", "--vocab", "2000"},
      dir);
  ASSERT_EQ(g.rc, 0) << g.err;
  ExpectClose("word2vec.rgl", {"corpus.path=" + dir + "/corpus.txt", "EPOCHS=2"}, {1},
              {"--batch", "64", "--push-bound", "32"});
}

// The held-out loss of word2vec on the first 1M words of the real corpus
// (../shared/data, beside the repository; skipped when absent) at the
// defaults, 3 epochs, on 2 workers. DSL.md v4 promises 2% of serial; the
// defaults do not keep it (issue 42), and the quality suite's full run
// (tests/e2e/quality_test.cc, scripts/quality.sh) measures the promise.
// This test guards the present figure against getting worse. The
// held-out part's windows are its own (window(test, t, ...)): before issue
// 42 they read the corpus' first positions.
// The bound is what the defaults reach in every run seen, not a typical
// run: a relaxed run's held-out loss swings by up to 0.13 from one epoch
// to the next (serial's by 0.02), and its last epoch ended, over the 2-core
// VM's runs on 2026-12-02 and one CI run, 0.7%, 2.4%, 3.7%, 4.8% and 6.1%
// above serial's 2.579. The swing is the model's, not the measure's: the
// same held-out loop run twice in a row gives the same loss to 2e-4.
TEST(Distributed, Word2vecHeldOutLossOnGutenbergAtDefaultsWithinEightPercent) {
  const std::string text = std::string(RIGEL_SOURCE_DIR) + "/../shared/data/gutenberg-28m.txt";
  std::ifstream in(text, std::ios::binary);
  if (!in) GTEST_SKIP() << "real data not present beside the repository";
  const std::string dir = TempDir();
  std::string head(5228000, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  std::ofstream(dir + "/corpus.txt") << head;
  const std::string program = kExamples + "word2vec_heldout.rgl";
  const std::vector<std::string> sets = {"corpus.path=" + dir + "/corpus.txt"};
  Result r = RunDistributed(program, sets, 2, dir, dir + "/params");
  ASSERT_EQ(r.rc, 0) << r.err << Logs(dir);
  Serial s = RunSerial(program, sets, 0);
  // "epoch N loss L heldout H": the last number. Lower is better: only a
  // loss above serial's is a failure.
  const double got = LastNumber(r.out), want = LastNumber(s.out);
  EXPECT_LE(got, 1.08 * want) << r.out << "serial:\n" << s.out;
  ::testing::Test::RecordProperty("word2vec_heldout",
                                  std::to_string(got) + " vs " + std::to_string(want));
}

// Sums keyed by a coordinate (R[i] += A[i, j]) are cut 1-D by it: each
// worker adds its own rows, the result equals the serial one exactly (each
// row's terms are added in file order), and nothing but the rows' final
// values moves, where a data-parallel plan sends every worker's deltas.
TEST(Distributed, RowSumsAreCutByTheirRowAndMoveOnlyTheirValues) {
  const std::string dir = TempDir();
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/rowsum.rgl";
  Result plan = Rigel({"plan", program, "--workers", "2", "-o", dir + "/plan.json"}, dir);
  ASSERT_EQ(plan.rc, 0) << plan.err;
  nlohmann::json j = nlohmann::json::parse(Slurp(dir + "/plan.json"));
  nlohmann::json& loop = j["loops"][0];
  ASSERT_EQ(loop["schedule"]["kind"], "model_parallel_1d") << loop.dump(1);
  ASSERT_EQ(loop["params"]["R"]["strategy"], "local");
  // The plan before this rule: data-parallel, R summed through the servers.
  loop["schedule"] = {{"kind", "data_parallel"}, {"partition", "count"}};
  loop["params"]["R"]["strategy"] = "reduce";
  loop["params"]["R"].erase("keyed_by");
  std::ofstream(dir + "/reduce.json") << j.dump(1);
  ASSERT_EQ(Rigel({"run", program, "--save-params", dir + "/serial.npz"}, dir).rc, 0);
  double bytes[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const std::string tag = k == 0 ? "cut" : "reduce";
    std::vector<std::string> args = {"run",           program,
                                     "--workers",     "2",
                                     "--servers",     "2",
                                     "--run-dir",     dir + "/" + tag,
                                     "--log-json",    dir + "/" + tag + ".jsonl",
                                     "--save-params", dir + "/" + tag + ".npz"};
    // The reduce plan as it ran before sum-only loops ran in one step: cut
    // into the mini-batches of 512 it then had, a push of R's rows each.
    if (k == 1) args.insert(args.end(), {"--plan", dir + "/reduce.json", "--batch", "512"});
    Result r = Rigel(args, dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    std::istringstream log(Slurp(dir + "/" + tag + ".jsonl"));
    int epochs = 0;
    for (std::string line; std::getline(log, line); ++epochs) {
      const nlohmann::json epoch = nlohmann::json::parse(line);
      for (const auto& [what, b] : epoch.at("bytes").items()) {
        if (what == "local.kept") continue;
        bytes[k] += b.get<double>();
      }
    }
    EXPECT_EQ(epochs, 3) << tag;
  }
  auto serial = exec::ReadParams(dir + "/serial.npz");
  auto cut = exec::ReadParams(dir + "/cut.npz");
  auto reduce = exec::ReadParams(dir + "/reduce.npz");
  ASSERT_TRUE(serial.ok() && cut.ok() && reduce.ok());
  const std::vector<float>& want = (*serial)[0].values;
  EXPECT_EQ((*cut)[0].values, want);
  // The servers add the deltas in another order: rows of hundreds of terms
  // of either sign (R's values are -2400 to 4000) differ by float rounding.
  for (size_t r = 0; r < want.size(); ++r) {
    ASSERT_NEAR((*reduce)[0].values[r], want[r], 1e-4 + 1e-5 * std::abs(want[r])) << "row " << r;
  }
  // R's rows start as its initialiser's zeros, which the workers compute,
  // and stay on the workers (analysis/held_rows.h) until --save-params
  // flushes them after the last epoch: no epoch moves a byte. The reduce
  // plan pushes every delta.
  EXPECT_EQ(bytes[0], 0);
  EXPECT_GE(bytes[1], 1e6) << bytes[1];
  ::testing::Test::RecordProperty("rowsum_bytes",
                                  std::to_string(bytes[0]) + " vs " + std::to_string(bytes[1]));
  std::filesystem::remove_all(dir);
}

// The row sums' R stays on the workers between runs; a checkpoint has them
// flush it first. A job stopped after two of its three epochs and resumed
// from its checkpoint ends with the serial R. Without the flush the
// checkpoint holds R's initial zeros; were the resumed job's workers to
// compute R's initial rows (as a fresh job's do: cluster::JobSpec::
// restored), they would start from zeros too: either way the run would end
// with only the third epoch's sums.
TEST(Distributed, RowsHeldBetweenRunsReachTheCheckpointAndTheResumedRun) {
  const std::string dir = TempDir();
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/rowsum.rgl";
  ASSERT_EQ(Rigel({"run", program, "--save-params", dir + "/serial.npz"}, dir).rc, 0);
  Result first =
      Rigel({"run", program, "--workers", "2", "--servers", "2", "--run-dir", dir + "/first",
             "--checkpoint-dir", dir + "/ckpt", "--stop-after-epochs", "2"},
            dir);
  ASSERT_EQ(first.rc, 0) << first.err;
  Result resumed =
      Rigel({"run", program, "--workers", "2", "--servers", "2", "--run-dir", dir + "/resumed",
             "--resume", dir + "/ckpt", "--save-params", dir + "/resumed.npz"},
            dir);
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  auto serial = exec::ReadParams(dir + "/serial.npz");
  auto got = exec::ReadParams(dir + "/resumed.npz");
  ASSERT_TRUE(serial.ok() && got.ok());
  EXPECT_EQ((*got)[0].values, (*serial)[0].values);
  std::filesystem::remove_all(dir);
}

// --memory-limit (issue 32): the scheduler estimates what each process will
// hold (`rigel explain --memory` prints the same figures) and refuses a job
// that would not fit before any worker or server starts; a job that fits runs.
// Neither gives --servers: explain assumes the servers run starts (issue 43,
// cluster/defaults.h), 2 for 2 workers.
TEST(Distributed, AJobOverItsMemoryLimitIsRefusedBeforeAWorkerOrServerStarts) {
  const std::string dir = TempDir();
  const std::string program = std::string(RIGEL_SOURCE_DIR) + "/tests/e2e/programs/rowsum.rgl";
  Result explain = Rigel({"explain", program, "--workers", "2", "--memory", "--json"}, dir);
  ASSERT_EQ(explain.rc, 0) << explain.err;
  const nlohmann::json memory = nlohmann::json::parse(explain.out);
  const int64_t worker = memory["worker"]["bytes"].get<int64_t>();
  ASSERT_GT(worker, memory["server"]["bytes"].get<int64_t>()) << memory.dump(1);
  const std::string& biggest = memory["worker"]["parts"][0]["what"].get_ref<const std::string&>();

  Result refused = Rigel({"run", program, "--workers", "2", "--run-dir", dir + "/refused",
                          "--memory-limit", std::to_string(worker - 1)},
                         dir);
  EXPECT_NE(refused.rc, 0);
  EXPECT_NE(refused.err.find("--memory-limit "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(": a worker would need about "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(biggest), std::string::npos) << refused.err;
  for (const char* log : {"worker-0.log", "worker-1.log", "server-0.log", "server-1.log"}) {
    EXPECT_FALSE(std::filesystem::exists(dir + "/refused/" + log)) << log << " started";
  }

  Result fits = Rigel(
      {"run", program, "--workers", "2", "--run-dir", dir + "/fits", "--memory-limit", "4G"}, dir);
  EXPECT_EQ(fits.rc, 0) << fits.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/fits/server-1.log")) << "not 2 servers";
  EXPECT_FALSE(std::filesystem::exists(dir + "/fits/server-2.log")) << "more than 2 servers";
  std::filesystem::remove_all(dir);
}

// `rigel index` (issue 32): with a current index beside a file whose every
// loop is cut by element count, the scheduler takes the file's facts from the
// index instead of scanning it (split parts included; the workers hold their
// parts), and the job prints what it prints without one; once the file
// changes, the index is ignored. With --data-parts off the scheduler loads
// the file.
TEST(Distributed, TheSchedulerTakesAnIndexedFilesFactsAndTheJobPrintsTheSame) {
  const std::string dir = TempDir();
  std::string svm;
  for (int k = 0; k < 3000; ++k) {
    svm += (k % 3 ? "+1" : "-1") + std::string(" ") + std::to_string(k % 7 + 1) + ":0.5 " +
           std::to_string(k % 11 + 8) + ":2\n";
  }
  std::ofstream(dir + "/s.svm") << svm;
  std::ofstream(dir + "/p.rgl") << R"(data all = libsvm("s.svm")
data train, test = split(all, 0.25, seed=3)
param c: f32[all.dim] = zeros()
accum n: f32
accum t: f32
for ep in 0..2 {
  n = 0
  t = 0
  parallel for (k, row) in train {
    for (f, x) in row.features { c[f] += x }
    n += row.label
  }
  parallel for (k, row) in test { t += row.label }
  print("ep", ep, "n", n, "t", t, "train", train.count, "test", test.count, "dim", all.dim)
}
)";
  auto run = [&](const std::string& tag, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"run", dir + "/p.rgl", "--workers",    "2", "--servers",
                                     "2",   "--run-dir",    dir + "/" + tag};
    args.insert(args.end(), more.begin(), more.end());
    Result r = Rigel(args, dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    return std::make_pair(r.out, Slurp(dir + "/" + tag + "/scheduler.log"));
  };
  const std::string scanned = "facts of all (" + dir + "/s.svm, by a scan): 3000 elements";
  const auto [plain, plain_log] = run("plain");
  EXPECT_NE(plain_log.find(scanned), std::string::npos) << plain_log;
  const auto [whole, whole_log] = run("whole", {"--data-parts", "off"});
  EXPECT_NE(whole_log.find("loaded all ("), std::string::npos) << whole_log;
  EXPECT_EQ(whole, plain);
  Result index = Rigel({"index", dir + "/p.rgl"}, dir);
  ASSERT_EQ(index.rc, 0) << index.err;
  EXPECT_NE(index.out.find("s.svm.rigel-index: 3000 elements, dim 18 (libsvm, data set 'all'"),
            std::string::npos)
      << index.out;
  const auto [indexed, indexed_log] = run("indexed");
  EXPECT_NE(indexed_log.find("facts of all (" + dir + "/s.svm, from its index): 3000 elements"),
            std::string::npos)
      << indexed_log;
  EXPECT_EQ(indexed_log.find("loaded all ("), std::string::npos) << indexed_log;
  EXPECT_EQ(indexed, plain);
  EXPECT_NE(plain.find("train "), std::string::npos) << plain;

  std::ofstream(dir + "/s.svm", std::ios::app) << "+1 1:1\n";
  const auto [changed, changed_log] = run("changed");
  EXPECT_NE(changed_log.find("facts of all (" + dir + "/s.svm, by a scan): 3001 elements"),
            std::string::npos)
      << changed_log;
  std::filesystem::remove_all(dir);
}

// Data only data-parallel loops read is held in part by each worker (its
// block of each split part), and the job prints what it prints with every
// worker loading it whole (--data-parts off).
TEST(Distributed, WorkersHoldTheirPartOfDataParallelDataAndPrintWhatWholeLoadsPrint) {
  const std::string dir = TempDir();
  std::string svm;
  for (int k = 0; k < 40000; ++k) {
    svm += (k % 3 ? "+1" : "-1") + std::string(" ") + std::to_string(k % 7 + 1) + ":1\n";
  }
  std::ofstream(dir + "/s.svm") << svm;
  std::ofstream(dir + "/p.rgl") << R"(data all = libsvm("s.svm")
data train, test = split(all, 0.25, seed=3)
accum n: f32
accum t: f32
for ep in 0..2 {
  n = 0
  t = 0
  parallel for (k, row) in train { for (f, x) in row.features { n += f * x * row.label } }
  parallel for (k, row) in test { t += row.label }
  print("ep", ep, "n", n, "t", t, "train", train.count, "test", test.count)
}
)";
  auto run = [&](const std::string& tag, std::vector<std::string> more) {
    std::vector<std::string> args = {"run", dir + "/p.rgl", "--workers",    "2", "--servers",
                                     "1",   "--run-dir",    dir + "/" + tag};
    args.insert(args.end(), more.begin(), more.end());
    Result r = Rigel(args, dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    return std::make_pair(r.out, Slurp(dir + "/" + tag + "/worker-0.log"));
  };
  const auto [parts, parts_log] = run("parts", {});
  const auto [whole, whole_log] = run("whole", {"--data-parts", "off"});
  EXPECT_EQ(parts, whole);
  EXPECT_NE(parts.find("train 30"), std::string::npos) << parts;
  // Worker 0 holds its half of each part: the file's elements up to where
  // the later of its two blocks ends, about half of all 40000 (the samples'
  // rows come from the worker holding them).
  const size_t at = parts_log.find("loaded all (" + dir + "/s.svm): ");
  ASSERT_NE(at, std::string::npos) << parts_log;
  const std::string held = parts_log.substr(at + dir.size() + 21);
  EXPECT_NE(held.find(" of 40000 elements"), std::string::npos) << parts_log;
  EXPECT_GE(std::stoll(held), 20000) << parts_log;
  EXPECT_LT(std::stoll(held), 21000) << parts_log;
  EXPECT_NE(whole_log.find("loaded all (" + dir + "/s.svm): 40000 elements"), std::string::npos)
      << whole_log;
  std::filesystem::remove_all(dir);
}

// Matrix factorisation, 2-D over the training part and data-parallel over
// the test part: each worker keeps, as it reads the file, the training
// elements the scheduler's cuts place on it and its block of the test part
// (about a third of the file on 3 workers), and the job prints exactly what
// it prints with every worker loading the file whole.
TEST(Distributed, WorkersOfA2DLoopHoldOnlyTheElementsOfTheirBlocks) {
  const std::string dir = TempDir();
  {
    std::ofstream out(dir + "/r.csv");
    for (int64_t k = 0; k < 30000; ++k) {
      out << (k * 7919) % 997 << "," << (k * 104729) % 613 << "," << (k % 11) * 0.25 << "\n";
    }
  }
  std::ofstream(dir + "/mf.rgl") << R"(data r = triples("r.csv")
data train, test = split(r, test=0.1, seed=7)
param W: f32[r.rows, 4] = normal(0, 0.1, seed=1)
param H: f32[r.cols, 4] = normal(0, 0.1, seed=2)
accum sq: f32
for ep in 0..3 {
  parallel for (i, j, v) in train {
    let e = v - dot(W[i], H[j])
    let wi = W[i]
    W[i] = wi + 0.02 * (e * H[j] - 0.05 * wi)
    H[j] = H[j] + 0.02 * (e * wi - 0.05 * H[j])
  }
  sq = 0
  parallel for (i, j, v) in test {
    let e = v - dot(W[i], H[j])
    sq += e * e
  }
  print("ep", ep, "rmse", sqrt(sq / test.count))
}
)";
  auto run = [&](const std::string& tag, std::vector<std::string> more) {
    std::vector<std::string> args = {"run", dir + "/mf.rgl", "--workers",    "3", "--servers",
                                     "1",   "--run-dir",     dir + "/" + tag};
    args.insert(args.end(), more.begin(), more.end());
    Result r = Rigel(args, dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    return std::make_pair(r.out, Slurp(dir + "/" + tag + "/worker-1.log"));
  };
  const auto [parts, parts_log] = run("parts", {});
  const auto [whole, whole_log] = run("whole", {"--data-parts", "off"});
  EXPECT_EQ(parts, whole);
  EXPECT_NE(parts.find("ep 2 rmse"), std::string::npos) << parts;
  const std::string loaded = "loaded r (" + dir + "/r.csv): ";
  const size_t at = parts_log.find(loaded);
  ASSERT_NE(at, std::string::npos) << parts_log;
  const std::string held = parts_log.substr(at + loaded.size());
  EXPECT_NE(held.find(" of 30000 elements"), std::string::npos) << parts_log;
  EXPECT_GE(std::stoll(held), 8000) << parts_log;
  EXPECT_LE(std::stoll(held), 12000) << parts_log;
  EXPECT_NE(whole_log.find("loaded r (" + dir + "/r.csv): 30000 elements"), std::string::npos)
      << whole_log;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rigel
