// The mini-batch of a data-parallel loop whose written parameters go through
// the parameter servers or an all-reduce, when the job leaves it to Rigel
// (`--batch 0`, the default). Each worker runs its mini-batch on its own copy
// and the batch's deltas are merged, so a row that many elements of a batch
// update moves by up to batch x workers updates computed from one stale
// value; when that number is large the merged step overshoots, and on real
// data where a few rows are shared by most elements (a9a's common features,
// word2vec's frequent words) training diverges. The rule bounds it:
//
//   batch = the largest power of two <= kRowUpdatesPerStep / (workers * s),
//           clamped to [kMinBatch, kMaxBatch],
//
// where s, the hot share, is the largest fraction of the loop's elements
// that write one row of a `ps` parameter, measured by the worker on
// kBatchSample elements spread over the loop's data. A loop that reads or
// writes a parameter whole takes kDenseBatch. `rigel explain` states the rule
// (BatchRule); docs/distributed.md gives the measurements behind the
// constants. Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_BATCH_H_
#define RIGEL_ANALYSIS_BATCH_H_

#include <cstdint>
#include <string>

namespace rigel::analysis {

inline constexpr int64_t kDenseBatch = 32;
inline constexpr int64_t kMinBatch = 16;
inline constexpr int64_t kMaxBatch = 512;
inline constexpr double kRowUpdatesPerStep = 64;
inline constexpr int64_t kBatchSample = 1024;

// The rule above for `workers` workers and hot share `hot_share` (0 when no
// row is shared: kMaxBatch).
int64_t SparseBatch(int workers, double hot_share);

// The rule in words for `rigel explain`, naming the parameters it measures
// (e.g. "w").
std::string BatchRule(const std::string& params);

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_BATCH_H_
