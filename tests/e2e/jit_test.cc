// The JIT tier end to end (kernel/jit/, docs/architecture.md "Tiers"):
// every example program, serially and on 2 workers (real processes on
// loopback), with `--jit on` and `--jit off`, prints the same and saves the
// same parameters, bit for bit; `-v` says each loop's tier; `rigel dump-ir
// --jit` prints the LLVM IR.
//
// Except where the workers' parts are summed in the order they arrive (the
// reductions of kmeans: within 1e-5), and a relaxed program on workers: its
// merges land in an order that depends on timing, so two runs of one tier
// differ already, and the differences grow as training goes on. Four runs
// of each tier of each relaxed example on 2 workers (2026-12-07, 2-core VM):
// word2vec_heldout's held-out loss after one epoch 1.927 to 2.043 with
// --jit off alone (6%), sparse_lr's first-epoch train loss 0.5856 to
// 0.5934, every other number within 1%. There the tiers must print the same
// text and numbers within 10% of each other, and the workers' logs must say
// the loops ran compiled; that the tiers compute the same updates bit for
// bit is shown without the timing, in process (tests/kernel/jit_test.cc),
// and by the programs here that are not relaxed.
// tests/kernel/jit_test.cc compares the tiers in process on more shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "exec/param_file.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

const std::string kExamples = std::string(RIGEL_SOURCE_DIR) + "/examples/";

struct JitRun {
  testing::RigelResult result;
  // The --save-params file's values (not its bytes: the .npz's zip entries
  // carry their time).
  std::vector<exec::SavedParam> params;
  std::string worker_log;  // worker 0's log, on workers
};

// `rigel run PROGRAM` with `workers` (0: serially) and --jit `jit`.
JitRun RunWith(const std::string& program, const std::vector<std::string>& sets, int workers,
               const std::string& jit, const std::vector<std::string>& flags = {}) {
  const std::string dir = testing::MakeTempDir("rigel-jit-test");
  std::vector<std::string> args = {"run", kExamples + program, "--jit",
                                   jit,   "--save-params",     dir + "/params.npz"};
  if (workers > 0) {
    args.insert(args.end(), {"--workers", std::to_string(workers), "--servers", "2", "--run-dir",
                             dir + "/run"});
  }
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), flags.begin(), flags.end());
  JitRun r;
  r.result = testing::RunRigel(args, dir);
  auto saved = exec::ReadParams(dir + "/params.npz");
  if (saved.ok()) r.params = std::move(*saved);
  if (workers > 0) r.worker_log = testing::Slurp(dir + "/run/worker-0.log");
  if (r.result.rc != 0) {
    for (const char* f : {"scheduler", "worker-0", "worker-1"}) {
      r.result.err +=
          std::string("--- ") + f + ".log\n" + testing::Slurp(dir + "/run/" + f + ".log");
    }
  }
  const std::string rm = "rm -rf " + dir;
  (void)std::system(rm.c_str());
  return r;
}

// How two runs of one program on workers compare, whatever the tier.
enum class Runs {
  kEqual,    // bit for bit
  kSummed,   // sums of the workers' parts, added in the order they arrive: within 1e-5
  kRelaxed,  // relaxed parameters (DSL.md v3): within 10% (above)
};

struct Example {
  const char* file;
  std::vector<std::string> sets;
  Runs runs = Runs::kEqual;
};

// Fewer epochs than the examples' own where a run would take seconds.
const std::vector<Example>& Examples() {
  static const std::vector<Example> examples = {
      {"bias.rgl", {}},
      {"ctr_fm.rgl", {"EPOCHS=1"}, Runs::kRelaxed},
      {"dense_lr.rgl", {"EPOCHS=3"}},
      {"fm.rgl", {"EPOCHS=2"}, Runs::kRelaxed},
      {"kmeans.rgl", {"ITERS=3"}, Runs::kSummed},
      {"lda.rgl", {"ITERS=3"}, Runs::kRelaxed},
      {"mf.rgl", {"EPOCHS=3"}},
      {"softmax.rgl", {"EPOCHS=3"}, Runs::kRelaxed},
      {"sparse_lr.rgl", {"EPOCHS=3"}, Runs::kRelaxed},
      {"wavefront.rgl", {"N=128", "M=128"}},
      {"word2vec.rgl", {"EPOCHS=1"}, Runs::kRelaxed},
      {"word2vec_heldout.rgl", {"EPOCHS=1"}, Runs::kRelaxed},
  };
  return examples;
}

bool Near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

void ExpectSameRuns(const Example& e, int workers) {
  SCOPED_TRACE(std::string(e.file) + " on " + std::to_string(workers) + " workers");
  JitRun off = RunWith(e.file, e.sets, workers, "off");
  ASSERT_EQ(off.result.rc, 0) << off.result.err;
  JitRun on = RunWith(e.file, e.sets, workers, "on");
  ASSERT_EQ(on.result.rc, 0) << on.result.err;
  EXPECT_FALSE(off.params.empty());
#if RIGEL_HAVE_LLVM
  // A worker says each loop's tier once settled (exec::TierLine).
  if (workers > 0) {
    EXPECT_NE(on.worker_log.find(": jit (on): "), std::string::npos) << on.worker_log;
    EXPECT_EQ(off.worker_log.find(": jit ("), std::string::npos) << off.worker_log;
  }
#endif
  if (e.runs == Runs::kEqual || workers == 0) {
    EXPECT_EQ(on.result.out, off.result.out);
    ASSERT_EQ(on.params.size(), off.params.size());
    for (size_t p = 0; p < off.params.size(); ++p) {
      const std::vector<float>&a = off.params[p].values, &b = on.params[p].values;
      EXPECT_TRUE(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0)
          << "parameter " << off.params[p].name << " differs";
    }
    return;
  }
  const double tolerance = e.runs == Runs::kSummed ? 1e-5 : 0.10;
  EXPECT_EQ(testing::MaskNumbers(on.result.out), testing::MaskNumbers(off.result.out));
  const std::vector<double> a = testing::PrintedNumbers(off.result.out),
                            b = testing::PrintedNumbers(on.result.out);
  ASSERT_EQ(a.size(), b.size()) << off.result.out << "\nvs\n" << on.result.out;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(Near(a[k], b[k], tolerance)) << "number " << k << ": " << b[k] << " vs " << a[k];
  }
  if (e.runs != Runs::kSummed) return;
  ASSERT_EQ(on.params.size(), off.params.size());
  for (size_t p = 0; p < off.params.size(); ++p) {
    const std::vector<float>&x = off.params[p].values, &y = on.params[p].values;
    ASSERT_EQ(x.size(), y.size());
    double scale = 0, worst = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      scale = std::max(scale, std::fabs(double{x[k]}));
      worst = std::max(worst, std::fabs(double{x[k]} - double{y[k]}));
    }
    EXPECT_LE(worst, 1e-5 * std::max(scale, 1.0)) << off.params[p].name;
  }
}

TEST(Jit, EveryExampleSeriallyPrintsAndSavesWhatTheInterpreterDoes) {
  for (const Example& e : Examples()) ExpectSameRuns(e, 0);
}

TEST(Jit, EveryExampleOnTwoWorkersPrintsAndSavesWhatTheInterpreterDoes) {
  for (const Example& e : Examples()) ExpectSameRuns(e, 2);
}

// -v names each loop's tier and, compiled, its compile time.
TEST(Jit, VerboseSaysEachLoopsTier) {
  JitRun serial = RunWith("sparse_lr.rgl", {"EPOCHS=1"}, 0, "on", {"-v"});
  ASSERT_EQ(serial.result.rc, 0) << serial.result.err;
#if RIGEL_HAVE_LLVM
  EXPECT_NE(serial.result.err.find("loop 0 (line 15): jit (on): compiled in"), std::string::npos)
      << serial.result.err;
#else
  EXPECT_NE(serial.result.err.find("interpreted (jit on): this build has no JIT"),
            std::string::npos)
      << serial.result.err;
#endif
  JitRun off = RunWith("sparse_lr.rgl", {"EPOCHS=1"}, 0, "off", {"-v"});
  ASSERT_EQ(off.result.rc, 0) << off.result.err;
  EXPECT_NE(off.result.err.find("loop 0 (line 15): interpreted (jit off): --jit off"),
            std::string::npos)
      << off.result.err;
}

// A distributed run's --log-json lines say each loop's tier as the workers
// report it: with --jit on every worker runs every loop compiled.
TEST(Jit, DistributedLogLinesSayEachLoopsTier) {
  const std::string dir = testing::MakeTempDir("rigel-jit-log");
  for (const std::string mode : {"on", "off"}) {
    const std::string log = dir + "/" + mode + ".jsonl";
    JitRun r = RunWith("sparse_lr.rgl", {"EPOCHS=2"}, 2, mode, {"--log-json", log});
    ASSERT_EQ(r.result.rc, 0) << r.result.err;
    std::istringstream lines(testing::Slurp(log));
    int n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      const nlohmann::json tiers = nlohmann::json::parse(line).at("tiers");
      ASSERT_EQ(tiers.size(), 2u) << line;  // the training and the test loop
      for (const auto& [loop, t] : tiers.items()) {
#if RIGEL_HAVE_LLVM
        const bool compiled = mode == "on";
#else
        const bool compiled = false;
#endif
        EXPECT_EQ(t.at("tier"), compiled ? "jit" : "interpreter") << mode << ": " << line;
        EXPECT_EQ(t.at("compiled_workers"), compiled ? 2 : 0) << mode << ": " << line;
        EXPECT_EQ(t.at("compile_ms").get<double>() > 0, compiled) << mode << ": " << line;
      }
    }
    EXPECT_EQ(n, 2) << mode;
  }
}

TEST(Jit, RejectsAnUnknownMode) {
  const std::string dir = testing::MakeTempDir("rigel-jit-test");
  testing::RigelResult r = testing::RunRigel({"run", kExamples + "bias.rgl", "--jit", "fast"}, dir);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--jit"), std::string::npos) << r.err;
  r = testing::RunRigel({"run", kExamples + "bias.rgl"}, dir);
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(Jit, DumpIrPrintsTheCompiledBody) {
  const std::string dir = testing::MakeTempDir("rigel-jit-test");
  testing::RigelResult r = testing::RunRigel({"dump-ir", "--jit", kExamples + "mf.rgl"}, dir);
#if RIGEL_HAVE_LLVM
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("llvm ir loop 0"), std::string::npos);
  EXPECT_NE(r.out.find("define"), std::string::npos);
#else
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("llvm-19-dev"), std::string::npos) << r.err;
#endif
}

}  // namespace
}  // namespace rigel
