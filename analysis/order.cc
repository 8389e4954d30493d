#include "analysis/order.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "common/check.h"
#include "data/held.h"

namespace rigel::analysis {

using data::DataKind;
using data::Dataset;

std::vector<int64_t> SpaceExtent(const data::Dataset& data) {
  switch (data.kind) {
    case data::DataKind::kTriples:
    case data::DataKind::kGrid:
      return {data.rows, data.cols};
    case data::DataKind::kTokens:
      if (data.lines) return {data.count, data.docs, data.vocab};  // (t, d, w): access.h
      return {data.count};
    default:
      return {data.count};
  }
}

std::vector<int64_t> ElementCoords(const data::Dataset& data, int64_t e) {
  const int64_t l = data.Local(e);  // schedules that read coordinates hold every element
  switch (data.kind) {
    case data::DataKind::kTriples:
      return {data.ti[l], data.tj[l]};
    case data::DataKind::kGrid:
      return {e / data.cols, e % data.cols};
    case data::DataKind::kTokens:
      if (data.lines) return {e, data.token_doc[l], data.tokens[l]};
      return {e};
    default:
      return {e};
  }
}

int PlaceWorker(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& x, int64_t e) {
  const Schedule& s = loop.schedule;
  RIGEL_CHECK_MSG(cuts.kind == s.kind, "cuts made for another schedule");
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
      RIGEL_CHECK(cuts.axes.size() == 1);
      return static_cast<int>(cuts.axes[0].Part(e));
    case ScheduleKind::kModelParallel1D:
      RIGEL_CHECK(cuts.axes.size() == 1);
      return static_cast<int>(cuts.axes[0].Part(x[s.dim]));
    case ScheduleKind::kConflictFree2D:
      RIGEL_CHECK(cuts.axes.size() == 2);
      return static_cast<int>(cuts.axes[0].Part(x[s.local_dim]));
    case ScheduleKind::kWavefront:
      RIGEL_CHECK(cuts.axes.size() == x.size());
      return static_cast<int>(cuts.axes[0].Part(SkewedCoord(s, x, 0)));
    case ScheduleKind::kSerial:
      break;
  }
  return 0;
}

Placement Place(const LoopPlan& loop, const Cuts& cuts, const std::vector<int64_t>& x, int64_t e) {
  const Schedule& s = loop.schedule;
  Placement p;
  p.worker = PlaceWorker(loop, cuts, x, e);
  switch (s.kind) {
    case ScheduleKind::kDataParallel:
    case ScheduleKind::kModelParallel1D:
      break;
    case ScheduleKind::kConflictFree2D: {
      int64_t workers = cuts.workers;
      int64_t a = p.worker;
      int64_t b = cuts.axes[1].Part(x[s.rotate_dim]);
      p.step = ((b - a) % workers + workers) % workers;  // b = (a + t) mod P
      p.block = {a, b};
      break;
    }
    case ScheduleKind::kWavefront: {
      // Blocks of the skewed space; a block only depends on blocks with no
      // larger coordinate, which run on earlier steps.
      RIGEL_CHECK(cuts.axes.size() == x.size());
      for (size_t r = 0; r < x.size(); ++r) {
        p.block.push_back(cuts.axes[r].Part(SkewedCoord(s, x, r)));
      }
      p.step = std::accumulate(p.block.begin(), p.block.end(), int64_t{0});
      break;
    }
    case ScheduleKind::kSerial:
      break;
  }
  return p;
}

Placement Place(const LoopPlan& loop, int workers, const std::vector<int64_t>& extent,
                const std::vector<int64_t>& x, int64_t e, int64_t count) {
  return Place(loop, EqualCuts(loop, workers, extent, count), x, e);
}

StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, int workers,
                                             const data::Dataset& data) {
  std::vector<int64_t> extent = SpaceExtent(data);
  RIGEL_RETURN_IF_ERROR(CheckScheduleFits(loop, workers, extent.size()));
  return ScheduleOrder(loop, EqualCuts(loop, workers, extent, data.count), data);
}

ElementList::ElementList(std::vector<int64_t> list)
    : listed_(true), list_(std::make_shared<std::vector<int64_t>>(std::move(list))) {
  // A list of consecutive numbers is a range.
  const std::vector<int64_t>& l = *list_;
  bool consecutive = true;
  for (size_t k = 1; k < l.size() && consecutive; ++k) consecutive = l[k] == l[k - 1] + 1;
  if (consecutive) {
    first_ = l.empty() ? 0 : l[0];
    count_ = static_cast<int64_t>(l.size());
    listed_ = false;
    list_.reset();
  }
}

ElementList ElementList::Range(int64_t first, int64_t count) {
  ElementList l;
  l.first_ = first;
  l.count_ = count;
  return l;
}

void ElementList::push_back(int64_t e) {
  if (!listed_) {
    if (count_ == 0) first_ = e;
    if (e == first_ + count_) {
      ++count_;
      return;
    }
    auto list = std::make_shared<std::vector<int64_t>>();
    list->reserve(static_cast<size_t>(count_) + 1);
    for (int64_t k = 0; k < count_; ++k) list->push_back(first_ + k);
    list_ = std::move(list);
    listed_ = true;
  } else if (list_.use_count() > 1) {
    list_ = std::make_shared<std::vector<int64_t>>(*list_);
  }
  list_->push_back(e);
}

std::span<const int64_t> ElementList::Span(std::vector<int64_t>* scratch) const {
  if (listed_) return *list_;
  scratch->resize(static_cast<size_t>(count_));
  for (int64_t k = 0; k < count_; ++k) (*scratch)[static_cast<size_t>(k)] = first_ + k;
  return *scratch;
}

StatusOr<StepBlocks> MakeStepBlocks(const LoopPlan& loop, const Cuts& cuts,
                                    const data::Dataset& data) {
  RIGEL_RETURN_IF_ERROR(CheckCuts(loop, cuts, SpaceExtent(data), data.count));
  const bool lexicographic = loop.ordered || loop.schedule.kind == ScheduleKind::kWavefront;
  StepBlocks out;
  out.workers = cuts.workers;
  // Coordinates are only kept (and sorted by) where the order within a block
  // is lexicographic; otherwise element order, which bucketing keeps.
  std::vector<std::vector<std::vector<std::pair<std::vector<int64_t>, int64_t>>>> lex;
  // Data-parallel and serial loops are placed by element number alone: no
  // coordinates to read (and allocate) per element.
  const bool by_number = !lexicographic && (loop.schedule.kind == ScheduleKind::kDataParallel ||
                                            loop.schedule.kind == ScheduleKind::kSerial);
  auto place = [&](int64_t e) {
    std::vector<int64_t> x = by_number ? std::vector<int64_t>() : ElementCoords(data, e);
    Placement p = Place(loop, cuts, x, e);
    if (p.step >= static_cast<int64_t>(out.blocks.size())) {
      out.blocks.resize(p.step + 1, std::vector<ElementList>(cuts.workers));
      if (lexicographic) lex.resize(p.step + 1, decltype(lex)::value_type(cuts.workers));
    }
    if (lexicographic) {
      lex[p.step][p.worker].emplace_back(std::move(x), e);
    } else {
      out.blocks[p.step][p.worker].push_back(e);
    }
  };
  // Held in part and placed by coordinates, a worker holds only the
  // elements its own blocks run (exec/hold_plan.h HeldFilter): the other
  // workers' blocks stay empty here.
  if (data.in_part && !by_number) {
    data::ForEachHeld(data, [&](int64_t e, int64_t) { place(e); });
  } else {
    for (int64_t e = 0; e < data.count; ++e) place(e);
  }
  if (lexicographic) {
    for (size_t s = 0; s < lex.size(); ++s) {
      for (int w = 0; w < cuts.workers; ++w) {
        auto& v = lex[s][w];
        std::sort(v.begin(), v.end());
        for (auto& [x, e] : v) out.blocks[s][w].push_back(e);
      }
    }
  }
  // Steps with no element anywhere still count (a wavefront's empty
  // anti-diagonals, a 2-D step whose blocks are all empty): every schedule
  // has all its steps, so hand-offs and clocks line up on every worker.
  int64_t expected = 1;
  if (loop.schedule.kind == ScheduleKind::kConflictFree2D) {
    expected = cuts.workers;
  } else if (loop.schedule.kind == ScheduleKind::kWavefront) {
    for (const AxisCuts& a : cuts.axes) expected += a.parts() - 1;
  }
  if (out.steps() < expected) {
    out.blocks.resize(expected, std::vector<ElementList>(cuts.workers));
  }
  return out;
}

StatusOr<std::vector<int64_t>> ScheduleOrder(const LoopPlan& loop, const Cuts& cuts,
                                             const data::Dataset& data) {
  RIGEL_ASSIGN_OR_RETURN(StepBlocks b, MakeStepBlocks(loop, cuts, data));
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(data.count));
  for (const auto& step : b.blocks) {
    for (const auto& block : step) order.insert(order.end(), block.begin(), block.end());
  }
  return order;
}

}  // namespace rigel::analysis
