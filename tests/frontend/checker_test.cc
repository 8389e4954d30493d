// Parser and checker: every DSL.md program is accepted; every error class
// DSL.md lists is reported at the right FILE:LINE:COL with a caret.
#include <gtest/gtest.h>

#include <string>

#include "frontend/compile.h"

namespace rigel::frontend {
namespace {

std::string Errors(const std::string& text, const CompileOptions& opts = {}) {
  auto prog = CompileText(text, "t.rgl", opts);
  return prog.ok() ? std::string() : prog.status().message();
}

// Asserts that compiling `text` fails with `message` at line:col.
void ExpectError(const std::string& text, int line, int col, const std::string& message) {
  std::string errs = Errors(text);
  std::string want =
      "t.rgl:" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + message;
  EXPECT_NE(errs.find(want), std::string::npos) << "want: " << want << "\ngot:\n" << errs;
}

const char* kDecls = R"(const K = 4
const lr = 0.1
data r = triples("r.csv")
param W: f32[r.rows, K] = zeros()
param b: f32[r.rows] = zeros()
accum sq: f32
)";  // 6 lines

TEST(Check, AcceptsEveryExampleProgram) {
  for (const char* ex : {"mf", "bias", "sparse_lr", "word2vec", "dense_lr", "wavefront", "lda",
                         "softmax", "kmeans", "fm"}) {
    auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/" + ex + ".rgl", {});
    EXPECT_TRUE(prog.ok()) << ex << ": " << prog.status().message();
  }
}

TEST(Check, AcceptsDslSnippetForms) {
  std::string text = std::string(kDecls) + R"(
data s = libsvm("s.svm")
param w: f32[s.dim] = zeros()
const mu = 0.5
for ep in 0..2 {
  parallel for (i, j, v) in r { b[i] += lr * (v - mu - b[i]); W[i, 0] += 0.1 }
  parallel for (n, row) in s relax w {
    var z = 0.0
    for (f, x) in row.features { z += w[f] * x }
    if z > 1.0 { z = 1.0 } else { }
    let g = sigmoid(z) - row.label
    for (f, x) in row.features { w[f] -= lr * g * x }
    sq += log1pexp(z) - row.label * z
  }
  print("epoch", ep, "loss", sq / s.count)
  sq = 0
}
parallel ordered for (i, j) in grid(3, 4) { W[i, j] = clip(min(1, 2.5), -1, 1) + abs(-2) }
parallel for i in range(10) { let k = randint(3); b[k] += rand() * norm(W[k]) + sum(W[k]) }
)";
  EXPECT_EQ(Errors(text), "");
}

TEST(Check, UnknownName) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { b[i] += q }\n", 7, 39,
              "unknown name 'q'");
}

TEST(Check, WrongArity) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += dot(W[i]) }\n", 7, 37,
              "dot expects 2 arguments, got 1");
  ExpectError(std::string(kDecls) + "parallel for (i, j) in r { }\n", 7, 15,
              "iterating triples binds 3 variables (i, j, v), got 2");
}

TEST(Check, ModNeedsIntsAndConstantModByZeroIsFound) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += v % 2 }\n", 7, 39,
              "'%' needs two ints, not f32 and int (int() converts)");
  ExpectError(std::string(kDecls) + "print(lr % 2)\n", 7, 10,
              "'%' needs two ints, not f32 and int (int() converts)");
  ExpectError(std::string(kDecls) + "print(K % 0)\n", 7, 9, "integer modulo by zero");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += int(W[i]) }\n", 7, 37,
              "int needs a number, not f32 vector");
  EXPECT_EQ(Errors(std::string(kDecls) +
                   "parallel for (i, j, v) in r { b[int(v) % 3] += floor(v) + ceil(v) }\n"
                   "print(K % 3, int(lr), floor(lr), ceil(lr))\n"),
            "");
}

TEST(Check, VectorElementsPicksAndOneHotNeedTheRightTypes) {
  const std::string loop = std::string(kDecls) + "parallel for (i, j, v) in r {\n  let s = W[i]\n";
  ExpectError(loop + "  sq += s[v]\n}\n", 9, 11,
              "a vector element index must be an int, not f32 (int() converts)");
  ExpectError(loop + "  sq += v[0]\n}\n", 9, 9, "only a vector has elements, not f32");
  ExpectError(loop + "  sq += argmax(v)\n}\n", 9, 16,
              "argmax of one argument expects a vector, got f32");
  ExpectError(loop + "  sq += sum(onehot(v, K))\n}\n", 9, 20,
              "onehot expects an int index, got f32 (int() converts)");
  ExpectError(loop + "  sq += sum(onehot(j, 0))\n}\n", 9, 23, "onehot needs a width of at least 1");
  ExpectError(std::string(kDecls) + "print(argmax(K))\n", 7, 7,
              "'argmax' can only be used inside a parallel for");
  EXPECT_EQ(Errors(loop + "  sq += s[j % K] + W[i][0] + max(s) + min(s) + argmin(s)\n"
                          "  b[argmax(s)] += sum(onehot(j % K, K) * s)\n}\n"),
            "");
}

TEST(Check, ElementWritesNeedAVarVectorAndSampleAVector) {
  const std::string loop = std::string(kDecls) + "parallel for (i, j, v) in r {\n  let s = W[i]\n";
  ExpectError(loop + "  s[0] = 1\n}\n", 9, 3,
              "cannot assign to an element of 's': it was bound with let (use var)");
  ExpectError(loop + "  var x = v\n  x[0] = 1\n}\n", 10, 3,
              "'x' is f32, not a vector or a parameter, and cannot be indexed");
  ExpectError(loop + "  var g = s\n  g[v] = 1\n}\n", 10, 5,
              "a vector element index must be an int, not f32 (int() converts)");
  ExpectError(loop + "  var g = s\n  g[0] = s\n}\n", 10, 10,
              "an element of 'g' takes an f32 scalar, not f32 vector");
  ExpectError(loop + "  var g = s\n  g[0, 1] = 1\n}\n", 10, 3,
              "an element of vector 'g' takes one subscript, got 2");
  ExpectError(loop + "  sq += sample(v)\n}\n", 9, 16,
              "sample expects a vector of weights, got f32");
  ExpectError(std::string(kDecls) + "print(sample(K))\n", 7, 7,
              "'sample' can only be used inside a parallel for");
  EXPECT_EQ(Errors(loop + "  var g = s\n  g[j % K] = v\n  g[0] += 1\n  g[1] -= v\n  g[2] *= 2\n"
                          "  g[3] /= 2\n  b[sample(g * g)] += 1\n}\n"),
            "");
}

// Language v2: i32 parameters and tokens(..., lines=true).
TEST(Check, IntParametersAndLinesCorporaNeedTheRightForms) {
  ExpectError("param z: i64[4] = zeros()\n", 1, 10,
              "unknown element type 'i64' (a parameter is f32 or i32)");
  ExpectError("param z: i32[4] = normal(0, 1)\n", 1, 19,
              "expected an i32 initialiser: zeros(), fill(c) or randint(n, seed=S)");
  ExpectError("param z: f32[4] = randint(3)\n", 1, 19,
              "expected an initialiser: zeros(), fill(c), normal(mean, std, seed=S) or "
              "uniform(lo, hi, seed=S) (randint(n, seed=S) is for i32 parameters)");
  ExpectError("param z: i32[4] = fill(1.5)\n", 1, 24,
              "c of an i32 parameter must be an integer in [-2^24, 2^24], not 1.5");
  ExpectError("param z: i32[4] = randint(0)\n", 1, 27,
              "n of an i32 parameter must be an integer in [1, 2^24], not 0");
  const std::string decls =
      std::string(kDecls) + "param z: i32[r.rows] = zeros()\nparam C: i32[r.rows, K] = zeros()\n";
  ExpectError(decls + "parallel for (i, j, v) in r { z[i] = v }\n", 9, 38,
              "an element of i32 parameter 'z' takes an int, not f32 (int() converts)");
  ExpectError(decls + "parallel for (i, j, v) in r { C[i] = W[i] }\n", 9, 31,
              "'C' is an i32 parameter, written one element at a time (C[i, k])");
  ExpectError(decls + "parallel for (i, j, v) in r { z[i] /= 2 }\n", 9, 31,
              "an element of i32 parameter 'z' cannot be divided in place (/=); its elements "
              "stay integers");
  EXPECT_EQ(Errors(decls + "parallel for (i, j, v) in r {\n  z[i] = int(v) % 3\n  C[i, z[i]] += 1\n"
                           "  C[i, 0] *= 2\n  b[i] += z[i] * 0.5 + sum(C[i])\n}\n"),
            "");
  ExpectError("data c = tokens(\"c.txt\")\nprint(c.docs)\n", 2, 9,
              "'c.docs' counts lines, which tokens(..., lines=true) reads as documents; 'c' is "
              "read without lines=true");
  ExpectError("data c = tokens(\"c.txt\")\nparallel for (t, w, d) in c { }\n", 2, 15,
              "iterating tokens binds 2 variables (t, w), got 3 (a third, the line number d, "
              "needs tokens(..., lines=true))");
  ExpectError("data c = tokens(\"c.txt\", lines=true)\nparallel for (t, w) in c { }\n", 2, 15,
              "iterating tokens(..., lines=true) binds 3 variables (t, w, d), got 2");
  ExpectError("data c = tokens(\"c.txt\", lines=1)\n", 1, 32, "lines must be true or false");
  EXPECT_EQ(Errors("data c = tokens(\"c.txt\", min_count=2, lines=true)\nparam n: i32[c.docs] = "
                   "zeros()\nparallel for (t, w, d) in c { n[d] += 1 }\n"),
            "");
}

// A split part numbers its positions from 0 (DSL.md "split"): a part's t read
// by window() over another data set names another word, so it is refused,
// through lets, vars and t plus or minus an integer; the part's own window,
// and the parent's window over the parent's t, are fine.
TEST(Check, WindowRefusesAPositionOfAnotherDataSet) {
  const std::string decls =
      "data c = tokens(\"c.txt\")\ndata tr, te = split(c, test=0.1, seed=1)\n"
      "data o = tokens(\"o.txt\")\nparam e: f32[c.vocab] = zeros()\n";  // 4 lines
  ExpectError(decls + "parallel for (t, w) in te {\n  for x in window(c, t, 2) { e[x] += 1 }\n}\n",
              6, 22,
              "'t' is a position of 'te', not of 'c': a part of split() numbers its positions "
              "from 0 within the part, so the same number is another word of 'c'; write "
              "window(te, t, radius) for the neighbours of te's word");
  ExpectError(decls + "parallel for (t, w) in c {\n  for x in window(tr, t, 2) { e[x] += 1 }\n}\n",
              6, 23, "'t' is a position of 'c', not of 'tr': a part of split()");
  ExpectError(decls +
                  "parallel for (t, w) in te {\n  let u = t + 1\n  var v = u - 2\n"
                  "  for x in window(c, v, 2) { e[x] += 1 }\n}\n",
              8, 22, "'v' is a position of 'te', not of 'c': a part");
  ExpectError(
      decls + "parallel for (t, w) in o {\n  for x in window(c, 1 + t, 2) { e[x] += 1 }\n}\n", 6,
      24, "this is a position of 'o', not of 'c'; write window(o, ..., radius)");
  for (const char* ok :
       {"parallel for (t, w) in te { for x in window(te, t, 2) { e[x] += 1 } }\n",
        "parallel for (t, w) in c { for x in window(c, t - 1, 2) { e[x] += 1 } }\n",
        "parallel for (t, w) in te { for x in window(c, w, 2) { e[x] += 1 } }\n"}) {
    EXPECT_EQ(Errors(decls + ok), "") << ok;
  }
}

TEST(Check, LibsvmLabels) {
  for (auto [arg, want] : {std::pair{"", data::LibsvmLabels::kAuto},
                           std::pair{", labels=\"auto\"", data::LibsvmLabels::kAuto},
                           std::pair{", labels=\"pm1\"", data::LibsvmLabels::kPm1},
                           std::pair{", 0, \"keep\"", data::LibsvmLabels::kKeep}}) {
    auto prog = CompileText(std::string("data s = libsvm(\"s.svm\"") + arg + ")\n", "t.rgl", {});
    ASSERT_TRUE(prog.ok()) << arg << ": " << prog.status().message();
    EXPECT_EQ(prog->data[0].labels, want) << arg;
  }
  ExpectError("data s = libsvm(\"s.svm\", labels=\"01\")\n", 1, 33,
              "labels must be \"auto\" (the default: -1/+1 read as 0/1, other labels as "
              "written), \"pm1\" (only -1/+1, read as 0/1) or \"keep\" (as written), not \"01\"");
  ExpectError("data s = libsvm(\"s.svm\", labels=1)\n", 1, 33,
              "expected how to read the labels as a string in double quotes");
}

TEST(Check, CriteoIsALibsvmKindDataSetWithItsBucketOptions) {
  auto prog = CompileText(
      "const B = 4096\ndata c = criteo(\"c.tsv\", buckets=B, fields=\"own\")\n"
      "param w: f32[c.dim] = zeros()\n"
      "parallel for (n, row) in c relax w {\n  for (f, x) in row.features { w[f] += x * row.label "
      "}\n}\n",
      "t.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  const ir::DataDecl& d = prog->data[0];
  EXPECT_EQ(d.kind, data::DataKind::kLibsvm);
  EXPECT_TRUE(d.criteo);
  EXPECT_EQ(d.buckets, 4096);
  EXPECT_FALSE(d.shared_buckets);
  auto plain = CompileText("data c = criteo(\"c.tsv\")\n", "t.rgl", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->data[0].buckets, int64_t{1} << 20);
  EXPECT_TRUE(plain->data[0].shared_buckets);
  ExpectError("data c = criteo(\"c.tsv\", fields=\"each\")\n", 1, 33,
              "fields must be \"shared\" (the default: the 26 categorical fields hash into one "
              "range of buckets) or \"own\" (a range of buckets per field), not \"each\"");
  ExpectError("data c = criteo(\"c.tsv\", buckets=0)\n", 1, 34,
              "buckets must be between 1 and 2147483634 (feature indices are int32), got 0");
  ExpectError("data c = criteo(\"c.tsv\", buckets=100000000, fields=\"own\")\n", 1, 34,
              "buckets must be between 1 and 82595524 with a range per field (feature indices "
              "are int32), got 100000000");
  ExpectError("data c = criteo(\"c.tsv\", base=1)\n", 1, 26,
              "criteo has no argument named 'base' (it takes path, buckets, fields)");
}

TEST(Check, VectorWidthMismatch) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += dot(W[i], zeros(3)) }\n",
              7, 37, "vector width mismatch in dot: 4 vs 3");
}

TEST(Check, PrintInsideParallelFor) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r {\n  print(v)\n}\n", 8, 3,
              "print is not allowed inside a parallel for");
}

TEST(Check, AssignmentToLet) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r {\n  let e = v\n  e = 2\n}\n", 9,
              3, "cannot assign to 'e': it was bound with let (use var)");
}

TEST(Check, AccumulatorWrittenWithoutPlusEquals) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq = v }\n", 7, 31,
              "accumulator 'sq' can only be updated with += inside a parallel for");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq -= v }\n", 7, 31,
              "accumulator 'sq' can only be updated with += inside a parallel for");
}

// Vector accumulators (DSL.md, version 2): accum s: f32[K].
const char* kVecDecls = R"(const K = 3
data r = triples("r.csv")
param W: f32[r.rows, K] = zeros()
accum s: f32[K]
accum a: f32
)";  // 5 lines

// `text` inside a parallel for over r (the statement is on line 7, from column 3).
std::string InVecLoop(const std::string& text) {
  return std::string(kVecDecls) + "parallel for (i, j, v) in r {\n  " + text + "\n}\n";
}

TEST(Check, VectorAccumulatorFormsAreAccepted) {
  std::string text = std::string(kVecDecls) + R"(accum h: f32[K + 1]
for ep in 0..2 {
  parallel for (i, j, v) in r {
    s += W[i] * v
    s += onehot(j % K, K)
    s[j % K] += v
    s[0] += 2
    h[i % 4] += i
    a += v
  }
  print(s[0], s[K - 1], h[ep], a)
  s = 0
  h = 1.5
  a = 0
}
)";
  EXPECT_EQ(Errors(text), "");
  auto prog = CompileText(text, "t.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  ASSERT_EQ(prog->accums.size(), 3u);
  EXPECT_EQ(prog->accums[0].width, 3);
  EXPECT_EQ(prog->accums[1].width, 0);
  EXPECT_EQ(prog->accums[2].width, 4);
  EXPECT_EQ(ir::AccumSlots(prog->accums), 8);
  EXPECT_EQ(ir::AccumOffset(prog->accums, 2), 4);
  std::string ir = ir::Print(*prog);
  EXPECT_NE(ir.find("accum s: f32[3]\naccum a: f32\naccum h: f32[4]\n"), std::string::npos) << ir;
  EXPECT_NE(ir.find("accum s[%"), std::string::npos) << ir;
  EXPECT_NE(ir.find("print s[0], s[2], h[$ep], a"), std::string::npos) << ir;
}

TEST(Check, VectorAccumulatorErrorsInLoops) {
  ExpectError(InVecLoop("s += onehot(1, 4)"), 7, 8,
              "vector width mismatch in accumulator update: 4 vs 3");
  ExpectError(InVecLoop("s += v"), 7, 8,
              "vector accumulator 's' adds vectors of width 3, not f32 (s[k] += x adds to one "
              "element)");
  ExpectError(InVecLoop("s += i"), 7, 8,
              "vector accumulator 's' adds vectors of width 3, not int (s[k] += x adds to one "
              "element)");
  ExpectError(InVecLoop("s[v] += 1"), 7, 5,
              "an accumulator element index must be an int, not f32 (int() converts)");
  ExpectError(InVecLoop("a[0] += v"), 7, 3, "accumulator 'a' is a scalar and cannot be indexed");
  ExpectError(InVecLoop("s[i, j] += v"), 7, 3,
              "an element of accumulator 's' takes one subscript, got 2");
  ExpectError(InVecLoop("s[i] += W[i]"), 7, 11,
              "an element of accumulator 's' adds f32 scalars, not f32 vector");
  ExpectError(InVecLoop("s -= W[i]"), 7, 3,
              "accumulator 's' can only be updated with += inside a parallel for");
  ExpectError(InVecLoop("s[i] -= v"), 7, 3,
              "accumulator 's' can only be updated with += inside a parallel for");
  ExpectError(InVecLoop("s[i] = v"), 7, 3,
              "accumulator 's' can only be updated with += inside a parallel for");
  ExpectError(InVecLoop("a += s[0]"), 7, 8,
              "accumulator 's' can only be updated with += inside a parallel for, not read");
  ExpectError(InVecLoop("W[i] += s"), 7, 11,
              "accumulator 's' can only be updated with += inside a parallel for, not read");
}

TEST(Check, VectorAccumulatorErrorsInTheDriver) {
  const std::string d = kVecDecls;
  ExpectError(d + "print(s)\n", 6, 7,
              "vector accumulator 's' is read one element at a time (s[k])");
  ExpectError(d + "let x = s + 1\n", 6, 9,
              "vector accumulator 's' is read one element at a time (s[k])");
  ExpectError(d + "print(s[1.5])\n", 6, 9,
              "an accumulator element index must be an int, not f32 (int() converts)");
  ExpectError(d + "print(a[0])\n", 6, 7, "accumulator 'a' is a scalar and cannot be indexed");
  ExpectError(d + "print(s[0, 1])\n", 6, 7,
              "an element of accumulator 's' takes one subscript, got 2");
  ExpectError(d + "s[0] = 1\n", 6, 1,
              "an element of accumulator 's' cannot be assigned in the driver (s = 0 resets "
              "every element)");
  ExpectError(d + "a[0] = 1\n", 6, 1, "accumulator 'a' is a scalar and cannot be indexed");
  ExpectError(d + "s += 1\n", 6, 1,
              "vector accumulator 's' can only be set whole in the driver (s = 0 resets every "
              "element)");
  ExpectError(d + "s = \"x\"\n", 6, 5, "strings can only be printed");
}

TEST(Check, VectorAccumulatorWidthsAreConstantsOfAtLeastOne) {
  const std::string d = kVecDecls;
  ExpectError(d + "accum t: f32[0]\n", 6, 14, "the width of an accumulator must be at least 1");
  ExpectError(d + "accum t: f32[K - 4]\n", 6, 16, "the width of an accumulator must be at least 1");
  ExpectError(d + "accum t: f32[2000000]\n", 6, 14,
              "the width of an accumulator must be at most 1048576");
  ExpectError(d + "accum t: f32[1048000]\naccum u: f32[1000]\n", 7, 14,
              "the accumulators hold more than 1048576 sums in all");
  EXPECT_EQ(Errors(d + "accum t: f32[1048572]\n"), "");
  ExpectError(d + "accum t: f32[r.rows]\n", 6, 16,
              "expected the width of an accumulator to be an integer known before data is loaded");
  ExpectError(d + "accum t: f32[2.5]\n", 6, 14,
              "expected the width of an accumulator to be an integer known before data is loaded");
  ExpectError(d + "accum t: f32[3\n", 7, 1, "expected ']', found end of file");
}

TEST(Check, ParamIndexedWithFloat) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { b[v] += 1 }\n", 7, 33,
              "parameter 'b' indexed with a float; subscripts must be integers");
}

TEST(Check, RelaxNamesSomethingNotAParam) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r relax sq { }\n", 7, 35,
              "relax names 'sq', which is not a parameter (it is an accumulator)");
}

TEST(Check, SyntaxErrors) {
  ExpectError("const K = \n", 1, 11, "expected an expression, found end of line");
  ExpectError("param W: f64[3] = zeros()\n", 1, 10, "unknown element type 'f64'");
  ExpectError("x = 1 +* 2\n", 1, 8, "expected an expression, found '*'");
  ExpectError("let s = \"abc\n", 1, 9, "unterminated string");
  ExpectError("const a = 1 $\n", 1, 13, "unexpected character '$'");
}

TEST(Check, ThreeIndependentErrorsAreAllReported) {
  std::string text = std::string(kDecls) + R"(parallel for (i, j, v) in r {
  b[i] += nope
  print(v)
  sq = 1
}
)";
  std::string errs = Errors(text);
  EXPECT_NE(errs.find("t.rgl:8:11: error: unknown name 'nope'"), std::string::npos) << errs;
  EXPECT_NE(errs.find("t.rgl:9:3: error: print is not allowed"), std::string::npos) << errs;
  EXPECT_NE(errs.find("t.rgl:10:3: error: accumulator 'sq'"), std::string::npos) << errs;
  EXPECT_NE(errs.find("3 errors in t.rgl"), std::string::npos) << errs;
}

TEST(Check, SyntaxErrorsInSeveralStatementsAreAllReported) {
  std::string errs = Errors("const a = )\nconst b = 2\nconst c = (\nparam p: f32[2] = zeros(\n");
  EXPECT_NE(errs.find("t.rgl:1:11:"), std::string::npos) << errs;
  // An unclosed '(' does not swallow the statements after it.
  EXPECT_NE(errs.find("t.rgl:3:12: error: expected an expression, found end of line"),
            std::string::npos)
      << errs;
  EXPECT_NE(errs.find("t.rgl:5:1: error: expected an expression, found end of file"),
            std::string::npos)
      << errs;
}

TEST(Check, ErrorShowsSourceLineAndCaret) {
  std::string errs = Errors("const a = 1\nconst b = a + zz\n");
  EXPECT_NE(errs.find("t.rgl:2:15: error: unknown name 'zz'\n  const b = a + zz\n"
                      "                ^\n"),
            std::string::npos)
      << errs;
}

TEST(Check, MoreErrorClasses) {
  ExpectError(
      std::string(kDecls) + "parallel for (i, j, v) in r { parallel for (a, c, d) in r { } }\n", 7,
      31, "parallel for cannot be nested");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { K = 2 }\n", 7, 31,
              "cannot assign to 'K': it is a constant");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += W[i] }\n", 7, 37,
              "an accumulator adds f32 scalars, not f32 vector");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { b[i, j] += 1 }\n", 7, 31,
              "parameter 'b' is 1-D; it takes one subscript, got 2");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { let x = sq }\n", 7, 39,
              "accumulator 'sq' can only be updated with += inside a parallel for, not read");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { if v { } }\n", 7, 34,
              "the condition of if must be a comparison (bool), not f32");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { i = 2 }\n", 7, 31,
              "cannot assign to loop variable 'i'");
  ExpectError("const K = 1\nconst K = 2\n", 2, 7, "'K' is already declared");
  ExpectError("data r = triples(\"r.csv\", sepp=\",\")\n", 1, 27,
              "triples has no argument named 'sepp'");
  ExpectError("data r = triples(\"r.csv\")\nprint(r.dim)\n", 2, 9,
              "data set 'r' (triples) has no attribute 'dim'");
}

TEST(Check, SetOverridesConstsAndPaths) {
  CompileOptions opts;
  opts.sets = {{"K", "8"}, {"lr", "0.5"}, {"r.path", "/data/other.csv"}};
  auto prog = CompileText(kDecls, "dir/t.rgl", opts);
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  EXPECT_EQ(prog->params[0].width, 8);
  EXPECT_EQ(prog->consts[1].second, 0.5);
  EXPECT_EQ(prog->data[0].path, "/data/other.csv");
  auto plain = CompileText(kDecls, "dir/t.rgl", {});
  EXPECT_EQ(plain->data[0].path, "dir/r.csv");  // relative to the program file

  opts.sets = {{"nope", "1"}};
  auto bad = CompileText(kDecls, "t.rgl", opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--set nope=1: t.rgl has no const named 'nope'"),
            std::string::npos)
      << bad.status().message();
  opts.sets = {{"K", "abc"}};
  EXPECT_NE(Errors(kDecls, opts).find("--set K=abc: expected a number"), std::string::npos);
}

TEST(Check, SizesMustBeKnownBeforeTheProgramRuns) {
  ExpectError("let n = 5\nparam p: f32[n] = zeros()\n", 2, 14,
              "the row count of a parameter must be known before the program runs");
  ExpectError("let n = 5\ndata g = range(n)\n", 2, 10,
              "the size of a declared data set must be known before the program runs");
  EXPECT_EQ(Errors("for k in 1..3 { parallel for i in range(k) { } }\n"), "");
}

TEST(Check, DriverVariableTypes) {
  ExpectError("var x = 0\nx = x + 0.5\n", 2, 7, "cannot assign f32 to 'x', which holds int");
  // docs/dsl.md quotes this message for a float assigned to an int var.
  ExpectError("var x = 0\nx += 0.5\n", 2, 6,
              "cannot assign f32 to 'x', which holds int (start it with a float, e.g. var x = "
              "0.0)");
  EXPECT_EQ(Errors("var x = 0.0\nx = 1\n"), "");
  ExpectError("for k in 0..2 { k = 1 }\n", 1, 17, "cannot assign to loop variable 'k'");
  ExpectError("for k in 0..2.5 { }\n", 1, 13, "range bounds must be integers");
}

// `==` and `!=` compare two bools; bools have no order, and a bool is not a
// number.
TEST(Check, BoolsCompareForEqualityButNotOrder) {
  EXPECT_EQ(Errors(std::string(kDecls) + "parallel for (i, j, v) in r {\n"
                                         "  let s = (v > 0) == (i > 1)\n"
                                         "  if s != (j < 2) and (v > 0.5) == true { sq += 1 }\n"
                                         "}\n"),
            "");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { if (v > 0) < (i > 1) { } }\n", 7,
              42, "'<' cannot order bools; only == and != compare two bools");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { if (v > 0) >= true { } }\n", 7,
              42, "'>=' cannot order bools; only == and != compare two bools");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { if (v > 0) == 1 { } }\n", 7, 42,
              "comparison needs scalar operands, got bool and int");
}

// pow(x, y) is f32 like exp and log (ints promoted), elementwise on vectors,
// and exists in the driver too.
TEST(Check, PowIsAnF32Builtin) {
  EXPECT_EQ(
      Errors(std::string(kDecls) + "parallel for (i, j, v) in r {\n"
                                   "  sq += pow(v, 2) + pow(2, i)\n"
                                   "  W[i] = pow(W[i], 0.5) + pow(2, W[i]) + pow(W[i], W[j])\n"
                                   "}\n"
                                   "print(pow(2, 10), pow(lr, 2))\n"),
      "");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { b[pow(2, 1)] += 1 }\n", 7, 33,
              "parameter 'b' indexed with a float; subscripts must be integers");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += pow(v) }\n", 7, 37,
              "pow expects 2 arguments, got 1");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { sq += pow(v > 0, 2) }\n", 7, 37,
              "pow needs numbers or vectors, got bool and f32");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { W[i] = pow(W[i], zeros(3)) }\n",
              7, 38, "vector width mismatch in vector arithmetic: 4 vs 3");
  ExpectError("print(pow(1, 2, 3))\n", 1, 7, "pow expects 2 arguments, got 3");
}

TEST(Check, MessagesForLoopValuesUsedAsConstants) {
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { let z = zeros(i) }\n", 7, 45,
              "the width of zeros must be a constant, not the loop value 'i'");
  ExpectError(std::string(kDecls) + "parallel for (i, j, v) in r { for sq in 0..2 { } }\n", 7, 35,
              "'sq' is already declared");
}

TEST(Check, SetPathOfASplitPartPointsToItsParent) {
  CompileOptions opts;
  opts.sets = {{"train.path", "/x.csv"}};
  auto prog = CompileText("data r = triples(\"r.csv\")\ndata train, test = split(r, test=0.1)\n",
                          "t.rgl", opts);
  ASSERT_FALSE(prog.ok());
  EXPECT_NE(prog.status().message().find("'train' is split from 'r'; set r.path instead"),
            std::string::npos)
      << prog.status().message();
}

TEST(Check, HostileInputDoesNotCrash) {
  EXPECT_NE(Errors("}\n"), "");
  EXPECT_NE(Errors("}}}{{{"), "");
  EXPECT_NE(Errors(std::string(5000, '(')), "");
  EXPECT_NE(Errors(std::string("const a = ") + std::string(3000, '-') + "1\n"), "");
  EXPECT_NE(Errors("for ep in 0..2 { for k in 0..2 { } }"), "x");  // legal or not, no crash
  EXPECT_NE(Errors(std::string("\0\xff\xfe", 3)), "");

  // Operator chains are parsed by loops but make left-leaning trees as tall as
  // the chain, which the checker and ir::Print recurse on: the parser bounds
  // the height, not just its own recursion (30000 terms overflowed the stack).
  std::string sum = "1";
  for (int k = 0; k < 30000; ++k) sum += "+1";
  ExpectError("const a = " + sum + "\n", 1, 410,
              "expression too deep (more than 200 nested or chained operators)");
  EXPECT_NE(Errors(std::string(kDecls) + "parallel for (i, j, v) in r { b[i] = " + sum + " }\n"),
            "");
  std::string attrs = "r";
  for (int k = 0; k < 30000; ++k) attrs += ".rows";
  EXPECT_NE(Errors(std::string(kDecls) + "print(" + attrs + ")\n").find("expression too deep"),
            std::string::npos);
  // Parenthesised chains compound: each level is shallow, the whole is 3000 tall.
  std::string nested = "1";
  for (int k = 0; k < 20; ++k) {
    nested = "(" + nested;
    for (int j = 0; j < 150; ++j) nested += "+1";
    nested += ")";
  }
  EXPECT_NE(Errors("const a = " + nested + "\n").find("expression too deep"), std::string::npos);
}

TEST(Check, DeepButLegalNestingCompilesAndPrints) {
  // The limits (200 nested statements, expressions 200 operators tall) are
  // reached together; checking and dumping such a program must not overflow
  // the stack under ASan either.
  std::string chain = "v";
  for (int k = 0; k < 199; ++k) chain += "+v";
  std::string text = std::string(kDecls) + "parallel for (i, j, v) in r {";
  for (int k = 0; k < 198; ++k) text += "if v < 1 {";
  text += "b[i] = " + chain;
  for (int k = 0; k < 198; ++k) text += "}";
  text += "}\nfor e in 0..1 {";
  for (int k = 0; k < 198; ++k) text += "for q in 0..1 {";
  text += "print(r.count";
  for (int k = 0; k < 198; ++k) text += "+r.count";  // r.count is 2 tall
  text += ")";
  for (int k = 0; k < 199; ++k) text += "}";
  text += "\n";
  auto prog = CompileText(text, "t.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message().substr(0, 2000);
  EXPECT_NE(ir::Print(*prog).find("write b["), std::string::npos);
}

// A declaration whose value fails is reported once; using the name later,
// even with an attribute, adds nothing. An attribute of a local that did
// not fail says what the local is.
TEST(Check, NoFollowOnErrorsAfterAFailedDeclaration) {
  std::string errs = Errors(std::string(kDecls) +
                            "parallel for (i, j, v) in r {\n"
                            "  let k = nosuch(v)\n"
                            "  let n = k.count\n"
                            "  sq += n + k\n"
                            "}\n");
  EXPECT_NE(errs.find("t.rgl:8:11: error: unknown function 'nosuch'"), std::string::npos) << errs;
  EXPECT_NE(errs.find("1 error in t.rgl"), std::string::npos) << errs;
  ExpectError(
      std::string(kDecls) + "parallel for (i, j, v) in r {\n  let k = 3\n  sq += k.count\n}\n", 9,
      9, "'k' is a local value, not a data set or a row; only those have attributes (.count)");
}

TEST(Check, ConstantFoldingOverflowIsAnError) {
  const std::string msg = "integer overflow in constant expression";
  ExpectError("const a = 9223372036854775807 + 1\n", 1, 31, msg);
  ExpectError("const a = -9223372036854775807 - 2\n", 1, 32, msg);
  ExpectError("const a = 9223372036854775807 * 2\n", 1, 31, msg);
  ExpectError("const a = -9223372036854775807 - 1\nconst b = a / -1\n", 2, 13, msg);
  ExpectError("const a = -9223372036854775807 - 1\nconst b = -a\n", 2, 11, msg);
  CompileOptions opts;
  opts.sets = {{"K", "9223372036854775807"}};
  EXPECT_NE(Errors("const K = 1\nconst J = K + 1\n", opts).find("2:13: error: " + msg),
            std::string::npos);
  // A grid's element count must fit too (it wrapped to 0: the loop ran nothing).
  ExpectError("parallel for (i, j) in grid(4294967296, 4294967296) { }\n", 1, 24,
              "grid(4294967296, 4294967296) has more elements than a 64-bit count holds");
  ExpectError("data g = grid(4294967296, -4294967296)\n", 1, 6,
              "grid(4294967296, -4294967296) has more elements than a 64-bit count holds");
  // The extremes themselves are fine.
  EXPECT_EQ(Errors("const a = -9223372036854775807 - 1\nconst b = a / 1 + 9223372036854775807\n"),
            "");
}

TEST(Lexer, NumbersRangesAndComments) {
  auto prog = CompileText(
      "const a = 1e-3 # comment\nconst b = 2.5e+4; const c = 0.5\nfor k in 0..3 { print(a, b, c, "
      "\"q\\\"x\\\\\") }\n",
      "t.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  EXPECT_DOUBLE_EQ(prog->consts[0].second, 1e-3);
  EXPECT_DOUBLE_EQ(prog->consts[1].second, 2.5e4);
  std::string ir = ir::Print(*prog);
  EXPECT_NE(ir.find("for $k in 0..3"), std::string::npos) << ir;
  EXPECT_NE(ir.find("\"q\"x\\\""), std::string::npos) << ir;
}

TEST(Lexer, StringsAndBadBytesAtLineEnds) {
  // A backslash before the newline does not continue the string onto the
  // next line (which also threw every later line number off by one).
  ExpectError("const s = \"a\\\nconst b = 1 $\n", 1, 11, "unterminated string");
  ExpectError("const s = \"a\\\nconst b = 1 $\n", 2, 13, "unexpected character '$'");
  ExpectError("print(\"abc\\", 1, 7, "unterminated string");
  // Bytes that do not print are shown in hex, not raw (or as decimal).
  ExpectError("const a = 1 \xff\n", 1, 13, "unexpected character '\\xff'");
  ExpectError(std::string("const a = 1 ") + '\0' + "\n", 1, 13, "unexpected character '\\x00'");
  ExpectError(std::string("print(\"\\\x01\")\n"), 1, 8, "unknown escape '\\\\x01' in string");
  // A NUL in a path would make open() read a file other than the one named.
  ExpectError(std::string("data r = triples(\"r.csv") + '\0' + "x\")\n", 1, 18,
              "a file path cannot contain a NUL byte");
  // A line end between fields would make an entry span lines (and files could
  // not be cut into parts at line starts).
  ExpectError("data r = triples(\"r.csv\", sep=\"\\n\")\n", 1, 31,
              "the separator cannot be a line end: a data file holds one entry per line");
}

TEST(Ir, DumpShowsExplicitParamAccesses) {
  auto prog = CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/mf.rgl", {});
  ASSERT_TRUE(prog.ok());
  std::string ir = ir::Print(*prog);
  EXPECT_NE(ir.find("loop 0 over train (%0(i): int, %1(j): int, %2(v): f32)"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("read W[%0(i), :]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("write H[%1(j), :] = "), std::string::npos) << ir;
  EXPECT_NE(ir.find("accum sq += "), std::string::npos) << ir;
  EXPECT_NE(ir.find("data train = triples split(ratings, part 0, test 0.1, seed 7)"),
            std::string::npos)
      << ir;
}

}  // namespace
}  // namespace rigel::frontend
