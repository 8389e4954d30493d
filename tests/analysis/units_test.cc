// analysis/sync/units.h: every resolved parameter of every example is kept
// by exactly one unit, the plan JSON names it, and the cost and memory
// models ask the unit.
#include "analysis/sync/units.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "analysis/plan.h"
#include "analysis/sync/resolve.h"
#include "common/json_reader.h"
#include "tests/analysis/run_util.h"

namespace rigel::analysis::sync {
namespace {

std::vector<ir::Program> Examples() {
  std::vector<ir::Program> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(RIGEL_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".rgl") continue;
    auto prog = frontend::CompileFile(e.path().string(), {});
    EXPECT_TRUE(prog.ok()) << e.path() << ": " << prog.status().message();
    if (prog.ok()) out.push_back(std::move(prog).value());
  }
  // No example holds rows between runs (each has a loop reading what it
  // trains): row sums do.
  out.push_back(
      Compile("data r = triples(\"r.csv\")\nparam R: f32[r.rows] = zeros()\n"
              "for ep in 0..2 {\n  parallel for (i, j, v) in r { R[i] += v }\n}\n"));
  return out;
}

TEST(Units, NamesAreUniqueAndEachHasWords) {
  std::set<std::string> names;
  for (const Unit* u : Units()) {
    EXPECT_TRUE(names.insert(std::string(u->name())).second) << u->name();
    EXPECT_FALSE(u->description().empty()) << u->name();
  }
  EXPECT_EQ(names, (std::set<std::string>{"local", "held", "rotate", "cache", "ps", "allreduce",
                                          "replicated"}));
}

TEST(Units, ExactlyOneKeepsEachParameterOfEveryExampleAtEveryStaleness) {
  std::set<std::string> seen;
  for (const ir::Program& prog : Examples()) {
    for (int workers : {1, 4}) {
      auto plan = MakePlan(prog, {.workers = workers});
      ASSERT_TRUE(plan.ok()) << prog.path;
      for (int staleness : {-1, 0, 2}) {
        JobSync job;
        job.staleness = staleness;
        const Resolved r = Resolve(prog, *plan, {}, job);
        for (const std::vector<PlanParam>& loop : r.loops) {
          for (const PlanParam& p : loop) {
            int keepers = 0;
            for (const Unit* u : Units()) keepers += u->Keeps(p) ? 1 : 0;
            EXPECT_EQ(keepers, 1) << prog.path << " " << prog.params[p.index].name;
            const Unit* u = UnitOf(p);
            ASSERT_NE(u, nullptr);
            if (staleness == 0) {
              EXPECT_NE(u, &Cache()) << prog.path;
            }
            seen.insert(std::string(u->name()));
          }
        }
      }
    }
  }
  // The examples exercise every unit.
  std::string names;
  for (const std::string& n : seen) names += n + " ";
  EXPECT_EQ(seen.size(), Units().size()) << names;
}

TEST(Units, ThePlanJsonNamesTheUnitOfEveryParameter) {
  auto prog = frontend::CompileFile(std::string(RIGEL_SOURCE_DIR) + "/examples/word2vec.rgl", {});
  ASSERT_TRUE(prog.ok());
  auto plan = MakePlan(*prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  auto j = ParseJson(PlanToJson(*prog, *plan), "plan.json");
  ASSERT_TRUE(j.ok());
  auto loops = j->GetArray("loops");
  ASSERT_TRUE(loops.ok());
  auto params = (*loops)[0].GetObject("params");
  ASSERT_TRUE(params.ok());
  auto emb = params->GetObject("emb");
  ASSERT_TRUE(emb.ok());
  auto strategy = emb->GetString("strategy");
  auto sync = emb->GetString("sync");
  ASSERT_TRUE(sync.ok()) << sync.status().message();
  EXPECT_EQ(*strategy, "ps");
  EXPECT_EQ(*sync, "cache");
  // An accumulator is the scheduler's: no unit.
  auto loss = params->GetObject("loss");
  ASSERT_TRUE(loss.ok());
  EXPECT_FALSE(loss->Has("sync"));
  // The plan reads back with the derived field in it.
  EXPECT_TRUE(ParsePlan(PlanToJson(*prog, *plan), "plan.json").ok());
}

TEST(Units, TheMemoryModelAsksTheUnitsForWhatTheyHold) {
  const MemoryInputs::Param w{"W", 1000, 8};
  EXPECT_TRUE(Local().WorkerMemory(w, 0, false).empty());
  const std::vector<MemoryPart> a = Allreduce().WorkerMemory(w, 0, false);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].bytes, 2 * 1000 * 8 * 4);
  const std::vector<MemoryPart> c = Cache().WorkerMemory(w, 100, false);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].what, "row cache of 'W'");
  // Per cell its base and bookkeeping; per row of the table, the slot map.
  EXPECT_EQ(c[0].bytes, 100 * (8 * 4 + 40) + 4 * 1000);
  // Held in part, the cells hold the rows' values too.
  const std::vector<MemoryPart> p = Cache().WorkerMemory(w, 100, true);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].what, "row cache of 'W', which holds its rows");
  EXPECT_EQ(p[0].bytes, 100 * (2 * 8 * 4 + 40) + 4 * 1000);
  // When a run ends it pushes every row it changed at once: deltas, keys
  // and a flag each.
  EXPECT_EQ(c[1].what, "the deltas of 'W' pushed when a run ends");
  EXPECT_EQ(c[1].bytes, 100 * (8 * 4 + 9));
}

TEST(Units, OnAServerTheUnitsHoldWhatTheirRuntimesSendThere) {
  const MemoryInputs::Param w{"W", 1000, 8};
  const ServerShare s{&w, 300, 100, 4, 2};
  EXPECT_TRUE(Local().ServerMemory(s).empty());
  EXPECT_TRUE(Allreduce().ServerMemory(s).empty());
  // A cache's rows: a version each and per worker what it lacks, in
  // vectors that double (512 slots for 300 rows) and an index at most 0.7
  // full (512 slots of 12 bytes); a worker's end-of-run exchange: its half
  // of the worker's 100 rows, pushed and sent back.
  const std::vector<MemoryPart> c = Cache().ServerMemory(s);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].what, "row versions of 'W'");
  EXPECT_EQ(c[0].bytes, 512 * (16 + 2 * 4) + 512 * 12);
  EXPECT_EQ(c[1].bytes, 2 * 50 * (8 * 4 + 9));
  // Rotated columns: every worker pushes its last one when a run ends, the
  // whole table among the servers.
  const std::vector<MemoryPart> r = Rotate().ServerMemory(s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].bytes, 500 * 8 * 4);
}

}  // namespace
}  // namespace rigel::analysis::sync
