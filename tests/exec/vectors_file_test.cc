// --save-vectors (exec/vectors_file.h): which parameters a spec may name,
// and the word2vec text written for rows named by words or by row ids.
#include "exec/vectors_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/file.h"
#include "frontend/compile.h"

namespace rigel::exec {
namespace {

// Declarations only: ParseSaveVectors reads no data.
constexpr char kProgram[] = R"(
const K = 3
data corpus = tokens("corpus.txt", min_count=1)
param emb: f32[corpus.vocab, 2] = zeros()
param freq: i32[corpus.vocab] = zeros()
param cen: f32[K, 2] = zeros()
param col: f32[K, 1] = zeros()
param n: f32[K] = zeros()
)";

ir::Program Compile() {
  auto prog = frontend::CompileText(kProgram, "vectors.rgl", {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  return prog.ok() ? *std::move(prog) : ir::Program{};
}

TEST(VectorsFile, AVocabularyNamesRowsByWordsElseByRowIds) {
  const ir::Program prog = Compile();
  auto rs = ParseSaveVectors(prog, {"emb=e.vec", "freq=f.vec", "cen=c.vec", "col=1.vec"});
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  ASSERT_EQ(rs->size(), 4u);
  EXPECT_EQ((*rs)[0].param, 0);
  EXPECT_EQ((*rs)[0].data, 0);  // corpus
  EXPECT_EQ((*rs)[0].path, "e.vec");
  EXPECT_EQ((*rs)[1].data, 0);   // 1-D, but one row per word
  EXPECT_EQ((*rs)[2].data, -1);  // K rows: ids
  EXPECT_EQ((*rs)[3].param, 3);
  EXPECT_EQ((*rs)[3].data, -1);
}

TEST(VectorsFile, RefusesMalformedSpecsUnknownNamesAnd1DParametersWithoutWords) {
  const ir::Program prog = Compile();
  auto refused = [&](const std::string& spec, const std::string& says) {
    auto r = ParseSaveVectors(prog, {"emb=ok.vec", spec});
    ASSERT_FALSE(r.ok()) << spec;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "--save-vectors " + spec + ": " + says);
  };
  refused("emb", "expected PARAM=FILE");
  refused("=x", "expected PARAM=FILE");
  refused("emb=", "expected PARAM=FILE");
  refused("nope=x", "the program has no parameter 'nope'");
  refused("n=x",
          "'n' is 1-D with 3 rows; only a 2-D parameter, or one with one row per word "
          "(CORPUS.vocab rows, CORPUS a tokens data set), can be saved as vectors (--save-params "
          "saves every parameter)");
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/vectors_file_test." + std::to_string(getpid()) + "." + name;
}

std::string Written(const data::Dataset* words, const SavedParam& p) {
  const std::string path = TempPath(p.name);
  Status st = WriteVectors(path, words, p);
  EXPECT_TRUE(st.ok()) << st.message();
  auto text = ReadFileToString(path);
  std::remove(path.c_str());
  return text.ok() ? *text : "";
}

TEST(VectorsFile, WritesWordsOrRowIdsThenTheShortestExactValues) {
  data::Dataset corpus;
  corpus.kind = data::DataKind::kTokens;
  corpus.words = {"the", "cat", "sat"};
  corpus.vocab = 3;
  EXPECT_EQ(Written(&corpus, {"emb", 3, 2, {0.1f, -2, 1e-7f, 3, 0.5f, 16777216}}),
            "3 2\nthe 0.1 -2\ncat 1e-07 3\nsat 0.5 16777216\n");
  EXPECT_EQ(Written(&corpus, {"freq", 3, 1, {7, 4, 1}, true}), "3 1\nthe 7\ncat 4\nsat 1\n");
  // No vocabulary: the row ids name the rows.
  EXPECT_EQ(Written(nullptr, {"cen", 2, 3, {1, 2, 3, 4.25f, -5, 6}, false, true}),
            "2 3\n0 1 2 3\n1 4.25 -5 6\n");
  EXPECT_EQ(Written(nullptr, {"col", 0, 1, {}, false, true}), "0 1\n");
}

TEST(VectorsFile, RefusesMismatchedSizesAndWordsWithBlanks) {
  data::Dataset corpus;
  corpus.kind = data::DataKind::kTokens;
  corpus.words = {"the", "a cat"};
  const std::string path = TempPath("refused");
  Status rows = WriteVectors(path, &corpus, {"emb", 3, 1, {1, 2, 3}});
  EXPECT_EQ(rows.message(), "--save-vectors emb: 3 rows of 1 for a vocabulary of 2 words");
  Status values = WriteVectors(path, nullptr, {"cen", 2, 2, {1, 2, 3}});
  EXPECT_EQ(values.message(), "--save-vectors cen: 3 values for 2 rows of 2");
  Status blank = WriteVectors(path, &corpus, {"emb", 2, 1, {1, 2}});
  EXPECT_EQ(blank.message(),
            "--save-vectors emb: word 1 ('a cat') holds a blank and cannot be written");
  EXPECT_FALSE(ReadFileToString(path).ok()) << "a refused write left a file";
  Status io = WriteVectors("/nonexistent-dir/v.txt", nullptr, {"cen", 1, 1, {1}});
  EXPECT_EQ(io.code(), StatusCode::kIoError) << io.message();
}

}  // namespace
}  // namespace rigel::exec
