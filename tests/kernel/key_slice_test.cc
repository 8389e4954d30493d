// The prefetch slice must name exactly the rows the full kernel touches.
//
// Two independent ground truths: (1) for every example program and loop, the
// rows each element touches as the program text says (mf: W[i], H[j]; word2vec:
// emb[w], ctx of the window tokens and of the negatives, drawn with the
// documented hash of docs/dsl.md), computed here from the data sets; (2) the
// rows the full kernel writes, found by running it on one element over
// randomised parameters and diffing them (every written row must be in the
// slice). Programs whose accesses are all writes get equality with (2), which
// is how draw counting (rand() for values only, draws in data-dependent
// loops) is checked against the kernel itself.
//
// A parameter value cannot become an int in the DSL (there is no f32 -> int
// conversion), so a data-dependent subscript arises only through control:
// a `var` assigned, a loop bound set, or a draw made under a condition that
// reads a parameter. Those cases check exact() == false.
#include "kernel/key_slice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/hash.h"
#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::kernel {
namespace {

namespace fs = std::filesystem;
using data::Dataset;
using KeySets = std::vector<std::set<int64_t>>;

std::string TempPath(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / ("rigel_key_slice_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

void Write(const std::string& path, const std::string& text) {
  ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << path;
}

// Small data sets for the example programs (their own data are large).
std::string RatingsFile() {
  std::string path = TempPath("ratings.csv");
  std::mt19937 rng(1);
  std::ostringstream s;
  for (int k = 0; k < 1000; ++k) {
    s << rng() % 60 << "," << rng() % 40 << "," << (rng() % 100) / 20.0 - 2.5 << "\n";
  }
  Write(path, s.str());
  return path;
}

// libsvm rows (1-based features, the loader's default); test rows also use features past the
// training dimension, which sparse_lr's test loop skips with `if f < train.dim`.
std::string LibsvmFile(const std::string& name, int rows, int dim, uint32_t seed) {
  std::string path = TempPath(name);
  std::mt19937 rng(seed);
  std::ostringstream s;
  for (int n = 0; n < rows; ++n) {
    s << rng() % 2;
    std::set<int> feats;
    int nnz = 3 + static_cast<int>(rng() % 8);
    while (static_cast<int>(feats.size()) < nnz) feats.insert(1 + static_cast<int>(rng() % dim));
    for (int f : feats) s << " " << f << ":" << (1 + rng() % 9) / 4.0;
    s << "\n";
  }
  Write(path, s.str());
  return path;
}

std::string DenseFile() {
  std::string path = TempPath("dense.csv");
  std::mt19937 rng(3);
  std::ostringstream s;
  for (int n = 0; n < 100; ++n) {
    s << rng() % 2;
    for (int c = 0; c < 8; ++c) s << "," << (rng() % 100) / 25.0 - 2;
    s << "\n";
  }
  Write(path, s.str());
  return path;
}

// 6000 tokens over 300 words (about 20 occurrences each, so min_count=5
// keeps nearly all): windows and negatives of distinct rows are rare enough
// that the sets discriminate.
std::string CorpusFile() {
  std::string path = TempPath("corpus.txt");
  std::mt19937 rng(4);
  std::ostringstream s;
  for (int t = 0; t < 6000; ++t) s << "w" << rng() % 300 << (t % 20 == 19 ? "\n" : " ");
  Write(path, s.str());
  return path;
}

// A compiled program with its data loaded and parameters allocated (the
// driver is never run), and the contexts to run its loops' kernels and slices.
class Harness {
 public:
  static std::unique_ptr<Harness> FromFile(
      const std::string& example, const std::vector<std::pair<std::string, std::string>>& sets) {
    frontend::CompileOptions opts;
    opts.sets = sets;
    auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/" + example, opts);
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    if (!prog.ok()) return nullptr;
    return Make(std::move(prog).value());
  }
  static std::unique_ptr<Harness> FromText(const std::string& text) {
    auto prog = frontend::CompileText(text, TempPath("t.rgl"), {});
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    if (!prog.ok()) return nullptr;
    return Make(std::move(prog).value());
  }

  const ir::Program& prog() const { return *prog_; }
  const data::Dataset& data(const std::string& name) const {
    return ex_->data(Index(prog_->data, name));
  }
  int param(const std::string& name) const { return Index(prog_->params, name); }
  const data::Dataset& loop_data(int loop) const { return ex_->data(prog_->loops[loop].data); }

  // Driver expressions as far as loop bodies and widths need them. Driver
  // slots and accumulators have no value before the driver runs; the loops
  // tested use them as values only (bias's `mu`), so any number will do.
  StatusOr<OuterValue> Eval(int id) const {
    const ir::DExpr& e = prog_->exprs[id];
    switch (e.kind) {
      case ir::DExpr::kInt:
        return OuterValue{true, e.ival, static_cast<double>(e.ival)};
      case ir::DExpr::kFloat:
        return OuterValue{false, 0, e.fval};
      case ir::DExpr::kDataAttr: {
        const data::Dataset& d = ex_->data(e.index);
        int64_t v = e.str == "count"  ? d.count
                    : e.str == "rows" ? d.rows
                    : e.str == "cols" ? d.cols
                    : e.str == "dim"  ? d.dim
                                      : d.vocab;
        return OuterValue{true, v, static_cast<double>(v)};
      }
      case ir::DExpr::kSlot:
      case ir::DExpr::kAccum:
        return OuterValue{e.is_int, 1, 0.5};
      case ir::DExpr::kUnary: {
        RIGEL_ASSIGN_OR_RETURN(OuterValue a, Eval(e.a));
        if (e.fn != ir::kNeg) return Unimplemented("unary " + std::to_string(e.fn));
        return OuterValue{a.is_int, -a.i, -a.f};
      }
      case ir::DExpr::kBinary: {
        RIGEL_ASSIGN_OR_RETURN(OuterValue a, Eval(e.a));
        RIGEL_ASSIGN_OR_RETURN(OuterValue b, Eval(e.b));
        double x = a.is_int ? a.i : a.f, y = b.is_int ? b.i : b.f;
        switch (e.fn) {
          case ir::kAdd:
            return OuterValue{e.is_int, a.i + b.i, x + y};
          case ir::kSub:
            return OuterValue{e.is_int, a.i - b.i, x - y};
          case ir::kMul:
            return OuterValue{e.is_int, a.i * b.i, x * y};
          case ir::kDiv:
            return OuterValue{e.is_int, b.i ? a.i / b.i : 0, x / y};
          default:
            return Unimplemented("binary " + std::to_string(e.fn));
        }
      }
      default:
        return Unimplemented("driver expression kind " + std::to_string(e.kind));
    }
  }
  WidthFn Widths() const {
    return [this](int id) -> StatusOr<int64_t> {
      RIGEL_ASSIGN_OR_RETURN(OuterValue v, Eval(id));
      return v.i;
    };
  }

  // A context over `values` (one buffer per parameter).
  RunContext Ctx(std::vector<std::vector<float>>* values) {
    bindings_.clear();
    for (size_t p = 0; p < prog_->params.size(); ++p) {
      int64_t width = std::max<int64_t>(1, prog_->params[p].width);
      bindings_.push_back(ParamBinding{(*values)[p].data(),
                                       static_cast<int64_t>((*values)[p].size()) / width, width});
    }
    data_ptrs_.clear();
    for (size_t d = 0; d < prog_->data.size(); ++d) data_ptrs_.push_back(&ex_->data(d));
    accums_.assign(prog_->accums.size(), 0.0);
    RunContext ctx;
    ctx.params = &bindings_;
    ctx.data = &data_ptrs_;
    ctx.accums = accums_.data();
    ctx.outer = [this](int id) { return Eval(id); };
    ctx.seed = 0;
    ctx.launch = 0;
    return ctx;
  }

  KeySlice Slice(int loop) const {
    auto s = KeySlice::Compile(*prog_, loop, Widths());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(s).value();
  }

  // The rows the slice records for `elements`, as sets per parameter.
  KeySets SliceKeys(const KeySlice& slice, std::span<const int64_t> elements) {
    RunContext ctx = Ctx(&values_);
    std::vector<std::vector<int64_t>> keys;
    Status st = slice.Run(ctx, elements, &keys);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(keys.size(), prog_->params.size());
    KeySets out(prog_->params.size());
    for (size_t p = 0; p < keys.size(); ++p) out[p].insert(keys[p].begin(), keys[p].end());
    return out;
  }

  // Ground truth (2): the rows the full kernel writes when it runs element
  // `e` alone over randomised parameter values.
  KeySets WrittenRows(int loop, int64_t e) {
    std::vector<std::vector<float>> work = values_;
    RunContext ctx = Ctx(&work);
    int64_t one[] = {e};
    Status st = ex_->kernel(loop).RunElements(ctx, one);
    EXPECT_TRUE(st.ok()) << st.message();
    KeySets out(prog_->params.size());
    for (size_t p = 0; p < work.size(); ++p) {
      int64_t width = std::max<int64_t>(1, prog_->params[p].width);
      for (size_t k = 0; k < work[p].size(); ++k) {
        if (std::memcmp(&work[p][k], &values_[p][k], sizeof(float)) != 0) out[p].insert(k / width);
      }
    }
    return out;
  }

  Status RunKernel(int loop, std::span<const int64_t> elements) {
    std::vector<std::vector<float>> work = values_;
    RunContext ctx = Ctx(&work);
    return ex_->kernel(loop).RunElements(ctx, elements);
  }
  Status RunSlice(const KeySlice& slice, std::span<const int64_t> elements,
                  std::vector<std::vector<int64_t>>* keys) {
    RunContext ctx = Ctx(&values_);
    return slice.Run(ctx, elements, keys);
  }

 private:
  static std::unique_ptr<Harness> Make(ir::Program prog) {
    auto h = std::unique_ptr<Harness>(new Harness);
    h->prog_ = std::make_unique<ir::Program>(std::move(prog));
    std::ostringstream sink;
    exec::ExecutorOptions opts;
    opts.out = &sink;
    auto ex = exec::SerialExecutor::Create(*h->prog_, opts);
    EXPECT_TRUE(ex.ok()) << ex.status().message();
    if (!ex.ok()) return nullptr;
    h->ex_ = std::move(ex).value();
    // Random values in [-0.5, 0.5) so that every update changes its row
    // (zeros() parameters would make some updates no-ops).
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (size_t p = 0; p < h->prog_->params.size(); ++p) {
      std::vector<float> v = h->ex_->param(static_cast<int>(p));
      for (float& x : v) x = u(rng);
      h->values_.push_back(std::move(v));
    }
    return h;
  }
  template <typename T>
  static int Index(const std::vector<T>& decls, const std::string& name) {
    for (size_t k = 0; k < decls.size(); ++k) {
      if (decls[k].name == name) return static_cast<int>(k);
    }
    ADD_FAILURE() << "no declaration named " << name;
    return 0;
  }

  std::unique_ptr<ir::Program> prog_;
  std::unique_ptr<exec::SerialExecutor> ex_;
  std::vector<std::vector<float>> values_;
  std::vector<ParamBinding> bindings_;
  std::vector<const data::Dataset*> data_ptrs_;
  std::vector<double> accums_;
};

// Element subsets of a data set of `count` elements: a few singletons, a
// prefix, a shuffled sample and the tail.
std::vector<std::vector<int64_t>> Subsets(int64_t count) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t e : {int64_t{0}, count / 2, count - 1}) out.push_back({e});
  std::vector<int64_t> prefix(std::min<int64_t>(count, 25));
  std::iota(prefix.begin(), prefix.end(), 0);
  out.push_back(prefix);
  std::vector<int64_t> all(count);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937(6));
  all.resize(std::min<int64_t>(count, 40));
  out.push_back(all);
  out.push_back({count - 3, count - 2, count - 1});
  return out;
}

// Ground truth (1) for one element is `expect(e, &sets)`; checks it against
// the slice per element and over each subset, and the kernel's written rows
// against the slice per element.
void CheckLoop(Harness* h, int loop, const std::function<void(int64_t, KeySets*)>& expect) {
  SCOPED_TRACE("loop " + std::to_string(loop));
  KeySlice slice = h->Slice(loop);
  const size_t np = h->prog().params.size();
  for (const std::vector<int64_t>& subset : Subsets(h->loop_data(loop).count)) {
    KeySets want(np);
    for (int64_t e : subset) expect(e, &want);
    for (size_t p = 0; p < np; ++p) {
      if (!slice.exact(static_cast<int>(p))) want[p].clear();  // nothing recorded for them
    }
    KeySets got = h->SliceKeys(slice, subset);
    for (size_t p = 0; p < np; ++p) {
      EXPECT_EQ(got[p], want[p]) << "param " << h->prog().params[p].name << ", " << subset.size()
                                 << " elements from " << subset[0];
    }
  }
  const std::vector<int64_t> sample = Subsets(h->loop_data(loop).count)[4];
  for (int64_t e : sample) {
    KeySets written = h->WrittenRows(loop, e);
    int64_t one[] = {e};
    KeySets got = h->SliceKeys(slice, one);
    for (size_t p = 0; p < np; ++p) {
      if (!slice.exact(static_cast<int>(p))) continue;
      for (int64_t row : written[p]) {
        EXPECT_TRUE(got[p].count(row)) << "element " << e << " writes " << h->prog().params[p].name
                                       << "[" << row << "], which the slice does not record";
      }
    }
  }
}

void ExpectFlags(const KeySlice& s, int p, bool touches, bool exact, bool whole) {
  EXPECT_EQ(s.touches(p), touches) << "param " << p;
  EXPECT_EQ(s.exact(p), exact) << "param " << p;
  EXPECT_EQ(s.whole(p), whole) << "param " << p;
}

TEST(KeySliceTest, MatrixFactorisation) {
  auto h = Harness::FromFile("mf.rgl", {{"ratings.path", RatingsFile()}});
  ASSERT_TRUE(h);
  const int W = h->param("W"), H = h->param("H");
  for (int loop : {0, 1}) {
    const data::Dataset& d = h->loop_data(loop);
    CheckLoop(h.get(), loop, [&](int64_t e, KeySets* k) {
      (*k)[W].insert(d.ti[e]);
      (*k)[H].insert(d.tj[e]);
    });
    KeySlice s = h->Slice(loop);
    ExpectFlags(s, W, true, true, false);
    ExpectFlags(s, H, true, true, false);
  }
  // The four mentions of W[i] and of H[j] are one key each; nothing else runs.
  KeySlice s = h->Slice(0);
  std::vector<int64_t> all(h->loop_data(0).count);
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::vector<int64_t>> keys;
  ASSERT_TRUE(h->RunSlice(s, all, &keys).ok());
  EXPECT_EQ(keys[W].size(), all.size());
  EXPECT_EQ(keys[H].size(), all.size());
  EXPECT_EQ(s.Disassemble(), "0: key a=0 aux=0\n1: key a=1 aux=1\n2: end\n") << s.Disassemble();
}

TEST(KeySliceTest, Bias) {
  auto h = Harness::FromFile("bias.rgl", {{"ratings.path", RatingsFile()}});
  ASSERT_TRUE(h);
  const int b = h->param("b");
  KeySlice first = h->Slice(0);  // total += v
  ExpectFlags(first, b, false, false, false);
  CheckLoop(h.get(), 0, [](int64_t, KeySets*) {});
  for (int loop : {1, 2}) {
    const data::Dataset& d = h->loop_data(loop);
    CheckLoop(h.get(), loop, [&](int64_t e, KeySets* k) { (*k)[b].insert(d.ti[e]); });
    ExpectFlags(h->Slice(loop), b, true, true, false);
  }
}

TEST(KeySliceTest, SparseLogisticRegression) {
  auto h = Harness::FromFile("sparse_lr.rgl", {{"train.path", LibsvmFile("train.svm", 200, 300, 7)},
                                               {"test.path", LibsvmFile("test.svm", 60, 360, 8)}});
  ASSERT_TRUE(h);
  const int w = h->param("w");
  const int64_t train_dim = h->data("train").dim;
  for (int loop : {0, 1}) {
    const data::Dataset& d = h->loop_data(loop);
    CheckLoop(h.get(), loop, [&](int64_t n, KeySets* k) {
      for (int64_t q = d.feat_offset[n]; q < d.feat_offset[n + 1]; ++q) {
        if (loop == 0 || d.feat_index[q] < train_dim) (*k)[w].insert(d.feat_index[q]);
      }
    });
    ExpectFlags(h->Slice(loop), w, true, true, false);
  }
}

TEST(KeySliceTest, DenseLogisticRegressionIsWhole) {
  auto h = Harness::FromFile("dense_lr.rgl", {{"d.path", DenseFile()}});
  ASSERT_TRUE(h);
  const int w = h->param("w");
  for (int loop : {0, 1}) {
    KeySlice s = h->Slice(loop);
    ExpectFlags(s, w, true, false, true);
    CheckLoop(h.get(), loop, [](int64_t, KeySets*) {});
    EXPECT_EQ(s.Disassemble(), "0: end\n");  // nothing to compute
  }
}

TEST(KeySliceTest, Wavefront) {
  auto h = Harness::FromFile("wavefront.rgl", {{"N", "40"}, {"M", "30"}});
  ASSERT_TRUE(h);
  const int A = h->param("A");
  // A[i + 1, j + 1] = 0.5 * (A[i, j + 1] + A[i + 1, j]) + 0.001
  CheckLoop(h.get(), 0, [&](int64_t e, KeySets* k) {
    (*k)[A].insert(e / 30);
    (*k)[A].insert(e / 30 + 1);
  });
  CheckLoop(h.get(), 1, [&](int64_t e, KeySets* k) { (*k)[A].insert(e / 30 + 1); });
  ExpectFlags(h->Slice(0), A, true, true, false);
}

// word2vec's context keys include negative samples, which depend on the
// draw counter: the k-th negative of the q-th window position is draw
// q * NEG + k (docs/dsl.md, "Determinism").
TEST(KeySliceTest, Word2vec) {
  auto h = Harness::FromFile("word2vec.rgl", {{"corpus.path", CorpusFile()}});
  ASSERT_TRUE(h);
  const int emb = h->param("emb"), ctx = h->param("ctx");
  const data::Dataset& d = h->loop_data(0);
  constexpr int64_t kWindow = 5, kNeg = 5;
  constexpr uint64_t kNegativeSalt = 0x6e656773;
  auto window = [&](int64_t t) {
    std::vector<int64_t> out;
    for (int64_t q = std::max<int64_t>(0, t - kWindow); q < std::min(d.count, t + kWindow + 1);
         ++q) {
      if (q != t) out.push_back(q);
    }
    return out;
  };
  CheckLoop(h.get(), 0, [&](int64_t t, KeySets* k) {
    std::vector<int64_t> win = window(t);
    if (!win.empty()) (*k)[emb].insert(d.tokens[t]);
    for (size_t q = 0; q < win.size(); ++q) {
      (*k)[ctx].insert(d.tokens[win[q]]);
      for (int64_t n = 0; n < kNeg; ++n) {
        uint64_t draw = q * kNeg + n;
        (*k)[ctx].insert(d.negatives.Sample(HashCoords(kNegativeSalt, 0, t, draw)));
      }
    }
  });
  KeySlice s = h->Slice(0);
  ExpectFlags(s, emb, true, true, false);
  ExpectFlags(s, ctx, true, true, false);
  // At most one ctx key per window token and per negative (fewer when a row
  // comes back to back), and one emb key per position: emb[w] is the same
  // row in every window step.
  for (int64_t t : {int64_t{0}, int64_t{2}, d.count / 2}) {
    std::vector<std::vector<int64_t>> keys;
    int64_t one[] = {t};
    ASSERT_TRUE(h->RunSlice(s, one, &keys).ok());
    int64_t w = static_cast<int64_t>(window(t).size());
    EXPECT_LE(static_cast<int64_t>(keys[ctx].size()), w * (1 + kNeg)) << t;
    EXPECT_GE(static_cast<int64_t>(keys[ctx].size()), w > 0 ? 1 : 0) << t;
    EXPECT_EQ(static_cast<int64_t>(keys[emb].size()), w > 0 ? 1 : 0) << t;
  }
}

// Programs over a few ratings with all accesses writes, so the kernel's
// written rows are the whole truth; W is 4 x 2, H 4 x 2, b has 6 rows.
class SmallProgramTest : public testing::Test {
 protected:
  std::unique_ptr<Harness> Make(const std::string& body) {
    std::ostringstream s;
    for (int k = 0; k < 64; ++k) s << k % 4 << "," << (k * 7 + 1) % 4 << "," << k % 5 << "\n";
    Write(TempPath("small.csv"), s.str());
    return Harness::FromText(R"(
data t = triples("small.csv")
param W: f32[4, 2] = fill(1.0)
param H: f32[4, 2] = fill(3.0)
param b: f32[6] = zeros()
parallel for (i, j, v) in t {
)" + body + "\n}\n");
  }
  // Slice keys equal the kernel's written rows, per element, for the exact
  // params among `params` (those the body only writes).
  void ExpectSliceIsWrites(Harness* h, const std::vector<std::string>& params) {
    KeySlice s = h->Slice(0);
    for (int64_t e = 0; e < h->loop_data(0).count; ++e) {
      KeySets written = h->WrittenRows(0, e);
      int64_t one[] = {e};
      KeySets got = h->SliceKeys(s, one);
      for (const std::string& name : params) {
        int p = h->param(name);
        if (s.exact(p)) {
          EXPECT_EQ(got[p], written[p]) << "element " << e << ", param " << name;
        }
      }
    }
  }
};

TEST_F(SmallProgramTest, DrawsUsedOnlyForValuesStillAdvanceTheCounter) {
  auto h = Make(R"(
  let noise = rand()
  W[i, 0] += 1 + noise
  for k in 0..j {
    if rand() < 0.5 { b[randint(6)] += 1 }
  }
  let q = randint(4)
  H[q, 1] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  for (int p = 0; p < 3; ++p) ExpectFlags(s, p, true, true, false);
  EXPECT_NE(s.Disassemble().find("rand "), std::string::npos) << s.Disassemble();
  ExpectSliceIsWrites(h.get(), {"W", "H", "b"});
}

TEST_F(SmallProgramTest, DrawsAreLeftOutWhenNoSubscriptNeedsThem) {
  auto h = Make(R"(
  W[i] += rand()
  b[j + 1] += 1 + randint(3))");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  EXPECT_EQ(s.Disassemble().find("rand"), std::string::npos) << s.Disassemble();
  ExpectSliceIsWrites(h.get(), {"W", "b"});
}

TEST_F(SmallProgramTest, VarSetUnderParameterConditionIsNotExact) {
  auto h = Make(R"(
  var k = 0
  if W[i, 0] > 0 { k = 1 }
  H[k] += 1
  b[j] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  ExpectFlags(s, h->param("W"), true, true, false);
  ExpectFlags(s, h->param("H"), true, false, false);
  ExpectFlags(s, h->param("b"), true, true, false);
  ExpectSliceIsWrites(h.get(), {"b"});  // W is only read: checked below
  std::vector<int64_t> all(h->loop_data(0).count);
  std::iota(all.begin(), all.end(), 0);
  KeySets got = h->SliceKeys(s, all);
  EXPECT_EQ(got[h->param("W")], (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(got[h->param("H")].empty());
  // The parameter read feeds nothing the slice keeps.
  EXPECT_EQ(s.Disassemble().find("rd."), std::string::npos) << s.Disassemble();
}

TEST_F(SmallProgramTest, AccessUnderParameterConditionIsNotExact) {
  auto h = Make(R"(
  if H[j, 1] > 0 { b[i] += 1 }
  W[i] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  ExpectFlags(s, h->param("b"), true, false, false);
  ExpectFlags(s, h->param("H"), true, true, false);
  ExpectFlags(s, h->param("W"), true, true, false);
  ExpectSliceIsWrites(h.get(), {"W"});
}

TEST_F(SmallProgramTest, LoopBoundFromParameterTaintsLaterDraws) {
  // How many draws the inner loop makes depends on W, so randint's value
  // after it does too.
  auto h = Make(R"(
  var n = 0
  if W[i, 0] > 0 { n = 2 }
  for k in 0..n { b[0] += rand() }
  let q = randint(4)
  H[q] += 1
  b[j + 2] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  ExpectFlags(s, h->param("H"), true, false, false);
  ExpectFlags(s, h->param("b"), true, false, false);  // b[0] under the tainted loop
  ExpectFlags(s, h->param("W"), true, true, false);
}

TEST_F(SmallProgramTest, RandintWithParameterBoundStillCountsAsADraw) {
  auto h = Make(R"(
  var n = 3
  if W[i, 0] > 0 { n = 4 }
  let r = randint(n)
  b[0] += 1 + r
  let q = randint(4)
  H[q, 0] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  ExpectFlags(s, h->param("H"), true, true, false);
  ExpectFlags(s, h->param("b"), true, true, false);
  EXPECT_EQ(s.Disassemble().find("rd."), std::string::npos) << s.Disassemble();
  ExpectSliceIsWrites(h.get(), {"H", "b"});
}

TEST_F(SmallProgramTest, WholeAndElementAccessOfOneParameter) {
  auto h = Make(R"(
  b[i] += sum(b)
  W[j] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  ExpectFlags(s, h->param("b"), true, true, true);
  ExpectFlags(s, h->param("H"), false, false, false);
  ExpectSliceIsWrites(h.get(), {"W", "b"});
}

TEST_F(SmallProgramTest, IndexErrorIsTheKernels) {
  auto h = Make(R"(
  W[i] += 1
  H[j * 2] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  std::vector<int64_t> all(h->loop_data(0).count);
  std::iota(all.begin(), all.end(), 0);
  Status kernel = h->RunKernel(0, all);
  ASSERT_FALSE(kernel.ok());
  std::vector<std::vector<int64_t>> keys(1);  // resized to the params
  Status slice = h->RunSlice(s, all, &keys);
  EXPECT_EQ(slice.code(), kernel.code());
  EXPECT_EQ(slice.message(), kernel.message());
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_NE(slice.message().find("out of range for the rows of 'H'"), std::string::npos)
      << slice.message();
}

TEST_F(SmallProgramTest, ColumnErrorIsTheKernels) {
  auto h = Make(R"(
  W[i, j] += 1)");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  std::vector<int64_t> all(h->loop_data(0).count);
  std::iota(all.begin(), all.end(), 0);
  Status kernel = h->RunKernel(0, all);
  ASSERT_FALSE(kernel.ok());
  std::vector<std::vector<int64_t>> keys;
  Status slice = h->RunSlice(s, all, &keys);
  EXPECT_EQ(slice.message(), kernel.message());
}

TEST_F(SmallProgramTest, ElementOutsideTheDataSet) {
  auto h = Make("W[i] += 1");
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  std::vector<std::vector<int64_t>> keys;
  int64_t bad[] = {0, 64};
  Status st = h->RunSlice(s, bad, &keys);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message();
  EXPECT_TRUE(keys[0].empty());
}

// Speed over 1M MF ratings (an in-memory data set in place of mf's train),
// in file order and shuffled (every element's data a cache miss but for the
// kernel's prefetch): the slice is two key instructions per element. Prints
// the figures; no timing assertion (shared machines).
TEST(KeySliceTest, MatrixFactorisationSpeed) {
  auto h = Harness::FromFile("mf.rgl", {{"ratings.path", RatingsFile()}});
  ASSERT_TRUE(h);
  KeySlice s = h->Slice(0);
  constexpr int64_t kCount = 1000000, kRows = 20000, kCols = 5000, kBlock = 100000;
  data::Dataset big;
  big.kind = data::DataKind::kTriples;
  big.count = kCount;
  std::mt19937 rng(9);
  for (int64_t e = 0; e < kCount; ++e) {
    big.ti.push_back(static_cast<int32_t>(rng() % kRows));
    big.tj.push_back(static_cast<int32_t>(rng() % kCols));
    big.tv.push_back(1.0f);
  }
  std::vector<ParamBinding> params = {{nullptr, kRows, 16}, {nullptr, kCols, 16}};
  std::vector<const data::Dataset*> data(h->prog().data.size(), &big);
  RunContext ctx;
  ctx.params = &params;
  ctx.data = &data;
  std::vector<int64_t> order(kCount);
  std::iota(order.begin(), order.end(), 0);
  for (const char* how : {"in file order", "shuffled"}) {
    if (how[0] == 's') std::shuffle(order.begin(), order.end(), rng);
    // A caller consumes each block's keys, then reuses the lists.
    std::vector<std::vector<int64_t>> keys;
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      auto start = std::chrono::steady_clock::now();
      for (int64_t b = 0; b < kCount; b += kBlock) {
        for (auto& k : keys) k.clear();
        ASSERT_TRUE(s.Run(ctx, std::span<const int64_t>(order).subspan(b, kBlock), &keys).ok());
        ASSERT_EQ(keys[0].size(), static_cast<size_t>(kBlock));
        ASSERT_EQ(keys[1].size(), static_cast<size_t>(kBlock));
        ASSERT_EQ(keys[1].back(), big.tj[order[b + kBlock - 1]]);
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::min(best, secs);
    }
    std::cout << "key slice of mf's training loop, 1M ratings " << how << ": " << best * 1e3
              << " ms (" << best * 1e3 * kBlock / kCount << " ms per 100k elements)\n";
  }
}

}  // namespace
}  // namespace rigel::kernel
