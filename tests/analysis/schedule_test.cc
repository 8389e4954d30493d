// Table-driven test of the dependence analysis and schedule choice: each row
// is one parallel loop, the schedule it must get and each parameter's
// strategy (NAME=strategy[:keyed_dim][/shard]), plus text the report must
// contain (a relation, a suggestion, a skew).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "analysis/plan.h"
#include "frontend/compile.h"

namespace rigel::analysis {
namespace {

const char* kDecls = R"(const N = 64
const M = 48
const K = 4
data r = triples("r.csv")
data s = libsvm("s.svm")
data c = tokens("c.txt")
data d = dense_csv("d.csv")
param W: f32[N + 8, K] = zeros()
param H: f32[N + 8, K] = zeros()
param A: f32[N + 8, M + 8] = zeros()
param b: f32[N + 8] = zeros()
param u: f32[N + 8] = zeros()
param w: f32[s.dim] = zeros()
param e: f32[c.vocab, K] = zeros()
param x: f32[d.dim] = zeros()
accum q: f32
param one: f32[1] = zeros()
)";

struct Case {
  const char* name;
  const char* loop;
  const char* kind;
  const char* params;  // space-separated NAME=strategy[:dim][/shard]
  const char* expect;  // text the explanation must contain ("" for none)
};

const Case kCases[] = {
    // ---- data-parallel
    {"read_only_param", "parallel for (i, j, v) in r { q += v * b[i] }", "data_parallel",
     "b=replicated q=accumulator", "none: no two iterations"},
    {"accumulator_only", "parallel for i in range(N) { q += i }", "data_parallel", "q=accumulator",
     ""},
    {"own_element_1d", "parallel for i in range(N) { b[i] = i }", "data_parallel", "b=ps/range",
     ""},
    {"own_element_2d_grid", "parallel for (i, j) in grid(N, M) { A[i, j] = A[i, j] + 1 }",
     "data_parallel", "A=ps/range", ""},
    // A triples file may list an (i, j) twice: equal coordinates are two
    // iterations there, not one.
    {"two_loop_vars_triples", "parallel for (i, j, v) in r { A[i, j] += v - A[i, j] }",
     "model_parallel_1d", "A=local", "two lines of the file with the same (i, j)"},
    {"two_loop_vars_grid", "parallel for (i, j) in grid(N, M) { A[i, j] += 1 - A[i, j] }",
     "data_parallel", "A=ps/range", "only within one iteration"},
    {"relaxed_indirect",
     "parallel for (n, row) in s relax w { for (f, val) in row.features { w[f] -= val * w[f] } }",
     "data_parallel", "w=ps/hash", "allowed: the loop relaxes w"},
    {"relaxed_whole", "parallel for (n, row) in d relax x { x -= 0.1 * dot(x, row.x) * row.x }",
     "data_parallel", "x=allreduce", ""},
    {"gcd_even_odd", "parallel for i in range(N) { b[2 * i] = b[2 * i + 1] }", "data_parallel",
     "b=ps/range", "no integer solution"},
    {"constant_read", "parallel for i in range(N) { q += b[0] }", "data_parallel",
     "b=replicated q=accumulator", ""},
    {"shifted_read_of_other_param", "parallel for i in range(N) { u[i] = b[i + 1] }",
     "data_parallel", "u=ps/range b=replicated", ""},
    {"bounds_separate_ranges", "parallel for i in range(4) { b[i + 4] = b[i] }", "data_parallel",
     "b=ps/range", ""},
    {"sign_of_c_minus_i", "parallel for i in range(N) { b[3 - i] = b[i + 5] }", "data_parallel",
     "b=ps/range", ""},
    {"whole_read_only", "parallel for (n, row) in d { q += dot(x, row.x) }", "data_parallel",
     "x=replicated q=accumulator", ""},
    {"write_under_if_own_element", "parallel for i in range(N) { if i > 3 { b[i] = 1.0 } }",
     "data_parallel", "b=ps/range", "under if"},
    {"nested_sparse_read", R"(parallel for (n, row) in s {
  var z = 0.0
  for (f, val) in row.features { z += w[f] * val }
  q += z
})",
     "data_parallel", "w=replicated q=accumulator", "indirect"},
    {"ordered_without_dependences", "parallel ordered for (i, j) in grid(N, M) { A[i, j] = 1.0 }",
     "data_parallel", "A=ps/range", ""},
    {"driver_value_read", "for ep in 0..3 { parallel for i in range(N) { u[i] = b[ep] } }",
     "data_parallel", "u=ps/range b=replicated", ""},
    // ---- 1-D model-parallel
    {"bias", "parallel for (i, j, v) in r { b[i] += v - b[i] }", "model_parallel_1d", "b=local:i",
     "conflict when i is equal"},
    {"partition_by_j", "parallel for (i, j, v) in r { b[j] += v - b[j] }", "model_parallel_1d",
     "b=local:j", "when j is equal"},
    {"row_elements_in_inner_loop",
     "parallel for (i, j, v) in r { for k in 0..K { W[i, k] += v * W[i, k] } }",
     "model_parallel_1d", "W=local:i", "when i is equal"},
    {"ordered_row_recurrence",
     "parallel ordered for (i, j) in grid(N, M) { A[i, j + 1] = A[i, j] + 1 }", "model_parallel_1d",
     "A=local:i", "distance (0, 1)"},
    {"unordered_row_recurrence", "parallel for (i, j) in grid(N, M) { A[i, j + 1] = A[i, j] + 1 }",
     "model_parallel_1d", "A=local:i", ""},
    {"write_under_if_shared_row", "parallel for (i, j, v) in r { if v > 0.5 { b[i] = v } }",
     "model_parallel_1d", "b=local:i", "under if"},
    {"one_sided_update", "parallel for (i, j, v) in r { W[i] = W[i] + v * H[j] }",
     "model_parallel_1d", "W=local:i H=replicated", ""},
    {"ordered_same_row", "parallel ordered for (i, j) in grid(N, M) { b[i] = b[i] * 0.5 + 1 }",
     "model_parallel_1d", "b=local:i", ""},
    {"mf_with_relaxed_H", R"(parallel for (i, j, v) in r relax H {
  let err = v - dot(W[i], H[j])
  W[i] = W[i] + 0.1 * err * H[j]
  H[j] = H[j] + 0.1 * err * W[i]
})",
     "model_parallel_1d", "W=local:i H=ps/range", ""},
    // ---- conflict-free 2-D
    {"mf", R"(parallel for (i, j, v) in r {
  let err = v - dot(W[i], H[j])
  let wi = W[i]
  W[i] = wi + 0.1 * (err * H[j] - 0.05 * wi)
  H[j] = H[j] + 0.1 * (err * wi - 0.05 * H[j])
  q += err * err
})",
     "conflict_free_2d", "W=local:i H=rotate:j q=accumulator",
     "worker p runs block (p, (p + t) mod 4)"},
    {"mf_rows_written_first_by_j", R"(parallel for (i, j, v) in r {
  H[j] = H[j] + 0.1 * W[i]
  W[i] = W[i] + 0.1 * H[j]
})",
     "conflict_free_2d", "W=local:i H=rotate:j", ""},
    {"two_1d_params", "parallel for (i, j, v) in r { b[i] += v - b[i]; u[j] += v - u[j] }",
     "conflict_free_2d", "b=local:i u=rotate:j", ""},
    {"2d_plus_relaxed_constant", R"(parallel for (i, j, v) in r relax A {
  b[i] += v - b[i]
  u[j] += v - u[j]
  A[0, 0] += 1 - A[0, 0]
})",
     "conflict_free_2d", "b=local:i u=rotate:j A=ps/range", ""},
    // ---- wavefront
    {"wavefront_dsl",
     "parallel ordered for (i, j) in grid(N, M) {\n  A[i + 1, j + 1] = 0.5 * (A[i, j + 1] + A[i + "
     "1, j]) + 0.001\n}",
     "wavefront", "A=local:i", "distance (1, 0)"},
    {"wavefront_mixed_distance",
     "parallel ordered for (i, j) in grid(N, M) { A[i + 1, j] = A[i, j + 1] + 1 }", "wavefront",
     "A=local:i", "skew i' = i, j' = j + i"},
    {"wavefront_unordered_mixed",
     "parallel for (i, j) in grid(N, M) { A[i + 1, j] = A[i, j + 1] + 1 }", "wavefront",
     "A=local:i", "distance (1, -1)"},
    {"wavefront_positive_2_1",
     "parallel ordered for (i, j) in grid(N, M) { A[i + 2, j + 1] = A[i, j] * 0.5 }", "wavefront",
     "A=local:i", "distance (2, 1)"},
    {"wavefront_steep_skew",
     "parallel ordered for (i, j) in grid(N, M) { A[i + 1, j] = A[i, j + 3] + 1 }", "wavefront",
     "A=local:i", "j' = j + 3*i"},
    // ---- serial
    {"constant_written", "parallel for i in range(N) { b[0] += 1 - b[0] }", "serial", "b=local",
     "relax b"},
    {"indirect_write_not_relaxed",
     "parallel for (n, row) in s { for (f, val) in row.features { w[f] += val * w[f] } }", "serial",
     "w=local", "parallel for (n, row) in s relax w {"},
    {"embedding_not_relaxed", "parallel for (t, tok) in c { e[tok] += 0.1 * e[tok] }", "serial",
     "e=local", "relax e"},
    {"whole_write_not_relaxed", "parallel for (n, row) in d { x -= 0.1 * dot(x, row.x) * row.x }",
     "serial", "x=local", "relax x"},
    {"non_affine_product", "parallel for (i, j) in grid(N, M) { A[i * j, 0] += 1 - A[i * j, 0] }",
     "serial", "A=local", "a product of values"},
    {"reassigned_var_subscript",
     "parallel for i in range(N) {\n  var k = i\n  k = k + 1\n  b[k] = 1.0\n}", "serial", "b=local",
     "reassigned"},
    {"window_write_not_relaxed",
     "parallel for (t, tok) in c { for cc in window(c, t, 2) { e[cc] += 0.1 * e[cc] } }", "serial",
     "e=local", "relax e"},
    {"randint_write", "parallel for i in range(N) { let k = randint(N); b[k] += 1 - b[k] }",
     "serial", "b=local", "randint"},
    {"same_param_two_vars", "parallel for (i, j, v) in r { b[i] += v * b[i]; b[j] -= v * b[j] }",
     "serial", "b=local", "i = j'"},
    {"reversed_index", "parallel for i in range(N) { b[2 - i] = b[i] }", "serial", "b=local",
     "i = 2 - i'"},
    {"ordered_1d_recurrence", "parallel ordered for i in range(N) { b[i + 1] = b[i] + 1 }",
     "serial", "b=local", "one dimension"},
    {"ordered_non_constant_distance",
     "parallel ordered for (i, j) in grid(N, M) { b[i + 1] = b[i] + 1 }", "serial", "b=local",
     "(1, *)"},
    {"driver_value_write", "for ep in 0..3 { parallel for i in range(N) { b[ep] += 1 - b[ep] } }",
     "serial", "b=local", ""},
    // A recurrence: relaxing W would change the result, so it is not suggested.
    {"neighbouring_rows_written", "parallel for (i, j, v) in r { W[i + 1] = W[i] * 0.5 }", "serial",
     "W=local", "suggestion: none; relaxing would change what the loop computes"},
    {"smallest_relax_keeps_2d", R"(parallel for (i, j, v) in r {
  b[i] += v - b[i]
  u[j] += v - u[j]
  A[0, 0] += 1 - A[0, 0]
})",
     "serial", "b=local u=local A=local", "`relax A`"},
    // ---- relax only where it keeps the loop's meaning
    {"prefix_sum_ordered", "parallel ordered for i in range(N) { b[i + 1] = b[i] + u[i] }",
     "serial", "u=replicated b=local", "a value carried from iteration to iteration"},
    {"prefix_sum_unordered", "parallel for i in range(N) { b[i + 1] = b[i] + u[i] }", "serial",
     "u=replicated b=local", "a value carried from iteration to iteration"},
    {"prefix_sum_by_update", "parallel for i in range(N) { b[i + 1] += b[i] }", "serial", "b=local",
     "a value carried from iteration to iteration"},
    {"assignment_not_relaxed", "parallel for i in range(N) { b[0] = i }", "serial", "b=local",
     "b[0] is assigned with = (line 18), not updated"},
    {"shared_update_relaxed", "parallel for i in range(N) { b[0] += i * b[0] }", "serial",
     "b=local", "accept stale values with `relax b`"},
    {"relaxed_recurrence_warns", "parallel for i in range(N) relax b { b[i + 1] = b[i] + 1 }",
     "data_parallel", "b=ps/range", "warning: loop 0 (line 18) relaxes b, but one iteration"},
    // ---- fixed elements read as such
    {"constant_element", "parallel for (i, j, v) in r relax b { b[0] += v - b[0] }",
     "data_parallel", "b=ps/range", "in any two iterations: every iteration names b[0]"},
    {"constant_rows_named", "parallel for (i, j, v) in r relax b { b[0] += v - b[1] }",
     "data_parallel", "b=ps/range", "row ranges (the loop names fixed rows: b[1], b[0])"},
    {"one_row_parameter", "parallel for (i, j, v) in r relax one { one[0] += v - one[0] }",
     "data_parallel", "one=ps/range", "relaxed; a one-row parameter, on one parameter server"},
    // ---- sums (DSL.md v2 "Analysis"): only += and -=, never read
    {"sums_by_row_and_column", "parallel for (i, j, v) in r { b[i] += v; u[j] -= 1 }",
     "data_parallel", "b=reduce/range u=reduce/range", "is a sum here"},
    {"sum_at_a_data_dependent_row", R"(parallel for (n, row) in d {
  var d2 = zeros(K)
  for k in 0..K { d2[k] = dot(row.x, row.x) * k }
  W[argmin(d2), 0] += 1
})",
     "data_parallel", "W=reduce/hash", "except in sums (reductions), which commute"},
    {"sum_of_whole_vectors", "parallel for (n, row) in d { x += row.x }", "data_parallel",
     "x=reduce", "replicated on every worker, deltas summed by AllReduce"},
    {"sum_of_a_constant_element", "parallel for i in range(N) { b[0] += 1 }", "data_parallel",
     "b=reduce/range", ""},
    // Sums whose conflicts all need one coordinate equal: cut by it, each
    // sum's rows stay with one worker and no delta is sent.
    {"sum_by_row_alone", "parallel for (i, j, v) in r { b[i] += v }", "model_parallel_1d",
     "b=local:i", "partitioning by i keeps each sum's rows on one worker"},
    {"sums_by_the_same_column", "parallel for (i, j, v) in r { u[j] += v; W[j, 0] -= 1 }",
     "model_parallel_1d", "u=local:j W=local:j", "every sum's conflicts"},
    {"sum_beside_a_conflict", "parallel for (i, j, v) in r { b[i] += v - b[i]; u[j] += v }",
     "model_parallel_1d", "b=local:i u=reduce/range", ""},
    {"read_makes_it_no_sum", "parallel for i in range(N) { b[0] += 1; q += b[0] }", "serial",
     "b=local q=accumulator", "relax b"},
    {"product_is_no_sum", "parallel for i in range(N) { b[0] *= 2 }", "serial", "b=local", ""},
};

class ScheduleTable : public ::testing::TestWithParam<Case> {};

TEST_P(ScheduleTable, ChoosesScheduleAndStrategies) {
  const Case& c = GetParam();
  std::string text = std::string(kDecls) + c.loop + "\n";
  auto prog = frontend::CompileText(text, "t.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto plan = MakePlan(*prog, {4});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const LoopPlan& lp = plan->loops.back();
  std::string report = Explain(*prog, *plan);
  EXPECT_EQ(ScheduleKindName(lp.schedule.kind), std::string(c.kind)) << report;
  std::istringstream want(c.params);
  std::string item;
  size_t count = 0;
  while (want >> item) {
    ++count;
    std::string name = item.substr(0, item.find('='));
    std::string rest = item.substr(item.find('=') + 1);
    std::string shard;
    if (rest.find('/') != std::string::npos) {
      shard = rest.substr(rest.find('/') + 1);
      rest = rest.substr(0, rest.find('/'));
    }
    std::string dim;
    if (rest.find(':') != std::string::npos) {
      dim = rest.substr(rest.find(':') + 1);
      rest = rest.substr(0, rest.find(':'));
    }
    const ParamPlan* p = nullptr;
    for (const ParamPlan& x : lp.params) {
      if (x.name == name) p = &x;
    }
    ASSERT_NE(p, nullptr) << "no plan for " << name << "\n" << report;
    EXPECT_EQ(StrategyName(p->strategy), rest) << name << "\n" << report;
    if (!dim.empty()) {
      ASSERT_GE(p->keyed_by, 0) << name;
      EXPECT_EQ(lp.accesses.space.dims[p->keyed_by], dim) << name;
    }
    if (!shard.empty()) {
      EXPECT_EQ(p->shard, shard) << name;
    }
  }
  EXPECT_EQ(lp.params.size(), count) << report;
  std::string json = PlanToJson(*prog, *plan);
  if (*c.expect) {
    EXPECT_TRUE(report.find(c.expect) != std::string::npos ||
                json.find(c.expect) != std::string::npos)
        << "missing '" << c.expect << "' in\n"
        << report;
  }
  // Every plan the analysis makes passes its own validation.
  auto parsed = ParsePlan(json, "plan.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  auto valid = ValidatePlan(*prog, std::move(parsed).value(), "plan.json");
  EXPECT_TRUE(valid.ok()) << valid.status().message();
}

INSTANTIATE_TEST_SUITE_P(Loops, ScheduleTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// The whole advice for a prefix sum, ordered or not: no relax clause, and
// why in words a user can check against the program.
TEST(ScheduleTable, RecurrenceGetsNoRelaxSuggestion) {
  for (const char* loop : {"parallel ordered for i in range(N) { b[i + 1] = b[i] + u[i] }",
                           "parallel for i in range(N) { b[i + 1] = b[i] + u[i] }"}) {
    std::string text = std::string(kDecls) + loop + "\n";
    auto prog = frontend::CompileText(text, "t.rgl", {});
    ASSERT_TRUE(prog.ok()) << prog.status().message();
    auto plan = MakePlan(*prog, {4});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->loops[0].suggestion, "");
    std::string report = Explain(*prog, *plan);
    EXPECT_NE(report.find("  suggestion: none; relaxing would change what the loop computes, not "
                          "only how fresh its reads are: b: one iteration writes b[i + 1] (line "
                          "18) and another reads that element as b[i] (line 18): a value carried "
                          "from iteration to iteration (a recurrence), which a stale read would "
                          "change\n"),
              std::string::npos)
        << report;
    EXPECT_EQ(report.find("relax b"), std::string::npos) << report;
  }
}

TEST(ScheduleTable, HasAtLeastFortyLoops) { EXPECT_GE(std::size(kCases), 40u); }

}  // namespace
}  // namespace rigel::analysis
