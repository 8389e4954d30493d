// The analysis of every DSL.md reference program, the plan document, and the
// refusal of hand-edited plans that would break a dependence.
#include "analysis/plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/held_rows.h"
#include "frontend/compile.h"

namespace rigel::analysis {
namespace {

using json = nlohmann::ordered_json;

ir::Program Example(const std::string& name) {
  auto prog =
      frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/" + name + ".rgl", {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  return std::move(prog).value();
}

const ParamPlan& Param(const LoopPlan& lp, const std::string& name) {
  for (const ParamPlan& p : lp.params) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no plan for " << name;
  static ParamPlan none;
  return none;
}

std::string Dim(const LoopPlan& lp, int d) {
  return d >= 0 ? lp.accesses.space.dims[d] : std::string("(none)");
}

TEST(Examples, MatrixFactorisation) {
  auto prog = Example("mf");
  auto plan = MakePlan(prog, {4});
  ASSERT_TRUE(plan.ok());
  const LoopPlan& train = plan->loops[0];
  EXPECT_EQ(train.schedule.kind, ScheduleKind::kConflictFree2D);
  EXPECT_EQ(Dim(train, train.schedule.local_dim), "i");
  EXPECT_EQ(Dim(train, train.schedule.rotate_dim), "j");
  EXPECT_EQ(Param(train, "W").strategy, Strategy::kLocal);
  EXPECT_EQ(Param(train, "H").strategy, Strategy::kRotate);
  ASSERT_EQ(train.rejected.size(), 2u);
  EXPECT_EQ(train.rejected[0].kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(train.rejected[1].kind, ScheduleKind::kModelParallel1D);
  const LoopPlan& test = plan->loops[1];
  EXPECT_EQ(test.schedule.kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(Param(test, "W").strategy, Strategy::kReplicated);
  EXPECT_EQ(Param(test, "H").strategy, Strategy::kReplicated);
  EXPECT_EQ(Param(test, "sq").strategy, Strategy::kAccumulator);
}

TEST(Examples, SparseLogisticRegressionAndWord2vecUseSparseServers) {
  auto lr = Example("sparse_lr");
  auto plan = MakePlan(lr, {4});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loops[0].schedule.kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(Param(plan->loops[0], "w").strategy, Strategy::kPs);
  EXPECT_EQ(Param(plan->loops[0], "w").shard, "hash");
  auto w2v = Example("word2vec");
  plan = MakePlan(w2v, {4});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loops[0].schedule.kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(Param(plan->loops[0], "emb").strategy, Strategy::kPs);
  EXPECT_EQ(Param(plan->loops[0], "ctx").strategy, Strategy::kPs);
}

TEST(Examples, BiasIsModelParallelByRow) {
  auto prog = Example("bias");
  auto plan = MakePlan(prog, {4});
  ASSERT_TRUE(plan.ok());
  const LoopPlan& train = plan->loops[1];  // loop 0 sums the ratings
  EXPECT_EQ(train.schedule.kind, ScheduleKind::kModelParallel1D);
  EXPECT_EQ(Dim(train, train.schedule.dim), "i");
  EXPECT_EQ(Param(train, "b").strategy, Strategy::kLocal);
}

// Rows stay on the workers between runs only where no other loop could see
// them missing from the servers (analysis/held_rows.h).
TEST(HeldBetweenRuns, OnlyAWrittenLocalParameterNoOtherLoopTouchesOnACutMadeOnce) {
  auto compile = [](const std::string& loops) {
    auto prog = frontend::CompileText(
        "const N = 16\ndata r = triples(\"r.csv\")\nparam b: f32[N] = zeros()\n"
        "param u: f32[N] = zeros()\n" +
            loops,
        "t.rgl", {});
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    return std::move(prog).value();
  };
  auto held = [](const ir::Program& prog, int loop, const std::string& param) {
    auto plan = MakePlan(prog, {2});
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    const LoopPlan& lp = plan->loops[static_cast<size_t>(loop)];
    return HeldBetweenRuns(prog, *plan, loop, Param(lp, param));
  };
  const std::string sums = "parallel for (i, j, v) in r { b[i] += v }\n";
  ir::Program alone = compile(sums);
  auto plan = MakePlan(alone, {2});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(Param(plan->loops[0], "b").strategy, Strategy::kLocal);
  EXPECT_TRUE(held(alone, 0, "b"));
  // A second loop reads b: its rows must be on the servers after each run.
  EXPECT_FALSE(held(compile(sums + "parallel for i in range(N) { u[i] = b[i] }\n"), 0, "b"));
  // mf's W is local to the training loop, and its test loop reads it.
  ir::Program mf = Example("mf");
  auto mf_plan = MakePlan(mf, {2});
  ASSERT_TRUE(mf_plan.ok());
  for (const LoopPlan& lp : mf_plan->loops) {
    for (const ParamPlan& pp : lp.params) EXPECT_FALSE(HeldBetweenRuns(mf, *mf_plan, lp.id, pp));
  }
  // A space sized at launch is cut anew at every run.
  EXPECT_FALSE(
      held(compile("for t in 1..3 { parallel for (i, j) in grid(t, N) { b[j] += 1 } }\n"), 0, "b"));
}

TEST(Examples, DenseLogisticRegressionUsesAllreduce) {
  auto prog = Example("dense_lr");
  auto plan = MakePlan(prog, {4});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loops[0].schedule.kind, ScheduleKind::kDataParallel);
  EXPECT_EQ(Param(plan->loops[0], "w").strategy, Strategy::kAllreduce);
  EXPECT_TRUE(Param(plan->loops[0], "w").dense);
}

TEST(Examples, WavefrontHasUnitDistances) {
  auto prog = Example("wavefront");
  auto plan = MakePlan(prog, {4});
  ASSERT_TRUE(plan.ok());
  const LoopPlan& lp = plan->loops[0];
  EXPECT_EQ(lp.schedule.kind, ScheduleKind::kWavefront);
  std::vector<std::string> dists;
  for (const Dependence& d : lp.dependences) {
    for (const Distance& x : d.distances) dists.push_back(x.ToString());
  }
  EXPECT_NE(std::find(dists.begin(), dists.end(), "(1, 0)"), dists.end());
  EXPECT_NE(std::find(dists.begin(), dists.end(), "(0, 1)"), dists.end());
  EXPECT_EQ(lp.schedule.skew, (std::vector<std::vector<int64_t>>{{1, 0}, {0, 1}}));
  EXPECT_EQ(lp.schedule.blocks, (std::vector<int64_t>{4, 8}));
}

TEST(PlanJson, HasTheDocumentedKeys) {
  auto prog = Example("mf");
  auto plan = MakePlan(prog, {3});
  ASSERT_TRUE(plan.ok());
  json j = json::parse(PlanToJson(prog, *plan));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["workers"], 3);
  ASSERT_EQ(j["loops"].size(), 2u);
  const json& l = j["loops"][0];
  EXPECT_EQ(l["line"], 15);
  EXPECT_EQ(l["schedule"]["kind"], "conflict_free_2d");
  EXPECT_EQ(l["schedule"]["blocks"], json::array({3, 3}));
  EXPECT_EQ(l["params"]["W"]["strategy"], "local");
  EXPECT_EQ(l["params"]["H"]["strategy"], "rotate");
  EXPECT_FALSE(l["dependences"].empty());
  EXPECT_EQ(l["rejected"][0]["kind"], "data_parallel");
  EXPECT_TRUE(j["program_hash"].get<std::string>().rfind("xxh64:", 0) == 0);
}

// Makes mf's plan, applies `edit` to its JSON and validates it.
Status EditAndValidate(const std::string& example, const std::function<void(json&)>& edit,
                       int workers = 4) {
  auto prog = Example(example);
  auto plan = MakePlan(prog, {workers});
  EXPECT_TRUE(plan.ok());
  json j = json::parse(PlanToJson(prog, *plan));
  edit(j);
  auto parsed = ParsePlan(j.dump(), "plan.json");
  if (!parsed.ok()) return parsed.status();
  return ValidatePlan(prog, std::move(parsed).value(), "plan.json").status();
}

void ExpectRefused(const Status& st, const std::vector<std::string>& parts) {
  ASSERT_FALSE(st.ok());
  for (const std::string& p : parts) {
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "missing '" << p << "' in: " << st.message();
  }
}

TEST(ValidatePlan, AcceptsTheAnalysisPlanAndSafeEdits) {
  EXPECT_TRUE(EditAndValidate("mf", [](json&) {}).ok());
  // Serial is always safe.
  EXPECT_TRUE(EditAndValidate("mf", [](json& j) {
                j["loops"][0]["schedule"] = {{"kind", "serial"}};
                j["loops"][0]["params"]["H"]["strategy"] = "local";
              }).ok());
  // The rotation may run the other way round: H local by j, W rotating by i.
  Status swapped = EditAndValidate("mf", [](json& j) {
    j["loops"][0]["schedule"]["local_dim"] = "j";
    j["loops"][0]["schedule"]["rotate_dim"] = "i";
    j["loops"][0]["params"]["W"]["strategy"] = "rotate";
    j["loops"][0]["params"]["H"]["strategy"] = "local";
  });
  EXPECT_TRUE(swapped.ok()) << swapped.message();
  // A read-only parameter may be served by the parameter servers.
  EXPECT_TRUE(
      EditAndValidate("mf", [](json& j) { j["loops"][1]["params"]["W"]["strategy"] = "ps"; }).ok());
}

TEST(ValidatePlan, RefusesDataParallelMatrixFactorisation) {
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["loops"][0]["schedule"] = {{"kind", "data_parallel"}};
                                }),
                {"plan.json: loop 0", "mf.rgl:15", "data_parallel would break a dependence",
                 "W[i] (read, 16:21)", "when i is equal"});
}

TEST(ValidatePlan, RefusesAStrategyThatBreaksTheRotation) {
  ExpectRefused(
      EditAndValidate("mf", [](json& j) { j["loops"][0]["params"]["H"]["strategy"] = "ps"; }),
      {"params.H: strategy ps would break a dependence", "H[j]", "when j is equal"});
  ExpectRefused(
      EditAndValidate("mf", [](json& j) { j["loops"][0]["params"]["W"]["strategy"] = "rotate"; }),
      {"W rotate (keyed by j)", "when i is equal"});
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["loops"][0]["schedule"]["blocks"] = {2, 2};
                                }),
                {"blocks [P, P] with P = workers = 4"});
}

// Sums (reduce) in the k-means example: a plan may serve them as plain ps
// rows, but a parameter the loop reads or assigns is no sum.
TEST(ValidatePlan, ReduceOnlyForSums) {
  EXPECT_TRUE(EditAndValidate("kmeans", [](json&) {}).ok());
  ExpectRefused(EditAndValidate(
                    "kmeans", [](json& j) { j["loops"][1]["params"]["S"]["strategy"] = "reduce"; }),
                {"params.S: strategy reduce", "the loop reads or assigns S"});
  ExpectRefused(EditAndValidate(
                    "kmeans", [](json& j) { j["loops"][0]["params"]["S"]["strategy"] = "wrong"; }),
                {"unknown strategy 'wrong'", "accumulator, reduce)"});
}

TEST(ValidatePlan, RefusesPartitioningBiasByTheWrongDimension) {
  ExpectRefused(
      EditAndValidate("bias",
                      [](json& j) {
                        j["loops"][1]["schedule"] = {{"kind", "model_parallel_1d"}, {"dim", "j"}};
                      }),
      {"model_parallel_1d by j would break a dependence", "b[i]", "when i is equal"});
}

TEST(ValidatePlan, RefusesReplicatingAWrittenParameter) {
  ExpectRefused(
      EditAndValidate("dense_lr",
                      [](json& j) { j["loops"][0]["params"]["w"]["strategy"] = "replicated"; }),
      {"params.w: strategy replicated", "the loop writes w"});
}

TEST(ValidatePlan, RefusesAWavefrontWithoutItsSkew) {
  const char* text = R"(const N = 16
param A: f32[N + 1, N + 1] = fill(1.0)
parallel ordered for (i, j) in grid(N, N) { A[i + 1, j] = A[i, j + 1] + 1 }
)";
  auto prog = frontend::CompileText(text, "skew.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto plan = MakePlan(*prog, {2});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->loops[0].schedule.kind, ScheduleKind::kWavefront);
  EXPECT_EQ(plan->loops[0].schedule.skew, (std::vector<std::vector<int64_t>>{{1, 0}, {1, 1}}));
  json j = json::parse(PlanToJson(*prog, *plan));
  j["loops"][0]["schedule"]["skew"] = {{1, 0}, {0, 1}};
  auto parsed = ParsePlan(j.dump(), "plan.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ExpectRefused(ValidatePlan(*prog, std::move(parsed).value(), "plan.json").status(),
                {"distance (1, -1) gets a negative coordinate", "A[i + 1, j] (write, 3:45)",
                 "A[i, j + 1] (read, 3:59)"});
  j["loops"][0]["schedule"]["skew"] = {{1, 1}, {0, 1}};
  parsed = ParsePlan(j.dump(), "plan.json");
  ASSERT_TRUE(parsed.ok());
  ExpectRefused(ValidatePlan(*prog, std::move(parsed).value(), "plan.json").status(),
                {"unit lower-triangular"});
}

// A plan's relaxed settings (rigel tune's) are written only when set, read
// back as written, and refused out of the run's flags' ranges.
TEST(ParsePlan, SettingsRoundTripAndAreRefusedOutOfRange) {
  auto prog = Example("mf");
  auto plan = MakePlan(prog, {2});
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(json::parse(PlanToJson(prog, *plan)).contains("settings"));
  plan->settings.push_bound = 256;
  plan->settings.staleness = 2;
  EXPECT_EQ(plan->settings.Flags(), "--staleness 2 --push-bound 256");
  const json j = json::parse(PlanToJson(prog, *plan));
  EXPECT_EQ(j.at("settings"), (json{{"staleness", 2}, {"push_bound", 256}}));
  auto parsed = ParsePlan(j.dump(), "plan.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->settings.batch, 0);
  EXPECT_EQ(parsed->settings.staleness, 2);
  EXPECT_EQ(parsed->settings.push_bound, 256);
  auto valid = ValidatePlan(prog, std::move(parsed).value(), "plan.json");
  ASSERT_TRUE(valid.ok()) << valid.status().message();
  EXPECT_EQ(valid->settings.Flags(), "--staleness 2 --push-bound 256");
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["settings"] = {{"staleness", 0}};
                                }),
                {"plan.json: settings: staleness must be between 1 and 2^20"});
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["settings"] = {{"batch", -4}};
                                }),
                {"settings: batch must be between 0"});
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["settings"] = {{"push_bound", "x"}};
                                }),
                {"settings.push_bound: expected"});
}

TEST(ParsePlan, NamesTheBadKey) {
  ExpectRefused(ParsePlan("{", "p.json").status(), {"p.json: not valid JSON"});
  ExpectRefused(ParsePlan(R"({"version": 2, "workers": 1, "loops": []})", "p.json").status(),
                {"p.json: version: plan version 2 is not supported"});
  ExpectRefused(EditAndValidate("mf", [](json& j) { j["loops"][0]["schedule"]["kind"] = "fast"; }),
                {"plan.json: loops[0].schedule.kind: unknown schedule 'fast'", "wavefront"});
  ExpectRefused(
      EditAndValidate("mf", [](json& j) { j["loops"][0]["params"]["W"]["strategy"] = 3; }),
      {"loops[0].params.W.strategy: expected a string"});
  ExpectRefused(EditAndValidate("mf", [](json& j) { j["workers"] = 0; }),
                {"plan.json: workers: must be between 1 and 65536"});
  ExpectRefused(EditAndValidate("mf", [](json& j) { j["loops"][0]["params"].erase("H"); }),
                {"no strategy for 'H'"});
  ExpectRefused(EditAndValidate("mf",
                                [](json& j) {
                                  j["loops"][0]["params"]["Z"] = {{"strategy", "ps"}};
                                }),
                {"params.Z: the loop does not use 'Z'"});
}

TEST(ValidatePlan, RefusesAPlanForAnotherProgram) {
  auto bias = Example("bias");
  auto plan = MakePlan(Example("mf"), {4});
  ASSERT_TRUE(plan.ok());
  ExpectRefused(ValidatePlan(bias, *plan, "mf-plan.json").status(),
                {"mf-plan.json: the plan has 2 loops", "made for another program"});
  json j = json::parse(PlanToJson(Example("mf"), *plan));
  j["loops"][0]["line"] = 99;
  auto parsed = ParsePlan(j.dump(), "plan.json");
  ASSERT_TRUE(parsed.ok());
  ExpectRefused(ValidatePlan(Example("mf"), std::move(parsed).value(), "plan.json").status(),
                {"at line 99", "another version"});
}

TEST(Explain, SuggestsTheRelaxClauseForASerialLoop) {
  const char* text = R"(data s = libsvm("s.svm")
param w: f32[s.dim] = zeros()
parallel for (n, row) in s {
  for (f, x) in row.features { w[f] += x * w[f] }
}
)";
  auto prog = frontend::CompileText(text, "lr.rgl", {});
  ASSERT_TRUE(prog.ok());
  auto plan = MakePlan(*prog, {2});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loops[0].schedule.kind, ScheduleKind::kSerial);
  EXPECT_EQ(plan->loops[0].suggestion, "relax w");
  std::string report = Explain(*prog, *plan);
  EXPECT_NE(report.find("parallel for (n, row) in s relax w {"), std::string::npos) << report;
  EXPECT_NE(report.find("not model_parallel_1d"), std::string::npos) << report;
  EXPECT_NE(report.find("not wavefront: "), std::string::npos) << report;
}

// An access wider than its column still leaves a space before the mode.
TEST(Explain, SeparatesALongAccessFromItsMode) {
  const char* text = R"(data corpus = tokens("c.txt")
param wout: f32[corpus.vocab, 4] = zeros()
parallel for (t, w) in corpus relax wout {
  wout[negative(corpus)] += 0.1 * wout[w]
}
)";
  auto prog = frontend::CompileText(text, "w2v.rgl", {});
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  auto plan = MakePlan(*prog, {2});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::string report = Explain(*prog, *plan);
  EXPECT_NE(report.find("wout[negative(...)] row"), std::string::npos) << report;
  EXPECT_EQ(report.find("]row"), std::string::npos) << report;
}

}  // namespace
}  // namespace rigel::analysis
