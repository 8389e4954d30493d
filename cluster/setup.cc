#include "cluster/setup.h"

#include <nlohmann/json.hpp>

namespace rigel::cluster {

using json = nlohmann::json;

namespace {

const char* InitName(ir::ParamDecl::Init i) {
  switch (i) {
    case ir::ParamDecl::kZeros:
      return "zeros";
    case ir::ParamDecl::kFill:
      return "fill";
    case ir::ParamDecl::kNormal:
      return "normal";
    case ir::ParamDecl::kUniform:
      return "uniform";
  }
  return "zeros";
}

}  // namespace

StatusOr<ShardMap> ClusterSetup::MakeShardMap() const {
  std::vector<ShardedParam> sp;
  for (size_t p = 0; p < params.size(); ++p) {
    sp.push_back({params[p].decl.name, params[p].rows, Width(static_cast<int>(p)), params[p].hash});
  }
  return ShardMap::Create(std::move(sp), servers);
}

std::string SetupToJson(const ClusterSetup& s) {
  json j;
  j["servers"] = s.servers;
  j["workers"] = s.workers;
  j["staleness"] = s.staleness;
  j["params"] = json::array();
  for (const ParamSpec& p : s.params) {
    j["params"].push_back({{"name", p.decl.name},
                           {"rows", p.rows},
                           {"width", p.decl.width},
                           {"shard", p.hash ? "hash" : "range"},
                           {"init", InitName(p.decl.init)},
                           {"a", p.decl.a},
                           {"b", p.decl.b},
                           {"seed", p.decl.seed}});
  }
  if (s.job) {
    json job = {{"program", s.job->program},
                {"seed", s.job->seed},
                {"plan", s.job->plan},
                {"batch", s.job->batch},
                {"sync_every", s.job->sync_every},
                {"device", s.job->device}};
    job["sets"] = json::array();
    for (const auto& [k, v] : s.job->sets) job["sets"].push_back({k, v});
    job["data"] = json::array();
    for (const auto& [k, v] : s.job->data) job["data"].push_back({k, v});
    j["job"] = std::move(job);
  }
  return j.dump();
}

StatusOr<ClusterSetup> SetupFromJson(const std::string& text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return InvalidArgument(what + ": not valid JSON: " + e.what());
  }
  auto bad = [&](const std::string& key, const std::string& why) {
    return InvalidArgument(what + ": " + key + ": " + why);
  };
  if (!j.is_object()) return bad("(top level)", "expected an object");
  ClusterSetup s;
  auto get_int = [&](const json& o, const std::string& key, int64_t lo, int64_t hi,
                     int64_t* out) -> Status {
    if (!o.contains(key) || !o[key].is_number_integer()) return bad(key, "expected an integer");
    int64_t v = o[key].get<int64_t>();
    if (v < lo || v > hi) {
      return bad(
          key, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    *out = v;
    return Status::Ok();
  };
  int64_t v = 0;
  RIGEL_RETURN_IF_ERROR(get_int(j, "servers", 1, 4096, &v));
  s.servers = static_cast<int>(v);
  RIGEL_RETURN_IF_ERROR(get_int(j, "workers", 1, 65536, &v));
  s.workers = static_cast<int>(v);
  RIGEL_RETURN_IF_ERROR(get_int(j, "staleness", 0, 1 << 20, &v));
  s.staleness = static_cast<int>(v);
  if (!j.contains("params") || !j["params"].is_array()) return bad("params", "expected a list");
  for (const json& pj : j["params"]) {
    ParamSpec p;
    if (!pj.is_object() || !pj.contains("name") || !pj["name"].is_string()) {
      return bad("params", "each parameter needs a \"name\"");
    }
    p.decl.name = pj["name"];
    std::string key = "params." + p.decl.name;
    RIGEL_RETURN_IF_ERROR(get_int(pj, "rows", 1, int64_t{1} << 40, &p.rows));
    RIGEL_RETURN_IF_ERROR(get_int(pj, "width", 0, 1 << 24, &p.decl.width));
    std::string shard = pj.value("shard", "");
    if (shard != "range" && shard != "hash")
      return bad(key + ".shard", "expected \"range\" or \"hash\"");
    p.hash = shard == "hash";
    std::string init = pj.value("init", "zeros");
    if (init == "zeros") {
      p.decl.init = ir::ParamDecl::kZeros;
    } else if (init == "fill") {
      p.decl.init = ir::ParamDecl::kFill;
    } else if (init == "normal") {
      p.decl.init = ir::ParamDecl::kNormal;
    } else if (init == "uniform") {
      p.decl.init = ir::ParamDecl::kUniform;
    } else {
      return bad(key + ".init", "unknown initialiser '" + init + "'");
    }
    p.decl.a = pj.value("a", 0.0);
    p.decl.b = pj.value("b", 0.0);
    p.decl.seed = pj.value("seed", uint64_t{0});
    s.params.push_back(std::move(p));
  }
  if (j.contains("job")) {
    const json& jj = j["job"];
    if (!jj.is_object() || !jj.contains("program") || !jj["program"].is_string() ||
        !jj.contains("plan") || !jj["plan"].is_string()) {
      return bad("job", "expected an object with \"program\" and \"plan\" strings");
    }
    JobSpec job;
    job.program = jj["program"];
    job.plan = jj["plan"];
    if (jj.contains("seed") && !jj["seed"].is_number_unsigned()) {
      return bad("job.seed", "expected a non-negative integer");
    }
    job.seed = jj.value("seed", uint64_t{0});
    RIGEL_RETURN_IF_ERROR(get_int(jj, "batch", 0, int64_t{1} << 30, &job.batch));
    if (jj.contains("sync_every")) {
      RIGEL_RETURN_IF_ERROR(get_int(jj, "sync_every", 1, int64_t{1} << 30, &job.sync_every));
    }
    if (jj.contains("device")) {
      if (!jj["device"].is_string() || (jj["device"] != "cpu" && jj["device"] != "cuda")) {
        return bad("job.device", "expected \"cpu\" or \"cuda\"");
      }
      job.device = jj["device"];
    }
    if (jj.contains("sets")) {
      for (const json& kv : jj["sets"]) {
        if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string()) {
          return bad("job.sets", "expected [name, value] pairs of strings");
        }
        job.sets.emplace_back(kv[0], kv[1]);
      }
    }
    if (jj.contains("data")) {
      for (const json& kv : jj["data"]) {
        if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string()) {
          return bad("job.data", "expected [name, digest] pairs of strings");
        }
        job.data.emplace_back(kv[0], kv[1]);
      }
    }
    s.job = std::move(job);
  }
  return s;
}

}  // namespace rigel::cluster
