#include "cli/plan_cost.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/memory.h"
#include "analysis/relaxed.h"
#include "cli/constants_file.h"
#include "common/check.h"
#include "common/json_reader.h"

namespace rigel::cli {

namespace {

// A candidate must be predicted this much faster than the plan to replace it.
constexpr double kClearlyFaster = 0.95;

std::string Bytes(double b) { return analysis::ShowBytes(static_cast<int64_t>(b)); }

std::string ScheduleText(const analysis::LoopPlan& lp) {
  std::string s = analysis::ScheduleKindName(lp.schedule.kind);
  const auto& dims = lp.accesses.space.dims;
  if (lp.schedule.kind == analysis::ScheduleKind::kModelParallel1D && lp.schedule.dim >= 0 &&
      lp.schedule.dim < static_cast<int>(dims.size())) {
    s += " by " + dims[static_cast<size_t>(lp.schedule.dim)];
  }
  std::string strategies;
  for (const analysis::ParamPlan& pp : lp.params) {
    if (pp.is_accum) continue;
    strategies +=
        (strategies.empty() ? "" : ", ") + pp.name + " " + analysis::StrategyName(pp.strategy);
  }
  return strategies.empty() ? s : s + " (" + strategies + ")";
}

nlohmann::json Figures(const analysis::Prediction& p) {
  return nlohmann::json{{"seconds", p.seconds},      {"compute_s", p.compute_s},
                        {"comm_s", p.comm_s},        {"moved_bytes", p.moved_bytes},
                        {"bytes", p.bytes},          {"param_bytes", p.param_bytes},
                        {"cache_rows", p.cache_rows}};
}

std::string Line(const char* what, const analysis::Prediction& p) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "  %s: %.4f s predicted (compute %.4f s, communication not hidden %.4f s), %s "
                "moved\n",
                what, p.seconds, p.compute_s, p.comm_s, Bytes(p.moved_bytes).c_str());
  std::string out = buf;
  for (const auto& [name, b] : p.bytes) out += "    " + name + ": " + Bytes(b) + "\n";
  return out;
}

}  // namespace

std::vector<PlanVariant> PlanVariants(const ir::Program& prog, const analysis::Plan& plan) {
  std::vector<PlanVariant> out = {{plan, -1, ""}};
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    const std::string own = ScheduleText(plan.loops[l]);
    for (analysis::LoopPlan& lp :
         analysis::LoopCandidates(prog, static_cast<int>(l), plan.workers)) {
      const std::string text = ScheduleText(lp);
      if (text == own) continue;
      PlanVariant v{plan, static_cast<int>(l), text};
      v.plan.loops[l] = std::move(lp);
      out.push_back(std::move(v));
    }
  }
  return out;
}

bool ProgramRelaxes(const ir::Program& prog) {
  for (const ir::Loop& l : prog.loops) {
    for (bool r : l.relaxed) {
      if (r) return true;
    }
  }
  return false;
}

std::vector<PlanVariant> SettingsVariants(const analysis::Plan& plan) {
  std::vector<PlanVariant> out;
  auto add = [&](auto change) {
    PlanVariant v{plan, -1, ""};
    change(&v.plan.settings);
    out.push_back(std::move(v));
  };
  add([](analysis::PlanSettings* s) { s->batch = 2 * analysis::kMaxCachedBatch; });
  add([](analysis::PlanSettings* s) { s->push_bound = 2 * analysis::kPushBound; });
  add([](analysis::PlanSettings* s) { s->staleness = 2; });
  return out;
}

bool NoEffect(const analysis::Prediction& setting, const analysis::Prediction& plan) {
  return setting.seconds == plan.seconds && setting.moved_bytes == plan.moved_bytes;
}

StatusOr<PlanCost> CostPlan(const ir::Program& prog, const analysis::Plan& plan,
                            exec::ProbeOptions options, const std::string& constants_flag) {
  PlanCost out;
  RIGEL_ASSIGN_OR_RETURN(options.constants, LoadConstants(constants_flag, &out.constants));
  options.workers = plan.workers;
  out.options = options;
  // Variant 0 is the plan; then one per alternative of one loop.
  std::vector<PlanVariant> variants = PlanVariants(prog, plan);
  if (ProgramRelaxes(prog)) {
    for (PlanVariant& v : SettingsVariants(plan)) variants.push_back(std::move(v));
  }
  std::vector<analysis::Plan> plans;
  for (const PlanVariant& v : variants) plans.push_back(v.plan);
  RIGEL_ASSIGN_OR_RETURN(std::vector<exec::ProbeResult> r, exec::ProbeCosts(prog, plans, options));
  out.plan = r[0];
  out.fastest = plan;
  std::vector<double> best(plan.loops.size(), out.plan.steady.seconds);
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    const int loop = static_cast<int>(l);
    const bool any = std::any_of(variants.begin(), variants.end(),
                                 [&](const PlanVariant& v) { return v.loop == loop; });
    if (!any) continue;
    out.candidates.push_back({loop, ScheduleText(plan.loops[l]), true, out.plan.steady});
    for (size_t v = 1; v < variants.size(); ++v) {
      if (variants[v].loop != loop) continue;
      out.candidates.push_back({loop, variants[v].schedule, false, r[v].steady});
      // Predictions are not finer than a few percent: a candidate replaces
      // the plan's schedule only when clearly faster.
      if (r[v].steady.seconds < best[l] &&
          r[v].steady.seconds < kClearlyFaster * out.plan.steady.seconds) {
        best[l] = r[v].steady.seconds;
        out.fastest.loops[l] = variants[v].plan.loops[l];
        for (CandidateCost& c : out.candidates) {
          if (c.loop == loop) c.chosen = false;
        }
        out.candidates.back().chosen = true;
      }
    }
  }
  // Other relaxed settings are listed, never chosen: they change quality.
  for (size_t v = 1; v < variants.size(); ++v) {
    if (variants[v].loop >= 0 || NoEffect(r[v].steady, out.plan.steady)) continue;
    if (out.candidates.empty() || out.candidates.back().loop != -1) {
      out.candidates.push_back({-1, "Rigel's settings", true, out.plan.steady});
    }
    out.candidates.push_back({-1, variants[v].plan.settings.Flags(), false, r[v].steady});
  }
  // The fastest plan's epochs: the plan's or one candidate's when at most
  // one loop changed, else counted again (savings of several loops need not
  // add up).
  int changed = 0;
  out.fastest_steady = out.plan.steady;
  for (const CandidateCost& c : out.candidates) {
    if (!c.chosen) continue;
    ++changed;
    out.fastest_steady = c.steady;
  }
  if (changed > 1) {
    RIGEL_ASSIGN_OR_RETURN(exec::ProbeResult again, exec::ProbeCost(prog, out.fastest, options));
    out.fastest_steady = again.steady;
  }
  return out;
}

std::string PlanWithPrediction(const std::string& plan_json, const PlanCost& cost) {
  StatusOr<JsonValue> plan = ParseJson(plan_json, "the plan");
  RIGEL_CHECK_MSG(plan.ok(), "PlanWithPrediction takes analysis::PlanToJson's text");
  // The plan's own key order, then the prediction.
  nlohmann::ordered_json j = plan->raw();
  nlohmann::json f = Figures(cost.fastest_steady);
  f["constants"] = cost.constants;
  f["workers"] = cost.options.workers;
  f["servers"] = cost.options.servers;
  f["epoch"] = "later epochs (mean of 1 to " + std::to_string(cost.options.epochs - 1) + ")";
  j["prediction"] = f;
  return j.dump(2) + "\n";
}

std::string CostReport(const ir::Program& prog, const PlanCost& cost, bool json) {
  const exec::ProbeResult& r = cost.plan;
  if (json) {
    nlohmann::json j;
    j["constants"] = cost.constants;
    j["workers"] = cost.options.workers;
    j["servers"] = cost.options.servers;
    j["element_s"] = r.element_s;
    j["jit_element_s"] = r.jit_element_s;
    j["compile_ms"] = r.compile_ms;
    j["compiled"] = r.compiled;
    for (const exec::EpochCost& e : r.epochs) j["epochs"].push_back(Figures(e.prediction));
    j["steady"] = Figures(r.steady);
    j["candidates"] = nlohmann::json::array();
    for (const CandidateCost& c : cost.candidates) {
      nlohmann::json f = Figures(c.steady);
      f["loop"] = c.loop;
      f["schedule"] = c.schedule;
      f["in_plan"] = c.in_plan;
      j["candidates"].push_back(f);
    }
    return j.dump() + "\n";
  }
  std::string out = "cost on " + ClusterWords(cost.options.workers, cost.options.servers) +
                    " (docs/planner.md; constants: " + cost.constants + "):\n";
  for (size_t l = 0; l < r.element_s.size(); ++l) {
    if (r.element_s[l] <= 0) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "  loop %zu at line %d: %.3g us per element here", l,
                  prog.loops[l].loc.line, r.element_s[l] * 1e6);
    out += buf;
    if (r.jit_element_s[l] > 0) {
      std::snprintf(buf, sizeof buf, " interpreted, %.3g compiled", r.jit_element_s[l] * 1e6);
      out += buf;
      if (r.compile_ms[l] > 0) {
        std::snprintf(buf, sizeof buf, " (compiled in %.0f ms)", r.compile_ms[l]);
        out += buf;
      }
      if (!r.compiled[l]) {
        out += "; counted interpreted (too little work for a worker to compile it)";
      }
    }
    out += "\n";
  }
  for (size_t e = 0; e < r.epochs.size(); ++e) {
    out += Line(("epoch " + std::to_string(e)).c_str(), r.epochs[e].prediction);
  }
  if (r.epochs.size() > 1) {
    out += Line(("later epochs (mean of 1 to " + std::to_string(r.epochs.size() - 1) + ")").c_str(),
                r.steady);
  }
  int loop = -1;
  for (const CandidateCost& c : cost.candidates) {
    if (c.loop != loop || (c.loop == -1 && c.in_plan)) {
      loop = c.loop;
      out += loop >= 0 ? "  loop " + std::to_string(loop) +
                             " could also run as (later epochs, the other loops as planned):\n"
                       : "  the relaxed settings could also be (later epochs; they change quality, "
                         "which only `rigel tune`'s trials check, so --cost never chooses one):\n";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f s, ", c.steady.seconds);
    out += "    " + std::string(buf) + Bytes(c.steady.moved_bytes) + ": " + c.schedule +
           (c.in_plan ? "  <- this plan" : "") + "\n";
  }
  for (size_t l = 0; l < cost.fastest.loops.size(); ++l) {
    const std::string planned = ScheduleText(cost.fastest.loops[l]);
    bool changed = false;
    for (const CandidateCost& c : cost.candidates) {
      changed = changed || (c.loop == static_cast<int>(l) && c.in_plan && c.schedule != planned);
    }
    if (changed) {
      out += "  loop " + std::to_string(l) + ": predicted fastest is " + planned +
             " (`rigel plan --cost` writes the plan with it)\n";
    }
  }
  return out;
}

std::string ClusterWords(int workers, int servers) {
  return std::to_string(workers) + (workers == 1 ? " worker and " : " workers and ") +
         std::to_string(servers) + (servers == 1 ? " server" : " servers");
}

}  // namespace rigel::cli
