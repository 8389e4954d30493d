// The loop compiler's pipeline (kernel/passes/pipeline.h): its order, what
// each pass records, printing and skipping passes, and the IR and bytecode
// verifiers catching a broken loop and naming the pass that broke it.
#include "kernel/passes/pipeline.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"
#include "ir/verify.h"
#include "kernel/verify.h"

namespace rigel::kernel::passes {
namespace {

// An MF update, plus constant arithmetic for fold-constants.
constexpr const char* kMfBody = R"(
  let e = v - dot(W[i], H[j])
  let wi = W[i]
  W[i] = wi + 0.5 * (e * H[j] - 0.25 * wi)
  H[j] = H[j] + 0.5 * (e * wi - 0.25 * H[j])
  s += 0.5 * 4
  s += 1)";

class PipelineTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/pl.csv", "0,1,2\n").ok());
  }

  // A program over one rating with W, H of width 16 and `body` as its loop.
  void Compile(const std::string& body) {
    std::string text = R"(
data t = triples("pl.csv")
param W: f32[2, 16] = fill(1.0)
param H: f32[2, 16] = fill(3.0)
param b: f32[2] = zeros()
accum s: f32
parallel for (i, j, v) in t {)" +
                       body + "\n}\n";
    auto prog = frontend::CompileText(text, testing::TempDir() + "/pl.rgl", {});
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    prog_ = std::make_unique<ir::Program>(std::move(prog).value());
  }

  // Compiles loop 0 through `passes` into impl_ (widths are constants here).
  Status Build(const std::vector<const Pass*>& passes, std::optional<bool> verify) {
    impl_ = std::make_unique<Kernel::Impl>();
    impl_->prog = prog_.get();
    impl_->loop = 0;
    impl_->data = prog_->loops[0].data;
    impl_->kind = prog_->data[impl_->data].kind;
    impl_->rewritten = prog_->loops[0];
    CompileOptions opts;
    opts.verify = verify;
    const ir::Program* p = prog_.get();
    WidthFn widths = [p](int e) -> StatusOr<int64_t> { return p->exprs[e].ival; };
    return RunPipeline(opts, widths, impl_.get(), passes);
  }

  // Per pass, its report for loop 0 when compiled through the executor.
  std::map<std::string, PassReport> Reports(const std::vector<std::string>& disable = {}) {
    std::map<std::string, PassReport> out;
    exec::ExecutorOptions opts;
    opts.compile.verify = true;
    opts.compile.disable = disable;
    opts.compile.stats = [&out](int loop, const std::vector<PassReport>& reports) {
      EXPECT_EQ(loop, 0);
      for (const PassReport& r : reports) out[r.pass] = r;
    };
    auto ex = exec::SerialExecutor::Create(*prog_, opts);
    EXPECT_TRUE(ex.ok()) << ex.status().message();
    return out;
  }

  std::unique_ptr<ir::Program> prog_;
  std::unique_ptr<Kernel::Impl> impl_;
};

TEST_F(PipelineTest, ListsThePassesInOrder) {
  std::vector<std::string> names;
  for (const Pass* p : Pipeline()) {
    names.emplace_back(p->name());
    EXPECT_FALSE(p->description().empty()) << p->name();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"merge-reads", "fold-constants", "read-views",
                                             "fuse-row-writes", "copies-to-views", "fuse-row-views",
                                             "fuse-dot", "specialise-row-kernels"}));
  EXPECT_EQ(Pipeline()[1]->stage(), Stage::kIr);
  EXPECT_EQ(Pipeline()[2]->stage(), Stage::kBytecode);
}

TEST_F(PipelineTest, EachPassCountsWhatItDid) {
  Compile(kMfBody);
  std::map<std::string, PassReport> r = Reports();
  ASSERT_EQ(r.size(), Pipeline().size());
  auto expect = [&](const std::string& pass, const std::string& counter, int64_t n, int shrink) {
    const PassStats& s = r[pass].stats;
    EXPECT_TRUE(r[pass].ran) << pass;
    EXPECT_EQ(s.Get(counter), n) << pass << ": " << counter;
    EXPECT_EQ(s.Get("instructions before") - s.Get("instructions after"), shrink) << pass;
    EXPECT_GT(s.Get("instructions after"), 0) << pass;
  };
  // W[i] is read twice, H[j] four times.
  expect("merge-reads", "reads merged", 4, 4);
  // 4 -> f32, 0.5 * that, 1 -> f32: replaced in place.
  expect("fold-constants", "constants folded", 3, 0);
  // H[j] (written only at its last use); W[i] is used after W[i]'s write.
  expect("read-views", "reads made views", 1, 0);
  expect("fuse-row-writes", "write pairs fused", 1, 1);
  // The copy of W[i] only existed because of the first write.
  expect("copies-to-views", "copies made views", 1, 0);
  expect("fuse-row-views", "view pairs fused", 1, 1);
  expect("fuse-dot", "dots fused", 1, 1);
  // The dot and the pair write (width 16).
  expect("specialise-row-kernels", "kernels specialised", 2, 0);
}

TEST_F(PipelineTest, APassThatChangesNothingRecordsNothing) {
  Compile("\n  b[i] += v");
  for (const auto& [pass, report] : Reports()) {
    EXPECT_TRUE(report.ran) << pass;
    EXPECT_TRUE(report.stats.empty()) << pass;
  }
  Compile(kMfBody);
  std::map<std::string, PassReport> r = Reports({"fuse-dot", "merge-reads"});
  EXPECT_FALSE(r["fuse-dot"].ran);
  EXPECT_FALSE(r["merge-reads"].ran);
  EXPECT_TRUE(r["fuse-dot"].stats.empty());
  // Without merged reads H[j] is read again between the two writes, so they
  // no longer pair.
  EXPECT_TRUE(r["fuse-row-writes"].ran);
  EXPECT_EQ(r["fuse-row-writes"].stats.Get("write pairs fused"), 0);
}

TEST_F(PipelineTest, PrintsAfterTheNamedPasses) {
  Compile(kMfBody);
  std::vector<std::pair<std::string, std::string>> printed;
  CompileOptions opts;
  opts.print_after = {"all"};
  opts.disable = {"copies-to-views"};
  opts.print = [&](const std::string& pass, const std::string& text) {
    printed.emplace_back(pass, text);
  };
  const ir::Program* p = prog_.get();
  WidthFn widths = [p](int e) -> StatusOr<int64_t> { return p->exprs[e].ival; };
  ASSERT_TRUE(Kernel::Compile(*prog_, 0, widths, opts).ok());
  ASSERT_EQ(printed.size(), Pipeline().size() - 1);  // not after the disabled pass
  for (const auto& [pass, text] : printed) {
    EXPECT_NE(pass, "copies-to-views");
    bool ir = pass == "merge-reads" || pass == "fold-constants";
    EXPECT_EQ(text.rfind(ir ? "loop 0 over t" : "bytecode loop 0\n0: ", 0), 0u) << pass << text;
  }
  // Each print shows that pass's effect.
  auto count = [](const std::string& text, const std::string& word) {
    int n = 0;
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(printed[0].second, "read H["), 1) << printed[0].second;
  EXPECT_EQ(count(printed[0].second, "read W["), 1) << printed[0].second;
  EXPECT_NE(printed[1].second.find("f32 = const 2\n"), std::string::npos) << printed[1].second;
  EXPECT_NE(printed[3].second.find("wr.row.pair"), std::string::npos);
  EXPECT_NE(printed[5].second.find("dot.op"), std::string::npos);
  EXPECT_NE(printed[5].second.find(" generic"), std::string::npos);
  EXPECT_EQ(printed[6].second.find(" generic"), std::string::npos);

  opts.print_after = {"fuse-dot"};
  printed.clear();
  ASSERT_TRUE(Kernel::Compile(*prog_, 0, widths, opts).ok());
  ASSERT_EQ(printed.size(), 1u);
  EXPECT_EQ(printed[0].first, "fuse-dot");
}

TEST_F(PipelineTest, UnknownPassNamesAreErrors) {
  Compile(kMfBody);
  CompileOptions opts;
  opts.disable = {"fuse-dot", "no-such-pass"};
  const ir::Program* p = prog_.get();
  WidthFn widths = [p](int e) -> StatusOr<int64_t> { return p->exprs[e].ival; };
  auto k = Kernel::Compile(*prog_, 0, widths, opts);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("unknown pass 'no-such-pass'"), std::string::npos);
  for (const Pass* pass : Pipeline()) {
    EXPECT_NE(k.status().message().find(pass->name()), std::string::npos) << pass->name();
  }
  EXPECT_FALSE(CheckPassNames({"all"}, /*allow_all=*/false).ok());
  EXPECT_TRUE(CheckPassNames({"all", "fuse-dot"}, /*allow_all=*/true).ok());
}

TEST_F(PipelineTest, IrVerifierFindsFaults) {
  Compile(kMfBody);
  ASSERT_TRUE(ir::VerifyLoop(*prog_, prog_->loops[0]).ok());
  // The dot's instruction reads a register defined after it.
  ir::Loop early = prog_->loops[0];
  int dot = -1;
  for (size_t n = 0; n < early.body.size(); ++n) {
    if (early.body[n].op == ir::Op::kDot) dot = static_cast<int>(n);
  }
  ASSERT_GE(dot, 0);
  int later = early.body[dot + 1].dst;
  early.body[dot].a = later;
  Status st = ir::VerifyLoop(*prog_, early);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("loop 0, instruction " + std::to_string(dot) + " (dot at "),
            std::string::npos)
      << st.message();
  EXPECT_NE(
      st.message().find("operand a %" + std::to_string(later) + " is used before it is defined"),
      std::string::npos)
      << st.message();
  // A row subscript that is a float: the rating v.
  ir::Loop typed = prog_->loops[0];
  for (ir::Inst& in : typed.body) {
    if (in.op == ir::Op::kWrite) in.a = typed.vars[2];
  }
  st = ir::VerifyLoop(*prog_, typed);
  EXPECT_NE(st.message().find("row subscript %2 is an f32, expected an int"), std::string::npos)
      << st.message();
  // A parameter that does not exist.
  ir::Loop missing = prog_->loops[0];
  for (ir::Inst& in : missing.body) {
    if (in.op == ir::Op::kRead) in.index = 7;
  }
  st = ir::VerifyLoop(*prog_, missing);
  EXPECT_NE(st.message().find("parameter 7 is out of range (3)"), std::string::npos)
      << st.message();
}

// Test passes that break what they are given, the way a buggy pass would.
class BreakOperand final : public IrPass {
 public:
  std::string_view name() const override { return "test-break-operand"; }
  std::string_view description() const override { return "reads a register before its def"; }
  void Run(const ir::Program&, bool, ir::Loop* loop, PassStats* stats) const override {
    loop->body[0].a = static_cast<int>(loop->regs.size()) - 1;  // a register defined later
    stats->Add("broken");
  }
};

class BreakJumps final : public BytecodePass {
 public:
  std::string_view name() const override { return "test-break-jumps"; }
  std::string_view description() const override { return "jumps past the end"; }
  void Run(Kernel::Impl* k, PassStats* stats) const override {
    for (VOp& o : k->code) {
      if (o.code == kForNext) o.n = static_cast<int32_t>(k->code.size()) + 5;
    }
    stats->Add("broken");
  }
};

TEST_F(PipelineTest, AVerifierFailureNamesThePass) {
  Compile("\n  for k in 0..2 { W[i] = W[i] + 0.5 * H[j] }\n  b[i] += v");
  ASSERT_TRUE(Build(Pipeline(), /*verify=*/true).ok());
  static const BreakOperand break_operand;
  std::vector<const Pass*> passes = Pipeline();
  passes.insert(passes.begin() + 1, &break_operand);
  Status st = Build(passes, /*verify=*/true);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("the IR of loop 0 is invalid after pass 'test-break-operand': "
                              "loop 0, instruction 0 (const at "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("is used before it is defined"), std::string::npos);

  static const BreakJumps break_jumps;
  passes = Pipeline();
  passes.insert(passes.begin() + 4, &break_jumps);
  st = Build(passes, /*verify=*/true);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("the bytecode of loop 0 is invalid after pass 'test-break-jumps': "
                              "bytecode "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("(for.next): n = "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("is not a jump target"), std::string::npos);
  // Verification off: nothing looks, and the broken code comes out (last,
  // so that no later pass follows its jumps).
  passes = Pipeline();
  passes.push_back(&break_jumps);
  EXPECT_TRUE(Build(passes, /*verify=*/false).ok());
  EXPECT_FALSE(Build(passes, /*verify=*/true).ok());
}

// Unset, verification follows the build: on in debug and sanitizer builds
// (scripts/test.sh --sanitize), off in Release.
TEST_F(PipelineTest, VerificationIsOnByDefaultInDebugAndSanitizerBuilds) {
  Compile("\n  for k in 0..2 { W[i] = W[i] + 0.5 * H[j] }\n  b[i] += v");
  static const BreakJumps break_jumps;
  std::vector<const Pass*> passes = Pipeline();
  passes.push_back(&break_jumps);
  Status st = Build(passes, std::nullopt);
#if !defined(NDEBUG) || RIGEL_SANITIZE
  EXPECT_EQ(st.code(), StatusCode::kInternal) << "no verification in a debug or sanitizer build";
#else
  EXPECT_TRUE(st.ok()) << st.message();
#endif
}

TEST_F(PipelineTest, BytecodeVerifierFindsFaults) {
  Compile(kMfBody);
  ASSERT_TRUE(Build(Pipeline(), /*verify=*/true).ok());
  ASSERT_TRUE(VerifyBytecode(*impl_, /*laid_out=*/true).ok());
  std::string code = Disassemble(*impl_);
  ASSERT_EQ(impl_->code[1].code, kDotOp) << code;
  ASSERT_EQ(impl_->code[2].code, kWrRowPair) << code;
  auto fault = [&](auto&& breakit) {
    Kernel::Impl copy = *impl_;
    breakit(&copy);
    Status st = VerifyBytecode(copy, /*laid_out=*/true);
    EXPECT_EQ(st.code(), StatusCode::kInternal);
    return st.message();
  };
  // The dot reads a vector of another width.
  std::string m = fault([](Kernel::Impl* k) {
    k->code[1].b = k->num_vecs;
    k->vec_width.push_back(8), k->vec_offset.push_back(0), k->is_view.push_back(false);
    ++k->num_vecs;
  });
  EXPECT_NE(m.find("bytecode 1 (dot.op): vector "), std::string::npos) << m;
  EXPECT_NE(m.find(" has width 8, but the instruction's width is 16"), std::string::npos) << m;
  // A term reads a slot that does not exist.
  m = fault([](Kernel::Impl* k) { k->terms[k->code[2].t + 1].coef = k->num_slots + 3; });
  EXPECT_NE(m.find("bytecode 2 (wr.row.pair): term 1 has a coefficient outside the slots"),
            std::string::npos)
      << m;
  // The view of W[i] is also written as a buffer.
  m = fault([](Kernel::Impl* k) {
    k->code[1].code = kVZero;
    k->code[1].d = k->code[0].d;
  });
  EXPECT_NE(m.find("bytecode 1 (vzero): d = " + std::to_string(impl_->code[0].d) +
                   " is a view; this writes its buffer"),
            std::string::npos)
      << m;
  m = fault([](Kernel::Impl* k) { k->code.pop_back(); });
  EXPECT_NE(m.find("does not end with `end`"), std::string::npos) << m;
  m = fault([](Kernel::Impl* k) { k->code[2].k.pair = nullptr; });
  EXPECT_NE(m.find("bytecode 2 (wr.row.pair): has no row kernel"), std::string::npos) << m;
  m = fault([](Kernel::Impl* k) { k->arena_size = 0; });
  EXPECT_NE(m.find("is outside the arena (0)"), std::string::npos) << m;
}

}  // namespace
}  // namespace rigel::kernel::passes
