#include "analysis/cost.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "analysis/sync/units.h"
#include "common/json_reader.h"

namespace rigel::analysis {

CountState::CountState(int workers, int params)
    : state_(static_cast<size_t>(workers), std::vector<Param>(static_cast<size_t>(params))) {}

namespace {

// One worker's part of a run: its steps, its row plan and, when the plan
// has step keys, the rows each step moves through the servers.
struct WorkerPlan {
  std::vector<std::vector<int64_t>> steps;
  RowPlan rows;
  std::vector<std::vector<std::vector<int64_t>>> server_rows;  // [step][param]
};

StatusOr<WorkerPlan> PlanWorker(const PlanInput& in, int rank, const StepBlocks& blocks,
                                size_t params, const RowsFn& rows, WorkerCounts* wc) {
  PlanInput wi = in;
  wi.rank = rank;
  WorkerPlan wp;
  wp.steps = PlanSteps(wi, blocks);
  RIGEL_ASSIGN_OR_RETURN(wp.rows, PlanRows(wi, blocks, wp.steps, rows));
  const size_t n = wp.steps.size();
  for (const auto& s : wp.steps) wc->step_elements.push_back(static_cast<int64_t>(s.size()));
  wc->step_server_bytes.assign(n, 0);
  wc->step_server_rows.assign(n, 0);
  wc->step_handoff_bytes.assign(n, 0);
  wc->step_exchanges.assign(n, 0);
  wc->overlapped = wp.rows.prefetch || (wp.rows.step_keys && !wp.rows.step_sync);
  wc->ticks = wp.rows.step_sync;
  wp.server_rows.resize(n);
  if (!wp.rows.step_keys) return wp;
  for (size_t s = 0; s < n; ++s) {
    if (wp.steps[s].empty()) {
      wp.server_rows[s].assign(params, {});
      continue;
    }
    RIGEL_ASSIGN_OR_RETURN(auto touched, rows(wp.steps[s]));
    wp.server_rows[s] = ServerRowsAt(wp.rows, std::move(touched));
  }
  return wp;
}

// The touch counts of each parameter with a unit in `across`, per exchange (a step,
// or each part of one) of this worker: touches[p] gets one unit per exchange.
Status CollectTouches(const WorkerPlan& wp, const RowCountsFn& counts,
                      const std::vector<const sync::Unit*>& across,
                      std::vector<sync::StepTouches*> touches) {
  for (size_t s = 0; s < wp.steps.size(); ++s) {
    const std::span<const int64_t> all(wp.steps[s]);
    const size_t part = wp.rows.part > 0 ? static_cast<size_t>(wp.rows.part) : all.size();
    for (size_t at = 0; at < all.size() || at == 0; at += part) {
      RowCounts c;
      if (!all.empty()) {
        RIGEL_ASSIGN_OR_RETURN(c, counts(all.subspan(at, std::min(part, all.size() - at))));
      }
      for (size_t p = 0; p < across.size(); ++p) {
        if (across[p] == nullptr) continue;
        touches[p]->units.push_back(p < c.size() ? std::move(c[p])
                                                 : std::vector<std::pair<int64_t, int64_t>>{});
        touches[p]->step.push_back(s);
      }
      if (all.empty()) break;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RunCounts> CountRun(const LoopPlan& lp, const PlanInput& in, const StepBlocks& blocks,
                             const std::vector<ParamShape>& shapes, const RowsFn& rows,
                             const RowCountsFn& counts, const CacheSettings& cache,
                             CountState* state, const RunEffects* effects) {
  RunCounts out;
  out.loop = lp.id;
  const int P = in.workers;
  const size_t np = shapes.size();
  out.workers.resize(static_cast<size_t>(P));
  // The parameters whose unit is counted once every worker's touches are
  // known (the row caches).
  std::vector<const sync::Unit*> across(np, nullptr);
  for (const PlanParam& pp : in.loop_params) {
    const sync::Unit* u = sync::UnitOf(pp);
    if (u != nullptr && u->CountsAcrossWorkers()) across[static_cast<size_t>(pp.index)] = u;
  }
  std::vector<sync::StepTouches> touches(np * P);  // [p * P + w]
  std::vector<std::vector<int64_t>> single(np * P);
  int64_t total_elements = 0;
  for (const auto& step : blocks.blocks) {
    for (const auto& block : step) total_elements += static_cast<int64_t>(block.size());
  }
  for (int w = 0; w < P; ++w) {
    WorkerCounts& wc = out.workers[static_cast<size_t>(w)];
    RIGEL_ASSIGN_OR_RETURN(WorkerPlan wp, PlanWorker(in, w, blocks, np, rows, &wc));
    std::vector<CountState::Param>& st = state->state_[static_cast<size_t>(w)];
    int64_t worker_elements = 0;
    for (const auto& s : wp.steps) worker_elements += static_cast<int64_t>(s.size());
    bool any_across = false;
    for (const ParamRows& pr : wp.rows.params) {
      if (!pr.used) continue;
      const int p = pr.param.index;
      const sync::Unit* unit = sync::UnitOf(pr.param);
      if (unit == nullptr) continue;
      if (unit->CountsAcrossWorkers()) {
        any_across = true;
        single[p * P + w] = pr.single;
        continue;  // counted below, once every worker's touches are known
      }
      sync::ParamRun r{&pr, &shapes[static_cast<size_t>(p)], lp.id, w, P};
      if (effects != nullptr && static_cast<size_t>(p) < effects->changed.size()) {
        r.changed = &effects->changed[static_cast<size_t>(p)];
      }
      if (effects != nullptr && static_cast<size_t>(p) < effects->inexact.size() &&
          effects->inexact[static_cast<size_t>(p)] && total_elements > 0) {
        r.share = static_cast<double>(worker_elements) / static_cast<double>(total_elements);
        if (static_cast<size_t>(p) < effects->writes.size()) r.writes = &effects->writes[p];
      }
      r.server_rows = &wp.server_rows;
      r.state = &st[static_cast<size_t>(p)];
      unit->Count(r, &wc);
    }
    // The runtime's generations: every written parameter advances, then the
    // kept copies of this run are stamped with the new value.
    for (const ParamRows& pr : wp.rows.params) {
      if (!pr.used || !pr.param.written) continue;
      CountState::Param& ps = st[static_cast<size_t>(pr.param.index)];
      ++ps.generation;
      if (const sync::Unit* unit = sync::UnitOf(pr.param)) unit->Written(&ps);
    }
    // A step that moves rows through the servers (ps, a local parameter's
    // shared rows) pulls and pushes them: two round trips.
    for (size_t s = 0; s < wp.steps.size(); ++s) {
      if (wc.step_server_rows[s] > 0) wc.step_exchanges[s] = 2;
    }
    if (wc.begin_rows > 0) wc.begin_exchanges = 1;
    if (wc.end_rows > 0) wc.end_exchanges = 1;
    if (!any_across) continue;
    std::vector<sync::StepTouches*> mine(np, nullptr);
    for (size_t p = 0; p < np; ++p) mine[p] = &touches[p * P + w];
    RIGEL_RETURN_IF_ERROR(CollectTouches(wp, counts, across, std::move(mine)));
  }
  for (size_t p = 0; p < np; ++p) {
    if (across[p] == nullptr) continue;
    sync::AcrossWorkers a;
    a.shape = &shapes[p];
    a.cache = &cache;
    a.touches = &touches[p * P];
    a.single = &single[p * P];
    if (effects != nullptr && p < effects->writes.size() && !effects->writes[p].empty()) {
      a.writes = &effects->writes[p];
    }
    for (int w = 0; w < P; ++w) a.states.push_back(&state->state_[static_cast<size_t>(w)][p]);
    across[p]->CountAcross(a, &out.workers);
  }
  return out;
}

namespace {

enum Term { kRoundTrip, kByte, kServerRow, kHandoff, kCollective, kCollectiveByte, kTask, kTick };

// Counted things by constant, and their seconds.
struct Terms {
  double t[kConstants] = {};
  double Seconds(const std::vector<double>& k) const {
    double s = 0;
    for (int j = 0; j < kConstants; ++j) s += t[j] * k[static_cast<size_t>(j)];
    return s;
  }
  void Add(const Terms& o) {
    for (int j = 0; j < kConstants; ++j) t[j] += o.t[j];
  }
};

// What moving `bytes` of `rows` rows in `exchanges` exchanges counts, with
// the servers' per-row work shared by `servers` servers serving `workers`.
Terms Exchange(double exchanges, double bytes, double rows, double workers, double servers) {
  Terms m;
  m.t[kRoundTrip] = exchanges;
  m.t[kByte] = bytes;
  m.t[kServerRow] = rows * workers / servers;
  return m;
}

}  // namespace

Prediction Predict(const std::vector<RunCounts>& runs, int servers, const CostConstants& k) {
  Prediction out;
  const std::vector<double> kv = ConstantVector(k);
  const double s = std::max(1, servers);
  Terms total;
  for (const RunCounts& run : runs) {
    const double P = static_cast<double>(run.workers.size());
    total.t[kTask] += 1;
    size_t steps = 0;
    Terms begin, end;
    for (const WorkerCounts& wc : run.workers) {
      steps = std::max(steps, wc.step_elements.size());
      Terms b = Exchange(wc.begin_exchanges, wc.begin_bytes, wc.begin_rows, P, s);
      Terms e = Exchange(wc.end_exchanges, wc.end_bytes, wc.end_rows, P, s);
      if (b.Seconds(kv) > begin.Seconds(kv)) begin = b;
      if (e.Seconds(kv) > end.Seconds(kv)) end = e;
      for (const auto& [name, v] : wc.bytes) out.bytes[name] += v;
      for (const auto& [name, v] : wc.param_bytes) out.param_bytes[name] += v;
      for (const auto& [name, v] : wc.cache_rows) out.cache_rows[name] += v;
    }
    total.Add(begin);
    total.Add(end);
    for (size_t t = 0; t < steps; ++t) {
      double slowest = -1, compute = 0, slowest_compute = 0;
      Terms slowest_terms;
      for (const WorkerCounts& wc : run.workers) {
        if (t >= wc.step_elements.size()) continue;
        const double c = static_cast<double>(wc.step_elements[t]) * run.element_s;
        Terms m =
            Exchange(wc.step_exchanges[t], wc.step_server_bytes[t], wc.step_server_rows[t], P, s);
        if (wc.step_handoff_bytes[t] > 0) {
          m.t[kHandoff] = 1;
          m.t[kByte] += wc.step_handoff_bytes[t];
        }
        if (wc.collectives > 0) {
          m.t[kCollective] = 1;
          m.t[kCollectiveByte] = wc.collective_bytes / static_cast<double>(wc.collectives);
        }
        if (wc.ticks) m.t[kTick] = 1;
        const double ms = m.Seconds(kv);
        // A worker that exchanges while it computes waits only for the
        // longer, from its second step on: the first step's rows come first.
        const bool overlaps = wc.overlapped && t > 0;
        const bool hidden = overlaps && ms <= c;
        const double cost = overlaps ? std::max(c, ms) : c + ms;
        if (cost > slowest) {
          slowest = cost;
          slowest_compute = overlaps && !hidden ? 0 : c;
          slowest_terms = hidden ? Terms{} : m;
        }
        compute = std::max(compute, c);
      }
      out.critical_compute_s += slowest_compute;
      total.Add(slowest_terms);
      out.compute_s += compute;
    }
  }
  out.terms.assign(total.t, total.t + kConstants);
  out.seconds = out.critical_compute_s + total.Seconds(kv);
  out.comm_s = std::max(0.0, out.seconds - out.compute_s);
  for (const auto& [name, b] : out.bytes) out.moved_bytes += name == "local.kept" ? 0 : b;
  return out;
}

const char* const kConstantNames[kConstants] = {"round_trip_s", "byte_s",       "server_row_s",
                                                "handoff_s",    "collective_s", "collective_byte_s",
                                                "task_s",       "tick_s"};

std::vector<double> ConstantVector(const CostConstants& k) {
  return {k.round_trip_s,      k.byte_s, k.server_row_s, k.handoff_s, k.collective_s,
          k.collective_byte_s, k.task_s, k.tick_s};
}

CostConstants ConstantsFrom(const std::vector<double>& v) {
  CostConstants k;
  k.round_trip_s = v[kRoundTrip];
  k.byte_s = v[kByte];
  k.server_row_s = v[kServerRow];
  k.handoff_s = v[kHandoff];
  k.collective_s = v[kCollective];
  k.collective_byte_s = v[kCollectiveByte];
  k.task_s = v[kTask];
  k.tick_s = v[kTick];
  return k;
}

std::string ConstantsToJson(const CostConstants& k) {
  nlohmann::json j = nlohmann::json::object();
  const std::vector<double> v = ConstantVector(k);
  for (int i = 0; i < kConstants; ++i) j[kConstantNames[i]] = v[static_cast<size_t>(i)];
  return j.dump(1) + "\n";
}

StatusOr<CostConstants> ParseConstants(const std::string& text, const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, path));
  if (!j.IsObject()) {
    return InvalidArgument(
        path + ": expected a JSON object of machine constants ({\"round_trip_s\": ...})");
  }
  std::vector<double> v = ConstantVector(CostConstants{});
  RIGEL_ASSIGN_OR_RETURN(auto members, j.Members());
  for (const auto& member : members) {
    const std::string& key = member.first;
    const JsonValue& value = member.second;
    const char* const* it = std::find_if(kConstantNames, kConstantNames + kConstants,
                                         [&](const char* n) { return key == n; });
    if (it == kConstantNames + kConstants) {
      std::string known;
      for (const char* n : kConstantNames) known += std::string(known.empty() ? "" : ", ") + n;
      return InvalidArgument(path + ": unknown constant '" + key + "' (expected one of " + known +
                             ")");
    }
    StatusOr<double> seconds = value.AsDouble();
    if (!seconds.ok() || *seconds < 0) {
      return value.Error("expected a number >= 0 (seconds), not " +
                         (value.IsNumber() ? value.raw().dump() : value.Describe()));
    }
    v[static_cast<size_t>(it - kConstantNames)] = *seconds;
  }
  return ConstantsFrom(v);
}

namespace {

// Non-negative least squares min |A x - b|^2, x >= 0, by coordinate descent
// (a handful of unknowns; columns that are all zero keep x's start value).
std::vector<double> Nnls(const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                         std::vector<double> x, const std::vector<bool>& used) {
  const size_t n = x.size(), m = b.size();
  std::vector<double> r(m);
  for (size_t i = 0; i < m; ++i) {
    r[i] = b[i];
    for (size_t j = 0; j < n; ++j) r[i] -= a[i][j] * x[j];
  }
  for (int sweep = 0; sweep < 2000; ++sweep) {
    double change = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!used[j]) continue;
      double num = 0, den = 0;
      for (size_t i = 0; i < m; ++i) {
        num += a[i][j] * r[i];
        den += a[i][j] * a[i][j];
      }
      if (den <= 0) continue;
      const double next = std::max(0.0, x[j] + num / den);
      const double d = next - x[j];
      if (d == 0) continue;
      for (size_t i = 0; i < m; ++i) r[i] -= a[i][j] * d;
      change = std::max(change, std::abs(d) / std::max(std::abs(next), 1e-12));
      x[j] = next;
    }
    if (change < 1e-9) break;
  }
  return x;
}

}  // namespace

// The weight of one constant's pull towards its starting value, against
// one observation's relative error.
constexpr double kPrior = 0.05;

StatusOr<CostConstants> FitConstants(const std::vector<Observation>& obs,
                                     const CostConstants& start) {
  if (obs.size() < 2)
    return InvalidArgument("fitting the constants needs at least 2 measured epochs");
  for (const Observation& o : obs) {
    if (!(o.measured_s > 0)) return InvalidArgument("a measured epoch of 0 seconds or less");
  }
  CostConstants k = start;
  // Which worker is slowest, and whether traffic hides behind compute,
  // depend on the constants: refit a few times from the new ones.
  for (int round = 0; round < 4; ++round) {
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    std::vector<bool> used(kConstants, false);
    for (const Observation& o : obs) {
      const Prediction p = Predict(o.runs, o.servers, k);
      const double w = 1.0 / o.measured_s;  // relative error
      std::vector<double> row(kConstants);
      for (int j = 0; j < kConstants; ++j) {
        row[static_cast<size_t>(j)] = p.terms[static_cast<size_t>(j)] * w;
        used[static_cast<size_t>(j)] =
            used[static_cast<size_t>(j)] || p.terms[static_cast<size_t>(j)] > 0;
      }
      a.push_back(std::move(row));
      b.push_back((o.measured_s - p.critical_compute_s) * w);
    }
    // A weak pull towards `start`: a few programs cannot tell apart
    // constants that always come together (an exchange's round trip and its
    // bytes), and without it the fit zeroes one of them.
    const std::vector<double> s0 = ConstantVector(start);
    for (int j = 0; j < kConstants; ++j) {
      if (!used[static_cast<size_t>(j)] || s0[static_cast<size_t>(j)] <= 0) continue;
      std::vector<double> row(kConstants, 0.0);
      row[static_cast<size_t>(j)] = kPrior / s0[static_cast<size_t>(j)];
      a.push_back(std::move(row));
      b.push_back(kPrior);
    }
    k = ConstantsFrom(Nnls(a, b, ConstantVector(k), used));
  }
  return k;
}

Prediction MeanPrediction(const std::vector<Prediction>& p) {
  Prediction out;
  if (p.empty()) return out;
  const double n = static_cast<double>(p.size());
  for (const Prediction& e : p) {
    out.seconds += e.seconds / n;
    out.compute_s += e.compute_s / n;
    out.comm_s += e.comm_s / n;
    out.moved_bytes += e.moved_bytes / n;
    for (const auto& [k, v] : e.bytes) out.bytes[k] += v / n;
    for (const auto& [k, v] : e.param_bytes) out.param_bytes[k] += v / n;
    for (const auto& [k, v] : e.cache_rows) out.cache_rows[k] += v / n;
  }
  return out;
}

}  // namespace rigel::analysis
