// rigel-node's reading of launchers' environments: ranks, Slurm host lists,
// the scheduler's address and roles.
#include "node/launch_env.h"

#include <gtest/gtest.h>

namespace rigel::node {
namespace {

TEST(RankFromEnv, EachLauncherConvention) {
  struct Case {
    Env env;
    int rank, size;
    Launcher launcher;
  };
  const Case cases[] = {
      {{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "5"}, {"PMIX_RANK", "3"}},
       3,
       5,
       Launcher::kOpenMpi},
      {{{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}, 0, 2, Launcher::kPmi},
      {{{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "8"}}, 7, 8, Launcher::kSlurm},
      {{{"PMIX_RANK", "1"}, {"PMIX_SIZE", "4"}}, 1, 4, Launcher::kPmix},
      {{{"RANK", "2"}, {"WORLD_SIZE", "3"}}, 2, 3, Launcher::kTorch},
      // An mpirun inside a Slurm allocation: OpenMPI's ranks win.
      {{{"SLURM_PROCID", "0"},
        {"SLURM_NTASKS", "1"},
        {"OMPI_COMM_WORLD_RANK", "4"},
        {"OMPI_COMM_WORLD_SIZE", "6"}},
       4,
       6,
       Launcher::kOpenMpi},
  };
  for (const Case& c : cases) {
    auto r = RankFromEnv(c.env);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->rank, c.rank);
    EXPECT_EQ(r->size, c.size);
    EXPECT_EQ(r->launcher, c.launcher) << LauncherName(r->launcher);
  }
}

TEST(RankFromEnv, BadOrMissingValuesAreNamed) {
  auto none = RankFromEnv({{"HOME", "/root"}});
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"),
            std::string::npos);
  EXPECT_NE(none.status().message().find("give --rank and --size"), std::string::npos);
  auto word = RankFromEnv({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(word.status().message(), "SLURM_PROCID='x' is not a rank");
  auto outside = RankFromEnv({{"PMI_RANK", "2"}, {"PMI_SIZE", "2"}});
  EXPECT_EQ(outside.status().message(), "PMI_RANK=2 is outside the job of PMI_SIZE=2 processes");
  auto empty = RankFromEnv({{"RANK", "0"}, {"WORLD_SIZE", "0"}});
  EXPECT_EQ(empty.status().message(), "WORLD_SIZE='0' is not a process count");
}

TEST(ExpandHostList, SlurmSyntax) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*ExpandHostList("node1"), V({"node1"}));
  EXPECT_EQ(*ExpandHostList("node[01-03,7],gpu5"),
            V({"node01", "node02", "node03", "node7", "gpu5"}));
  EXPECT_EQ(*ExpandHostList("r[1-2]n[08-09]"), V({"r1n08", "r1n09", "r2n08", "r2n09"}));
  EXPECT_EQ(*ExpandHostList("a[9-11]"), V({"a9", "a10", "a11"}));
  EXPECT_EQ(*ExpandHostList("x,y[2]"), V({"x", "y2"}));
}

TEST(ExpandHostList, MalformedListsSayWhere) {
  EXPECT_EQ(ExpandHostList("node[1-3").status().message(),
            "host list 'node[1-3' at character 5: '[' without ']'");
  EXPECT_EQ(ExpandHostList("node[3-1]").status().message(),
            "host list 'node[3-1]' at character 6: expected N or N-M with N <= M, found '3-1'");
  EXPECT_EQ(ExpandHostList("a,,b").status().message(),
            "host list 'a,,b' at character 3: empty host name");
  EXPECT_EQ(ExpandHostList("node[]").status().message(),
            "host list 'node[]' at character 5: empty brackets");
  EXPECT_FALSE(ExpandHostList("a]").ok());
}

TEST(FindScheduler, FlagEnvironmentAndLauncherInThatOrder) {
  const LaunchRank ompi{1, 5, Launcher::kOpenMpi};
  const Env local = {{"OMPI_COMM_WORLD_LOCAL_SIZE", "5"}, {"OMPI_MCA_ess_base_jobid", "1234"}};
  auto flag = FindScheduler("tcp://10.0.0.1:7000", ompi, local);
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(flag->host, "10.0.0.1");
  EXPECT_EQ(flag->port, 7000);
  EXPECT_EQ(flag->how, "--scheduler");

  Env master = local;
  master["MASTER_ADDR"] = "head";
  master["MASTER_PORT"] = "29500";
  auto m = FindScheduler("", ompi, master);
  EXPECT_EQ(m->host, "head");
  EXPECT_EQ(m->port, 29500);

  // Every rank here: loopback, with a port from the job id, the same in
  // every rank and different for another job.
  auto here = FindScheduler("", ompi, local);
  ASSERT_TRUE(here.ok()) << here.status().message();
  EXPECT_EQ(here->host, "127.0.0.1");
  EXPECT_GE(here->port, kPortBase);
  EXPECT_LT(here->port, kPortBase + kPortSpan);
  Env other = local;
  other["OMPI_MCA_ess_base_jobid"] = "1235";
  EXPECT_NE(FindScheduler("", ompi, other)->port, here->port);
  EXPECT_EQ(FindScheduler("", LaunchRank{4, 5, Launcher::kOpenMpi}, local)->port, here->port);

  // Spread over hosts with nothing to say where rank 0 is.
  Env spread = local;
  spread["OMPI_COMM_WORLD_LOCAL_SIZE"] = "3";
  auto lost = FindScheduler("", ompi, spread);
  EXPECT_EQ(lost.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(lost.status().message().find("give --scheduler HOST:PORT"), std::string::npos);
}

TEST(FindScheduler, SlurmUsesTheFirstHostOfTheStep) {
  const LaunchRank slurm{2, 8, Launcher::kSlurm};
  Env env = {{"SLURM_STEP_NODELIST", "cn[07-08]"},
             {"SLURM_JOB_NODELIST", "cn[01-08]"},
             {"SLURM_STEP_NUM_NODES", "2"},
             {"SLURM_JOB_ID", "4711"},
             {"SLURM_STEP_ID", "0"}};
  auto ep = FindScheduler("", slurm, env);
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  EXPECT_EQ(ep->host, "cn07");
  EXPECT_NE(ep->how.find("first host of SLURM_STEP_NODELIST"), std::string::npos) << ep->how;
  env["SLURM_STEP_ID"] = "1";
  EXPECT_NE(FindScheduler("", slurm, env)->port, ep->port) << "a second step may run beside";
  env["SLURM_STEP_NUM_NODES"] = "1";
  EXPECT_EQ(FindScheduler("", slurm, env)->host, "127.0.0.1");
}

TEST(FindScheduler, MalformedAddresses) {
  const LaunchRank r{0, 3, Launcher::kFlags};
  EXPECT_EQ(FindScheduler("host:0", r, {}).status().message(),
            "--scheduler: 'host:0' has no port in 1..65535 after ':'");
  EXPECT_EQ(FindScheduler("", r, {{"MASTER_ADDR", "h"}, {"MASTER_PORT", "x"}}).status().message(),
            "MASTER_PORT='x' is not a port");
  // A host without a port, and no job id to derive one from.
  EXPECT_EQ(FindScheduler("head", r, {}).status().code(), StatusCode::kFailedPrecondition);
}

TEST(RoleOfRank, SchedulerServersWorkers) {
  EXPECT_EQ(RoleOfRank(0, 2).role, "scheduler");
  EXPECT_EQ(RoleOfRank(1, 2).role, "server");
  EXPECT_EQ(RoleOfRank(2, 2).rank, 1);
  EXPECT_EQ(RoleOfRank(3, 2).role, "worker");
  EXPECT_EQ(RoleOfRank(3, 2).rank, 0);
  EXPECT_EQ(RoleOfRank(9, 2).rank, 6);
}

}  // namespace
}  // namespace rigel::node
