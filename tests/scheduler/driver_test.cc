// The program driver with its whole cluster in one process
// (tests/harness/job_cluster.h): a coordinator and a Driver on the
// scheduler's endpoint, parameter servers (ps::PsService) and workers
// (worker::RunJob) as threads over LoopbackTransport. The printed results
// must match the serial executor's, and a worker that cannot run the job
// must fail it with the worker's reason.
#include "scheduler/driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "frontend/compile.h"
#include "tests/harness/job_cluster.h"

namespace rigel::scheduler {
namespace {

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rigel-driver-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream r(dir_ + "/r.csv");
    uint64_t x = 777;
    for (int k = 0; k < 120; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      r << (x >> 33) % 19 << "," << (x >> 40) % 11 << ","
        << 1 + static_cast<double>((x >> 20) % 400) / 100 << "\n";
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }

  // Runs `program` serially; its printed lines.
  std::string Serial(const std::string& program) {
    auto prog = frontend::CompileFile(program, {});
    EXPECT_TRUE(prog.ok()) << prog.status().message();
    if (!prog.ok()) return "";
    std::ostringstream out;
    exec::ExecutorOptions eo;
    eo.out = &out;
    auto ex = exec::SerialExecutor::Create(*prog, eo);
    EXPECT_TRUE(ex.ok()) << ex.status().message();
    if (!ex.ok()) return "";
    Status st = (*ex)->Run();
    EXPECT_TRUE(st.ok()) << st.message();
    return out.str();
  }

  // Runs `program` on an in-process cluster; the coordinator's result, the
  // driver's printed lines and each worker's result. Every server must do
  // its part (join, get its setup, serve its rows).
  Status Cluster(const std::string& program, int servers, int workers, std::string* printed,
                 std::vector<Status>* worker_results) {
    testing::JobClusterOptions o;
    o.program = program;
    o.servers = servers;
    o.workers = workers;
    testing::JobRun run = testing::RunJobCluster(o);
    for (const Status& s : run.servers) EXPECT_TRUE(s.ok()) << s.message();
    *printed = run.printed;
    *worker_results = run.workers;
    return run.result;
  }

  std::string dir_;
};

TEST_F(DriverTest, PrintsWhatTheSerialRunPrintsOnTwoAndThreeWorkers) {
  const std::string prog = Write("bias.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
param c: f32[r.cols] = zeros()
accum sq: f32
accum cs: f32
for ep in 0..3 {
  parallel for (i, j, v) in r { b[i] += 0.1 * (v - b[i]) }
  parallel ordered for (i, j, v) in r { c[j] = c[j] * 0.5 + v }
  sq = 0
  parallel for (i, j, v) in r {
    let e = v - b[i]
    sq += e * e
  }
  cs = 0
  parallel for (i, j, v) in r { cs += c[j] }
  print("epoch", ep, "sq", sq, "cs", cs)
}
)");
  const std::string want = Serial(prog);
  ASSERT_NE(want.find("epoch 2 sq"), std::string::npos) << want;
  for (int workers : {2, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    std::string got;
    std::vector<Status> results;
    Status st = Cluster(prog, 2, workers, &got, &results);
    ASSERT_TRUE(st.ok()) << st.message();
    for (const Status& r : results) EXPECT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(got, want);
  }
}

TEST_F(DriverTest, ARunTimeErrorOnAWorkerFailsTheJobNamingTheProgramLine) {
  const std::string prog = Write("oor.rgl", R"(data r = triples("r.csv")
param b: f32[r.rows] = zeros()
parallel for (i, j, v) in r { b[i + j] += v }
print("done")
)");
  std::string got;
  std::vector<Status> results;
  Status st = Cluster(prog, 1, 2, &got, &results);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("oor.rgl:3:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("out of range"), std::string::npos) << st.message();
  EXPECT_EQ(got.find("done"), std::string::npos) << got;
}

}  // namespace
}  // namespace rigel::scheduler
