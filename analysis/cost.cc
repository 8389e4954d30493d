#include "analysis/cost.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "common/json_reader.h"

namespace rigel::analysis {

namespace {

// What a cache exchange carries per row (ps/cache.cc counts the same): a
// row received is its key, version and values; a push its key and delta; a
// fetch asked for its key.
constexpr double kReceivedRowExtra = 16, kPushedRowExtra = 8, kAskedRow = 8;

double RowBytes(const ParamShape& s) { return static_cast<double>(s.width) * 4.0; }

// Everything about one parameter in one worker's run that the strategies
// below need.
struct ParamRun {
  const ParamRows* rows = nullptr;
  const ParamShape* shape = nullptr;
  int rank = 0, workers = 1;
  const std::vector<uint8_t>* changed = nullptr;  // rows the run changed (null: all)
  // The worker's share of the run's elements, when its rows are all rows
  // (RunEffects::inexact); 1 otherwise. `writes`: the run's writes per row.
  double share = 1;
  const std::vector<uint32_t>* writes = nullptr;
};

// How many of `keys` a written parameter pushes: those the run changed
// (a row with a zero delta is not pushed). Zero when it is not written.
double Pushed(const ParamRun& r, const std::vector<int64_t>& keys) {
  if (!r.rows->param.written) return 0;
  if (r.changed == nullptr || r.changed->empty()) return static_cast<double>(keys.size());
  double n = 0;
  for (int64_t k : keys) {
    if (k < 0 || static_cast<size_t>(k) >= r.changed->size() || (*r.changed)[k] == 0) continue;
    if (r.share >= 1) {
      ++n;
    } else if (r.writes != nullptr && static_cast<size_t>(k) < r.writes->size()) {
      n += 1 - std::pow(1 - r.share, static_cast<double>((*r.writes)[k]));
    } else {
      n += r.share;
    }
  }
  return n;
}

// Adds `rows` rows of `p` moved at step `s` (or before/after the steps when
// s is -1 / -2) to the worker's counts under strategy name `what`.
void Move(WorkerCounts* wc, const std::string& what, double rows, double row_bytes, int64_t s) {
  const double b = rows * row_bytes;
  wc->bytes[what] += b;
  if (s == -1) {
    wc->begin_bytes += b;
    wc->begin_rows += rows;
  } else if (s == -2) {
    wc->end_bytes += b;
    wc->end_rows += rows;
  } else {
    wc->step_server_bytes[s] += b;
    wc->step_server_rows[s] += rows;
  }
}

// local: held rows pulled at the start unless kept from this loop's last
// run or still the initialiser's (`initial`: no run wrote the parameter, so
// the worker computes them), pushed at the end when written (unless they
// stay on the worker between runs: analysis/held_rows.h; the flush before a
// checkpoint or the saved parameters is not an epoch's); shared rows around
// every step.
void CountLocal(const ParamRun& r, const std::vector<std::vector<std::vector<int64_t>>>& srv,
                bool kept, bool initial, WorkerCounts* wc) {
  const double rb = RowBytes(*r.shape), held = static_cast<double>(r.rows->held.size());
  if (kept) {
    wc->bytes["local.kept"] += held * rb;
  } else if (held > 0 && !initial) {
    Move(wc, "local", held, rb, -1);
  }
  const int p = r.rows->param.index;
  for (size_t s = 0; s < srv.size(); ++s) {
    if (srv[s].empty()) continue;
    const double n = static_cast<double>(srv[s][p].size());
    if (n == 0) continue;
    Move(wc, "local", n + Pushed(r, srv[s][p]), rb, static_cast<int64_t>(s));
  }
  if (r.rows->param.held) return;
  const double pushed = Pushed(r, r.rows->held);
  if (pushed > 0) Move(wc, "local", pushed, rb, -2);
}

// rotate: the column this worker ends with (and its first one) pulled, a
// hand-off after every step but the last, the last column pushed.
void CountRotate(const ParamRun& r, WorkerCounts* wc) {
  const double rb = RowBytes(*r.shape);
  const auto& cols = r.rows->columns;
  const int last = (r.rank + r.workers - 1) % r.workers;
  Move(wc, "rotate", static_cast<double>(cols[last].size()), rb, -1);
  if (last != r.rank) Move(wc, "rotate", static_cast<double>(cols[r.rank].size()), rb, -1);
  const int64_t steps = static_cast<int64_t>(wc->step_elements.size());
  for (int64_t t = 0; t + 1 < steps; ++t) {
    const double b = static_cast<double>(cols[(r.rank + t) % r.workers].size()) * rb;
    wc->bytes["rotate"] += b;
    wc->step_handoff_bytes[t] += b;
  }
  const double pushed = Pushed(r, cols[last]);
  if (pushed > 0) Move(wc, "rotate", pushed, rb, -2);
}

// ps: every step pulls its rows and pushes them back when written.
void CountPs(const ParamRun& r, const std::vector<std::vector<std::vector<int64_t>>>& srv,
             WorkerCounts* wc) {
  const int p = r.rows->param.index;
  for (size_t s = 0; s < srv.size(); ++s) {
    if (srv[s].empty()) continue;
    const double n = static_cast<double>(srv[s][p].size());
    if (n == 0) continue;
    Move(wc, "ps", n + Pushed(r, srv[s][p]), RowBytes(*r.shape), static_cast<int64_t>(s));
  }
}

}  // namespace

CountState::CountState(int workers, int params)
    : state_(static_cast<size_t>(workers), std::vector<Param>(static_cast<size_t>(params))) {}

namespace {

// The relaxed row cache of one parameter on one worker: rows fetched when
// first touched; a push each time a row's updates reach the push bound
// (touches stand for updates) and of every updated row at the end; a refresh
// each time a held row lacks more than `staleness` merges by other workers.
struct CacheRun {
  double fetched = 0, pushed = 0, refreshed = 0;
};

// The (row, elements touching it) of one worker's run per exchange of its
// caches: one per step, or one per part of a step when the steps are cut
// (RowPlan::part), with the step each belongs to.
struct StepTouches {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> units;
  std::vector<size_t> step;
};

// Per row, the run's element writes over its element touches (empty when
// the writes are unknown: one update per touch). The run's touches are
// spread over the workers' steps; the writes are assumed spread alike.
std::vector<double> UpdatesPerTouch(const ParamShape& shape, const StepTouches* touches,
                                    const std::vector<uint32_t>* writes, int workers) {
  if (writes == nullptr || writes->size() != static_cast<size_t>(shape.rows)) return {};
  std::vector<double> out(writes->size(), 0.0);
  for (int w = 0; w < workers; ++w) {
    for (const auto& unit : touches[w].units) {
      for (const auto& [row, k] : unit) {
        if (row >= 0 && row < shape.rows) out[static_cast<size_t>(row)] += static_cast<double>(k);
      }
    }
  }
  for (size_t r = 0; r < out.size(); ++r) {
    out[r] = out[r] > 0 ? static_cast<double>((*writes)[r]) / out[r] : 1.0;
  }
  return out;
}

// The caches of one parameter on every worker, step by step in lockstep:
// a worker's pending updates of a row (touches stand for updates) are
// pushed at the exchange after the step that brings them to the push bound
// (a single-writer row only at the end) and at the end of the run; each push
// is a merge every other holder lacks, and a holder is refreshed at its next
// exchange once it lacks more than `staleness` of them. A row is fetched
// when first touched; the cache is kept across runs unless another loop
// wrote the parameter.
void SimulateCaches(const ParamShape& shape, const CacheSettings& cache, const StepTouches* touches,
                    const std::vector<int64_t>* single, const std::vector<uint32_t>* writes,
                    const std::vector<CountState::Param*>& states,
                    std::vector<WorkerCounts>* workers) {
  const int P = static_cast<int>(states.size());
  const double rb = RowBytes(shape);
  const std::vector<double> per_touch = UpdatesPerTouch(shape, touches, writes, P);
  std::vector<std::unordered_map<int64_t, double>> pending(P);
  std::vector<CacheRun> cr(P);
  size_t units = 0;
  for (int w = 0; w < P; ++w) {
    CountState::Param& ps = *states[w];
    if (ps.cached.empty() || ps.cache_generation + 1 != ps.generation) {
      ps.cached.assign(static_cast<size_t>(shape.rows), 0);
      ps.lag.clear();
    }
    units = std::max(units, touches[w].units.size());
  }
  // Per worker, the held rows that lack more than `staleness` merges (due
  // for a refresh at its next exchange): kept as a list, as the servers do,
  // so that a step costs what it touches, not every held row.
  std::vector<std::vector<int64_t>> due(P);
  for (int w = 0; w < P; ++w) {
    for (const auto& [row, l] : states[w]->lag) {
      if (l > cache.staleness) due[w].push_back(row);
    }
  }
  auto push = [&](int w, int64_t row, size_t s, bool last) {
    ++cr[w].pushed;
    WorkerCounts& wc = (*workers)[w];
    if (last) {
      wc.end_bytes += rb + kPushedRowExtra;
      wc.end_rows += 1;
    } else {
      wc.step_server_bytes[s] += rb + kPushedRowExtra;
      wc.step_server_rows[s] += 1;
    }
    for (int v = 0; v < P; ++v) {
      if (v == w || !states[v]->cached[static_cast<size_t>(row)]) continue;
      if (++states[v]->lag[row] == cache.staleness + 1) due[v].push_back(row);
    }
  };
  for (size_t u = 0; u < units; ++u) {
    for (int w = 0; w < P; ++w) {
      if (u >= touches[w].units.size()) continue;
      const size_t s = touches[w].step[u];
      WorkerCounts& wc = (*workers)[w];
      std::vector<char>& held = states[w]->cached;
      // One exchange per unit: before the step, and between its parts.
      const bool first = u == 0 || touches[w].step[u - 1] != s;
      wc.step_exchanges[s] = first ? std::max(wc.step_exchanges[s], 1) : wc.step_exchanges[s] + 1;
      for (const auto& [row, k] : touches[w].units[u]) {
        if (row < 0 || row >= shape.rows) continue;
        if (!held[static_cast<size_t>(row)]) {
          held[static_cast<size_t>(row)] = 1;
          ++cr[w].fetched;
          wc.step_server_bytes[s] += rb + kReceivedRowExtra + kAskedRow;
          wc.step_server_rows[s] += 1;
        }
        double& c = pending[w][row];
        c += static_cast<double>(k) * (per_touch.empty() ? 1.0 : per_touch[row]);
        const bool alone = std::binary_search(single[w].begin(), single[w].end(), row);
        if (!alone && c >= static_cast<double>(cache.push_bound)) {
          c = 0;
          push(w, row, s, false);
        }
      }
    }
    for (int w = 0; w < P; ++w) {
      if (u >= touches[w].units.size()) continue;
      const size_t s = touches[w].step[u];
      WorkerCounts& wc = (*workers)[w];
      for (int64_t row : due[w]) {
        int64_t& l = states[w]->lag[row];
        if (l <= cache.staleness) continue;
        l = 0;
        ++cr[w].refreshed;
        wc.step_server_bytes[s] += rb + kReceivedRowExtra;
        wc.step_server_rows[s] += 1;
      }
      due[w].clear();
    }
  }
  for (int w = 0; w < P; ++w) {
    for (const auto& [row, c] : pending[w]) {
      if (c > 0) push(w, row, 0, true);
    }
  }
  for (int w = 0; w < P; ++w) {
    WorkerCounts& wc = (*workers)[w];
    wc.end_exchanges = std::max(wc.end_exchanges, 1);
    const double bytes = cr[w].fetched * (rb + kReceivedRowExtra + kAskedRow) +
                         cr[w].pushed * (rb + kPushedRowExtra) +
                         cr[w].refreshed * (rb + kReceivedRowExtra);
    wc.bytes["cache"] += bytes;
    wc.param_bytes[shape.name] += bytes;
    wc.cache_rows["pushed." + shape.name] += cr[w].pushed;
    wc.cache_rows["refreshed." + shape.name] += cr[w].refreshed;
    wc.cache_rows["fetched." + shape.name] += cr[w].fetched;
    states[w]->cache_generation = states[w]->generation;
  }
}

}  // namespace

StatusOr<RunCounts> CountRun(const LoopPlan& lp, const PlanInput& in, const StepBlocks& blocks,
                             const std::vector<ParamShape>& shapes, const RowsFn& rows,
                             const RowCountsFn& counts, const CacheSettings& cache,
                             CountState* state, const RunEffects* effects) {
  RunCounts out;
  out.loop = lp.id;
  const int P = in.workers;
  out.workers.resize(static_cast<size_t>(P));
  std::vector<bool> cached(shapes.size(), false);
  for (const PlanParam& pp : in.loop_params) cached[pp.index] = pp.cached;
  std::vector<StepTouches> touches(shapes.size() * P);  // [p * P + w]
  std::vector<std::vector<int64_t>> single(shapes.size() * P);
  int64_t total_elements = 0;
  for (const auto& step : blocks.blocks) {
    for (const auto& block : step) total_elements += static_cast<int64_t>(block.size());
  }
  for (int w = 0; w < P; ++w) {
    PlanInput wi = in;
    wi.rank = w;
    const std::vector<std::vector<int64_t>> steps = PlanSteps(wi, blocks);
    RIGEL_ASSIGN_OR_RETURN(RowPlan rp, PlanRows(wi, blocks, steps, rows));
    WorkerCounts& wc = out.workers[static_cast<size_t>(w)];
    const size_t n = steps.size();
    for (const auto& s : steps) wc.step_elements.push_back(static_cast<int64_t>(s.size()));
    wc.step_server_bytes.assign(n, 0);
    wc.step_server_rows.assign(n, 0);
    wc.step_handoff_bytes.assign(n, 0);
    wc.step_exchanges.assign(n, 0);
    wc.overlapped = rp.prefetch || (rp.step_keys && !rp.step_sync);
    wc.ticks = rp.step_sync;
    std::vector<std::vector<std::vector<int64_t>>> srv(n);
    if (rp.step_keys) {
      for (size_t s = 0; s < n; ++s) {
        if (steps[s].empty()) {
          srv[s].assign(shapes.size(), {});
          continue;
        }
        RIGEL_ASSIGN_OR_RETURN(auto touched, rows(steps[s]));
        srv[s] = ServerRowsAt(rp, std::move(touched));
      }
    }
    std::vector<CountState::Param>& st = state->state_[static_cast<size_t>(w)];
    int64_t worker_elements = 0;
    for (const auto& s : steps) worker_elements += static_cast<int64_t>(s.size());
    bool any_cached = false, any_server = false;
    for (const ParamRows& pr : rp.params) {
      if (!pr.used) continue;
      const int p = pr.param.index;
      const ParamShape& shape = shapes[static_cast<size_t>(p)];
      const std::vector<uint8_t>* ch =
          effects != nullptr && static_cast<size_t>(p) < effects->changed.size()
              ? &effects->changed[static_cast<size_t>(p)]
              : nullptr;
      ParamRun r{&pr, &shape, w, P, ch};
      if (effects != nullptr && static_cast<size_t>(p) < effects->inexact.size() &&
          effects->inexact[static_cast<size_t>(p)] && total_elements > 0) {
        r.share = static_cast<double>(worker_elements) / static_cast<double>(total_elements);
        if (static_cast<size_t>(p) < effects->writes.size()) r.writes = &effects->writes[p];
      }
      CountState::Param& ps = st[static_cast<size_t>(p)];
      if (pr.param.cached) {
        any_cached = true;
        single[p * P + w] = pr.single;
        continue;  // counted below, once every worker's touches are known
      }
      switch (pr.param.strategy) {
        case Strategy::kLocal: {
          const bool kept = ps.local.loop == lp.id && ps.local.rows == pr.held &&
                            ps.local.generation == ps.generation && ps.local.valid;
          CountLocal(r, srv, kept, ps.generation == 0, &wc);
          any_server = any_server || std::any_of(srv.begin(), srv.end(), [&](const auto& v) {
                         return !v.empty() && !v[p].empty();
                       });
          ps.local = {lp.id, pr.held, 0, true};
          break;
        }
        case Strategy::kRotate:
          CountRotate(r, &wc);
          break;
        case Strategy::kReplicated:
          if (ps.dense.valid && ps.dense.generation == ps.generation) break;
          if (ps.replicated.valid && ps.replicated.rows == pr.read &&
              ps.replicated.generation == ps.generation) {
            break;
          }
          Move(&wc, "replicated", static_cast<double>(pr.read.size()), RowBytes(shape), -1);
          ps.replicated = {lp.id, pr.read, ps.generation, true};
          break;
        case Strategy::kPs:
          CountPs(r, srv, &wc);
          any_server = true;
          break;
        case Strategy::kAllreduce: {
          if (!(ps.dense.valid && ps.dense.generation == ps.generation)) {
            Move(&wc, "allreduce", static_cast<double>(shape.rows), RowBytes(shape), -1);
            ps.dense.valid = true;
            ps.dense.generation = ps.generation;
          }
          if (pr.param.written) {
            const int syncs = static_cast<int>(n);  // --sync-every 1: after every step
            wc.collectives += syncs;
            const double b = static_cast<double>(shape.rows) * RowBytes(shape);
            wc.collective_bytes += b * syncs;
            wc.bytes["allreduce.collective"] += b * syncs;
            if (w == 0)
              Move(&wc, "allreduce", static_cast<double>(shape.rows), RowBytes(shape), -2);
          }
          break;
        }
        default:
          break;
      }
    }
    // The runtime's generations: every written parameter advances, then the
    // kept copies of this run are stamped with the new value.
    for (const ParamRows& pr : rp.params) {
      if (!pr.used || !pr.param.written) continue;
      CountState::Param& ps = st[static_cast<size_t>(pr.param.index)];
      ++ps.generation;
      if (pr.param.strategy == Strategy::kLocal) ps.local.generation = ps.generation;
      if (pr.param.strategy == Strategy::kAllreduce) ps.dense.generation = ps.generation;
    }
    for (size_t s = 0; s < n; ++s) {
      if (any_server && wc.step_server_rows[s] > 0) wc.step_exchanges[s] = 2;
    }
    if (wc.begin_rows > 0) wc.begin_exchanges = 1;
    if (wc.end_rows > 0) wc.end_exchanges = 1;
    if (!any_cached) continue;
    // Touch counts of each cached parameter per exchange (a step, or each
    // part of one), for the cache model.
    for (size_t s = 0; s < n; ++s) {
      const std::span<const int64_t> all(steps[s]);
      const size_t part = rp.part > 0 ? static_cast<size_t>(rp.part) : all.size();
      for (size_t at = 0; at < all.size() || at == 0; at += part) {
        RowCounts c;
        if (!all.empty()) {
          RIGEL_ASSIGN_OR_RETURN(c, counts(all.subspan(at, std::min(part, all.size() - at))));
        }
        for (size_t p = 0; p < shapes.size(); ++p) {
          if (!cached[p]) continue;
          StepTouches& t = touches[p * P + w];
          t.units.push_back(p < c.size() ? std::move(c[p])
                                         : std::vector<std::pair<int64_t, int64_t>>{});
          t.step.push_back(s);
        }
        if (all.empty()) break;
      }
    }
  }
  for (size_t p = 0; p < shapes.size(); ++p) {
    if (!cached[p]) continue;
    std::vector<CountState::Param*> states;
    for (int w = 0; w < P; ++w) states.push_back(&state->state_[static_cast<size_t>(w)][p]);
    const std::vector<uint32_t>* writes =
        effects != nullptr && p < effects->writes.size() && !effects->writes[p].empty()
            ? &effects->writes[p]
            : nullptr;
    SimulateCaches(shapes[p], cache, &touches[p * P], &single[p * P], writes, states, &out.workers);
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
