// analysis/memory.h: each process's expected peak, part by part, follows the
// plan's strategies and the data's sizes, and --memory-limit's refusal names
// the process and its largest parts.
#include "analysis/memory.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/plan.h"
#include "tests/analysis/run_util.h"

namespace rigel::analysis {
namespace {

const char* kProgram = R"(data r = triples("r.csv")
param W: f32[r.rows, 8] = zeros()
param w: f32[8] = zeros()
accum sq: f32
for ep in 0..2 {
  parallel for (i, j, v) in r relax W {
    let s = dot(W[i], w)
    W[j] += (v - s) * w
    sq += v
  }
}
)";

MemoryInputs Inputs(int workers, int servers) {
  MemoryInputs in;
  in.workers = workers;
  in.servers = servers;
  in.data.push_back({"r", 12'000'000, 30'000'000, 1'000'000, 0, false});
  in.params.push_back({"W", 100'000, 8});
  in.params.push_back({"w", 8, 1});
  return in;
}

const ProcessMemory& Role(const MemoryEstimate& m, const std::string& role) {
  for (const ProcessMemory& p : m.processes) {
    if (p.role == role) return p;
  }
  ADD_FAILURE() << "no " << role;
  return m.processes.front();
}

int64_t Part(const ProcessMemory& p, const std::string& what) {
  for (const MemoryPart& part : p.parts) {
    if (part.what == what) return part.bytes;
  }
  return -1;
}

// A cache smaller than its table holds the table in part: no worker has a
// copy of it, only the cache's rows (values and base) and its slot map.
TEST(Memory, ATableCachedInPartHasNoCopyOnAWorker) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  MemoryInputs in = Inputs(4, 2);
  in.cache_bytes = 1'000'000;  // 13,888 rows of 72 bytes
  const MemoryEstimate m = EstimateMemory(prog, *plan, in);
  const ProcessMemory& worker = Role(m, "worker");
  EXPECT_EQ(Part(worker, "parameter 'W', a copy on every worker"), -1);
  EXPECT_EQ(Part(worker, "row cache of 'W', which holds its rows"),
            13'888 * (2 * 32 + 40) + 4 * 100'000);
}

// A hashed table indexed only by feature ids (row.features) touches at most
// as many rows as the data have feature entries: the servers create no
// more, and a partial cache fetches no more than its worker's share has.
TEST(Memory, ATableIndexedByFeaturesTouchesAtMostTheirEntries) {
  const ir::Program prog = Compile(R"(data s = libsvm("s.svm")
param w: f32[s.dim, 4] = zeros()
for ep in 0..2 {
  parallel for (n, row) in s relax w {
    for (f, x) in row.features { w[f] += x * w[f] }
  }
}
)");
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->loops[0].accesses.accesses[0].subs[0].features_of, 0);
  MemoryInputs in;
  in.workers = 4;
  in.servers = 2;
  in.data.push_back({"s", 1'000'000, 3'000'000, 10'000, 200'000, false});
  in.data[0].worker_share = 0.25;
  in.params.push_back({"w", 10'000'000, 4});  // a hashed table far larger than its data
  const MemoryEstimate m = EstimateMemory(prog, *plan, in);
  // 200,000 entries: 100,000 rows a server at most, of 5,000,000, in a
  // hash store: per stripe 6,250 rows in 25 chunks of 256 rows and a table
  // of 16,384 slots of 16 bytes.
  EXPECT_EQ(Part(Role(m, "server"), "shard of parameter 'w'"),
            16 * (25 * 256 * 4 * 4 + 16'384 * 16));
  EXPECT_EQ(Part(Role(m, "server"), "changed and dirty marks of 'w'"), (10'000'000 + 63) / 64 * 16);
  // Counted ids bound it further: 40,000 distinct (20,000 in the first
  // half, so a quarter of the elements names 10,000 of them).
  in.data[0].distinct_features = {40'000, 20'000};
  const MemoryEstimate d = EstimateMemory(prog, *plan, in);
  EXPECT_EQ(Part(Role(d, "server"), "shard of parameter 'w'"), 16 * (5 * 256 * 4 * 4 + 2'048 * 16));
  EXPECT_EQ(Part(Role(d, "worker"), "row cache of 'w', which holds its rows"),
            10'000 * (2 * 16 + 40) + 4 * 10'000'000);
  // A worker's end-of-run exchange: this server's half of its 10,000 rows,
  // pushed and sent back.
  EXPECT_EQ(Part(Role(d, "server"), "a worker's end-of-run exchange of 'w'"), 2 * 5'000 * (16 + 9));
  // Held in part (160 MB whole, above what a cache fetches whole): a
  // worker's cache holds at most its quarter's 50,000 entries' rows.
  EXPECT_EQ(Part(Role(m, "worker"), "row cache of 'w', which holds its rows"),
            50'000 * (2 * 16 + 40) + 4 * 10'000'000);
}

TEST(Memory, EachProcessHoldsWhatItsRoleAndThePlanSay) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  const MemoryEstimate m = EstimateMemory(prog, *plan, Inputs(4, 2));
  const ProcessMemory& worker = Role(m, "worker");
  const ProcessMemory& server = Role(m, "server");
  const ProcessMemory& scheduler = Role(m, "scheduler");
  // Whole data and a full copy of every parameter on every worker (today).
  EXPECT_EQ(Part(worker, "data set 'r'"), 12'000'000);
  EXPECT_EQ(Part(worker, "text of data set 'r' while it is parsed"), 30'000'000);
  EXPECT_EQ(Part(worker, "parameter 'W', a copy on every worker"), 3'200'000);
  // A data-parallel loop's blocks are ranges, and so are its steps: no lists.
  EXPECT_EQ(Part(worker, "element lists of loop 0"), -1);
  // W is relaxed and cached whole (it fits --cache-mb): its base and 40
  // bytes a row more, and the slot map's 4.
  EXPECT_EQ(Part(worker, "row cache of 'W'"), 100'000 * (32 + 40) + 4 * 100'000);
  // A server holds its half of each parameter (a range of rows, all made at
  // the start) and two bits a row of the whole table.
  EXPECT_EQ(Part(server, "shard of parameter 'W'"), 50'000 * 32);
  EXPECT_EQ(Part(server, "changed and dirty marks of 'W'"), (100'000 + 63) / 64 * 16);
  EXPECT_EQ(Part(server, "data set 'r'"), -1);
  EXPECT_EQ(Part(scheduler, "data set 'r'"), 12'000'000);
  EXPECT_EQ(Part(scheduler, "parameter 'W', a copy on every worker"), -1);
  // Parts are largest first and add up to the total.
  for (const ProcessMemory* p : {&worker, &server, &scheduler}) {
    int64_t sum = 0;
    for (size_t k = 0; k < p->parts.size(); ++k) {
      sum += p->parts[k].bytes;
      if (k > 0) {
        EXPECT_GE(p->parts[k - 1].bytes, p->parts[k].bytes) << p->role;
      }
    }
    EXPECT_EQ(sum, p->total) << p->role;
  }
  // More servers divide the shards; --staleness 0 has no row cache; a small
  // --cache-mb caches a share of the rows.
  EXPECT_LT(Role(EstimateMemory(prog, *plan, Inputs(4, 4)), "server").total, server.total);
  MemoryInputs sync = Inputs(4, 2);
  sync.staleness = 0;
  EXPECT_EQ(Part(Role(EstimateMemory(prog, *plan, sync), "worker"), "row cache of 'W'"), -1);
  MemoryInputs small = Inputs(4, 2);
  small.cache_bytes = 1'000'000;
  EXPECT_LT(Part(Role(EstimateMemory(prog, *plan, small), "worker"), "row cache of 'W'"),
            2'500'000);
  // A data set whose facts the scheduler took from an index is not loaded
  // there; the workers still load it.
  MemoryInputs indexed = Inputs(4, 2);
  indexed.data[0].facts_only = true;
  const MemoryEstimate mi = EstimateMemory(prog, *plan, indexed);
  EXPECT_EQ(Part(Role(mi, "scheduler"), "data set 'r'"), -1);
  EXPECT_EQ(Part(Role(mi, "scheduler"), "text of data set 'r' while it is parsed"), -1);
  EXPECT_EQ(Part(Role(mi, "worker"), "data set 'r'"), 12'000'000);
  // Saving the parameters gathers them on the scheduler.
  MemoryInputs save = Inputs(4, 2);
  save.save_params = true;
  EXPECT_EQ(
      Part(Role(EstimateMemory(prog, *plan, save), "scheduler"), "parameters gathered to be saved"),
      2 * (3'200'000 + 32));
}

TEST(Memory, ALimitTooSmallNamesTheProcessAndItsLargestParts) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 4});
  ASSERT_TRUE(plan.ok());
  const MemoryEstimate m = EstimateMemory(prog, *plan, Inputs(4, 2));
  EXPECT_TRUE(CheckMemoryLimit(m, 0).ok());
  EXPECT_TRUE(CheckMemoryLimit(m, Role(m, "worker").total).ok());
  Status st = CheckMemoryLimit(m, 50'000'000);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message().rfind("--memory-limit 50.00 MB: a worker would need about ", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("(text of data set 'r' while it is parsed: 30.00 MB; the program "
                              "and its libraries: 15.00 MB; data set 'r': 12.00 MB)"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("so more workers make only the data held in part smaller"),
            std::string::npos)
      << st.message();
}

// A serial run holds every data set and parameter whole. A file's text is
// freed before its split parts are made, so the text counts only beyond
// what the parts add.
TEST(Memory, ASerialRunHoldsEverythingWholeAndTheTextUntilItsSplits) {
  MemoryInputs in = Inputs(4, 2);
  in.data[0].worker_share = 0.25;  // a distributed job's part: not read here
  MemoryEstimate m = EstimateSerialMemory(in);
  ASSERT_EQ(m.processes.size(), 1u);
  const ProcessMemory& serial = Role(m, "serial");
  EXPECT_EQ(Part(serial, "data set 'r'"), 12'000'000);
  EXPECT_EQ(Part(serial, "text of data set 'r' while it is parsed"), 30'000'000);
  EXPECT_EQ(Part(serial, "parameter 'W'"), 3'200'000);
  EXPECT_EQ(serial.total, kSerialBaseBytes + 12'000'000 + 30'000'000 + 3'200'000 + 32);

  // Split parts of 12 MB in all: the peak is the text beside 'r' (42 MB)
  // or 'r' beside its parts (36 MB), so the text adds 6 MB.
  in.data.push_back({"train", 9'000'000, 0, 750'000, 0, false, true});
  in.data.push_back({"test", 3'000'000, 0, 250'000, 0, false, true});
  m = EstimateSerialMemory(in);
  EXPECT_EQ(Part(Role(m, "serial"), "text of data set 'r' while it is parsed"), 18'000'000);
  EXPECT_EQ(Role(m, "serial").total, kSerialBaseBytes + 24'000'000 + 18'000'000 + 3'200'032);

  Status st = CheckMemoryLimit(m, 10'000'000);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("--memory-limit 10.00 MB: a serial run would need about ", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("a serial run holds every data set and parameter whole"),
            std::string::npos)
      << st.message();
}

TEST(Memory, JsonHasEveryPart) {
  const ir::Program prog = Compile(kProgram);
  auto plan = MakePlan(prog, {.workers = 2});
  ASSERT_TRUE(plan.ok());
  const MemoryEstimate m = EstimateMemory(prog, *plan, Inputs(2, 2));
  const std::string j = MemoryJson(m);
  EXPECT_EQ(j.rfind("{\"worker\":{\"bytes\":" + std::to_string(Role(m, "worker").total), 0), 0u)
      << j;
  EXPECT_NE(j.find("{\"what\":\"row cache of 'W'\",\"bytes\":"), std::string::npos) << j;
  EXPECT_EQ(ShowBytes(999), "999 B");
  EXPECT_EQ(ShowBytes(41'230'000), "41.23 MB");
}

}  // namespace
}  // namespace rigel::analysis
