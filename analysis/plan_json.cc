// Plan <-> JSON (schema: docs/schedules.md).
#include <nlohmann/json.hpp>

#include "analysis/plan.h"

namespace rigel::analysis {

using ir::Program;
using json = nlohmann::ordered_json;

namespace {

std::string DimName(const std::vector<std::string>& dims, int d) {
  return d >= 0 && d < static_cast<int>(dims.size()) ? dims[d] : "?";
}

json ScheduleJson(const std::vector<std::string>& dims, const Schedule& s) {
  json j;
  j["kind"] = ScheduleKindName(s.kind);
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      j["partition"] = "count";
      break;
    case ScheduleKind::kModelParallel1D:
      j["dim"] = DimName(dims, s.dim);
      break;
    case ScheduleKind::kConflictFree2D:
      j["local_dim"] = DimName(dims, s.local_dim);
      j["rotate_dim"] = DimName(dims, s.rotate_dim);
      j["blocks"] = s.blocks;
      j["steps"] = s.blocks.empty() ? 0 : s.blocks[0];
      break;
    case ScheduleKind::kWavefront: {
      j["skew"] = s.skew;
      j["blocks"] = s.blocks;
      int64_t steps = 1;
      for (int64_t b : s.blocks) steps += b - 1;
      j["steps"] = steps;
      break;
    }
    case ScheduleKind::kSerial:
      break;
  }
  return j;
}

json SubscriptJson(const Program& prog, const std::vector<std::string>& dims, const Subscript& s) {
  json j;
  j["text"] = s.text;
  j["class"] = SubscriptClass(s);
  if (s.kind == Subscript::kAffine) {
    json coef = json::object();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (s.coef[d] != 0) coef[dims[d]] = s.coef[d];
    }
    for (const auto& [id, k] : s.sym) coef[ir::PrintExpr(prog, id)] = k;
    j["coef"] = coef;
    j["const"] = s.c;
  } else {
    j["depends_on"] = s.why;
  }
  return j;
}

json LoopJson(const Program& prog, const LoopPlan& lp) {
  const std::vector<std::string>& dims = lp.accesses.space.dims;
  json j;
  j["id"] = lp.id;
  j["line"] = lp.loc.line;
  j["column"] = lp.loc.col;
  j["ordered"] = lp.ordered;
  j["data"] = lp.data;
  j["space"] = dims;
  j["relaxed"] = lp.relaxed;
  j["schedule"] = ScheduleJson(dims, lp.schedule);
  j["why"] = lp.schedule_why;
  json params = json::object();
  for (const ParamPlan& p : lp.params) {
    json pj;
    pj["strategy"] = StrategyName(p.strategy);
    if (p.keyed_by >= 0) pj["keyed_by"] = DimName(dims, p.keyed_by);
    if (!p.shard.empty()) pj["shard"] = p.shard;
    if (!p.is_accum) {
      pj["access"] = p.dense ? "dense" : "sparse";
      pj["written"] = p.written;
    }
    pj["why"] = p.why;
    params[p.name] = pj;
  }
  j["params"] = params;
  json accesses = json::array();
  for (const ParamAccess& a : lp.accesses.accesses) {
    json aj;
    aj["param"] = prog.params[a.param].name;
    aj["text"] = FormatAccess(prog, a);
    aj["access"] = AccessKindName(a.kind);
    aj["mode"] = AccessModeName(a.mode);
    aj["at"] = std::to_string(a.loc.line) + ":" + std::to_string(a.loc.col);
    json subs = json::array();
    for (const Subscript& s : a.subs) subs.push_back(SubscriptJson(prog, dims, s));
    aj["subscripts"] = subs;
    aj["conditional"] = a.conditional;
    aj["in_inner_loop"] = a.in_inner_loop;
    aj["count"] = a.count;
    accesses.push_back(aj);
  }
  j["accesses"] = accesses;
  json accums = json::array();
  for (const AccumUpdate& u : lp.accesses.accums) {
    accums.push_back({{"accum", prog.accums[u.accum].name},
                      {"at", std::to_string(u.loc.line) + ":" + std::to_string(u.loc.col)}});
  }
  j["reductions"] = accums;
  json deps = json::array();
  for (const Dependence& d : lp.dependences) {
    json dj;
    dj["param"] = prog.params[d.param].name;
    dj["between"] = {lp.accesses.accesses[d.a].loc.line, lp.accesses.accesses[d.b].loc.line};
    dj["accesses"] = {d.a, d.b};
    dj["relation"] = d.relation;
    json eq = json::array();
    for (size_t k = 0; k < d.needs_equal.size(); ++k) {
      if (d.needs_equal[k]) eq.push_back(dims[k]);
    }
    dj["needs_equal"] = eq;
    json dist = json::array();
    for (const Distance& x : d.distances) dist.push_back(x.ToString());
    dj["distances"] = dist;
    dj["relaxed"] = d.relaxed;
    dj["reduction"] = d.reduction;
    dj["exact"] = d.exact;
    deps.push_back(dj);
  }
  j["dependences"] = deps;
  j["independent"] = lp.independent;
  json rej = json::array();
  for (const Rejection& r : lp.rejected) {
    rej.push_back({{"kind", ScheduleKindName(r.kind)}, {"reason", r.reason}});
  }
  j["rejected"] = rej;
  if (!lp.suggestion.empty()) {
    j["suggestion"] = lp.suggestion;
    j["suggestion_schedule"] = ScheduleKindName(lp.suggestion_kind);
  }
  return j;
}

// Typed reads with errors that name the key path.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  Status Error(const std::string& key, const std::string& what) const {
    return InvalidArgument(path_ + ": " + key + ": " + what);
  }
  Status Int(const json& j, const std::string& key, const std::string& name, int64_t* out) const {
    if (!j.contains(name)) return Error(key + "." + name, "missing");
    const json& v = j[name];
    if (!v.is_number_integer())
      return Error(key + "." + name, "expected an integer, found " + v.dump());
    *out = v.get<int64_t>();
    return Status::Ok();
  }
  Status Str(const json& j, const std::string& key, const std::string& name,
             std::string* out) const {
    if (!j.contains(name)) return Error(key + "." + name, "missing");
    const json& v = j[name];
    if (!v.is_string()) return Error(key + "." + name, "expected a string, found " + v.dump());
    *out = v.get<std::string>();
    return Status::Ok();
  }
  Status Dim(const json& j, const std::string& key, const std::string& name,
             const std::vector<std::string>& dims, int* out) const {
    std::string s;
    RIGEL_RETURN_IF_ERROR(Str(j, key, name, &s));
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == s) {
        *out = static_cast<int>(d);
        return Status::Ok();
      }
    }
    std::string list;
    for (const std::string& d : dims) list += (list.empty() ? "" : ", ") + d;
    return Error(key + "." + name,
                 "'" + s + "' is not a dimension of the loop's space (" + list + ")");
  }
  Status IntList(const json& j, const std::string& key, const std::string& name,
                 std::vector<int64_t>* out) const {
    if (!j.contains(name)) return Error(key + "." + name, "missing");
    const json& v = j[name];
    if (!v.is_array()) return Error(key + "." + name, "expected a list of integers");
    out->clear();
    for (const json& x : v) {
      if (!x.is_number_integer()) return Error(key + "." + name, "expected a list of integers");
      out->push_back(x.get<int64_t>());
    }
    return Status::Ok();
  }

 private:
  std::string path_;
};

Status ReadSchedule(const Reader& r, const json& j, const std::string& key,
                    const std::vector<std::string>& dims, Schedule* s) {
  if (!j.is_object()) return r.Error(key, "expected an object");
  std::string kind;
  RIGEL_RETURN_IF_ERROR(r.Str(j, key, "kind", &kind));
  if (!ParseScheduleKind(kind, &s->kind)) {
    return r.Error(key + ".kind", "unknown schedule '" + kind +
                                      "' (expected one of data_parallel, model_parallel_1d, "
                                      "conflict_free_2d, wavefront, serial)");
  }
  switch (s->kind) {
    case ScheduleKind::kModelParallel1D:
      return r.Dim(j, key, "dim", dims, &s->dim);
    case ScheduleKind::kConflictFree2D:
      RIGEL_RETURN_IF_ERROR(r.Dim(j, key, "local_dim", dims, &s->local_dim));
      RIGEL_RETURN_IF_ERROR(r.Dim(j, key, "rotate_dim", dims, &s->rotate_dim));
      return r.IntList(j, key, "blocks", &s->blocks);
    case ScheduleKind::kWavefront: {
      RIGEL_RETURN_IF_ERROR(r.IntList(j, key, "blocks", &s->blocks));
      if (!j.contains("skew") || !j["skew"].is_array()) {
        return r.Error(key + ".skew", "expected a matrix (a list of rows of integers)");
      }
      s->skew.clear();
      for (const json& row : j["skew"]) {
        std::vector<int64_t> vals;
        if (!row.is_array()) return r.Error(key + ".skew", "expected a list of rows of integers");
        for (const json& x : row) {
          if (!x.is_number_integer()) return r.Error(key + ".skew", "expected integers");
          vals.push_back(x.get<int64_t>());
        }
        s->skew.push_back(std::move(vals));
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

}  // namespace

std::string PlanToJson(const Program& prog, const Plan& plan) {
  json j;
  j["version"] = plan.version;
  j["program"] = plan.program;
  j["program_hash"] = plan.program_hash;
  j["workers"] = plan.workers;
  json loops = json::array();
  for (const LoopPlan& lp : plan.loops) loops.push_back(LoopJson(prog, lp));
  j["loops"] = loops;
  return j.dump(2) + "\n";
}

StatusOr<Plan> ParsePlan(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return InvalidArgument(path + ": not valid JSON: " + e.what());
  }
  Reader r(path);
  if (!j.is_object()) return r.Error("(top level)", "expected an object");
  Plan plan;
  int64_t v = 0;
  RIGEL_RETURN_IF_ERROR(r.Int(j, "", "version", &v));
  if (v != 1) {
    return r.Error("version", "plan version " + std::to_string(v) +
                                  " is not supported (this Rigel reads version 1)");
  }
  plan.version = 1;
  if (j.contains("program") && j["program"].is_string()) plan.program = j["program"];
  if (j.contains("program_hash") && j["program_hash"].is_string())
    plan.program_hash = j["program_hash"];
  int64_t workers = 0;
  RIGEL_RETURN_IF_ERROR(r.Int(j, "", "workers", &workers));
  if (workers < 1 || workers > 65536) {
    return r.Error("workers", "must be between 1 and 65536, got " + std::to_string(workers));
  }
  plan.workers = static_cast<int>(workers);
  if (!j.contains("loops") || !j["loops"].is_array()) return r.Error("loops", "expected a list");
  for (size_t l = 0; l < j["loops"].size(); ++l) {
    const json& lj = j["loops"][l];
    std::string key = "loops[" + std::to_string(l) + "]";
    if (!lj.is_object()) return r.Error(key, "expected an object");
    LoopPlan lp;
    int64_t id = 0, line = 0;
    RIGEL_RETURN_IF_ERROR(r.Int(lj, key, "id", &id));
    RIGEL_RETURN_IF_ERROR(r.Int(lj, key, "line", &line));
    lp.id = static_cast<int>(id);
    lp.loc.line = static_cast<int>(line);
    if (!lj.contains("space") || !lj["space"].is_array())
      return r.Error(key + ".space", "expected a list");
    for (const json& d : lj["space"]) {
      if (!d.is_string()) return r.Error(key + ".space", "expected a list of names");
      lp.accesses.space.dims.push_back(d);
    }
    if (!lj.contains("schedule")) return r.Error(key + ".schedule", "missing");
    RIGEL_RETURN_IF_ERROR(
        ReadSchedule(r, lj["schedule"], key + ".schedule", lp.accesses.space.dims, &lp.schedule));
    if (!lj.contains("params") || !lj["params"].is_object()) {
      return r.Error(key + ".params", "expected an object (parameter name -> strategy)");
    }
    for (const auto& [name, pj] : lj["params"].items()) {
      std::string pkey = key + ".params." + name;
      if (!pj.is_object()) return r.Error(pkey, "expected an object");
      ParamPlan pp;
      pp.name = name;
      std::string strategy;
      RIGEL_RETURN_IF_ERROR(r.Str(pj, pkey, "strategy", &strategy));
      if (!ParseStrategy(strategy, &pp.strategy)) {
        return r.Error(pkey + ".strategy", "unknown strategy '" + strategy +
                                               "' (expected one of local, rotate, ps, allreduce, "
                                               "replicated, accumulator, reduce)");
      }
      if (pj.contains("keyed_by")) {
        RIGEL_RETURN_IF_ERROR(r.Dim(pj, pkey, "keyed_by", lp.accesses.space.dims, &pp.keyed_by));
      }
      if (pj.contains("shard")) {
        RIGEL_RETURN_IF_ERROR(r.Str(pj, pkey, "shard", &pp.shard));
        if (pp.shard != "range" && pp.shard != "hash") {
          return r.Error(pkey + ".shard",
                         "expected \"range\" or \"hash\", found \"" + pp.shard + "\"");
        }
      }
      lp.params.push_back(std::move(pp));
    }
    plan.loops.push_back(std::move(lp));
  }
  return plan;
}

}  // namespace rigel::analysis
