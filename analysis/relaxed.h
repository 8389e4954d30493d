// Rigel's choice of how relaxed parameters are kept when the job leaves it
// to Rigel (`--staleness auto`, `--push-bound 0`, `--merge-every 0`,
// `--batch 0`; DSL.md version 3, "bounded staleness per row"), from what
// each worker measures of the loop on its first run: the hot share s
// (analysis/batch.h, the share of a scalar row counted twice: every update
// of a width-1 row moves it along one axis, so summed stale deltas overshoot
// it sooner than a vector row's), and how many sampled elements touch each
// row. With W workers:
//
//   mini-batch  B = the largest power of two <= U(W) / s, between kMinBatch
//               and kMaxCachedBatch, where U(2) = kRowUpdatesTwoWorkers and
//               U(W) = kRowUpdatesPerWorker x ln(W / (W - 2)) from 3
//               workers on. The W workers' deltas of a row, each computed
//               from the same stale value over about s x B updates, are
//               summed; for a row whose updates contract its error by c over
//               that stretch, the merged step contracts it by W c - (W - 1),
//               which can exceed 1 in size (diverge) only from 3 workers on,
//               and stays below it while c > (W - 2) / W, i.e. while the
//               updates per stretch stay below ln(W / (W - 2)) over the
//               row's curvature. On 3 workers sparse_lr on a9a oscillated
//               at B = 128, and the fm of tests/e2e/programs at 64 (test
//               accuracy 0.814 in one of two runs; 0.838-0.841 at 32; serial
//               0.843). On 2 workers sparse_lr on a9a (scalar rows) at
//               B = 512 dipped to 0.837-0.839 in some epochs of runs under
//               load (serial 0.849; once 0.827 in CI), at 256 no lower than
//               0.845 in six runs; word2vec's vector rows keep its held-out
//               loss at 512, where 256 cost 0.83x instead of 0.68x of the
//               serial epoch and 1.56x its CPU. The cap
//               matters where no row is hot but every row is shared: a
//               DeepWalk on a 2000-node graph ended its held-out loss 6.3%
//               above serial at B = 4096 and 1.6% at 512.
//   staleness   N = 1: a cached row is refreshed once other workers merged
//               it twice.
//   push bound  P = kPushBound updates: a row a step touches more often is
//               merged every step, a rarer one once it has P. A larger P
//               moved fewer bytes for word2vec (256: 53 MB per epoch, 128:
//               90 MB) but let a GloVe-style factorization whose rows are
//               shared by few elements drift 3% from serial (128: 0.2%).
//   hot rows    a row goes to the collectives (merged every step, k = 1)
//               when that moves fewer bytes than the servers would: through
//               the servers it costs, per step, min(1, c / P) pushes of
//               (8 + 4w) bytes and (W - 1) / (N + 1) times as many refreshes
//               of (16 + 4w), c being the elements of a step that touch it;
//               through a collective 4w bytes per merge. And only when the
//               rows so chosen carry at least half of the parameter's bytes.
//               Each worker then measures on that first run whether a
//               collective call costs at most a quarter of a step's compute
//               (worker/sync/cached_rows.cc): every merge is a call that
//               each worker waits for.
//
// `rigel explain` states the rule (RelaxedRule). Pure functions; thread-safe.
#ifndef RIGEL_ANALYSIS_RELAXED_H_
#define RIGEL_ANALYSIS_RELAXED_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rigel::analysis {

inline constexpr double kRowUpdatesTwoWorkers = 512;
inline constexpr double kRowUpdatesPerWorker = 32;
inline constexpr int64_t kMaxCachedBatch = 512;
inline constexpr int64_t kPushBound = 128;
// Elements each worker samples on a loop's first run to count its rows.
inline constexpr int64_t kHotSample = 4096;

struct RelaxedChoice {
  int64_t batch = 0;
  int staleness = 1;
  int64_t push_bound = 1;
  int64_t merge_every = 1;
};

// The rule above for `workers` workers and hot share `hot_share`.
RelaxedChoice ChooseRelaxed(int workers, double hot_share);

// The hot rows of one parameter of row width `width`: `count` lists (row,
// sampled elements touching it) for a sample of `sampled` elements; the
// others as chosen. Sorted; empty when the collectives would not pay.
std::vector<int64_t> ChooseHotRows(const std::vector<std::pair<int64_t, int64_t>>& count,
                                   int64_t sampled, int64_t width, int workers,
                                   const RelaxedChoice& c);

// The rule in words for `rigel explain`.
std::string RelaxedRule();

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_RELAXED_H_
