#include "analysis/step_plan.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>

#include "analysis/batch.h"
#include "analysis/relaxed.h"
#include "common/key_sort.h"

namespace rigel::analysis {

namespace {

// The most parts a long step is cut into (RowPlan::part).
constexpr int64_t kPartsPerStep = 8;

void SortUnique(std::vector<int64_t>* v) {
  std::vector<int64_t> tmp;
  SortKeys(v, &tmp);
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

std::vector<int64_t> Intersect(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<int64_t> Minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Step k takes the k-th stretch of batch * workers elements of the serial
// order (the blocks of every worker, in worker order), each worker its own
// batch of it: the updates one step sums are those the serial loop makes
// next to each other, so the run ends on the same elements as the serial one.
StepLists DenseBatches(const PlanInput& in, const analysis::StepBlocks& blocks, int64_t batch) {
  const auto& step = blocks.blocks[0];
  // Blocks cut by count follow each other: the order is then one range.
  bool range = true;
  int64_t first = -1, total = 0;
  for (int v = 0; v < in.workers; ++v) {
    const ElementList& b = step[static_cast<size_t>(v)];
    if (b.empty()) continue;
    if (first < 0) first = b[0];
    range = range && b.is_range() && b[0] == first + total;
    total += static_cast<int64_t>(b.size());
  }
  const int64_t stride = batch * in.workers;
  const int64_t count = std::max<int64_t>(1, (total + stride - 1) / stride);
  if (range) {
    first = std::max<int64_t>(first, 0);
    return StepLists::Strided(first, first + total, in.rank * batch, batch, stride, count);
  }
  std::vector<int64_t> order;
  for (int v = 0; v < in.workers; ++v) {
    order.insert(order.end(), step[static_cast<size_t>(v)].begin(),
                 step[static_cast<size_t>(v)].end());
  }
  std::vector<ElementList> steps(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t lo = std::min(total, k * stride + in.rank * batch);
    int64_t hi = std::min(total, lo + batch);
    steps[static_cast<size_t>(k)] = std::vector<int64_t>(order.begin() + lo, order.begin() + hi);
  }
  return StepLists(std::move(steps));
}

// This worker's block cut into batches; as many as the busiest worker needs.
StepLists SparseBatches(const PlanInput& in, const analysis::StepBlocks& blocks, int64_t batch) {
  int64_t most = 0;
  for (int v = 0; v < in.workers; ++v) {
    most = std::max<int64_t>(most, static_cast<int64_t>(blocks.blocks[0][v].size()));
  }
  const analysis::ElementList& mine = blocks.blocks[0][in.rank];
  const int64_t count = std::max<int64_t>(1, (most + batch - 1) / batch);
  const int64_t n = static_cast<int64_t>(mine.size());
  if (mine.is_range()) {
    const int64_t first = n > 0 ? mine[0] : 0;
    return StepLists::Strided(first, first + n, 0, batch, batch, count);
  }
  std::vector<ElementList> steps(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t lo = std::min<int64_t>(k * batch, n);
    int64_t hi = std::min<int64_t>(lo + batch, n);
    steps[static_cast<size_t>(k)] = std::vector<int64_t>(mine.begin() + lo, mine.begin() + hi);
  }
  return StepLists(std::move(steps));
}

// Rows other workers' elements touch, and the rows of every block, sliced
// once for all parameters on first need.
class OtherRows {
 public:
  OtherRows(const PlanInput& in, const analysis::StepBlocks& blocks, const RowsFn& rows)
      : in_(in), blocks_(blocks), rows_(rows) {}

  StatusOr<const std::vector<std::vector<int64_t>>*> Theirs() {
    if (!theirs_) {
      std::vector<int64_t> elements;
      for (const auto& step : blocks_.blocks) {
        for (int v = 0; v < in_.workers; ++v) {
          if (v != in_.rank) elements.insert(elements.end(), step[v].begin(), step[v].end());
        }
      }
      RIGEL_ASSIGN_OR_RETURN(theirs_, rows_(elements));
      theirs_->resize(static_cast<size_t>(in_.params));
    }
    return &*theirs_;
  }

  // by_block[t][a][p]: rows of parameter p the block of worker a touches at step t.
  StatusOr<const std::vector<std::vector<std::vector<std::vector<int64_t>>>>*> ByBlock() {
    if (by_block_.empty()) {
      by_block_.resize(blocks_.steps());
      for (int64_t t = 0; t < blocks_.steps(); ++t) {
        for (int a = 0; a < in_.workers; ++a) {
          std::vector<int64_t> scratch;
          RIGEL_ASSIGN_OR_RETURN(auto k, rows_(blocks_.blocks[t][a].Span(&scratch)));
          k.resize(static_cast<size_t>(in_.params));
          by_block_[t].push_back(std::move(k));
        }
      }
    }
    return &by_block_;
  }

 private:
  const PlanInput& in_;
  const analysis::StepBlocks& blocks_;
  const RowsFn& rows_;
  std::optional<std::vector<std::vector<int64_t>>> theirs_;
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> by_block_;
};

// Block column q: the rows of `p` the blocks (*, q) touch; block (a, t) is in
// column (a + t) mod P.
StatusOr<std::vector<std::vector<int64_t>>> Columns(const PlanInput& in, int p, OtherRows& others) {
  RIGEL_ASSIGN_OR_RETURN(const auto* by_block, others.ByBlock());
  std::vector<std::vector<int64_t>> columns(in.workers);
  for (size_t t = 0; t < by_block->size(); ++t) {
    for (int a = 0; a < in.workers; ++a) {
      const std::vector<int64_t>& k = (*by_block)[t][a][p];
      std::vector<int64_t>& column = columns[(a + t) % static_cast<size_t>(in.workers)];
      column.insert(column.end(), k.begin(), k.end());
    }
  }
  for (auto& c : columns) SortUnique(&c);
  return columns;
}

Status PlanParamRows(const PlanInput& in, const std::vector<int64_t>& mine, OtherRows& others,
                     ParamRows* r) {
  const PlanParam& pp = r->param;
  const std::string name =
      "parameter " + std::to_string(pp.index) + ": strategy " + analysis::StrategyName(pp.strategy);
  switch (pp.strategy) {
    case Strategy::kLocal: {
      // Rows other workers touch too exist only where blocks of several
      // workers share rows (a wavefront's boundaries); 1-D and 2-D partitions
      // were proved disjoint, so only those are scanned.
      if (in.kind == ScheduleKind::kWavefront && in.workers > 1) {
        RIGEL_ASSIGN_OR_RETURN(const auto* theirs, others.Theirs());
        r->shared = Intersect(mine, (*theirs)[pp.index]);
      }
      r->held = Minus(mine, r->shared);
      return Status::Ok();
    }
    case Strategy::kRotate: {
      if (in.kind != ScheduleKind::kConflictFree2D) {
        return Internal(name + " outside a conflict_free_2d schedule");
      }
      if (in.columns != nullptr && static_cast<size_t>(pp.index) < in.columns->size()) {
        r->columns = (*in.columns)[static_cast<size_t>(pp.index)];
        return Status::Ok();
      }
      RIGEL_ASSIGN_OR_RETURN(r->columns, Columns(in, pp.index, others));
      return Status::Ok();
    }
    case Strategy::kReplicated:
      if (pp.written) return Internal(name + " for a parameter the loop writes");
      r->read = mine;
      return Status::Ok();
    case Strategy::kPs:
    case Strategy::kAllreduce:
      return Status::Ok();
    case Strategy::kAccumulator:
    case Strategy::kReduce:  // Runner::PlanFor gives its Mechanism instead
      break;
  }
  return Internal(name + " for a parameter");
}

// The rows every element of `steps` touches, by parameter, sorted and
// distinct: sliced a piece of about 64k elements at a time, each piece's
// rows merged in, so that the elements and their keys are never all listed
// at once (a 2-D MF worker's share: 1.8M elements).
StatusOr<std::vector<std::vector<int64_t>>> RowsOfSteps(const StepLists& steps,
                                                        const RowsFn& rows) {
  constexpr size_t kPiece = size_t{1} << 16;
  std::vector<std::vector<int64_t>> out, merged(1);
  std::vector<int64_t> piece, scratch;
  auto add = [&]() -> Status {
    if (piece.empty()) return Status::Ok();
    RIGEL_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> got, rows(piece));
    piece.clear();
    if (got.size() > out.size()) out.resize(got.size());
    for (size_t p = 0; p < got.size(); ++p) {
      SortUnique(&got[p]);
      // Every row (a parameter accessed whole) comes with every piece.
      if (out[p].empty() || got[p] == out[p]) {
        if (out[p].empty()) out[p].swap(got[p]);
        continue;
      }
      merged[0].clear();
      std::set_union(out[p].begin(), out[p].end(), got[p].begin(), got[p].end(),
                     std::back_inserter(merged[0]));
      out[p].swap(merged[0]);
    }
    return Status::Ok();
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    const std::span<const int64_t> step = steps.Step(s, &scratch);
    for (size_t at = 0; at < step.size(); at += kPiece) {
      const size_t n = std::min(kPiece, step.size() - at);
      if (piece.size() + n > kPiece) RIGEL_RETURN_IF_ERROR(add());
      piece.insert(piece.end(), step.begin() + static_cast<std::ptrdiff_t>(at),
                   step.begin() + static_cast<std::ptrdiff_t>(at + n));
    }
  }
  RIGEL_RETURN_IF_ERROR(add());
  return out;
}

// Parameters whose rows go through the servers or a collective every step.
bool SyncedPerStep(const PlanParam& pp) {
  return pp.strategy == Strategy::kPs || pp.strategy == Strategy::kAllreduce;
}

// The loop reads or writes such a parameter whole.
bool DenseLoop(const PlanInput& in) {
  return std::any_of(in.loop_params.begin(), in.loop_params.end(),
                     [](const PlanParam& pp) { return pp.whole && SyncedPerStep(pp); });
}

}  // namespace

int64_t StepBatch(const PlanInput& in) {
  const bool batched = std::any_of(in.loop_params.begin(), in.loop_params.end(), SyncedPerStep);
  if (in.kind != ScheduleKind::kDataParallel || !batched) return 0;
  if (in.batch > 0) return in.batch;
  // Only sums go through the servers, and nothing in the loop reads them:
  // one step (the worker's block, its sums pushed once after it) adds what
  // any cut into batches would, with one exchange instead of one per batch
  // (kmeans' assignment loop: 0.009 s per epoch batched, 0.005 s not).
  const bool only_sums =
      std::all_of(in.loop_params.begin(), in.loop_params.end(),
                  [](const PlanParam& pp) { return !SyncedPerStep(pp) || (pp.sum && !pp.whole); });
  if (only_sums) return 0;
  const bool cached = std::any_of(in.loop_params.begin(), in.loop_params.end(),
                                  [](const PlanParam& pp) { return pp.cached; });
  if (cached) return analysis::ChooseRelaxed(in.workers, in.hot_share).batch;
  // Every element of a dense update conflicts with every other: the merged
  // deltas of a mini-batch act as one step batch * workers times as long.
  return DenseLoop(in) ? analysis::kDenseBatch : analysis::SparseBatch(in.workers, in.hot_share);
}

std::vector<int64_t> SampledElements(const analysis::StepBlocks& blocks, int64_t limit, int rank) {
  std::vector<int64_t> out;
  size_t total = 0;
  for (const auto& step : blocks.blocks) {
    for (const auto& block : step) total += block.size();
  }
  if (total == 0 || limit <= 0) return out;
  // Every stride-th element in (step, worker) order, walked in place: the
  // blocks can hold every element of a large data set.
  const size_t stride = std::max<size_t>(1, total / static_cast<size_t>(limit));
  size_t position = 0;
  int64_t taken = 0;
  for (const auto& step : blocks.blocks) {
    for (size_t w = 0; w < step.size(); ++w) {
      const auto& block = step[w];
      size_t k = (stride - position % stride) % stride;  // the first sampled index in block
      for (; k < block.size() && taken < limit; k += stride) {
        ++taken;
        if (rank < 0 || static_cast<size_t>(rank) == w) out.push_back(block[k]);
      }
      position += block.size();
    }
  }
  return out;
}

namespace {

// The parameters a sample counts: those `want` selects and the written,
// non-sum ps parameters whose largest count is `most` (with a cached scalar
// one's doubled: analysis/relaxed.h).
struct Counted {
  std::vector<int> params;
  std::vector<bool> shares, scaled;
  std::vector<int64_t> weight;
};

Counted CountedParams(const PlanInput& in, const std::vector<bool>& want) {
  Counted c;
  c.shares.assign(static_cast<size_t>(in.params), false);
  c.scaled.assign(static_cast<size_t>(in.params), false);
  c.weight.assign(static_cast<size_t>(in.params), 1);
  for (const PlanParam& pp : in.loop_params) {
    const size_t p = static_cast<size_t>(pp.index);
    // A sum is never read: how often elements share its rows cannot make
    // an update stale, so it does not count towards the hot share.
    c.shares[p] = pp.strategy == Strategy::kPs && pp.written && !pp.sum;
    if (pp.cached && pp.scalar) c.weight[p] = 2;
    c.scaled[p] = pp.scaled;
    if (c.shares[p] || (p < want.size() && want[p])) c.params.push_back(pp.index);
  }
  return c;
}

}  // namespace

StatusOr<RowSample> SampleRowsOf(const PlanInput& in, const analysis::StepBlocks& blocks,
                                 const RowsFn& rows, int64_t limit, const std::vector<bool>& want,
                                 int rank) {
  RowSample out;
  out.counts.resize(static_cast<size_t>(in.params));
  const Counted c = CountedParams(in, want);
  if (c.params.empty()) return out;
  std::vector<std::unordered_map<int64_t, int64_t>> count(c.params.size());
  for (const int64_t e : SampledElements(blocks, limit, rank)) {
    ++out.sampled;
    RIGEL_ASSIGN_OR_RETURN(auto touched, rows(std::span<const int64_t>(&e, 1)));
    for (size_t i = 0; i < c.params.size(); ++i) {
      const size_t p = static_cast<size_t>(c.params[i]);
      if (p >= touched.size()) continue;
      for (int64_t row : touched[p]) ++count[i][row];
    }
  }
  for (size_t i = 0; i < c.params.size(); ++i) {
    out.counts[static_cast<size_t>(c.params[i])].assign(count[i].begin(), count[i].end());
  }
  return out;
}

RowSample MergeRowSamples(const PlanInput& in, const std::vector<bool>& want,
                          const std::vector<RowSample>& parts) {
  RowSample out;
  out.counts.resize(static_cast<size_t>(in.params));
  const Counted c = CountedParams(in, want);
  for (const RowSample& part : parts) out.sampled += part.sampled;
  for (const int pi : c.params) {
    const size_t p = static_cast<size_t>(pi);
    std::vector<std::pair<int64_t, int64_t>> all;
    for (const RowSample& part : parts) {
      if (p < part.counts.size())
        all.insert(all.end(), part.counts[p].begin(), part.counts[p].end());
    }
    std::sort(all.begin(), all.end());
    std::vector<std::pair<int64_t, int64_t>> summed;
    for (const auto& [row, n] : all) {
      if (!summed.empty() && summed.back().first == row) {
        summed.back().second += n;
      } else {
        summed.emplace_back(row, n);
      }
    }
    if (c.shares[p]) {
      const double scaled_from = c.scaled[p]
                                     ? ScaledShare(in.workers) * static_cast<double>(out.sampled)
                                     : std::numeric_limits<double>::infinity();
      for (const auto& rc : summed) {
        const int64_t n = rc.second * c.weight[p];
        if (static_cast<double>(n) < scaled_from) out.most = std::max(out.most, n);
      }
    }
    if (p < want.size() && want[p]) out.counts[p] = std::move(summed);
  }
  return out;
}

StatusOr<RowSample> SampleRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                               const RowsFn& rows, int64_t limit, const std::vector<bool>& want) {
  RIGEL_ASSIGN_OR_RETURN(RowSample all, SampleRowsOf(in, blocks, rows, limit, want, -1));
  return MergeRowSamples(in, want, {std::move(all)});
}

double HotShareOf(const RowSample& sample) {
  if (sample.sampled == 0) return 0.0;
  return static_cast<double>(sample.most) / static_cast<double>(sample.sampled);
}

StatusOr<double> HotShare(const PlanInput& in, const analysis::StepBlocks& blocks,
                          const RowsFn& rows) {
  RIGEL_ASSIGN_OR_RETURN(RowSample s, SampleRows(in, blocks, rows, analysis::kBatchSample, {}));
  return HotShareOf(s);
}

StepLists PlanStepLists(const PlanInput& in, const analysis::StepBlocks& blocks) {
  const int64_t batch = StepBatch(in);
  if (batch > 0) {
    return DenseLoop(in) ? DenseBatches(in, blocks, batch) : SparseBatches(in, blocks, batch);
  }
  std::vector<ElementList> steps;
  for (const auto& step : blocks.blocks) steps.push_back(step[in.rank]);
  return StepLists(std::move(steps));
}

std::vector<std::vector<int64_t>> PlanSteps(const PlanInput& in,
                                            const analysis::StepBlocks& blocks) {
  return PlanStepLists(in, blocks).ToVectors();
}

StatusOr<RowPlan> PlanRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                           const std::vector<std::vector<int64_t>>& steps, const RowsFn& rows) {
  return PlanRows(in, blocks, StepLists(steps), rows);
}

StatusOr<RowPlan> PlanRows(const PlanInput& in, const analysis::StepBlocks& blocks,
                           const StepLists& steps, const RowsFn& rows) {
  // This worker's rows are sliced only when a strategy lists them: slicing
  // every element of a large loop costs about as much as running it.
  const bool exchanged = in.my_rows != nullptr && in.their_rows != nullptr;
  auto single_writer = [&](const PlanParam& pp) {
    return pp.cached && pp.written && in.static_keys && in.workers > 1 &&
           (in.holds_all || exchanged);
  };
  const bool need_mine =
      std::any_of(in.loop_params.begin(), in.loop_params.end(), [&](const PlanParam& pp) {
        return pp.strategy == Strategy::kLocal || pp.strategy == Strategy::kReplicated ||
               single_writer(pp);
      });
  std::vector<std::vector<int64_t>> my_rows;
  if (need_mine && exchanged) {
    my_rows = *in.my_rows;
  } else if (need_mine) {
    RIGEL_ASSIGN_OR_RETURN(my_rows, RowsOfSteps(steps, rows));
  }
  my_rows.resize(static_cast<size_t>(in.params));
  OtherRows others(in, blocks, rows);
  RowPlan out;
  out.params.resize(static_cast<size_t>(in.params));
  bool synchronous = false;  // some row synced per step must see every earlier clock
  for (const PlanParam& pp : in.loop_params) {
    ParamRows& r = out.params[pp.index];
    r.used = true;
    r.param = pp;
    RIGEL_RETURN_IF_ERROR(PlanParamRows(in, my_rows[pp.index], others, &r));
    if (pp.cached) {
      // Its cache exchanges with the servers on its own, with no clocks.
      out.step_keys |= pp.partial;
      if (single_writer(pp) && exchanged) {
        const size_t p = static_cast<size_t>(pp.index);
        r.single = Minus(my_rows[p],
                         p < in.their_rows->size() ? (*in.their_rows)[p] : std::vector<int64_t>{});
      } else if (single_writer(pp)) {
        RIGEL_ASSIGN_OR_RETURN(const auto* theirs, others.Theirs());
        r.single = Minus(my_rows[pp.index], (*theirs)[pp.index]);
      }
      continue;
    }
    bool ps = pp.strategy == Strategy::kPs;
    if (ps || !r.shared.empty()) {
      out.step_sync = true;
      synchronous |= !ps || !pp.relaxed;
    }
  }
  out.step_keys |= out.step_sync;
  // A block of a 2-D, 1-D or wavefront schedule can hold a large share of
  // the loop: relaxed rows exchanged only between blocks would lag by whole
  // blocks of the other workers' updates (LDA's nk, on 3 workers, ended its
  // log-likelihood 3% below serial). Such steps are cut into parts, between
  // which the caches exchange.
  const bool cached = std::any_of(in.loop_params.begin(), in.loop_params.end(),
                                  [](const PlanParam& pp) { return pp.cached; });
  const bool partial = std::any_of(in.loop_params.begin(), in.loop_params.end(),
                                   [](const PlanParam& pp) { return pp.partial; });
  if (cached && !partial && in.kind != ScheduleKind::kDataParallel) {
    size_t longest = 0;
    for (size_t k = 0; k < steps.size(); ++k) longest = std::max(longest, steps.StepSize(k));
    out.part =
        std::max<int64_t>(analysis::kMaxCachedBatch, static_cast<int64_t>(longest) / kPartsPerStep);
  }
  out.prefetch = out.step_sync && !synchronous && in.staleness >= 1;
  return out;
}

std::vector<std::vector<int64_t>> ServerRowsAt(const RowPlan& plan,
                                               std::vector<std::vector<int64_t>> touched) {
  std::vector<std::vector<int64_t>> out(plan.params.size());
  touched.resize(plan.params.size());
  for (size_t p = 0; p < plan.params.size(); ++p) {
    const ParamRows& r = plan.params[p];
    if (!r.used) continue;
    if (r.param.strategy == Strategy::kPs) {
      out[p] = std::move(touched[p]);
    } else if (!r.shared.empty()) {
      out[p] = Intersect(touched[p], r.shared);
    }
  }
  return out;
}

}  // namespace rigel::analysis
