// cache: relaxed rows in a write-back row cache on each worker, counted
// across the workers, whose pushes make the others' rows stale.
#include <algorithm>
#include <bit>
#include <unordered_map>

#include "analysis/sync/resolve.h"
#include "analysis/sync/traffic.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {
namespace {

// What a cache exchange carries per row (ps/cache.cc counts the same): a
// row received is its key, version and values; a push its key and delta; a
// fetch asked for its key.
constexpr double kReceivedRowExtra = 16, kPushedRowExtra = 8, kAskedRow = 8;

// The relaxed row cache of one parameter on one worker: rows fetched when
// first touched; a push each time a row's updates reach the push bound
// (touches stand for updates) and of every updated row at the end; a refresh
// each time a held row lacks more than `staleness` merges by other workers.
struct CacheRun {
  double fetched = 0, pushed = 0, refreshed = 0;
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
void SimulateCaches(const AcrossWorkers& a, std::vector<WorkerCounts>* workers) {
  const ParamShape& shape = *a.shape;
  const CacheSettings& cache = *a.cache;
  const StepTouches* touches = a.touches;
  const std::vector<int64_t>* single = a.single;
  const std::vector<CountState::Param*>& states = a.states;
  const std::vector<uint32_t>* writes = a.writes;
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

class CacheUnit : public Unit {
 public:
  std::string_view name() const override { return "cache"; }
  std::string_view description() const override {
    return "a write-back row cache on each worker (at --staleness 0: ps)";
  }
  bool Keeps(const PlanParam& p) const override { return p.cached; }
  void Count(const ParamRun& /*r*/, WorkerCounts* /*wc*/) const override {}
  bool CountsAcrossWorkers() const override { return true; }
  void CountAcross(const AcrossWorkers& a, std::vector<WorkerCounts>* workers) const override {
    SimulateCaches(a, workers);
  }

  // Its rows (analysis/sync/resolve.h sizes them from --cache-mb) and 11
  // bytes of its index per row of the parameter.
  std::vector<MemoryPart> WorkerMemory(const MemoryInputs::Param& p, int64_t cache_rows,
                                       bool in_part) const override {
    // When a run ends the cache pushes every row it changed in one message
    // per server: its deltas, keys and flags (ps/cache.cc PushRow).
    return {
        {"row cache of '" + p.name + "'" + (in_part ? ", which holds its rows" : ""),
         cache_rows * CacheRowBytes(p.width, in_part) + kCacheBytesPerParamRow * p.rows},
        {"the deltas of '" + p.name + "' pushed when a run ends", cache_rows * (p.width * 4 + 9)}};
  }

  // A server keeps a version per row and per worker what its copy lacks
  // (ps/row_versions.h: vectors that double, and an index at load 0.7), and
  // answers a worker's end-of-run exchange: its pushed rows of this shard,
  // and as many sent back. The workers end at different times: heaptrack
  // found one exchange's messages at the servers' peaks (word2vec, CTR),
  // never every worker's at once.
  std::vector<MemoryPart> ServerMemory(const ServerShare& s) const override {
    const MemoryInputs::Param& p = *s.param;
    const int64_t slots = std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(s.created, 1)));
    const int64_t index = std::bit_ceil(static_cast<uint64_t>(s.created * 10 / 7 + 1));
    const int64_t pushed = (s.worker_rows + s.servers - 1) / s.servers;
    return {{"row versions of '" + p.name + "'", slots * (16 + 2 * s.workers) + index * 12},
            {"a worker's end-of-run exchange of '" + p.name + "'", 2 * pushed * (p.width * 4 + 9)}};
  }
};

}  // namespace

const Unit& Cache() {
  static const CacheUnit unit;
  return unit;
}

}  // namespace rigel::analysis::sync
