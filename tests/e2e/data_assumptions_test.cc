// Programs written from scratch whose data break, or keep, what an analysis
// might assume about data: repeated (i, j) pairs in a triples file, repeated
// tokens, unsorted files under `ordered` loops, repeated and unsorted libsvm
// features, and indices outside a parameter. Each runs serially (`rigel
// run`), on 2 workers and 2 servers, and on 3 workers where the schedule cuts
// the data by coordinates (every schedule but data_parallel). Either every
// run prints the same numbers within 1e-5 relative, or every run is refused
// with a message naming the data file, the line and what was wrong.
//
// The updates are chosen so that the serial file order is the only right
// answer: h = 0.5 h + v depends on the order of two lines with the same
// (i, j), an ordered loop's result on lexicographic order. The analysis
// decides which schedule runs each loop; the table pins that too, so a case
// keeps testing the schedule it was written for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/process_util.h"

namespace rigel {
namespace {

using testing::PrintedNumbers;
using testing::RigelResult;
using testing::RunRigel;

// ---- data --------------------------------------------------------------

struct Triple {
  int i, j, v;
};

// `pairs` (at most rows * cols) distinct (i, j) in [0, rows) x [0, cols), each listed `repeat(k)`
// times with its own value, shuffled so that repeats are not adjacent.
template <typename Repeat>
std::vector<Triple> MakeTriples(int pairs, int rows, int cols, uint32_t seed, Repeat repeat) {
  std::mt19937 rng(seed);
  std::vector<std::pair<int, int>> all;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) all.emplace_back(i, j);
  }
  std::shuffle(all.begin(), all.end(), rng);
  // Row rows-1 and column cols-1 are always present, so the data's shape is
  // the one the program is written for.
  std::iter_swap(all.begin(), std::find(all.begin(), all.end(), std::pair{rows - 1, cols - 1}));
  all.resize(static_cast<size_t>(pairs));
  std::vector<Triple> out;
  for (int k = 0; k < pairs; ++k) {
    int n = repeat(k);
    for (int r = 0; r < n; ++r) {
      out.push_back({all[k].first, all[k].second, static_cast<int>(rng() % 5) + 1});
    }
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

std::vector<Triple> Repeated(uint32_t seed, int rows = 12, int cols = 10) {
  return MakeTriples(60, rows, cols, seed, [](int k) { return 1 + k % 3; });
}
std::vector<Triple> Distinct(uint32_t seed, int rows = 12, int cols = 10) {
  return MakeTriples(rows * cols * 3 / 4, rows, cols, seed, [](int) { return 1; });
}
std::vector<Triple> Sorted(std::vector<Triple> t) {
  std::stable_sort(t.begin(), t.end(), [](const Triple& a, const Triple& b) {
    return a.i != b.i ? a.i < b.i : a.j < b.j;
  });
  return t;
}

std::string Csv(const std::vector<Triple>& t) {
  std::string s;
  for (const Triple& x : t) {
    s += std::to_string(x.i) + "," + std::to_string(x.j) + "," + std::to_string(x.v) + "\n";
  }
  return s;
}

// Lines of words w0..w(V-1), with frequent repeats, so ids and windows meet
// the same token many times.
std::string Corpus(uint32_t seed, int lines, int vocab) {
  std::mt19937 rng(seed);
  std::string s;
  for (int l = 0; l < lines; ++l) {
    int n = 3 + static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) {
      // Skewed: low ids are common, so the same word is often in a window twice.
      int w = static_cast<int>(std::min(rng() % vocab, rng() % vocab));
      s += (k ? " w" : "w") + std::to_string(w);
    }
    s += "\n";
  }
  return s;
}

// Samples whose features repeat an index and are out of order.
std::string Libsvm(uint32_t seed, int samples, int dim) {
  std::mt19937 rng(seed);
  std::string s;
  for (int n = 0; n < samples; ++n) {
    s += (rng() % 2) ? "+1" : "-1";
    int k = 1 + static_cast<int>(rng() % 5);
    int first = 1 + static_cast<int>(rng() % dim);
    for (int f = 0; f < k; ++f) {
      int idx = f == k - 1 ? first : 1 + static_cast<int>(rng() % dim);
      s += " " + std::to_string(idx) + ":" + std::to_string(1 + rng() % 3);
    }
    s += "\n";
  }
  return s;
}

// ---- cases -------------------------------------------------------------

struct Case {
  std::string name;
  std::string program;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> schedules;  // expected schedule of each loop, in order
  // Empty: every run prints the same numbers. Otherwise every run fails and
  // its error output holds each of these.
  std::vector<std::string> refusal = {};
};

std::string PrintSum2D(const std::string& param, const std::string& rows, const std::string& cols) {
  return "accum s_" + param + ": f32\nparallel for (a, b) in grid(" + rows + ", " + cols +
         ") { s_" + param + " += " + param + "[a, b] * (1 + a + 3 * b) }\nprint(\"" + param +
         "\", s_" + param + ")\n";
}
std::string PrintSum1D(const std::string& param, const std::string& rows) {
  return "accum s_" + param + ": f32\nparallel for a in range(" + rows + ") { s_" + param +
         " += " + param + "[a] * (1 + a) }\nprint(\"" + param + "\", s_" + param + ")\n";
}

std::vector<Case> Cases() {
  std::vector<Case> c;
  const std::string decay =
      "const C = 10\ndata r = triples(\"r.csv\")\nparam h: f32[r.rows, C] = zeros()\n"
      "parallel for (i, j, v) in r { h[i, j] = h[i, j] * 0.5 + v }\n" +
      PrintSum2D("h", "r.rows", "C");
  c.push_back({"RepeatedPairsDecay",
               decay,
               {{"r.csv", Csv(Repeated(1))}},
               {"model_parallel_1d", "data_parallel"}});
  c.push_back({"DistinctPairsDecay",
               decay,
               {{"r.csv", Csv(Distinct(2))}},
               {"model_parallel_1d", "data_parallel"}});
  c.push_back({"RepeatedPairsLastWriteWins",
               "const C = 10\ndata r = triples(\"r.csv\")\nparam h: f32[r.rows, C] = zeros()\n"
               "parallel for (i, j, v) in r { h[i, j] = v }\n" +
                   PrintSum2D("h", "r.rows", "C"),
               {{"r.csv", Csv(Repeated(3))}},
               {"model_parallel_1d", "data_parallel"}});
  c.push_back({"RepeatedPairsCount",
               "const C = 10\ndata r = triples(\"r.csv\")\nparam n: f32[r.rows, C] = zeros()\n"
               "parallel for (i, j, v) in r { n[i, j] += 1 }\n"
               "accum sq: f32\nparallel for (a, b) in grid(r.rows, C) { sq += n[a, b] * n[a, b] }\n"
               "print(\"sq\", sq)\n",
               {{"r.csv", Csv(Repeated(4))}},
               // A count is a sum, keyed by its row: cut 1-D by i, it stays local.
               {"model_parallel_1d", "data_parallel"}});
  c.push_back({"RepeatedPairsRowDecay",
               "data r = triples(\"r.csv\")\nparam b: f32[r.rows] = zeros()\n"
               "parallel for (i, j, v) in r { b[i] = b[i] * 0.9 + v * (j + 1) }\n" +
                   PrintSum1D("b", "r.rows"),
               {{"r.csv", Csv(Repeated(5))}},
               {"model_parallel_1d", "data_parallel"}});
  // Counts written as a read and an assignment: to the analysis only += and
  // -= make a sum, so W stays local and H rotates (with += they would be
  // reductions and the loop model-parallel by h).
  c.push_back({"RepeatedPairsRotation",
               "const C = 10\ndata r = triples(\"r.csv\")\nparam W: f32[r.rows] = zeros()\n"
               "param H: f32[r.cols] = zeros()\nparam h: f32[r.rows, C] = zeros()\n"
               "parallel for (i, j, v) in r {\n  W[i] = W[i] + 1\n  H[j] = H[j] + v\n"
               "  h[i, j] = h[i, j] * 0.5 + v\n}\n" +
                   PrintSum1D("W", "r.rows") + PrintSum1D("H", "r.cols") +
                   PrintSum2D("h", "r.rows", "C"),
               {{"r.csv", Csv(Repeated(6))}},
               {"conflict_free_2d", "data_parallel", "data_parallel", "data_parallel"}});
  const std::string ordered_rows =
      "data r = triples(\"r.csv\")\nparam acc: f32[r.rows] = zeros()\n"
      "parallel ordered for (i, j, v) in r { acc[i] = acc[i] * 0.5 + v * (j + 1) }\n" +
      PrintSum1D("acc", "r.rows");
  c.push_back({"OrderedUnsortedRows",
               ordered_rows,
               {{"r.csv", Csv(Repeated(7))}},
               {"model_parallel_1d", "data_parallel"}});
  const std::string ordered_scalar =
      "data r = triples(\"r.csv\")\nparam s0: f32[1] = zeros()\n"
      "parallel ordered for (i, j, v) in r { s0[0] = s0[0] * 0.5 + v * (i + 2 * j + 1) }\n" +
      PrintSum1D("s0", "1");
  c.push_back({"OrderedUnsortedScalar",
               ordered_scalar,
               {{"r.csv", Csv(Repeated(8))}},
               {"serial", "data_parallel"}});
  c.push_back({"OrderedSortedScalar",
               ordered_scalar,
               {{"r.csv", Csv(Sorted(Repeated(9)))}},
               {"serial", "data_parallel"}});
  c.push_back(
      {"OrderedWavefrontRepeatedPairs",
       "data r = triples(\"r.csv\")\nparam G: f32[9, 9] = fill(1.0)\n"
       "parallel ordered for (i, j, v) in r {\n"
       "  G[i + 1, j + 1] = 0.5 * G[i, j + 1] + 0.25 * G[i + 1, j] + 0.1 * G[i + 1, j + 1] + v\n"
       "}\n" +
           PrintSum2D("G", "9", "9"),
       {{"r.csv", Csv(MakeTriples(50, 8, 8, 10, [](int k) { return 1 + k % 2; }))}},
       {"wavefront", "data_parallel"}});
  const std::string corpus = Corpus(11, 60, 9);
  c.push_back({"TokensCountRelaxed",
               "data corpus = tokens(\"c.txt\")\nparam cnt: f32[corpus.vocab] = zeros()\n"
               "parallel for (t, w) in corpus relax cnt { cnt[w] += 1 }\n" +
                   PrintSum1D("cnt", "corpus.vocab"),
               {{"c.txt", corpus}},
               {"data_parallel", "data_parallel"}});
  c.push_back({"TokensLastPosition",
               "data corpus = tokens(\"c.txt\")\nparam last: f32[corpus.vocab] = zeros()\n"
               "parallel for (t, w) in corpus { last[w] = t + 0.5 }\n" +
                   PrintSum1D("last", "corpus.vocab"),
               {{"c.txt", corpus}},
               {"serial", "data_parallel"}});
  c.push_back({"TokensWindowRepeats",
               "data corpus = tokens(\"c.txt\")\nparam co: f32[corpus.vocab] = zeros()\n"
               "parallel for (t, w) in corpus relax co {\n"
               "  for c in window(corpus, t, 2) { co[c] += w + 1 }\n}\n" +
                   PrintSum1D("co", "corpus.vocab"),
               {{"c.txt", corpus}},
               {"data_parallel", "data_parallel"}});
  c.push_back({"TokensPositions",
               "data corpus = tokens(\"c.txt\")\nparam z: f32[corpus.count] = zeros()\n"
               "parallel for (t, w) in corpus { z[t] = z[t] * 0.5 + w }\n" +
                   PrintSum1D("z", "corpus.count"),
               {{"c.txt", corpus}},
               {"data_parallel", "data_parallel"}});
  const std::string svm = Libsvm(12, 80, 6);
  c.push_back({"LibsvmRepeatedFeaturesRelaxed",
               "data d = libsvm(\"d.svm\")\nparam w: f32[d.dim] = zeros()\n"
               "parallel for (n, row) in d relax w {\n"
               "  for (f, x) in row.features { w[f] += x * (row.label + 1) }\n}\n" +
                   PrintSum1D("w", "d.dim"),
               {{"d.svm", svm}},
               {"data_parallel", "data_parallel"}});
  c.push_back({"LibsvmRepeatedFeaturesDecay",
               "data d = libsvm(\"d.svm\")\nparam w: f32[d.dim] = zeros()\n"
               "parallel for (n, row) in d {\n"
               "  for (f, x) in row.features { w[f] = w[f] * 0.5 + x }\n}\n" +
                   PrintSum1D("w", "d.dim"),
               {{"d.svm", svm}},
               {"serial", "data_parallel"}});

  // Refusals: one bad element, so every run (whichever worker meets it)
  // names the same line.
  std::vector<Triple> oor = Distinct(13, 7, 6);
  const int oor_line = 21;
  oor.insert(oor.begin() + (oor_line - 1), Triple{7, 2, 3});
  c.push_back({"TriplesRowOutsideParameter",
               "data r = triples(\"r.csv\")\nparam b: f32[7] = zeros()\n"
               "parallel for (i, j, v) in r { b[i] += v }\n" +
                   PrintSum1D("b", "7"),
               {{"r.csv", Csv(oor)}},
               {"model_parallel_1d", "data_parallel"},  // b is a sum keyed by i: local
               {"prog.rgl:3:31: error: index 7 out of range for the rows of 'b' (7)",
                "r.csv:" + std::to_string(oor_line) + ": note: while running element"}});
  c.push_back({"SplitPartRowOutsideParameter",
               "data all = triples(\"r.csv\")\ndata tr, te = split(all, test=0.3, seed=3)\n"
               "param b: f32[7] = zeros()\naccum s: f32\n"
               "parallel for (i, j, v) in tr { s += b[i] }\n"
               "parallel for (i, j, v) in te { s += b[i] }\nprint(\"s\", s)\n",
               {{"r.csv", Csv(oor)}},
               {"data_parallel", "data_parallel"},
               {"index 7 out of range for the rows of 'b' (7)",
                "r.csv:" + std::to_string(oor_line) + ": note: while running element"}});
  // train.svm's dim is 6; the test file's one sample with feature 9 is on line 3.
  c.push_back({"LibsvmFeatureBeyondTrainingDim",
               "data train = libsvm(\"train.svm\")\ndata test = libsvm(\"test.svm\")\n"
               "param w: f32[train.dim] = fill(0.5)\naccum z: f32\n"
               "parallel for (n, row) in test { for (f, x) in row.features { z += w[f] * x } }\n"
               "print(\"z\", z)\n",
               {{"train.svm", svm}, {"test.svm", "+1 1:1 2:1\n-1 3:2\n+1 2:1 9:1\n-1 1:1\n"}},
               {"data_parallel"},
               {"index 8 out of range for the rows of 'w' (6)",
                "test.svm:3: note: while running element 2 of data set 'test': +1 2:1 9:1"}});
  // Four words; "rare" occurs once, so it alone gets id 3 (ids go by count).
  c.push_back({"TokenIdOutsideParameter",
               "data corpus = tokens(\"c.txt\")\nparam c3: f32[3] = zeros()\n"
               "parallel for (t, w) in corpus relax c3 { c3[w] += 1 }\n" +
                   PrintSum1D("c3", "3"),
               {{"c.txt", "a b c a b c a\nb a c a\nc rare a b\na b\n"}},
               {"data_parallel", "data_parallel"},
               {"index 3 out of range for the rows of 'c3' (3)",
                "c.txt:3: note: while running element 12 of data set 'corpus': c rare a b"}});
  // A serial loop whose rows the slice cannot know (written under a
  // condition on a parameter): the idle worker once held every row of C as
  // its own, kept a base that another loop's pull made stale, and pushed the
  // difference back (tot 280000 against 120000 on 2 workers).
  c.push_back(
      {"SerialLoopWithRowsUnderAParameterCondition",
       "data r = triples(\"r.csv\")\nparam S: f32[4] = zeros()\nparam N: f32[4] = zeros()\n"
       "param C: f32[5] = zeros()\naccum tot: f32\nfor it in 0..3 {\n"
       "  parallel for (i, j, v) in r {\n    S[(i + j) % 4] += v\n    N[(i + j) % 4] += 1\n  }\n"
       "  parallel for k in range(4) {\n    if N[k] > 0 { C[k + 1] = C[k] + S[k] / N[k] }\n"
       "    S[k] = 0\n    N[k] = 0\n  }\n  tot = 0\n"
       "  parallel for (i, j, v) in r { tot += C[(i + j) % 4 + 1] }\n"
       "  print(\"it\", it, \"tot\", tot)\n}\n",
       {{"r.csv", Csv(Repeated(11))}},
       {"data_parallel", "serial", "data_parallel"}});
  return c;
}

class DataAssumptionsTest : public ::testing::TestWithParam<Case> {};

std::string Describe(const RigelResult& r) {
  return "exit " + std::to_string(r.rc) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

void ExpectSameNumbers(const RigelResult& got, const RigelResult& want, const std::string& what) {
  ASSERT_EQ(got.rc, 0) << what << ": " << Describe(got);
  std::vector<double> g = PrintedNumbers(got.out), w = PrintedNumbers(want.out);
  ASSERT_EQ(g.size(), w.size()) << what << ": " << got.out << " vs serial " << want.out;
  ASSERT_FALSE(w.empty()) << "the program printed no number";
  for (size_t k = 0; k < w.size(); ++k) {
    EXPECT_LE(std::fabs(g[k] - w[k]), 1e-5 * std::max(1.0, std::fabs(w[k])))
        << what << ": number " << k << " is " << g[k] << ", serially " << w[k] << "\n"
        << got.out << " vs serial " << want.out;
  }
}

void ExpectRefused(const RigelResult& r, const Case& c, const std::string& what) {
  EXPECT_NE(r.rc, 0) << what << " ran: " << Describe(r);
  for (const std::string& s : c.refusal) {
    EXPECT_NE(r.err.find(s), std::string::npos)
        << what << ": the error does not say \"" << s << "\":\n"
        << r.err;
  }
}

TEST_P(DataAssumptionsTest, DistributedRunsMatchSerialOrAreRefused) {
  const Case& c = GetParam();
  const std::string dir = testing::MakeTempDir("rigel-data-assumptions");
  for (const auto& [name, text] : c.files) std::ofstream(dir + "/" + name) << text;
  std::ofstream(dir + "/prog.rgl") << c.program;
  const std::string prog = dir + "/prog.rgl";

  // The schedules the case was written for.
  RigelResult plan = RunRigel({"explain", prog, "--workers", "2", "--json"}, dir);
  ASSERT_EQ(plan.rc, 0) << Describe(plan);
  nlohmann::json j = nlohmann::json::parse(plan.out);
  ASSERT_EQ(j["loops"].size(), c.schedules.size()) << plan.out;
  bool cut_by_coordinates = false;
  for (size_t l = 0; l < c.schedules.size(); ++l) {
    std::string kind = j["loops"][l]["schedule"]["kind"];
    EXPECT_EQ(kind, c.schedules[l]) << "loop " << l;
    cut_by_coordinates |= kind != "data_parallel";
  }

  RigelResult serial = RunRigel({"run", prog}, dir);
  std::vector<std::vector<std::string>> clusters = {{"--workers", "2", "--servers", "2"}};
  if (cut_by_coordinates) clusters.push_back({"--workers", "3", "--servers", "2"});
  if (c.refusal.empty()) {
    ASSERT_EQ(serial.rc, 0) << Describe(serial);
  } else {
    ExpectRefused(serial, c, "the serial run");
  }
  for (const auto& cluster : clusters) {
    std::vector<std::string> args = {"run", prog, "--run-dir", dir + "/run-" + cluster[1]};
    args.insert(args.end(), cluster.begin(), cluster.end());
    RigelResult r = RunRigel(args, dir);
    const std::string what = cluster[1] + " workers";
    if (c.refusal.empty()) {
      ExpectSameNumbers(r, serial, what);
    } else {
      ExpectRefused(r, c, what);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, DataAssumptionsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

}  // namespace
}  // namespace rigel
