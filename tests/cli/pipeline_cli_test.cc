// `rigel dump-ir` and the loop compiler's passes: --print-after (each pass's
// output shows its effect), --disable, --stats, --verify and unknown names.
// Runs the real binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli/rigel_runner.h"

namespace {

using rigel::testing::RigelResult;
using rigel::testing::RunRigel;

const std::vector<std::string> kPasses = {
    "merge-reads",     "fold-constants", "read-views", "fuse-row-writes",
    "copies-to-views", "fuse-row-views", "fuse-dot",   "specialise-row-kernels"};

// A one-rating MF update in which every pass has something to do. Each test
// process writes its own copy: ctest runs these tests side by side, and one
// truncating the file another is reading failed a run.
std::string Program() {
  std::string dir = testing::TempDir() + "/cli_passes_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/cli_one.csv") << "0,1,2\n";
  std::string path = dir + "/cli_passes.rgl";
  std::ofstream(path) << R"(data t = triples("cli_one.csv")
param W: f32[2, 16] = fill(1.0)
param H: f32[2, 16] = fill(3.0)
accum s: f32
parallel for (i, j, v) in t {
  let e = v - dot(W[i], H[j])
  let wi = W[i]
  W[i] = wi + 0.5 * (e * H[j] - 0.25 * wi)
  H[j] = H[j] + 0.5 * (e * wi - 0.25 * H[j])
  s += 0.5 * 4
}
print(s)
)";
  return path;
}

int Count(const std::string& text, const std::string& word) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// The text after "=== after PASS ===" up to the next such line.
std::string After(const std::string& out, const std::string& pass) {
  size_t at = out.find("=== after " + pass + " ===\n");
  if (at == std::string::npos) return "";
  at = out.find('\n', at) + 1;
  return out.substr(at, out.find("=== after ", at) - at);
}

TEST(PipelineCli, PrintAfterAllShowsEachPassAtWork) {
  RigelResult r = RunRigel("dump-ir " + Program() + " --print-after all");
  ASSERT_EQ(r.code, 0) << r.out;
  size_t last = 0;
  for (const std::string& p : kPasses) {
    size_t at = r.out.find("=== after " + p + " ===\n");
    ASSERT_NE(at, std::string::npos) << p << "\n" << r.out;
    EXPECT_GT(at, last) << p << " out of order";
    last = at;
  }
  const std::string ir = r.out.substr(0, r.out.find("=== after "));
  EXPECT_EQ(Count(ir, "= read "), 6) << ir;
  EXPECT_EQ(Count(After(r.out, "merge-reads"), "= read "), 2);
  EXPECT_EQ(Count(After(r.out, "merge-reads"), "= const 2\n"), 0);
  EXPECT_EQ(Count(After(r.out, "fold-constants"), "= const 2\n"), 1);
  EXPECT_EQ(After(r.out, "read-views").rfind("bytecode loop 0\n", 0), 0u);
  EXPECT_EQ(Count(After(r.out, "read-views"), "rd.row.view "), 1);
  EXPECT_EQ(Count(After(r.out, "read-views"), "wr.row.pair"), 0);
  EXPECT_EQ(Count(After(r.out, "fuse-row-writes"), "wr.row.pair"), 1);
  EXPECT_EQ(Count(After(r.out, "fuse-row-writes"), "rd.row.copy"), 1);
  EXPECT_EQ(Count(After(r.out, "copies-to-views"), "rd.row.copy"), 0);
  EXPECT_EQ(Count(After(r.out, "fuse-row-views"), "rd.row.view2"), 1);
  EXPECT_EQ(Count(After(r.out, "fuse-row-views"), "dot.op"), 0);
  EXPECT_EQ(Count(After(r.out, "fuse-dot"), "dot.op"), 1);
  EXPECT_EQ(Count(After(r.out, "fuse-dot"), " generic\n"), 2);
  EXPECT_EQ(Count(After(r.out, "specialise-row-kernels"), " generic\n"), 0);
}

TEST(PipelineCli, PrintAfterNamedPassesOnly) {
  RigelResult r =
      RunRigel("dump-ir " + Program() + " --print-after fuse-dot --print-after merge-reads");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Count(r.out, "=== after "), 2) << r.out;
  EXPECT_LT(r.out.find("=== after merge-reads ==="), r.out.find("=== after fuse-dot ==="));
}

TEST(PipelineCli, DisableSkipsAPassAndStatsSayWhat) {
  RigelResult r = RunRigel("dump-ir " + Program() + " --bytecode --stats --disable fuse-dot");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Count(r.out, "dot.op"), 0) << r.out;
  EXPECT_EQ(Count(r.out, "\n1: dot d="), 1) << r.out;
  size_t stats = r.out.find("stats loop 0\n");
  ASSERT_NE(stats, std::string::npos) << r.out;
  for (const std::string& p : kPasses) {
    EXPECT_NE(r.out.find("\n  " + p + ": ", stats), std::string::npos) << p << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("  merge-reads: reads merged 4, instructions before ", stats),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  fold-constants: constants folded 2, ", stats), std::string::npos);
  EXPECT_NE(r.out.find("  fuse-dot: disabled\n", stats), std::string::npos);
}

TEST(PipelineCli, UnknownPassNamesAreUsageErrors) {
  RigelResult r = RunRigel("dump-ir " + Program() + " --disable frobnicate");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("rigel: unknown pass 'frobnicate'; the passes are: "), std::string::npos)
      << r.out;
  for (const std::string& p : kPasses) EXPECT_NE(r.out.find(p), std::string::npos) << p;
  r = RunRigel("dump-ir " + Program() + " --print-after nope");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown pass 'nope'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(or all)"), std::string::npos) << r.out;
  // "all" prints after every pass but is no pass to disable.
  EXPECT_EQ(RunRigel("dump-ir " + Program() + " --disable all").code, 2);
}

TEST(PipelineCli, VerifyChangesNothingOnTheExamples) {
  for (const char* ex : {"mf", "bias", "sparse_lr", "word2vec", "dense_lr", "wavefront"}) {
    std::string args = std::string("dump-ir examples/") + ex + ".rgl --bytecode";
    RigelResult plain = RunRigel(args), verified = RunRigel(args + " --verify");
    ASSERT_EQ(plain.code, 0) << ex << ": " << plain.out;
    EXPECT_EQ(verified.code, 0) << ex << ": " << verified.out;
    EXPECT_EQ(verified.out, plain.out) << ex;
  }
}

}  // namespace
