#include "cluster/job_options.h"

namespace rigel::cluster {

namespace {

// The flags' ranges, shared by the parser and ValidateJobOptions so that a
// setup message can never carry a value the command line would refuse.
constexpr int kMaxStaleness = 1 << 20;
constexpr int64_t kMaxBatch = int64_t{1} << 30;
constexpr int64_t kMaxSyncEvery = int64_t{1} << 30;

}  // namespace

std::vector<CLI::Option*> AddJobOptionFlags(CLI::App* app, JobOptions* o) {
  std::vector<CLI::Option*> added;
  added.push_back(app->add_option("--staleness", o->staleness,
                                  "clocks a relaxed parameter's reads may lag (0: synchronous "
                                  "per mini-batch)")
                      ->check(CLI::Range(0, kMaxStaleness))
                      ->capture_default_str());
  added.push_back(app->add_option("--batch", o->batch,
                                  "elements per mini-batch of data-parallel loops, per worker "
                                  "(0: 32 for loops that update a parameter whole, else 512)")
                      ->check(CLI::Range(int64_t{0}, kMaxBatch))
                      ->capture_default_str());
  added.push_back(
      app->add_option(
             "--sync-every", o->sync_every,
             "mini-batches between all-reduces of the allreduce (dense) parameters' deltas")
          ->check(CLI::Range(int64_t{1}, kMaxSyncEvery))
          ->capture_default_str());
  added.push_back(
      app->add_option(
             "--device", o->device,
             "where allreduce parameters live: cpu (Gloo over TCP) or cuda (NCCL on the GPU)")
          ->check(CLI::IsMember({"cpu", "cuda"}))
          ->capture_default_str());
  added.push_back(app->add_option("--collectives", o->collectives,
                                  "how workers sum allreduce parameters on the CPU: gloo (TCP), "
                                  "or mpi (every process started by mpirun -n N rigel-node)")
                      ->check(CLI::IsMember({"gloo", "mpi"}))
                      ->capture_default_str());
  return added;
}

std::vector<std::string> JobOptionArgs(const JobOptions& o) {
  return {"--staleness",   std::to_string(o.staleness),
          "--batch",       std::to_string(o.batch),
          "--sync-every",  std::to_string(o.sync_every),
          "--device",      o.device,
          "--collectives", o.collectives};
}

Status ValidateJobOptions(const JobOptions& o, const std::string& what) {
  auto bad = [&](const std::string& key, const std::string& why) {
    return InvalidArgument(what + ": " + key + ": " + why);
  };
  if (o.staleness < 0 || o.staleness > kMaxStaleness) {
    return bad("staleness",
               std::to_string(o.staleness) + " is outside 0.." + std::to_string(kMaxStaleness));
  }
  if (o.batch < 0 || o.batch > kMaxBatch) {
    return bad("batch", std::to_string(o.batch) + " is outside 0.." + std::to_string(kMaxBatch));
  }
  if (o.sync_every < 1 || o.sync_every > kMaxSyncEvery) {
    return bad("sync_every",
               std::to_string(o.sync_every) + " is outside 1.." + std::to_string(kMaxSyncEvery));
  }
  if (o.device != "cpu" && o.device != "cuda") {
    return bad("device", "expected \"cpu\" or \"cuda\", not \"" + o.device + "\"");
  }
  if (o.collectives != "gloo" && o.collectives != "mpi") {
    return bad("collectives", "expected \"gloo\" or \"mpi\", not \"" + o.collectives + "\"");
  }
  if (o.collectives == "mpi" && o.device != "cpu") {
    return bad("collectives", "mpi sums host memory; --device cuda uses NCCL");
  }
  return Status::Ok();
}

}  // namespace rigel::cluster
