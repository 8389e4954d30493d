// The version-2 reference programs of DSL.md (LDA, softmax regression,
// k-means, a factorization machine) run serially and on local clusters (real
// processes), checked against what their generators planted
// (examples/data/*.info), against each other, and for exact bookkeeping; and
// sample() and --save-vectors across placements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "exec/param_file.h"
#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

const std::string kExamples = std::string(RIGEL_SOURCE_DIR) + "/examples/";
const std::string kData = kExamples + "data/";

using testing::PrintedNumbers;
using testing::RigelResult;
using testing::Slurp;

// `rigel run PROGRAM FLAGS...`, serially (workers 0) or on a local cluster
// of `workers` workers and 2 servers, in `dir`.
RigelResult RunProgram(const std::string& program, int workers, const std::string& dir,
                       const std::vector<std::string>& flags = {}) {
  std::vector<std::string> args = {"run", program};
  if (workers > 0) {
    args.insert(args.end(), {"--workers", std::to_string(workers), "--servers", "2", "--run-dir",
                             dir + "/run" + std::to_string(workers)});
  }
  args.insert(args.end(), flags.begin(), flags.end());
  return testing::RunRigel(args, dir);
}

std::string Logs(const std::string& dir, int workers) {
  const std::string run = dir + "/run" + std::to_string(workers) + "/";
  return Slurp(run + "scheduler.log") + Slurp(run + "worker-0.log");
}

// The number after "name: " in a generator's .info file.
double Planted(const std::string& info, const std::string& name) {
  std::istringstream in(Slurp(info));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ": ", 0) == 0) return std::stod(line.substr(name.size() + 2));
  }
  ADD_FAILURE() << info << " has no '" << name << "'";
  return std::nan("");
}

// The last printed number of a run (a final metric).
double Last(const RigelResult& r) {
  std::vector<double> n = PrintedNumbers(r.out);
  return n.empty() ? std::nan("") : n.back();
}

// A word2vec text file (--save-vectors): words in file order, and rows.
struct Vectors {
  int64_t v = 0, d = 0;
  std::vector<std::string> words;
  std::vector<std::vector<float>> rows;
};

Vectors ReadVectors(const std::string& path) {
  Vectors out;
  std::ifstream in(path);
  std::string line;
  EXPECT_TRUE(std::getline(in, line)) << path;
  std::istringstream head(line);
  head >> out.v >> out.d;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string w;
    ls >> w;
    std::vector<float> row;
    std::string x;
    while (ls >> x) row.push_back(std::strtof(x.c_str(), nullptr));
    EXPECT_EQ(static_cast<int64_t>(row.size()), out.d) << line;
    out.words.push_back(w);
    out.rows.push_back(std::move(row));
  }
  EXPECT_EQ(static_cast<int64_t>(out.words.size()), out.v) << path;
  return out;
}

const exec::SavedParam* Find(const std::vector<exec::SavedParam>& ps, const std::string& name) {
  for (const auto& p : ps) {
    if (p.name == name) return &p;
  }
  ADD_FAILURE() << "no parameter " << name;
  return nullptr;
}

// ---------------------------------------------------------------- LDA

// The count tables of a finished LDA run, recomputed from z: ndk, nwk and nk
// must equal them exactly, and sum(nk) is the token count.
void ExpectCountsMatchZ(const std::string& params_file, const data::Dataset& corpus) {
  auto saved = exec::ReadParams(params_file);
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  const auto *z = Find(*saved, "z"), *ndk = Find(*saved, "ndk"), *nwk = Find(*saved, "nwk"),
             *nk = Find(*saved, "nk");
  ASSERT_TRUE(z && ndk && nwk && nk);
  const int64_t k = ndk->width;
  ASSERT_EQ(static_cast<int64_t>(z->values.size()), corpus.count);
  std::vector<float> want_ndk(ndk->values.size()), want_nwk(nwk->values.size()),
      want_nk(nk->values.size());
  for (int64_t t = 0; t < corpus.count; ++t) {
    const float topic = z->values[t];
    ASSERT_EQ(topic, std::floor(topic));
    ASSERT_GE(topic, 0);
    ASSERT_LT(topic, k);
    const int64_t zt = static_cast<int64_t>(topic);
    want_ndk[corpus.token_doc[t] * k + zt] += 1;
    want_nwk[corpus.tokens[t] * k + zt] += 1;
    want_nk[zt] += 1;
  }
  EXPECT_EQ(ndk->values, want_ndk);
  EXPECT_EQ(nwk->values, want_nwk);
  EXPECT_EQ(nk->values, want_nk);
  double total = 0;
  for (float c : nk->values) total += c;
  EXPECT_EQ(total, static_cast<double>(corpus.count));
}

// For each planted topic (docs.txt.topics: `word:probability` per line), the
// best cosine similarity with a learned topic (a column of nwk).
std::vector<double> TopicMatches(const Vectors& nwk, const std::string& topics_file) {
  std::map<std::string, int64_t> row;
  for (size_t r = 0; r < nwk.words.size(); ++r) row[nwk.words[r]] = static_cast<int64_t>(r);
  std::vector<double> norm(nwk.d, 0.0);
  for (const auto& r : nwk.rows) {
    for (int64_t k = 0; k < nwk.d; ++k) norm[k] += double(r[k]) * r[k];
  }
  std::vector<double> best;
  std::istringstream in(Slurp(topics_file));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream items(line);
    std::string item;
    std::vector<double> dot(nwk.d, 0.0);
    double pn = 0;
    while (items >> item) {
      const size_t colon = item.find(':');
      const double p = std::stod(item.substr(colon + 1));
      pn += p * p;
      auto it = row.find(item.substr(0, colon));
      if (it == row.end()) continue;  // a planted word that no document drew
      for (int64_t k = 0; k < nwk.d; ++k) dot[k] += p * nwk.rows[it->second][k];
    }
    double b = 0;
    for (int64_t k = 0; k < nwk.d; ++k) {
      if (norm[k] > 0) b = std::max(b, dot[k] / std::sqrt(pn * norm[k]));
    }
    best.push_back(b);
  }
  return best;
}

int Matched(const std::vector<double>& best) {
  int n = 0;
  for (double b : best) n += b >= 0.9;
  return n;
}

TEST(ModelsV2, LdaKeepsItsCountsExactAndRecoversThePlantedTopics) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  auto corpus = data::LoadTokens(kData + "docs.txt", {.min_count = 1, .lines = true});
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  const std::string topics = kData + "docs.txt.topics";
  const double planted_topics = 20;

  RigelResult serial = RunProgram(
      kExamples + "lda.rgl", 0, dir,
      {"--save-params", dir + "/serial.params", "--save-vectors", "nwk=" + dir + "/serial.vec"});
  ASSERT_EQ(serial.rc, 0) << serial.err;
  ExpectCountsMatchZ(dir + "/serial.params", *corpus);
  std::vector<double> best = TopicMatches(ReadVectors(dir + "/serial.vec"), topics);
  ASSERT_EQ(best.size(), planted_topics);
  EXPECT_EQ(Matched(best), 20) << serial.out;
  // The per-token log-likelihood (DSL.md version 3's measure) of serial
  // chains: the sampler ends in a local optimum that depends on the seed.
  // Serial chains of seeds 0 to 49 ended between -4.296 and -4.109 (4.5%
  // apart), at levels about 0.06 apart: -4.11, -4.17, -4.23 and -4.29 (8% of
  // seeds), one level per planted pair that shares a learned topic.
  // Distributed chains fall on the same levels (2 workers, 13 runs: -4.293 to
  // -4.109; CI once saw -4.268). So a distributed chain is held to what
  // serial chains reach: seed 0 ends best (-4.109) and seed 1 nearly worst
  // (-4.288), and DSL.md's 2% of loss is measured from the worse of the two.
  const double serial_ll = Last(serial);
  RigelResult other = RunProgram(kExamples + "lda.rgl", 0, dir, {"--seed", "1"});
  ASSERT_EQ(other.rc, 0) << other.err;
  const double worst_serial = std::min(serial_ll, Last(other));

  for (int workers : {2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const std::string p = dir + "/d" + std::to_string(workers);
    RigelResult r =
        RunProgram(kExamples + "lda.rgl", workers, dir,
                   {"--save-params", p + ".params", "--save-vectors", "nwk=" + p + ".vec"});
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir, workers);
    // The sampling loop's nk is relaxed, ndk and nwk move by rotation and
    // z through the servers: every count still adds up exactly.
    ExpectCountsMatchZ(p + ".params", *corpus);
    std::vector<double> got = TopicMatches(ReadVectors(p + ".vec"), topics);
    // Another chain (nk is stale within a block, and when the other
    // workers' deltas arrive varies from run to run) ends in another local
    // optimum of the sampler, where two planted topics share a learned one
    // and another planted topic is split: 2 unmatched topics per such pair.
    // Runs here matched 14 to 16 of 20; random topics would match none.
    EXPECT_GE(Matched(got), 10) << r.out;
    ::testing::Test::RecordProperty("lda_topics_matched_" + std::to_string(workers),
                                    std::to_string(Matched(got)));
    ::testing::Test::RecordProperty("lda_loglik_" + std::to_string(workers),
                                    std::to_string(Last(r)) + " vs " + std::to_string(serial_ll));
    // "iter I mean_log_p M loglik L": mean_log_p (of the sampled draws)
    // rises from about -2.7 to near 0 on every chain; the log-likelihood
    // ends no more than 2% below the worse of the serial chains.
    std::vector<double> n = PrintedNumbers(r.out);
    ASSERT_EQ(n.size(), 90u) << r.out;
    EXPECT_LT(n[1], -2.0);
    EXPECT_GT(n[n.size() - 2], -0.2);
    EXPECT_GE(Last(r), worst_serial - 0.02 * std::fabs(worst_serial)) << r.out << serial.out;
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// --save-vectors writes what --save-params holds, row for row, with the
// corpus' words in id order, serially and from the servers.
TEST(ModelsV2, SavedVectorsReadBackAsTheParameter) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  // The LDA documents as one stream: 2 * 10^5 tokens, a quick run.
  auto corpus = data::LoadTokens(kData + "docs.txt", {.min_count = 5});
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const std::string p = dir + "/w" + std::to_string(workers);
    RigelResult r = RunProgram(kExamples + "word2vec.rgl", workers, dir,
                               {"--set", "EPOCHS=1", "--set", "WINDOW=1", "--set", "NEG=1", "--set",
                                "corpus.path=" + kData + "docs.txt", "--save-params", p + ".params",
                                "--save-vectors", "emb=" + p + ".vec"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto saved = exec::ReadParams(p + ".params");
    ASSERT_TRUE(saved.ok()) << saved.status().message();
    const exec::SavedParam* emb = Find(*saved, "emb");
    ASSERT_NE(emb, nullptr);
    Vectors v = ReadVectors(p + ".vec");
    ASSERT_EQ(v.v, corpus->vocab);
    ASSERT_EQ(v.d, emb->width);
    EXPECT_EQ(v.words, corpus->words);
    for (int64_t r2 = 0; r2 < v.v; ++r2) {
      for (int64_t k = 0; k < v.d; ++k) {
        ASSERT_EQ(v.rows[r2][k], emb->values[r2 * v.d + k]) << v.words[r2] << " column " << k;
      }
    }
  }
  // A 1-D parameter whose rows are not words is refused before anything runs.
  RigelResult bad =
      RunProgram(kExamples + "kmeans.rgl", 0, dir, {"--save-vectors", "N=" + dir + "/n.vec"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("'N' is 1-D with 10 rows; only a 2-D parameter"), std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.out, "");
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// A 2-D parameter without a vocabulary: its rows are named by their ids, in
// row order, serially and from the servers.
TEST(ModelsV2, SavedVectorsWithoutWordsAreNamedByRowId) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const std::string p = dir + "/k" + std::to_string(workers);
    RigelResult r = RunProgram(kExamples + "kmeans.rgl", workers, dir,
                               {"--set", "ITERS=2", "--save-params", p + ".params",
                                "--save-vectors", "Cen=" + p + ".vec"});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto saved = exec::ReadParams(p + ".params");
    ASSERT_TRUE(saved.ok()) << saved.status().message();
    const exec::SavedParam* cen = Find(*saved, "Cen");
    ASSERT_NE(cen, nullptr);
    Vectors v = ReadVectors(p + ".vec");
    ASSERT_EQ(v.v, cen->rows);
    ASSERT_EQ(v.d, cen->width);
    for (int64_t r2 = 0; r2 < v.v; ++r2) {
      EXPECT_EQ(v.words[r2], std::to_string(r2));
      for (int64_t k = 0; k < v.d; ++k) {
        ASSERT_EQ(v.rows[r2][k], cen->values[r2 * v.d + k]) << "row " << r2 << " column " << k;
      }
    }
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// ------------------------------------------------------- k-means, sample()

TEST(ModelsV2, KmeansWithoutRelaxIsDataParallelAndPrintsTheSerialNumbers) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  RigelResult plan =
      testing::RunRigel({"explain", kExamples + "kmeans.rgl", "--workers", "2", "--json"}, dir);
  ASSERT_EQ(plan.rc, 0) << plan.err;
  nlohmann::json j = nlohmann::json::parse(plan.out);
  const nlohmann::json& assign = j["loops"][0];
  EXPECT_EQ(assign["schedule"]["kind"], "data_parallel");
  EXPECT_EQ(assign["params"]["S"]["strategy"], "reduce");
  EXPECT_EQ(assign["params"]["N"]["strategy"], "reduce");
  EXPECT_EQ(assign["params"]["Cen"]["strategy"], "replicated");
  EXPECT_EQ(j["loops"][1]["schedule"]["kind"], "data_parallel");

  RigelResult serial = RunProgram(kExamples + "kmeans.rgl", 0, dir);
  ASSERT_EQ(serial.rc, 0) << serial.err;
  std::vector<double> want = PrintedNumbers(serial.out);
  // The last iterations reach the planted clusters' inertia.
  EXPECT_NEAR(want.back(), Planted(kData + "points.csv.info", "planted inertia"), 0.05)
      << serial.out;
  for (int workers : {2, 3}) {
    RigelResult r = RunProgram(kExamples + "kmeans.rgl", workers, dir);
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir, workers);
    std::vector<double> got = PrintedNumbers(r.out);
    ASSERT_EQ(got.size(), want.size()) << r.out;
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_LE(std::fabs(got[k] - want[k]), 1e-5 * std::max(1.0, std::fabs(want[k])))
          << workers << " workers, number " << k << ":\n"
          << r.out << "serial:\n"
          << serial.out;
    }
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// sample() draws from (seed, run, element, draw), so a run on any number of
// workers draws what the serial run draws: integer sums of the draws agree
// exactly.
TEST(ModelsV2, SampleDrawsTheSameOnEveryPlacement) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  const std::string prog = dir + "/sample.rgl";
  std::ofstream(prog) << "data r = triples(\"" << kData << "ratings.csv\")\n"
                      << "accum s: f32\naccum c: f32[4]\n"
                      << "for ep in 0..2 {\n  s = 0\n  c = 0\n"
                      << "  parallel for (i, j, v) in r {\n"
                      << "    var p = zeros(4)\n    p[0] = 1\n    p[1] = v * v\n    p[2] = 2\n"
                      << "    p[3] = 0.5\n    let k = sample(p)\n    s += k * (i % 7)\n"
                      << "    c[k] += 1\n  }\n"
                      << "  print(\"ep\", ep, \"s\", s, \"c\", c[0], c[1], c[2], c[3])\n}\n";
  RigelResult serial = RunProgram(prog, 0, dir);
  ASSERT_EQ(serial.rc, 0) << serial.err;
  RigelResult other_seed = RunProgram(prog, 0, dir, {"--seed", "1"});
  EXPECT_NE(other_seed.out, serial.out);
  for (int workers : {2, 3}) {
    RigelResult r = RunProgram(prog, workers, dir);
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir, workers);
    EXPECT_EQ(r.out, serial.out) << workers << " workers";
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// ------------------------------------------------------ softmax, FM

TEST(ModelsV2, SoftmaxReachesThePlantedModelsAccuracy) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  const double planted = Planted(kData + "multi.svm.info", "planted model test accuracy");
  RigelResult serial = RunProgram(kExamples + "softmax.rgl", 0, dir);
  ASSERT_EQ(serial.rc, 0) << serial.err;
  EXPECT_GE(Last(serial), planted - 0.01) << serial.out;
  // Relaxed W: within 1 point of the serial run (DSL.md v3 promises 2). The
  // last epoch's accuracy moves by up to 0.5 point from epoch to epoch; 10
  // runs on 2 workers ended 0.03 to 0.31 point below serial, and CI under
  // load saw 0.58 (0.7506 against 0.7564), below the planted model's 1 point
  // that this test used to ask.
  for (int workers : {2, 3}) {
    RigelResult r = RunProgram(kExamples + "softmax.rgl", workers, dir);
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir, workers);
    EXPECT_GE(Last(r), Last(serial) - 0.01) << r.out;
    ::testing::Test::RecordProperty(
        "softmax_accuracy_" + std::to_string(workers),
        std::to_string(Last(r)) + " planted " + std::to_string(planted));
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

TEST(ModelsV2, FactorizationMachineBeatsLogisticRegressionOnItsData) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  const std::vector<std::string> data = {"--set", "train.path=" + kData + "fm.svm", "--set",
                                         "test.path=" + kData + "fm_test.svm"};
  RigelResult fm = RunProgram(kExamples + "fm.rgl", 0, dir);
  ASSERT_EQ(fm.rc, 0) << fm.err;
  RigelResult lr = RunProgram(kExamples + "sparse_lr.rgl", 0, dir, data);
  ASSERT_EQ(lr.rc, 0) << lr.err;
  // Labels come from pairwise interactions a linear model cannot express.
  EXPECT_GT(Last(fm), Last(lr) + 0.05) << fm.out << lr.out;
  EXPECT_LE(Last(lr), Planted(kData + "fm.svm.info", "planted linear part test accuracy") + 0.03);
  for (int workers : {2, 3}) {
    RigelResult r = RunProgram(kExamples + "fm.rgl", workers, dir);
    ASSERT_EQ(r.rc, 0) << r.err << Logs(dir, workers);
    EXPECT_GE(Last(r), Last(fm) - 0.02) << r.out;
    EXPECT_GT(Last(r), Last(lr) + 0.05);
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

// The first `lines` lines of `from`, written to `to`.
void Head(const std::string& from, const std::string& to, int lines) {
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  for (int k = 0; k < lines && std::getline(in, line); ++k) out << line << "\n";
  ASSERT_TRUE(out.good()) << to;
}

// The full-size runs above take minutes under the sanitizers, which run
// without them (scripts/test.sh --sanitize); this one runs the same
// programs on a few hundred documents or rows and one or two passes, so
// that every code path they take, serial and distributed, is checked under
// ASan and UBSan too. The checks hold at any size: LDA's counts add up
// exactly, and every printed metric is a finite loss or an accuracy in [0, 1].
TEST(ModelsV2, LdaSoftmaxAndFmRunOnAFewRowsSeriallyAndOnTwoWorkers) {
  const std::string dir = testing::MakeTempDir("rigel-models-v2");
  Head(kData + "docs.txt", dir + "/docs.txt", 200);
  auto corpus = data::LoadTokens(dir + "/docs.txt", {.min_count = 1, .lines = true});
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  for (int workers : {0, 2}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const std::string p = dir + "/lda" + std::to_string(workers) + ".params";
    RigelResult r = RunProgram(
        kExamples + "lda.rgl", workers, dir,
        {"--set", "ITERS=2", "--set", "corpus.path=" + dir + "/docs.txt", "--save-params", p});
    ASSERT_EQ(r.rc, 0) << r.err << (workers ? Logs(dir, workers) : "");
    ExpectCountsMatchZ(p, *corpus);
    EXPECT_EQ(PrintedNumbers(r.out).size(), 6u) << r.out;
  }
  struct Model {
    std::string program, train, base;
  };
  for (const Model& m : {Model{"softmax.rgl", "multi.svm", "1"}, Model{"fm.rgl", "fm.svm", ""}}) {
    const std::string rows = dir + "/" + m.train;
    Head(kData + m.train, rows, 3000);
    for (int workers : {0, 2}) {
      SCOPED_TRACE(m.program + " on " + std::to_string(workers) + " workers");
      // Tested on its training rows: a test file's features could lie
      // beyond the few training rows' dimension.
      RigelResult r = RunProgram(
          kExamples + m.program, workers, dir,
          {"--set", "EPOCHS=2", "--set", "train.path=" + rows, "--set", "test.path=" + rows});
      ASSERT_EQ(r.rc, 0) << r.err << (workers ? Logs(dir, workers) : "");
      // "epoch E train_loss L test_accuracy A", twice.
      std::vector<double> n = PrintedNumbers(r.out);
      ASSERT_EQ(n.size(), 6u) << r.out;
      for (int e = 0; e < 2; ++e) {
        EXPECT_EQ(n[3 * e], e);
        EXPECT_TRUE(std::isfinite(n[3 * e + 1])) << r.out;
        EXPECT_GE(n[3 * e + 2], 0.0) << r.out;
        EXPECT_LE(n[3 * e + 2], 1.0) << r.out;
      }
    }
  }
  std::string cmd = "rm -rf " + dir;
  (void)std::system(cmd.c_str());
}

}  // namespace
}  // namespace rigel
