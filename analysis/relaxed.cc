#include "analysis/relaxed.h"

#include <algorithm>
#include <cmath>

#include "analysis/batch.h"

namespace rigel::analysis {

namespace {

// The row updates a stretch of one worker's deltas may hold (the rule above).
double RowUpdates(int workers) {
  const int w = std::max(workers, 2);
  return w == 2
             ? kRowUpdatesTwoWorkers
             : kRowUpdatesPerWorker * std::log(static_cast<double>(w) / static_cast<double>(w - 2));
}

// The largest power of two <= total / (workers - 1), at least 1.
int64_t PerOtherWorker(int64_t total, int workers) {
  const int64_t others = std::max(workers, 2) - 1;
  int64_t p = 1;
  while (p * 2 * others <= total) p *= 2;
  return p;
}

}  // namespace

RelaxedChoice ChooseRelaxed(int workers, double hot_share) {
  RelaxedChoice c;
  const double updates = RowUpdates(workers);
  c.batch = kMaxCachedBatch;
  while (c.batch > kMinBatch && hot_share * static_cast<double>(c.batch) > updates) c.batch /= 2;
  c.staleness = 1;
  c.push_bound = PushBoundFor(workers);
  c.merge_every = 1;
  return c;
}

int64_t PushBoundFor(int workers) {
  return workers <= 2 ? kPushBound : PerOtherWorker(kPushBound / 2, workers);
}

double ScaledShare(int workers) {
  // On 2 workers summed deltas cannot diverge (2c - 1 >= -1) but a row most
  // elements write still oscillates: the rows 3 workers would scale are.
  return RowUpdates(std::max(workers, 3)) / static_cast<double>(kScaledBatch);
}

std::vector<int64_t> ChooseHotRows(const std::vector<std::pair<int64_t, int64_t>>& count,
                                   int64_t sampled, int64_t width, int workers,
                                   const RelaxedChoice& c) {
  std::vector<int64_t> hot;
  if (sampled <= 0 || workers < 2) return hot;
  const double w = static_cast<double>(width);
  const double others = static_cast<double>(workers - 1) / static_cast<double>(c.staleness + 1);
  const double ps_per_push = (8 + 4 * w) + others * (16 + 4 * w);
  const double collective = 4 * w / static_cast<double>(std::max<int64_t>(c.merge_every, 1));
  double all = 0, chosen = 0;
  for (const auto& [row, n] : count) {
    // Elements of one step touching the row, and its bytes through the servers.
    const double touches =
        static_cast<double>(n) * static_cast<double>(c.batch) / static_cast<double>(sampled);
    const double ps =
        std::min(1.0, touches / static_cast<double>(std::max<int64_t>(c.push_bound, 1))) *
        ps_per_push;
    all += ps;
    if (ps > collective) {
      hot.push_back(row);
      chosen += ps;
    }
  }
  if (chosen < all / 2) hot.clear();
  std::sort(hot.begin(), hot.end());
  return hot;
}

std::vector<int64_t> ChooseScaledRows(const std::vector<std::pair<int64_t, int64_t>>& count,
                                      int64_t sampled, int64_t width, double share) {
  std::vector<int64_t> rows;
  if (sampled <= 0) return rows;
  const double weight = width == 1 ? 2.0 : 1.0;
  for (const auto& [row, n] : count) {
    if (weight * static_cast<double>(n) >= share * static_cast<double>(sampled)) {
      rows.push_back(row);
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string RelaxedRule() {
  const std::string u =
      std::to_string(static_cast<int>(kRowUpdatesTwoWorkers)) + " on 2 workers and " +
      std::to_string(static_cast<int>(kRowUpdatesPerWorker)) + " x ln(W / (W - 2)) on W >= 3";
  return "a write-back row cache per worker (DSL.md v3), exchanged with the servers once per "
         "mini-batch; a read lacks at most N = 1 merges of its row by other workers; rows at "
         "least U / " +
         std::to_string(kScaledBatch) +
         " of the elements write are merged scaled: a delta pushed while its row lacked L "
         "merges by other workers counts 1 / (1 + L), hot rows merge their writers' mean "
         "(--scaled-merges off adds every delta whole); mini-batches: the largest power of two "
         "<= U / s, between " +
         std::to_string(kMinBatch) + " and " + std::to_string(kMaxCachedBatch) +
         " elements per worker, where s is the largest share of elements that write one row "
         "not merged scaled and U = " +
         u + "; a row is pushed after " + std::to_string(kPushBound) +
         " updates on 2 workers, the largest power of two <= " + std::to_string(kPushBound / 2) +
         " / (W - 1) on W >= 3; rows the collectives merge in fewer bytes than the servers (and "
         "that carry at least half of a parameter's bytes) are replicated and merged every "
         "mini-batch when a collective costs at most a quarter of a mini-batch's compute (all "
         "measured on the loop's first run, on " +
         std::to_string(kHotSample) +
         " elements); --staleness, --push-bound, --push-age, --merge-every, --batch, --hot-rows "
         "and --scaled-merges set them";
}

}  // namespace rigel::analysis
