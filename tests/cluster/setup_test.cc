#include "cluster/setup.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cluster/job_options.h"

namespace rigel::cluster {
namespace {

ClusterSetup Sample() {
  ClusterSetup s;
  s.servers = 3;
  s.workers = 5;
  s.options.staleness = 2;
  s.options.batch = 64;
  s.options.sync_every = 4;
  s.options.device = "cuda";
  s.options.exchange_timeout_ms = 2500;
  ParamSpec w;
  w.decl.name = "W";
  w.decl.width = 16;
  w.decl.init = ir::ParamDecl::kNormal;
  w.decl.a = 0.5;
  w.decl.b = 0.25;
  w.decl.seed = 7;
  w.rows = 1000;
  ParamSpec b;
  b.decl.name = "b";
  b.rows = 1 << 20;
  b.hash = true;
  b.decl.init = ir::ParamDecl::kFile;  // --init-params
  b.decl.file = "/abs/model.npz";
  b.decl.file_offset = 128;
  b.decl.file_bytes = 4'194'432;
  b.decl.file_rows = 1 << 20;
  b.decl.file_int = true;
  s.params = {w, b};
  JobSpec job;
  job.program = "/abs/mf.rgl";
  job.sets = {{"lr", "0.05"}, {"r.path", "/abs/r.csv"}};
  job.seed = 11;
  job.plan = R"({"version": 1})";
  job.data = {{"r", "xxh64:0123456789abcdef"}};
  job.files = {{"r", "120 bytes, head xxh64:1, tail xxh64:2"}};
  job.scans = {{"r", R"({"loader": {}, "count": 3})"}};
  job.cuts = {{"0", R"({"kind": "conflict_free_2d"})"}};
  job.init_params = "/abs/model.npz";
  job.init_params_fingerprint = "4194432 bytes, head xxh64:3, tail xxh64:4";
  s.job = job;
  return s;
}

StatusOr<ClusterSetup> RoundTrip(const ClusterSetup& s) {
  capnp::MallocMessageBuilder m;
  auto b = m.initRoot<wire::Plan>();
  SetupToWire(s, b);
  return SetupFromWire(b.asReader(), "setup");
}

TEST(SetupWire, RoundTripsEveryField) {
  ClusterSetup s = Sample();
  auto r = RoundTrip(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->servers, 3);
  EXPECT_EQ(r->workers, 5);
  EXPECT_EQ(r->options.staleness, 2);
  EXPECT_EQ(r->options.batch, 64);
  EXPECT_EQ(r->options.sync_every, 4);
  EXPECT_EQ(r->options.device, "cuda");
  EXPECT_EQ(r->options.collectives, "gloo");
  EXPECT_EQ(r->options.exchange_timeout_ms, 2500);
  ASSERT_EQ(r->params.size(), 2u);
  EXPECT_EQ(r->params[0].decl.name, "W");
  EXPECT_EQ(r->params[0].decl.width, 16);
  EXPECT_EQ(r->params[0].decl.init, ir::ParamDecl::kNormal);
  EXPECT_EQ(r->params[0].decl.a, 0.5);
  EXPECT_EQ(r->params[0].decl.b, 0.25);
  EXPECT_EQ(r->params[0].decl.seed, 7u);
  EXPECT_EQ(r->params[0].rows, 1000);
  EXPECT_FALSE(r->params[0].hash);
  EXPECT_TRUE(r->params[1].hash);
  EXPECT_EQ(r->params[1].rows, 1 << 20);
  EXPECT_EQ(r->params[1].decl.init, ir::ParamDecl::kFile);
  EXPECT_EQ(r->params[1].decl.file, "/abs/model.npz");
  EXPECT_EQ(r->params[1].decl.file_offset, 128u);
  EXPECT_EQ(r->params[1].decl.file_bytes, 4'194'432u);
  EXPECT_EQ(r->params[1].decl.file_rows, 1 << 20);
  EXPECT_TRUE(r->params[1].decl.file_int);
  ASSERT_TRUE(r->job.has_value());
  EXPECT_EQ(r->job->program, "/abs/mf.rgl");
  EXPECT_EQ(r->job->sets, s.job->sets);
  EXPECT_EQ(r->job->seed, 11u);
  EXPECT_EQ(r->job->plan, s.job->plan);
  EXPECT_EQ(r->job->data, s.job->data);
  EXPECT_EQ(r->job->files, s.job->files);
  EXPECT_EQ(r->job->scans, s.job->scans);
  EXPECT_EQ(r->job->cuts, s.job->cuts);
  EXPECT_EQ(r->job->init_params, s.job->init_params);
  EXPECT_EQ(r->job->init_params_fingerprint, s.job->init_params_fingerprint);
}

TEST(SetupWire, MpiCollectivesRoundTrip) {
  ClusterSetup s = Sample();
  s.options.device = "cpu";
  s.options.collectives = "mpi";
  auto r = RoundTrip(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->options.collectives, "mpi");
}

TEST(SetupWire, NoJobStaysNoJob) {
  ClusterSetup s = Sample();
  s.job.reset();
  auto r = RoundTrip(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->job.has_value());
}

TEST(SetupWire, OutOfRangeValuesAreRefusedNamingTheField) {
  struct Case {
    void (*spoil)(ClusterSetup*);
    const char* message;
  };
  const Case cases[] = {
      {[](ClusterSetup* s) { s->servers = 0; }, "setup: servers: 0 is outside 1..4096"},
      {[](ClusterSetup* s) { s->workers = 70000; }, "setup: workers: 70000 is outside 1..65536"},
      {[](ClusterSetup* s) { s->options.sync_every = 0; },
       "setup: sync_every: 0 is outside 1..1073741824"},
      {[](ClusterSetup* s) { s->options.batch = -1; }, "setup: batch: -1 is outside 0..1073741824"},
      {[](ClusterSetup* s) { s->options.device = "tpu"; },
       "setup: device: expected \"cpu\" or \"cuda\", not \"tpu\""},
      {[](ClusterSetup* s) { s->options.collectives = "nccl"; },
       "setup: collectives: expected \"gloo\" or \"mpi\", not \"nccl\""},
      {[](ClusterSetup* s) { s->options.collectives = "mpi"; },
       "setup: collectives: mpi sums host memory; --device cuda uses NCCL"},
      {[](ClusterSetup* s) { s->params[0].rows = 0; },
       "setup: params.W.rows: 0 is outside 1..1099511627776"},
      {[](ClusterSetup* s) { s->params[1].decl.width = -3; },
       "setup: params.b.width: -3 is outside 0..16777216"},
      {[](ClusterSetup* s) { s->job->program.clear(); }, "setup: job.program: empty"},
  };
  for (const Case& c : cases) {
    ClusterSetup s = Sample();
    c.spoil(&s);
    auto r = RoundTrip(s);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(SetupJson, ReadsASelfTestFile) {
  auto r = SetupFromJson(
      R"({"servers": 2, "workers": 3, "staleness": 1, "params": [{"name": "w", "rows": 50,
          "width": 4, "shard": "hash", "init": "uniform", "a": -1, "b": 1, "seed": 3}]})",
      "f.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->servers, 2);
  EXPECT_EQ(r->workers, 3);
  EXPECT_EQ(r->options.staleness, 1);
  ASSERT_EQ(r->params.size(), 1u);
  EXPECT_TRUE(r->params[0].hash);
  EXPECT_EQ(r->params[0].decl.init, ir::ParamDecl::kUniform);
  EXPECT_EQ(r->params[0].decl.a, -1);
  EXPECT_FALSE(r->job.has_value());
}

TEST(SetupJson, ErrorsNameTheFileAndKey) {
  EXPECT_EQ(SetupFromJson("{", "f.json").status().message().rfind("f.json: not valid JSON", 0), 0u);
  EXPECT_EQ(SetupFromJson(R"({"servers": 0, "workers": 1, "staleness": 0, "params": []})", "f.json")
                .status()
                .message(),
            "f.json: servers: 0 is outside 1..4096");
  EXPECT_EQ(SetupFromJson(R"({"servers": 1, "workers": 1, "staleness": 0,
                              "params": [{"name": "w", "rows": 5, "width": 1, "shard": "x"}]})",
                          "f.json")
                .status()
                .message(),
            "f.json: params.w.shard: expected \"range\" or \"hash\"");
  EXPECT_EQ(
      SetupFromJson(R"({"servers": 1, "workers": 1, "params": []})", "f.json").status().message(),
      "f.json: staleness: expected an integer");
}

TEST(JobOptions, FlagsParseAndForwardTheSameValues) {
  CLI::App app;
  JobOptions o;
  EXPECT_EQ(o.staleness, kStalenessAuto);  // DSL.md version 3: Rigel chooses
  std::vector<CLI::Option*> flags = AddJobOptionFlags(&app, &o);
  ASSERT_EQ(flags.size(), 14u);
  app.parse(std::vector<std::string>{
      "2500", "--exchange-timeout-ms", "5",    "--push-age",     "off",  "--scaled-merges",
      "off",  "--data-parts",          "1.5G", "--memory-limit", "cuda", "--device",
      "7",    "--sync-every",          "3",    "--staleness",    "off",  "--hot-rows",
      "64",   "--push-bound"});
  EXPECT_FALSE(o.data_parts);
  EXPECT_FALSE(o.scaled_merges);
  EXPECT_EQ(o.push_age, 5);
  EXPECT_EQ(o.exchange_timeout_ms, 2500);
  EXPECT_EQ(o.memory_limit, int64_t{3} << 29);
  EXPECT_EQ(o.staleness, 3);
  EXPECT_EQ(o.push_bound, 64);
  EXPECT_FALSE(o.hot_rows);
  EXPECT_EQ(o.sync_every, 7);
  EXPECT_EQ(o.device, "cuda");
  EXPECT_EQ(flags[0]->count(), 1u);
  EXPECT_EQ(flags[3]->count(), 0u);  // --merge-every not given

  // What JobOptionArgs writes, parsed again, is the same options.
  std::vector<std::string> args = JobOptionArgs(o);
  std::reverse(args.begin(), args.end());  // CLI11 takes argv reversed
  CLI::App again;
  JobOptions p;
  AddJobOptionFlags(&again, &p);
  again.parse(args);
  EXPECT_EQ(p.staleness, o.staleness);
  EXPECT_EQ(p.push_bound, o.push_bound);
  EXPECT_EQ(p.merge_every, o.merge_every);
  EXPECT_EQ(p.cache_mb, o.cache_mb);
  EXPECT_EQ(p.hot_rows, o.hot_rows);
  EXPECT_EQ(p.batch, o.batch);
  EXPECT_EQ(p.sync_every, o.sync_every);
  EXPECT_EQ(p.device, o.device);
  EXPECT_EQ(p.collectives, o.collectives);
  EXPECT_EQ(p.memory_limit, o.memory_limit);
  EXPECT_EQ(p.data_parts, o.data_parts);
  EXPECT_EQ(p.scaled_merges, o.scaled_merges);
  EXPECT_EQ(p.push_age, o.push_age);
  EXPECT_EQ(p.exchange_timeout_ms, o.exchange_timeout_ms);
  EXPECT_TRUE(ValidateJobOptions(p, "x").ok());

  // auto travels as itself.
  CLI::App a3;
  JobOptions q, r;
  AddJobOptionFlags(&a3, &q);
  a3.parse(std::vector<std::string>{"auto", "--staleness"});
  EXPECT_EQ(q.staleness, kStalenessAuto);
  args = JobOptionArgs(q);
  EXPECT_EQ(args[1], "auto");
  std::reverse(args.begin(), args.end());
  CLI::App a4;
  AddJobOptionFlags(&a4, &r);
  a4.parse(args);
  EXPECT_EQ(r.staleness, kStalenessAuto);
}

TEST(JobOptions, ByteSizesTakeBinaryUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096);
  EXPECT_EQ(*ParseByteSize("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("4GiB"), int64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("2KB"), 2048);
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(ParseByteSize("-1").status().message(),
            "expected a size in bytes such as 4096, 512M or 4G, not \"-1\"");
  EXPECT_FALSE(ParseByteSize("1GG").ok());
  EXPECT_FALSE(ParseByteSize("G").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_EQ(ParseByteSize("2000T").status().message(),
            "a size of \"2000T\" is more than 2^50 bytes");
}

TEST(JobOptions, FlagsRefuseWhatValidationRefuses) {
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"0", "--sync-every"},
                                              {"-1", "--batch"},
                                              {"tpu", "--device"},
                                              {"nccl", "--collectives"},
                                              {"2000000", "--staleness"},
                                              {"often", "--staleness"},
                                              {"0", "--cache-mb"},
                                              {"maybe", "--hot-rows"},
                                              {"yes", "--scaled-merges"},
                                              {"-1", "--push-age"},
                                              {"-2", "--push-bound"},
                                              {"lots", "--memory-limit"},
                                              {"4X", "--memory-limit"},
                                              {"99", "--exchange-timeout-ms"}}) {
    CLI::App app;
    JobOptions o;
    AddJobOptionFlags(&app, &o);
    EXPECT_THROW(app.parse(std::vector<std::string>(bad)), CLI::ParseError) << bad[1];
  }
  JobOptions o;
  o.staleness = 2000000;
  EXPECT_EQ(ValidateJobOptions(o, "x").message(),
            "x: staleness: 2000000 is outside 0..1048576 (or auto)");
  o.staleness = kStalenessAuto;
  EXPECT_TRUE(ValidateJobOptions(o, "x").ok());
}

}  // namespace
}  // namespace rigel::cluster
