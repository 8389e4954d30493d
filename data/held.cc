#include "data/held.h"

#include <algorithm>
#include <bit>
#include <string>

namespace rigel::data {

namespace {

// A data set of `d`'s kind, file and shape with no elements, held in part.
Dataset EmptyHeldLike(const Dataset& d) {
  Dataset p = EmptyLike(d);
  p.shape_only = false;
  p.digest = d.digest;
  p.count = d.count;
  p.in_part = true;
  p.held_span = 0;  // nothing held until SetFastRange
  if (d.kind == DataKind::kLibsvm) p.feat_offset.push_back(0);
  return p;
}

// Adds a range of `count` elements from global `first` at the end of `p`'s
// columns, joining the previous one when it continues it.
void AddRange(int64_t first, int64_t count, Dataset* p) {
  if (count <= 0) return;
  int64_t local = 0;
  if (!p->held.empty()) {
    Dataset::HeldRange& last = p->held.back();
    local = last.local + last.count;
    if (last.first + last.count == first) {
      last.count += count;
      return;
    }
  }
  p->held.push_back({first, count, local});
}

// Reserves `n` elements in `p`'s columns, with `d`'s features per element
// for libsvm (its average).
void ReserveColumnsLike(const Dataset& d, int64_t n, Dataset* p) {
  const size_t un = static_cast<size_t>(n);
  switch (d.kind) {
    case DataKind::kTriples:
      p->ti.reserve(un);
      p->tj.reserve(un);
      p->tv.reserve(un);
      break;
    case DataKind::kLibsvm: {
      const int64_t held = std::max<int64_t>(1, d.HeldCount());
      const size_t feats = static_cast<size_t>(static_cast<double>(d.feat_index.size()) *
                                               static_cast<double>(n) / held);
      p->labels.reserve(un);
      p->feat_offset.reserve(un + 1);
      p->feat_index.reserve(feats);
      p->feat_value.reserve(feats);
      break;
    }
    case DataKind::kDenseCsv:
      p->labels.reserve(un);
      p->x.reserve(un * static_cast<size_t>(std::max<int64_t>(d.dim, 0)));
      break;
    case DataKind::kTokens:
      p->tokens.reserve(un);
      if (d.lines) p->token_doc.reserve(un);
      break;
    default:
      break;
  }
}

bool HasColumns(DataKind kind) { return kind != DataKind::kGrid && kind != DataKind::kRange; }

}  // namespace

// Local checks the largest range first.
void SetFastRange(Dataset* p) {
  p->held_first = 0;
  p->held_span = 0;
  p->held_local = 0;
  if (p->held_masked) {
    // Every word of the whole data set, so that Local finds any element's.
    p->held_mask.resize((static_cast<size_t>(std::max<int64_t>(p->count, 0)) + 63) / 64);
    p->held_mask.shrink_to_fit();
    p->held_rank.assign(p->held_mask.size(), 0);
    int64_t n = 0;
    for (size_t w = 0; w < p->held_mask.size(); ++w) {
      p->held_rank[w] = n;
      n += std::popcount(p->held_mask[w]);
    }
    return;
  }
  for (const Dataset::HeldRange& r : p->held) {
    if (r.count > p->held_span) {
      p->held_first = r.first;
      p->held_span = r.count;
      p->held_local = r.local;
    }
  }
}

Dataset HoldingNothing(const Dataset& d) { return EmptyHeldLike(d); }

Dataset HoldingNothing(Dataset&& d) {
  Dataset p = std::move(d);
  p.shape_only = false;
  p.warnings.clear();
  p.in_part = true;
  p.held.clear();
  p.held_masked = false;
  p.held_mask.clear();
  p.held_rank.clear();
  p.held_first = 0;
  p.held_span = 0;  // nothing held until SetFastRange
  p.held_local = 0;
  if (p.kind == DataKind::kLibsvm && p.feat_offset.empty()) p.feat_offset.push_back(0);
  return p;
}

void UseMask(Dataset* d) {
  d->held.clear();
  d->held_masked = true;
  d->held_mask.clear();
  d->held_rank.clear();
  d->held_span = 0;
}

void MarkHeld(int64_t e, Dataset* d) {
  const size_t w = static_cast<size_t>(e) >> 6;
  if (w >= d->held_mask.size()) d->held_mask.resize(w + 1, 0);
  d->held_mask[w] |= uint64_t{1} << (e & 63);
}

void AppendColumnsAt(const Dataset& d, int64_t l, Dataset* p) {
  switch (d.kind) {
    case DataKind::kTriples:
      p->ti.push_back(d.ti[l]);
      p->tj.push_back(d.tj[l]);
      p->tv.push_back(d.tv[l]);
      break;
    case DataKind::kLibsvm:
      p->labels.push_back(d.labels[l]);
      p->feat_index.insert(p->feat_index.end(), d.feat_index.begin() + d.feat_offset[l],
                           d.feat_index.begin() + d.feat_offset[l + 1]);
      p->feat_value.insert(p->feat_value.end(), d.feat_value.begin() + d.feat_offset[l],
                           d.feat_value.begin() + d.feat_offset[l + 1]);
      p->feat_offset.push_back(static_cast<int64_t>(p->feat_index.size()));
      break;
    case DataKind::kDenseCsv:
      p->labels.push_back(d.labels[l]);
      p->x.insert(p->x.end(), d.x.begin() + l * d.dim, d.x.begin() + (l + 1) * d.dim);
      break;
    case DataKind::kTokens:
      p->tokens.push_back(d.tokens[l]);
      if (d.lines) p->token_doc.push_back(d.token_doc[l]);
      break;
    case DataKind::kGrid:
    case DataKind::kRange:
      break;  // no columns
  }
}

std::vector<ElementRange> NormalizeRanges(std::vector<ElementRange> ranges, int64_t count) {
  for (ElementRange& r : ranges) {
    r.first = std::clamp<int64_t>(r.first, 0, count);
    r.end = std::clamp<int64_t>(r.end, 0, count);
  }
  std::erase_if(ranges, [](const ElementRange& r) { return r.first >= r.end; });
  std::sort(ranges.begin(), ranges.end(),
            [](const ElementRange& a, const ElementRange& b) { return a.first < b.first; });
  std::vector<ElementRange> out;
  for (const ElementRange& r : ranges) {
    if (!out.empty() && r.first <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

int64_t RangesCount(const std::vector<ElementRange>& ranges) {
  int64_t n = 0;
  for (const ElementRange& r : ranges) n += r.end - r.first;
  return n;
}

Status AppendHeld(std::span<const Dataset* const> sources, const std::vector<ElementRange>& ranges,
                  Dataset* out) {
  if (!HasColumns(out->kind)) {
    return Internal(std::string("AppendHeld: a ") + DataKindName(out->kind) +
                    " space has no elements to hold");
  }
  size_t from = 0;  // the source that held the previous element: most hold runs
  for (const ElementRange& r : ranges) {
    if (!out->held.empty() && r.first < out->held.back().first + out->held.back().count) {
      return Internal("AppendHeld: element " + std::to_string(r.first) + " of " + out->path +
                      " comes before what is held");
    }
    for (int64_t e = r.first; e < r.end; ++e) {
      int64_t l = -1;
      for (size_t k = 0; k < sources.size() && l < 0; ++k) {
        const size_t s = (from + k) % sources.size();
        const Dataset& src = *sources[s];
        l = src.Local(e);
        if (l >= 0 && !src.in_part && e >= src.count) l = -1;
        if (l >= 0) from = s;
      }
      if (l < 0) {
        return Internal("AppendHeld: no source holds element " + std::to_string(e) + " of " +
                        out->path);
      }
      AppendColumnsAt(*sources[from], l, out);
    }
    AddRange(r.first, r.end - r.first, out);
  }
  SetFastRange(out);
  return Status::Ok();
}

StatusOr<Dataset> HoldOnly(std::span<const Dataset* const> sources,
                           std::vector<ElementRange> ranges, int64_t count) {
  if (sources.empty()) return Internal("HoldOnly: no source data set");
  Dataset out = EmptyHeldLike(*sources[0]);
  if (count >= 0) out.count = count;
  ranges = NormalizeRanges(std::move(ranges), out.count);
  const size_t n = static_cast<size_t>(RangesCount(ranges));
  if (out.kind == DataKind::kTokens) out.tokens.reserve(n);
  if (out.kind == DataKind::kTriples) {
    out.ti.reserve(n);
    out.tj.reserve(n);
    out.tv.reserve(n);
  }
  RIGEL_RETURN_IF_ERROR(AppendHeld(sources, ranges, &out));
  return out;
}

StatusOr<std::pair<Dataset, Dataset>> SplitHeld(const Dataset& d, double test_fraction,
                                                uint64_t seed) {
  if (!d.in_part) return Internal("SplitHeld: " + d.path + " is held whole");
  Dataset train = EmptyHeldLike(d);
  Dataset test = EmptyHeldLike(d);
  train.origin.splits.push_back({0, test_fraction, seed, d.count});
  test.origin.splits.push_back({1, test_fraction, seed, d.count});
  train.digest.clear();
  test.digest.clear();
  if (d.held_masked) {
    // Scattered elements: each part holds its own by a mask, numbered as
    // the whole split numbers them.
    UseMask(&train);
    UseMask(&test);
    const bool tokens = d.kind == DataKind::kTokens;
    const int64_t cut = tokens ? d.count - TokensTestCount(d.count, test_fraction) : 0;
    // Each part's columns reserved exactly: grown, they would leave freed
    // copies behind while the parent is still held.
    int64_t held_tests = 0;
    ForEachHeld(d, [&](int64_t e, int64_t) {
      held_tests += tokens ? e >= cut : InTestPart(seed, e, test_fraction);
    });
    ReserveColumnsLike(d, d.HeldCount() - held_tests, &train);
    ReserveColumnsLike(d, held_tests, &test);
    int64_t tests = 0;  // test elements before the next
    int64_t next = 0;   // the next element whose part is not yet counted
    ForEachHeld(d, [&](int64_t e, int64_t local) {
      if (!tokens) {
        for (; next < e; ++next) tests += InTestPart(seed, next, test_fraction);
        next = e + 1;
      }
      const bool in_test = tokens ? e >= cut : InTestPart(seed, e, test_fraction);
      Dataset* part = in_test ? &test : &train;
      AppendColumnsAt(d, local, part);
      MarkHeld(tokens ? (in_test ? e - cut : e) : (in_test ? tests : e - tests), part);
      tests += !tokens && in_test;
    });
    if (!tokens) {
      for (; next < d.count; ++next) tests += InTestPart(seed, next, test_fraction);
    }
    train.count = tokens ? cut : d.count - tests;
    test.count = tokens ? d.count - cut : tests;
  } else if (d.kind == DataKind::kTokens) {
    // The test part is the stream's tail (SplitDataset).
    const int64_t cut = d.count - TokensTestCount(d.count, test_fraction);
    for (const Dataset::HeldRange& h : d.held) {
      for (int64_t e = h.first; e < h.first + h.count; ++e) {
        AppendColumnsAt(d, h.local + (e - h.first), e < cut ? &train : &test);
      }
      const int64_t end = h.first + h.count;
      AddRange(h.first, std::min(end, cut) - h.first, &train);
      AddRange(std::max(h.first, cut) - cut, end - std::max(h.first, cut), &test);
    }
    train.count = cut;
    test.count = d.count - cut;
  } else {
    // An element's number in its part is the count of elements of that part
    // before it: the hashes of every element before the held ones count.
    int64_t tests = 0;  // test elements before e
    int64_t e = 0;
    for (const Dataset::HeldRange& h : d.held) {
      for (; e < h.first; ++e) tests += InTestPart(seed, e, test_fraction);
      const int64_t train_first = e - tests, test_first = tests;
      for (; e < h.first + h.count; ++e) {
        const bool in_test = InTestPart(seed, e, test_fraction);
        AppendColumnsAt(d, h.local + (e - h.first), in_test ? &test : &train);
        tests += in_test;
      }
      AddRange(train_first, (e - tests) - train_first, &train);
      AddRange(test_first, tests - test_first, &test);
    }
    for (; e < d.count; ++e) tests += InTestPart(seed, e, test_fraction);
    train.count = d.count - tests;
    test.count = tests;
  }
  SetFastRange(&train);
  SetFastRange(&test);
  return std::make_pair(std::move(train), std::move(test));
}

std::vector<ElementRange> ParentRanges(DataKind kind, int64_t parent_count, double test_fraction,
                                       uint64_t seed, int part,
                                       const std::vector<ElementRange>& ranges) {
  std::vector<ElementRange> out(ranges.size());
  if (kind == DataKind::kTokens) {
    const int64_t cut = parent_count - TokensTestCount(parent_count, test_fraction);
    const int64_t off = part == 0 ? 0 : cut;
    for (size_t k = 0; k < ranges.size(); ++k) {
      if (ranges[k].first >= ranges[k].end) continue;
      out[k] = {std::min(ranges[k].first + off, parent_count),
                std::min(ranges[k].end + off, parent_count)};
    }
    return out;
  }
  // The part's element numbers to find in the parent: each range's first
  // and last, sorted, found in one walk.
  std::vector<std::pair<int64_t, size_t>> wanted;  // (part element, 2 * range + last?)
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (ranges[k].first >= ranges[k].end) continue;
    wanted.emplace_back(ranges[k].first, 2 * k);
    wanted.emplace_back(ranges[k].end - 1, 2 * k + 1);
  }
  std::sort(wanted.begin(), wanted.end());
  std::vector<int64_t> at(2 * ranges.size(), parent_count);
  size_t next = 0;
  int64_t seen = 0;
  for (int64_t e = 0; e < parent_count && next < wanted.size(); ++e) {
    if (InTestPart(seed, e, test_fraction) != (part == 1)) continue;
    for (; next < wanted.size() && wanted[next].first == seen; ++next) at[wanted[next].second] = e;
    ++seen;
  }
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (ranges[k].first >= ranges[k].end) continue;
    out[k] = {at[2 * k], std::min(parent_count, at[2 * k + 1] + 1)};
  }
  return out;
}

}  // namespace rigel::data
