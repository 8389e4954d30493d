// Parameters held in part (kernel::ParamBinding::slots): a kernel reaching
// its rows through a slot map computes bit for bit what it computes over a
// whole copy, counts writes per cell for a row cache (RowTracker::cells),
// and a row the map does not hold, or a whole access, ends the run with an
// Internal error naming the row instead of touching other memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/file.h"
#include "exec/executor.h"
#include "frontend/compile.h"
#include "kernel/kernel.h"

namespace rigel::kernel {
namespace {

// MF-like: row writes of W and H in one fused pair, an element write of b.
const char* kProgram = R"(
data t = triples("r.csv")
param W: f32[8, 4] = normal(0, 0.5, seed=1)
param H: f32[6, 4] = normal(0, 0.5, seed=2)
param b: f32[8] = zeros()
parallel for (i, j, v) in t {
  let e = v - dot(W[i], H[j]) - b[i]
  let wi = W[i]
  W[i] = wi + 0.1 * e * H[j]
  H[j] = H[j] + 0.1 * e * wi
  b[i] += 0.05 * e
}
)";

class SlotMapTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string csv;
    for (int k = 0; k < 20; ++k) {
      csv += std::to_string((k * 3) % 8) + "," + std::to_string((k * 5) % 6) + "," +
             std::to_string(0.25 * (k % 4)) + "\n";
    }
    ASSERT_TRUE(WriteFileAtomically(testing::TempDir() + "/r.csv", csv).ok());
    auto prog = frontend::CompileText(kProgram, testing::TempDir() + "/slots.rgl", {});
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    prog_ = std::make_unique<ir::Program>(std::move(prog).value());
    auto ex = exec::SerialExecutor::Create(*prog_, {});
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    ex_ = std::move(ex).value();
  }

  // Runs the loop once over `bindings`.
  Status RunOver(std::vector<ParamBinding>* bindings) {
    RunContext ctx;
    ctx.params = bindings;
    ctx.data = &ex_->data_ptrs();
    ctx.accums = accums_.data();
    return ex_->kernel(0).Run(ctx, 0, ex_->data(0).count);
  }

  // A copy of parameter p held in part: the rows in `held`, each in a cell
  // numbered in reverse (so that no cell is its row), the others absent.
  struct InPart {
    std::vector<int32_t> slots;
    std::vector<float> cells;
    ParamBinding binding;
  };
  InPart Hold(int p, const std::vector<int64_t>& held) const {
    const ParamBinding& whole = ex_->bindings()[static_cast<size_t>(p)];
    InPart h;
    h.slots.assign(static_cast<size_t>(whole.rows), -1);
    h.cells.assign(held.size() * static_cast<size_t>(whole.width), -7.0f);
    for (size_t k = 0; k < held.size(); ++k) {
      const int32_t cell = static_cast<int32_t>(held.size() - 1 - k);
      h.slots[static_cast<size_t>(held[k])] = cell;
      std::copy_n(whole.data + held[k] * whole.width, whole.width,
                  h.cells.data() + cell * whole.width);
    }
    return h;
  }

  std::unique_ptr<ir::Program> prog_;
  std::unique_ptr<exec::SerialExecutor> ex_;
  std::vector<double> accums_ = std::vector<double>(1, 0.0);
};

std::vector<int64_t> AllRows(int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) r[static_cast<size_t>(k)] = k;
  return r;
}

TEST_F(SlotMapTest, RowsThroughASlotMapComputeWhatAWholeCopyComputes) {
  std::vector<InPart> held;
  for (int p = 0; p < 3; ++p) held.push_back(Hold(p, AllRows(ex_->bindings()[p].rows)));
  std::vector<ParamBinding> bindings = ex_->bindings();
  for (int p = 0; p < 3; ++p) {
    bindings[p].data = held[p].cells.data();
    bindings[p].slots = held[p].slots.data();
  }
  // Cells counted per write, as a row cache counts them.
  std::vector<uint32_t> updates(8, 0);
  std::vector<int64_t> due;
  RowTracker tracker{updates.data(), 3, &due, nullptr, held[0].slots.data()};
  bindings[0].tracker = &tracker;
  ASSERT_TRUE(RunOver(&bindings).ok());
  ASSERT_TRUE(ex_->RunLoop(0).ok());  // the whole copy, the same elements
  for (int p = 0; p < 3; ++p) {
    const ParamBinding& whole = ex_->bindings()[p];
    for (int64_t r = 0; r < whole.rows; ++r) {
      for (int64_t c = 0; c < whole.width; ++c) {
        ASSERT_EQ(bindings[p].Row(r)[c], whole.data[r * whole.width + c])
            << prog_->params[p].name << " row " << r << " column " << c;
      }
    }
  }
  // Row (3k) % 8 is written for k < 20: rows 0..7 each 2 or 3 times.
  uint32_t total = 0;
  for (int64_t r = 0; r < 8; ++r) total += updates[static_cast<size_t>(held[0].slots[r])];
  EXPECT_EQ(total, 20u);
  EXPECT_EQ(updates[static_cast<size_t>(held[0].slots[0])], 3u);  // k = 0, 8, 16
  EXPECT_FALSE(due.empty());
}

TEST_F(SlotMapTest, ARowTheMapDoesNotHoldEndsTheRunWithAnInternalError) {
  // H lacks row 5 (j = 5 at k = 1, the second element).
  InPart h = Hold(1, {0, 1, 2, 3, 4});
  std::vector<ParamBinding> bindings = ex_->bindings();
  bindings[1].data = h.cells.data();
  bindings[1].slots = h.slots.data();
  const Status st = RunOver(&bindings);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.message();
  EXPECT_NE(st.message().find("row 5 of 'H' is not held by this worker"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("slots.rgl:"), std::string::npos) << st.message();
  // Cells of absent rows were never written.
  EXPECT_TRUE(std::all_of(h.slots.begin() + 5, h.slots.end(), [](int32_t s) { return s < 0; }));
}

TEST_F(SlotMapTest, AWholeAccessOfAParameterHeldInPartIsAnInternalError) {
  auto prog = frontend::CompileText(R"(
data t = triples("r.csv")
param w: f32[4] = fill(1.0)
accum s: f32
parallel for (i, j, v) in t {
  s += sum(w)
}
)",
                                    testing::TempDir() + "/whole.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto ex = exec::SerialExecutor::Create(*prog, {});
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  std::vector<ParamBinding> bindings = (*ex)->bindings();
  std::vector<int32_t> slots = {0, 1, 2, 3};
  bindings[0].slots = slots.data();
  RunContext ctx;
  ctx.params = &bindings;
  ctx.data = &(*ex)->data_ptrs();
  ctx.accums = accums_.data();
  const Status st = (*ex)->kernel(0).Run(ctx, 0, 1);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.message();
  EXPECT_NE(st.message().find("'w' is read or written whole"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace rigel::kernel
