#include "cluster/job_options.h"

#include <cmath>
#include <cstdlib>

namespace rigel::cluster {

namespace {

// The flags' ranges, shared by the parser and ValidateJobOptions so that a
// setup message can never carry a value the command line would refuse.
constexpr int kMaxStaleness = 1 << 20;
constexpr int64_t kMaxBatch = int64_t{1} << 30;
constexpr int64_t kMaxSyncEvery = int64_t{1} << 30;
constexpr int64_t kMaxPushBound = int64_t{1} << 30;
constexpr int64_t kMaxCacheMb = int64_t{1} << 24;
constexpr int64_t kMinExchangeTimeoutMs = 100, kMaxExchangeTimeoutMs = 86'400'000;
constexpr int64_t kMaxMemoryLimit = int64_t{1} << 50;

}  // namespace

StatusOr<int64_t> ParseByteSize(const std::string& text) {
  auto bad = [&] {
    return InvalidArgument("expected a size in bytes such as 4096, 512M or 4G, not \"" + text +
                           "\"");
  };
  if (text.empty() || text.find_first_not_of("0123456789.KMGTkmgtiB") != std::string::npos) {
    return bad();
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  std::string unit(end);
  if (end == text.c_str() || !std::isfinite(v) || v < 0) return bad();
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "iB") {
    unit.resize(unit.size() - 2);
  } else if (!unit.empty() && unit.back() == 'B') {
    unit.pop_back();
  }
  double scale = 1;
  if (unit.size() > 1) return bad();
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'K':
      case 'k':
        scale = 1024.0;
        break;
      case 'M':
      case 'm':
        scale = 1024.0 * 1024;
        break;
      case 'G':
      case 'g':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 'T':
      case 't':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        return bad();
    }
  }
  const double bytes = std::floor(v * scale);
  if (bytes > static_cast<double>(kMaxMemoryLimit)) {
    return InvalidArgument("a size of \"" + text + "\" is more than 2^50 bytes");
  }
  return static_cast<int64_t>(bytes);
}

std::vector<CLI::Option*> AddJobOptionFlags(CLI::App* app, JobOptions* o) {
  std::vector<CLI::Option*> added;
  added.push_back(
      app->add_option_function<std::string>(
             "--staleness",
             [o](const std::string& v) {
               o->staleness = v == "auto" ? kStalenessAuto : std::stoi(v);
             },
             "merges by other workers a read of a relaxed row may lack: auto (Rigel's choice, "
             "stated by explain and the log) or N (0: synchronous per mini-batch, no row cache)")
          ->check(CLI::IsMember({"auto"}) | CLI::Range(0, kMaxStaleness))
          ->default_str("auto"));
  added.push_back(app->add_option("--push-bound", o->push_bound,
                                  "updates of a cached relaxed row before it is pushed (0: "
                                  "Rigel's choice)")
                      ->check(CLI::Range(int64_t{0}, kMaxPushBound))
                      ->capture_default_str());
  added.push_back(app->add_option("--push-age", o->push_age,
                                  "mini-batches an update of a cached relaxed row may wait before "
                                  "it is pushed, however few updates the row has (0: Rigel's "
                                  "choice)")
                      ->check(CLI::Range(int64_t{0}, kMaxSyncEvery))
                      ->capture_default_str());
  added.push_back(app->add_option("--merge-every", o->merge_every,
                                  "mini-batches between merges of the hot rows (replicated on "
                                  "every worker) by the collectives (0: Rigel's choice)")
                      ->check(CLI::Range(int64_t{0}, kMaxSyncEvery))
                      ->capture_default_str());
  added.push_back(app->add_option("--cache-mb", o->cache_mb,
                                  "memory of each worker's relaxed-row caches, MiB; a parameter "
                                  "that does not fit is cached in part and rows are evicted")
                      ->check(CLI::Range(int64_t{1}, kMaxCacheMb))
                      ->capture_default_str());
  added.push_back(
      app->add_option_function<std::string>(
             "--hot-rows", [o](const std::string& v) { o->hot_rows = v == "on"; },
             "on: rows most mini-batches touch are replicated and merged by the collectives; "
             "off: every relaxed row goes through the servers")
          ->check(CLI::IsMember({"on", "off"}))
          ->default_str("on"));
  added.push_back(
      app->add_option_function<std::string>(
             "--scaled-merges", [o](const std::string& v) { o->scaled_merges = v == "on"; },
             "on: a relaxed row's delta pushed while the worker's copy lacked L merges by other "
             "workers is added scaled by 1 / (1 + L); off: every delta is added whole (summed "
             "stale deltas of rows every worker writes overshoot from 3 workers on)")
          ->check(CLI::IsMember({"on", "off"}))
          ->default_str("on"));
  added.push_back(app->add_option("--batch", o->batch,
                                  "elements per mini-batch of data-parallel loops, per worker "
                                  "(0: Rigel's choice, stated by explain: the largest power of "
                                  "two from 16 to 512 that the share of elements writing one "
                                  "row allows; 32 where the loop reads or writes whole a "
                                  "parameter it updates, unless it caches relaxed rows)")
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
  added.push_back(
      app->add_option_function<std::string>(
             "--memory-limit", [o](const std::string& v) { o->memory_limit = *ParseByteSize(v); },
             "bytes each process may hold (4096, 512M, 4G; 0: no limit): a job whose expected "
             "peak (rigel explain --memory) is larger is refused before its workers start; a "
             "serial "
             "run, before its parameters are allocated")
          ->check([](const std::string& v) {
            StatusOr<int64_t> b = ParseByteSize(v);
            return b.ok() ? std::string() : b.status().message();
          })
          ->default_str("0"));
  added.push_back(
      app->add_option_function<std::string>(
             "--data-parts", [o](const std::string& v) { o->data_parts = v == "on"; },
             "on: each worker holds only its part of the data sets only data-parallel loops "
             "read; off: every worker loads every data set whole")
          ->check(CLI::IsMember({"on", "off"}))
          ->default_str("on"));
  added.push_back(app->add_option("--exchange-timeout-ms", o->exchange_timeout_ms,
                                  "how long a worker waits for a server's answer to one row "
                                  "exchange before the run fails")
                      ->check(CLI::Range(kMinExchangeTimeoutMs, kMaxExchangeTimeoutMs))
                      ->capture_default_str());
  return added;
}

std::vector<std::string> JobOptionArgs(const JobOptions& o) {
  std::vector<std::string> args = {
      "--staleness",     o.staleness == kStalenessAuto ? "auto" : std::to_string(o.staleness),
      "--push-bound",    std::to_string(o.push_bound),
      "--merge-every",   std::to_string(o.merge_every),
      "--push-age",      std::to_string(o.push_age),
      "--cache-mb",      std::to_string(o.cache_mb),
      "--hot-rows",      o.hot_rows ? "on" : "off",
      "--scaled-merges", o.scaled_merges ? "on" : "off",
      "--batch",         std::to_string(o.batch),
      "--sync-every",    std::to_string(o.sync_every),
      "--device",        o.device,
      "--collectives",   o.collectives,
      "--memory-limit",  std::to_string(o.memory_limit),
      "--data-parts",    o.data_parts ? "on" : "off"};
  args.insert(args.end(), {"--exchange-timeout-ms", std::to_string(o.exchange_timeout_ms)});
  return args;
}

Status ValidateJobOptions(const JobOptions& o, const std::string& what) {
  auto bad = [&](const std::string& key, const std::string& why) {
    return InvalidArgument(what + ": " + key + ": " + why);
  };
  if (o.staleness != kStalenessAuto && (o.staleness < 0 || o.staleness > kMaxStaleness)) {
    return bad("staleness", std::to_string(o.staleness) + " is outside 0.." +
                                std::to_string(kMaxStaleness) + " (or auto)");
  }
  if (o.push_bound < 0 || o.push_bound > kMaxPushBound) {
    return bad("push_bound",
               std::to_string(o.push_bound) + " is outside 0.." + std::to_string(kMaxPushBound));
  }
  if (o.push_age < 0 || o.push_age > kMaxSyncEvery) {
    return bad("push_age",
               std::to_string(o.push_age) + " is outside 0.." + std::to_string(kMaxSyncEvery));
  }
  if (o.merge_every < 0 || o.merge_every > kMaxSyncEvery) {
    return bad("merge_every",
               std::to_string(o.merge_every) + " is outside 0.." + std::to_string(kMaxSyncEvery));
  }
  if (o.exchange_timeout_ms < kMinExchangeTimeoutMs ||
      o.exchange_timeout_ms > kMaxExchangeTimeoutMs) {
    return bad("exchange_timeout_ms", std::to_string(o.exchange_timeout_ms) + " is outside " +
                                          std::to_string(kMinExchangeTimeoutMs) + ".." +
                                          std::to_string(kMaxExchangeTimeoutMs));
  }
  if (o.cache_mb < 1 || o.cache_mb > kMaxCacheMb) {
    return bad("cache_mb",
               std::to_string(o.cache_mb) + " is outside 1.." + std::to_string(kMaxCacheMb));
  }
  if (o.memory_limit < 0 || o.memory_limit > kMaxMemoryLimit) {
    return bad("memory_limit", std::to_string(o.memory_limit) + " is outside 0..2^50");
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
