// Plan <-> JSON (schema: docs/schedules.md).
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/plan.h"
#include "analysis/sync/resolve.h"
#include "analysis/sync/units.h"
#include "common/json_reader.h"

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

json LoopJson(const Program& prog, const LoopPlan& lp, const std::vector<PlanParam>& resolved) {
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
      // What the processes run for it at the plan's settings (derived, like
      // "why"; not read back): analysis/sync/units.h.
      for (const PlanParam& r : resolved) {
        const sync::Unit* u = r.index == p.index ? sync::UnitOf(r) : nullptr;
        if (u != nullptr) pj["sync"] = std::string(u->name());
      }
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

// The dimension of `dims` named by the string member `key` of `j`.
StatusOr<int> ReadDim(const JsonValue& j, const std::string& key,
                      const std::vector<std::string>& dims) {
  RIGEL_ASSIGN_OR_RETURN(std::string s, j.GetString(key));
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == s) return static_cast<int>(d);
  }
  std::string list;
  for (const std::string& d : dims) list += (list.empty() ? "" : ", ") + d;
  return j.FieldError(key, "'" + s + "' is not a dimension of the loop's space (" + list + ")");
}

StatusOr<std::vector<int64_t>> ReadIntList(const JsonValue& j) {
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> items, j.Elements());
  std::vector<int64_t> out;
  for (const JsonValue& x : items) {
    RIGEL_ASSIGN_OR_RETURN(int64_t v, x.AsInt());
    out.push_back(v);
  }
  return out;
}

Status ReadSchedule(const JsonValue& j, const std::vector<std::string>& dims, Schedule* s) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue kind_value, j.Get("kind"));
  RIGEL_ASSIGN_OR_RETURN(std::string kind, kind_value.AsString());
  if (!ParseScheduleKind(kind, &s->kind)) {
    return kind_value.Error("unknown schedule '" + kind +
                            "' (expected one of data_parallel, model_parallel_1d, "
                            "conflict_free_2d, wavefront, serial)");
  }
  switch (s->kind) {
    case ScheduleKind::kModelParallel1D: {
      RIGEL_ASSIGN_OR_RETURN(s->dim, ReadDim(j, "dim", dims));
      return Status::Ok();
    }
    case ScheduleKind::kConflictFree2D: {
      RIGEL_ASSIGN_OR_RETURN(s->local_dim, ReadDim(j, "local_dim", dims));
      RIGEL_ASSIGN_OR_RETURN(s->rotate_dim, ReadDim(j, "rotate_dim", dims));
      RIGEL_ASSIGN_OR_RETURN(JsonValue blocks, j.Get("blocks"));
      RIGEL_ASSIGN_OR_RETURN(s->blocks, ReadIntList(blocks));
      return Status::Ok();
    }
    case ScheduleKind::kWavefront: {
      RIGEL_ASSIGN_OR_RETURN(JsonValue blocks, j.Get("blocks"));
      RIGEL_ASSIGN_OR_RETURN(s->blocks, ReadIntList(blocks));
      // A matrix: a list of rows of integers.
      RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> rows, j.GetArray("skew"));
      s->skew.clear();
      for (const JsonValue& row : rows) {
        RIGEL_ASSIGN_OR_RETURN(std::vector<int64_t> vals, ReadIntList(row));
        s->skew.push_back(std::move(vals));
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

// One entry of a loop's "params": its strategy, key and sharding.
StatusOr<ParamPlan> ReadParam(const std::string& name, const JsonValue& pj,
                              const std::vector<std::string>& dims) {
  ParamPlan pp;
  pp.name = name;
  RIGEL_ASSIGN_OR_RETURN(JsonValue strategy_value, pj.Get("strategy"));
  RIGEL_ASSIGN_OR_RETURN(std::string strategy, strategy_value.AsString());
  if (!ParseStrategy(strategy, &pp.strategy)) {
    return strategy_value.Error("unknown strategy '" + strategy +
                                "' (expected one of local, rotate, ps, allreduce, "
                                "replicated, accumulator, reduce)");
  }
  if (pj.Has("keyed_by")) {
    RIGEL_ASSIGN_OR_RETURN(pp.keyed_by, ReadDim(pj, "keyed_by", dims));
  }
  if (pj.Has("shard")) {
    RIGEL_ASSIGN_OR_RETURN(pp.shard, pj.GetString("shard"));
    if (pp.shard != "range" && pp.shard != "hash") {
      return pj.FieldError("shard", "expected \"range\" or \"hash\", found \"" + pp.shard + "\"");
    }
  }
  return pp;
}

StatusOr<LoopPlan> ReadLoop(const JsonValue& lj) {
  LoopPlan lp;
  constexpr int64_t kIntMin = std::numeric_limits<int>::min();
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  RIGEL_ASSIGN_OR_RETURN(int64_t id, lj.GetIntIn("id", kIntMin, kIntMax));
  RIGEL_ASSIGN_OR_RETURN(int64_t line, lj.GetIntIn("line", kIntMin, kIntMax));
  lp.id = static_cast<int>(id);
  lp.loc.line = static_cast<int>(line);
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> space, lj.GetArray("space"));
  for (const JsonValue& d : space) {
    RIGEL_ASSIGN_OR_RETURN(std::string dim, d.AsString());
    lp.accesses.space.dims.push_back(std::move(dim));
  }
  RIGEL_ASSIGN_OR_RETURN(JsonValue schedule, lj.Get("schedule"));
  RIGEL_RETURN_IF_ERROR(ReadSchedule(schedule, lp.accesses.space.dims, &lp.schedule));
  // An object: parameter name -> strategy, in the order written.
  RIGEL_ASSIGN_OR_RETURN(JsonValue params, lj.GetObject("params"));
  RIGEL_ASSIGN_OR_RETURN(auto members, params.Members());
  for (const auto& [name, pj] : members) {
    RIGEL_ASSIGN_OR_RETURN(ParamPlan pp, ReadParam(name, pj, lp.accesses.space.dims));
    lp.params.push_back(std::move(pp));
  }
  return lp;
}

}  // namespace

std::string PlanSettings::Flags() const {
  std::string out;
  auto add = [&](const char* flag, int64_t v) {
    out += (out.empty() ? "" : " ") + std::string(flag) + " " + std::to_string(v);
  };
  if (batch > 0) add("--batch", batch);
  if (staleness >= 1) add("--staleness", staleness);
  if (push_bound > 0) add("--push-bound", push_bound);
  return out;
}

std::string PlanToJson(const Program& prog, const Plan& plan) {
  json j;
  j["version"] = plan.version;
  j["program"] = plan.program;
  j["program_hash"] = plan.program_hash;
  j["workers"] = plan.workers;
  if (plan.settings.any()) {
    json s = json::object();
    if (plan.settings.batch > 0) s["batch"] = plan.settings.batch;
    if (plan.settings.staleness >= 1) s["staleness"] = plan.settings.staleness;
    if (plan.settings.push_bound > 0) s["push_bound"] = plan.settings.push_bound;
    j["settings"] = s;
  }
  json loops = json::array();
  sync::JobSync job;
  job.staleness = plan.settings.staleness;
  const sync::Resolved resolved = sync::Resolve(prog, plan, {}, job);
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    loops.push_back(LoopJson(prog, plan.loops[l], resolved.loops[l]));
  }
  j["loops"] = loops;
  return j.dump(2) + "\n";
}

StatusOr<Plan> ParsePlan(const std::string& text, const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, path));
  Plan plan;
  RIGEL_ASSIGN_OR_RETURN(JsonValue version, j.Get("version"));
  RIGEL_ASSIGN_OR_RETURN(int64_t v, version.AsInt());
  if (v != 1) {
    return version.Error("plan version " + std::to_string(v) +
                         " is not supported (this Rigel reads version 1)");
  }
  plan.version = 1;
  RIGEL_ASSIGN_OR_RETURN(plan.program, j.GetStringOr("program", ""));
  RIGEL_ASSIGN_OR_RETURN(plan.program_hash, j.GetStringOr("program_hash", ""));
  RIGEL_ASSIGN_OR_RETURN(JsonValue workers_value, j.Get("workers"));
  RIGEL_ASSIGN_OR_RETURN(int64_t workers, workers_value.AsInt());
  if (workers < 1 || workers > 65536) {
    return workers_value.Error("must be between 1 and 65536, got " + std::to_string(workers));
  }
  plan.workers = static_cast<int>(workers);
  if (std::optional<JsonValue> s = j.Find("settings")) {
    // The upper bounds are the run's flags' (cluster/job_options.cc).
    RIGEL_ASSIGN_OR_RETURN(plan.settings.batch, s->GetIntOr("batch", 0));
    RIGEL_ASSIGN_OR_RETURN(int64_t staleness, s->GetIntOr("staleness", -1));
    RIGEL_ASSIGN_OR_RETURN(plan.settings.push_bound, s->GetIntOr("push_bound", 0));
    if (plan.settings.batch < 0 || plan.settings.batch > (int64_t{1} << 30)) {
      return s->Error("batch must be between 0 (Rigel's choice) and 2^30");
    }
    if (staleness != -1 && (staleness < 1 || staleness > (1 << 20))) {
      return s->Error("staleness must be between 1 and 2^20 (leave it out for Rigel's choice)");
    }
    if (plan.settings.push_bound < 0 || plan.settings.push_bound > (int64_t{1} << 30)) {
      return s->Error("push_bound must be between 0 (Rigel's choice) and 2^30");
    }
    plan.settings.staleness = static_cast<int>(staleness);
  }
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> loops, j.GetArray("loops"));
  for (const JsonValue& lj : loops) {
    RIGEL_ASSIGN_OR_RETURN(LoopPlan lp, ReadLoop(lj));
    plan.loops.push_back(std::move(lp));
  }
  return plan;
}

}  // namespace rigel::analysis
