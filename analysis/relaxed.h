// Rigel's choice of how relaxed parameters are kept when the job leaves it
// to Rigel (`--staleness auto`, `--push-bound 0`, `--merge-every 0`,
// `--batch 0`, `--scaled-merges on`; DSL.md versions 3 and 4), from what
// each worker measures of the loop on its first run: the hot share s
// (analysis/batch.h, the share of a scalar row counted twice: every update
// of a width-1 row moves it along one axis, so stale deltas overshoot it
// sooner than a vector row's), and how many sampled elements touch each
// row. With W workers and U = kRowUpdatesTwoWorkers on 2 workers,
// kRowUpdatesPerWorker x ln(W / (W - 2)) from 3 on:
//
//   scaled rows the rows at least ScaledShare(W) = U / kScaledBatch of the
//               sampled elements write (on 2 workers, U of 3: 0.55) are merged
//               scaled: a server adds such a delta times 1 / (1 + L), L the
//               merges by other workers the pusher's copy lacked, and the
//               collectives merge such hot rows' mean. The W deltas of a
//               row every worker writes, each taken from the same stale
//               value over about s x B updates that contract its error by
//               c, contract it by W c - (W - 1) summed, which exceeds 1 in
//               size (diverges) from 3 workers on once c < (W - 2) / W,
//               and on 2 workers oscillates (2c - 1) as c nears 0; scaled,
//               they average, which contracts it by c at any W.
//               Rows fewer elements write are added whole: scaling every
//               row cost an FM on generated data (rows still growing from
//               their initial values) 4.4 points on 2 workers and 11.8 on
//               8, where the rule costs it under 1.5.
//   mini-batch  B = the largest power of two <= U / s, s leaving out the
//               scaled rows (so B >= kScaledBatch from 3 workers on, and
//               kMaxCachedBatch on 2), between kMinBatch and kMaxCachedBatch.
//               sparse_lr and fm on a9a on 2 workers went from B = 256 to
//               512, within 0.3 points of serial in 3 runs each. Measured at default
//               flags on the 2-core VM, 2 servers, 3 runs each: fm on a9a
//               at 8 workers went from test accuracy 0.61-0.82 (a training
//               loss of 9e27) to within 0.6 points of serial's 0.843;
//               sparse_lr and svm from 5.9 and 11 points below serial to
//               within 0.7. Before rows were scaled, sparse_lr on a9a on 2
//               workers at B = 512 dipped to 0.837-0.839 in some epochs of
//               runs under load (serial 0.849; once 0.827 in CI), at 256 no
//               lower than 0.845 in six runs; word2vec's vector rows keep their
//               held-out loss at 512 no worse than at 256, which costs 0.83x
//               instead of 0.68x of the serial epoch. The cap matters where
//               no row is hot but every row is shared: a DeepWalk on a
//               2000-node graph ended its held-out loss 6.3% above serial at
//               B = 4096 and 1.6% at 512.
//   staleness   N = 1: a cached row is refreshed once other workers merged
//               it twice.
//   push bound  P = kPushBound on 2 workers, the largest power of two <=
//               kPushBound / (2 (W - 1)) from 3 on (16 on 4 workers, 8 on
//               8): a row a step touches more often is merged every step, a
//               rarer one once it has P. While P updates of a row wait on
//               each of the other W - 1 workers, every copy lacks up to
//               (W - 1) P of them. word2vec's held-out loss on 300k
//               Gutenberg words at 8 workers and P = 128 was 2.4x serial's;
//               at P = 16 and B = 64, +0.6% and +4.5%; at P = 8, +0.1% and
//               -0.6%. On 2 workers a larger P moved fewer bytes for
//               word2vec (256: 53 MB per epoch, 128: 90 MB) but let a
//               GloVe-style factorization whose rows are shared by few
//               elements drift 3% from serial (128: 0.2%).
//   push age    none (--push-age sets one).
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
inline constexpr int64_t kScaledBatch = 64;
// Elements each worker samples on a loop's first run to count its rows.
inline constexpr int64_t kHotSample = 4096;

struct RelaxedChoice {
  int64_t batch = 0;
  int staleness = 1;
  int64_t push_bound = 1;
  int64_t push_age = 0;  // mini-batches an update may wait unpushed (0: no bound)
  int64_t merge_every = 1;
};

// The rule above for `workers` workers and hot share `hot_share` (the
// scaled rows left out).
RelaxedChoice ChooseRelaxed(int workers, double hot_share);

// The push bound of the rule above for `workers` workers.
int64_t PushBoundFor(int workers);

// The hot rows of one parameter of row width `width`: `count` lists (row,
// sampled elements touching it) for a sample of `sampled` elements; the
// others as chosen. Sorted; empty when the collectives would not pay.
std::vector<int64_t> ChooseHotRows(const std::vector<std::pair<int64_t, int64_t>>& count,
                                   int64_t sampled, int64_t width, int workers,
                                   const RelaxedChoice& c);

// The share of elements (a scalar row's counted twice) from which a row's
// merges are scaled on `workers` workers: U / kScaledBatch (on 2 workers,
// U of 3).
double ScaledShare(int workers);

// The rows of one parameter of row width `width` whose merges are scaled:
// those at least `share` of the `sampled` elements write (`count` as for
// ChooseHotRows). Sorted.
std::vector<int64_t> ChooseScaledRows(const std::vector<std::pair<int64_t, int64_t>>& count,
                                      int64_t sampled, int64_t width, double share);

// The rule in words for `rigel explain`.
std::string RelaxedRule();

}  // namespace rigel::analysis

#endif  // RIGEL_ANALYSIS_RELAXED_H_
