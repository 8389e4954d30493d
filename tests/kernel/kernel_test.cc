// The bytecode compiler's rewrites (read CSE, views, linear fusion, paired
// row writes) must keep sequential semantics. Each case here is one where a
// careless rewrite would read a value after it was overwritten; expected
// values are computed by hand.
#include <gtest/gtest.h>

#include <sstream>

#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::kernel {
namespace {

class KernelTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/one.csv", "0,1,2\n").ok());
  }

  // Runs a program over one rating (i=0, j=1, v=2) with W rows of 2 filled
  // with 1 and H rows of 2 filled with 3.
  void Run(const std::string& body) {
    std::string text = R"(
data t = triples("one.csv")
param W: f32[2, 2] = fill(1.0)
param H: f32[2, 2] = fill(3.0)
param b: f32[2] = zeros()
parallel for (i, j, v) in t {
)" + body + "\n}\n";
    auto prog = frontend::CompileText(text, testing::TempDir() + "/k.rgl", {});
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    prog_ = std::make_unique<ir::Program>(std::move(prog).value());
    auto ex = exec::SerialExecutor::Create(*prog_, {});
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    ex_ = std::move(ex).value();
    Status st = ex_->Run();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  float W(int r, int c) const { return ex_->param(0)[r * 2 + c]; }
  float H(int r, int c) const { return ex_->param(1)[r * 2 + c]; }
  float B(int r) const { return ex_->param(2)[r]; }
  std::string Code() const { return ex_->kernel(0).Disassemble(); }

  std::unique_ptr<ir::Program> prog_;
  std::unique_ptr<exec::SerialExecutor> ex_;
};

TEST_F(KernelTest, PairedWritesUseOldValuesThroughLet) {
  Run(R"(
  let wi = W[i]
  W[i] = wi + 0.5 * H[j]
  H[j] = H[j] + 0.25 * wi)");
  EXPECT_FLOAT_EQ(W(0, 0), 2.5f);   // 1 + 0.5 * 3
  EXPECT_FLOAT_EQ(H(1, 1), 3.25f);  // 3 + 0.25 * old W = 1
  EXPECT_NE(Code().find("wr.row.pair"), std::string::npos) << Code();
  EXPECT_EQ(Code().find("rd.row.copy"), std::string::npos) << Code();  // the let became a view
}

TEST_F(KernelTest, SecondWriteReadingTheFirstRowSeesItsNewValue) {
  Run(R"(
  W[i] = W[i] * 2
  H[j] = H[j] + W[i])");
  EXPECT_FLOAT_EQ(W(0, 0), 2.0f);
  EXPECT_FLOAT_EQ(H(1, 0), 5.0f);  // 3 + new W = 2, not 3 + 1
  EXPECT_EQ(Code().find("wr.row.pair"), std::string::npos) << Code();
}

TEST_F(KernelTest, CopyUsedAfterThePairStaysACopy) {
  Run(R"(
  let wi = W[i]
  W[i] = wi * 4
  H[j] = H[j] + wi
  b[i] += sum(wi))");
  EXPECT_FLOAT_EQ(W(0, 1), 4.0f);
  EXPECT_FLOAT_EQ(H(1, 1), 4.0f);
  EXPECT_FLOAT_EQ(B(0), 2.0f);  // sum of the old row, not of the new one (8)
}

TEST_F(KernelTest, SameParameterWritesAreNotPaired) {
  Run(R"(
  H[j] = H[j] + 1
  H[i] = H[i] + H[j])");
  // i = 0, j = 1: H[1] = 4, then H[0] = 3 + 4.
  EXPECT_FLOAT_EQ(H(1, 0), 4.0f);
  EXPECT_FLOAT_EQ(H(0, 0), 7.0f);
  EXPECT_EQ(Code().find("wr.row.pair"), std::string::npos) << Code();
}

TEST_F(KernelTest, ReadAfterWriteIsNotMergedWithReadBeforeIt) {
  Run(R"(
  let before = W[i]
  W[i] = W[i] + 10
  let after = W[i]
  H[j] = before + after)");
  EXPECT_FLOAT_EQ(H(1, 0), 12.0f);  // 1 + 11
}

TEST_F(KernelTest, ElementWriteInvalidatesRowView) {
  Run(R"(
  let r = W[i]
  W[i, 0] = 7
  H[j] = r)");
  EXPECT_FLOAT_EQ(H(1, 0), 1.0f);  // r was read before the element write
  EXPECT_FLOAT_EQ(H(1, 1), 1.0f);
}

TEST_F(KernelTest, ValueReadBeforeInnerLoopThatWritesIt) {
  Run(R"(
  let r = W[i]
  for k in 0..3 { W[i] += r })");
  // r is the row before the loop: W = 1 + 3 * 1.
  EXPECT_FLOAT_EQ(W(0, 0), 4.0f);
}

TEST_F(KernelTest, VarsAccumulateAcrossInnerIterations) {
  Run(R"(
  var g = zeros(2)
  var s = 0.0
  for k in 0..4 {
    g += 0.5 * H[j]
    s += 1
  }
  W[i] = g - s)");
  EXPECT_FLOAT_EQ(W(0, 0), 2.0f);  // 4 * 1.5 - 4
}

TEST_F(KernelTest, LongLinearCombinationsAreSplit) {
  Run(R"(
  W[i] = W[i] + 2 * H[j] + 3 * H[i] + W[j] * 0.5 - H[0] + 4 * W[0] + 0.25 * H[1] + W[1] + H[0] * 2 - W[i] * 0.5)");
  // Distinct rows: W[0]=1 (i, also W[0]), W[1]=1 (j), H[0]=3, H[1]=3.
  // 1 + 6 + 9 + 0.5 - 3 + 4 + 0.75 + 1 + 6 - 0.5 = 24.75
  EXPECT_FLOAT_EQ(W(0, 0), 24.75f);
}

TEST_F(KernelTest, DotFusedIntoTheScalarOpThatUsesIt) {
  // dot(W[i], H[j]) = 6. Left and right operands, three operators.
  Run(R"(
  b[0] += v - dot(W[i], H[j])
  b[1] += dot(W[i], H[j]) * 0.5 + dot(H[j], H[j]) / 2)");
  EXPECT_FLOAT_EQ(B(0), -4.0f);  // 2 - 6
  EXPECT_FLOAT_EQ(B(1), 12.0f);  // 3 + 18 / 2
  EXPECT_NE(Code().find("dot.op"), std::string::npos) << Code();
}

TEST_F(KernelTest, DotUsedTwiceIsNotFused) {
  Run(R"(
  let d = dot(W[i], H[j])
  b[0] += d - 1
  b[1] += d * d)");
  EXPECT_FLOAT_EQ(B(0), 5.0f);
  EXPECT_FLOAT_EQ(B(1), 36.0f);
  EXPECT_EQ(Code().find("dot.op"), std::string::npos) << Code();
}

TEST_F(KernelTest, NonLinearVectorOps) {
  Run(R"(
  H[j] = min(W[i] * H[j], 2.5) + clip(H[j] / 2, 0, 1) + abs(0 - W[i]))");
  EXPECT_FLOAT_EQ(H(1, 0), 2.5f + 1.0f + 1.0f);
}

// Accumulator updates: a deferred linear form added to a vector accumulator
// is materialised first; element adds and scalar adds use their own slots.
TEST_F(KernelTest, VectorAccumulatorsAddFormsElementsAndScalars) {
  auto prog = frontend::CompileText(R"(
data t = triples("one.csv")
param W: f32[2, 2] = fill(1.0)
param H: f32[2, 2] = fill(3.0)
accum a: f32
accum s: f32[2]
accum e: f32[3]
parallel for (i, j, v) in t {
  s += W[i] * v + H[j]
  e[j + 1] += v
  e[0] += 1
  a += v
}
)",
                                    testing::TempDir() + "/k.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  prog_ = std::make_unique<ir::Program>(std::move(prog).value());
  auto ex = exec::SerialExecutor::Create(*prog_, {});
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ex_ = std::move(ex).value();
  ASSERT_TRUE(ex_->Run().ok());
  EXPECT_EQ(ex_->accums(), (std::vector<double>{2, 5, 5, 1, 0, 2}));  // a, s[0..1], e[0..2]
  EXPECT_NE(Code().find("accum.vec"), std::string::npos) << Code();
  EXPECT_NE(Code().find("accum.elem"), std::string::npos) << Code();
}

}  // namespace
}  // namespace rigel::kernel
