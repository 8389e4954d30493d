// The planner's samples when each worker holds only its own blocks
// (exec/hold_plan.h): every worker plans a loop's mini-batch and hot rows
// from the rows a sample of the loop's elements touches, and the sample is
// spread over every worker's blocks. Holding every sampled element would
// make each worker read a little of every part of the file (a sample every
// few KiB of a corpus), so each counts the rows its own sampled elements
// touch and the workers exchange those counts through the job's store
// (collectives/store.h, the scheduler's in a job). Summed in one order, the
// counts are those a worker holding every element would find. The same way,
// workers find the rows only one of them writes (analysis/step_plan.h
// ParamRows::single) from the rows each one's own elements touch.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "exec/hold_plan.h"
#include "worker/runner.h"

namespace rigel::worker {

namespace {

// The scheduler's store refuses values above 1 MiB (cluster/rendezvous.h):
// a larger one goes in pieces.
constexpr size_t kPieceBytes = size_t{512} << 10;

void Put64(int64_t v, std::string* out) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out->append(b, sizeof v);
}

// A worker's counts: sampled, then per listed parameter its index, its row
// count and its (row, count) pairs, as native 64-bit integers (every worker
// of a job runs this build).
std::string Encode(const analysis::RowSample& s) {
  std::string out;
  Put64(s.sampled, &out);
  for (size_t p = 0; p < s.counts.size(); ++p) {
    if (s.counts[p].empty()) continue;
    Put64(static_cast<int64_t>(p), &out);
    Put64(static_cast<int64_t>(s.counts[p].size()), &out);
    for (const auto& [row, n] : s.counts[p]) {
      Put64(row, &out);
      Put64(n, &out);
    }
  }
  return out;
}

// Native 64-bit integers read one after another; `bad` once one was
// missing.
struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool bad = false;
  int64_t Next() {
    int64_t v = 0;
    if (at + sizeof v > bytes.size()) {
      bad = true;
      return 0;
    }
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  size_t left() const { return bytes.size() - at; }
};

StatusOr<analysis::RowSample> Decode(const std::string& bytes, int64_t params, int from) {
  Reader in{bytes};
  auto next = [&in] { return in.Next(); };
  analysis::RowSample s;
  s.counts.resize(static_cast<size_t>(params));
  s.sampled = next();
  while (!in.bad && in.left() > 0) {
    const int64_t p = next();
    const int64_t n = next();
    if (in.bad || p < 0 || p >= params || n < 0 || static_cast<uint64_t>(n) > in.left() / 16) {
      in.bad = true;
      break;
    }
    auto& c = s.counts[static_cast<size_t>(p)];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t row = next();
      c.emplace_back(row, next());
    }
  }
  if (in.bad) {
    return Internal("worker " + std::to_string(from) + "'s sample counts are malformed (" +
                    std::to_string(bytes.size()) + " bytes)");
  }
  return s;
}

Status SetLarge(collectives::Store* store, const std::string& key, const std::string& value) {
  const size_t pieces = std::max<size_t>(1, (value.size() + kPieceBytes - 1) / kPieceBytes);
  for (size_t i = 0; i < pieces; ++i) {
    RIGEL_RETURN_IF_ERROR(
        store->Set(key + "/" + std::to_string(i), value.substr(i * kPieceBytes, kPieceBytes)));
  }
  // Set last: a reader that finds the count finds every piece.
  return store->Set(key + "/n", std::to_string(pieces));
}

StatusOr<std::string> GetLarge(collectives::Store* store, const std::string& key,
                               std::chrono::milliseconds timeout) {
  RIGEL_ASSIGN_OR_RETURN(std::string n, store->Get(key + "/n", timeout));
  const size_t pieces = static_cast<size_t>(std::stoull(n));
  std::string out;
  for (size_t i = 0; i < pieces; ++i) {
    RIGEL_ASSIGN_OR_RETURN(std::string piece, store->Get(key + "/" + std::to_string(i), timeout));
    out += piece;
  }
  return out;
}

// Puts this worker's `mine` under `prefix` + its rank and takes every other
// worker's (theirs[w], empty for this one); Unavailable naming loop `loop`
// and the worker that did not share `what` within the timeout.
StatusOr<std::vector<std::string>> ShareWithAll(collectives::Store* store,
                                                const std::string& prefix, int rank, int workers,
                                                std::chrono::milliseconds timeout,
                                                const std::string& mine, int loop,
                                                const std::string& what) {
  RIGEL_RETURN_IF_ERROR(SetLarge(store, prefix + std::to_string(rank), mine));
  std::vector<std::string> theirs(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    if (w == rank) continue;
    StatusOr<std::string> got = GetLarge(store, prefix + std::to_string(w), timeout);
    if (!got.ok()) {
      return Unavailable("loop " + std::to_string(loop) + ": worker " + std::to_string(w) +
                         " did not share " + what + ": " + got.status().message());
    }
    theirs[static_cast<size_t>(w)] = std::move(got).value();
  }
  return theirs;
}

// Lists of rows by (parameter, column): their count, then each one's
// parameter, column, row count and rows, as native 64-bit integers.
std::string EncodeColumns(const std::vector<std::vector<std::vector<int64_t>>>& columns) {
  std::string out;
  int64_t lists = 0;
  for (const auto& by_column : columns) {
    for (const auto& rows : by_column) lists += !rows.empty();
  }
  Put64(lists, &out);
  for (size_t p = 0; p < columns.size(); ++p) {
    for (size_t q = 0; q < columns[p].size(); ++q) {
      if (columns[p][q].empty()) continue;
      Put64(static_cast<int64_t>(p), &out);
      Put64(static_cast<int64_t>(q), &out);
      Put64(static_cast<int64_t>(columns[p][q].size()), &out);
      for (int64_t row : columns[p][q]) Put64(row, &out);
    }
  }
  return out;
}

// Adds the lists `bytes` holds to *columns ([p][q], sized); Internal when
// they do not parse or name a parameter or column out of range.
Status DecodeColumnsInto(const std::string& bytes, int from,
                         std::vector<std::vector<std::vector<int64_t>>>* columns) {
  Reader in{bytes};
  auto next = [&in] { return in.Next(); };
  const int64_t lists = next();
  for (int64_t k = 0; k < lists && !in.bad; ++k) {
    const int64_t p = next(), q = next(), n = next();
    if (in.bad || p < 0 || static_cast<size_t>(p) >= columns->size() || q < 0 ||
        static_cast<size_t>(q) >= (*columns)[static_cast<size_t>(p)].size() || n < 0 ||
        static_cast<uint64_t>(n) > in.left() / 8) {
      in.bad = true;
      break;
    }
    auto& rows = (*columns)[static_cast<size_t>(p)][static_cast<size_t>(q)];
    for (int64_t i = 0; i < n; ++i) rows.push_back(next());
  }
  if (in.bad || in.left() != 0) {
    return Internal("worker " + std::to_string(from) + "'s block columns are malformed (" +
                    std::to_string(bytes.size()) + " bytes)");
  }
  return Status::Ok();
}

}  // namespace

Status Runner::ExchangeColumns(const TaskSpec& task, const kernel::RunContext& ctx,
                               const analysis::PlanInput& in, const analysis::StepBlocks& blocks,
                               std::vector<std::vector<std::vector<int64_t>>>* columns) {
  const size_t workers = static_cast<size_t>(opts_.workers);
  columns->assign(prog_.params.size(), std::vector<std::vector<int64_t>>(workers));
  std::vector<bool> rotated(prog_.params.size());
  for (const analysis::PlanParam& pp : in.loop_params) {
    rotated[static_cast<size_t>(pp.index)] = pp.strategy == analysis::Strategy::kRotate;
  }
  // Block (rank, t) is in column (rank + t) mod P.
  std::vector<int64_t> scratch;
  for (size_t t = 0; t < blocks.blocks.size(); ++t) {
    const analysis::ElementList& mine = blocks.blocks[t][static_cast<size_t>(opts_.rank)];
    if (mine.empty()) continue;
    RIGEL_ASSIGN_OR_RETURN(auto keys, Keys(task.loop, ctx, mine.Span(&scratch)));
    const size_t q = (static_cast<size_t>(opts_.rank) + t) % workers;
    for (size_t p = 0; p < keys.size(); ++p) {
      if (!rotated[p]) continue;
      auto& rows = (*columns)[p][q];
      rows.insert(rows.end(), keys[p].begin(), keys[p].end());
    }
  }
  const std::string prefix = "rigel/columns/loop" + std::to_string(task.loop) + "/run" +
                             std::to_string(task.launch) + "/w";
  RIGEL_ASSIGN_OR_RETURN(
      std::vector<std::string> theirs,
      ShareWithAll(opts_.store, prefix, opts_.rank, opts_.workers, opts_.collectives_timeout,
                   EncodeColumns(*columns), task.loop, "the rows its blocks touch"));
  for (int w = 0; w < opts_.workers; ++w) {
    if (w != opts_.rank) RIGEL_RETURN_IF_ERROR(DecodeColumnsInto(theirs[w], w, columns));
  }
  for (auto& by_column : *columns) {
    for (auto& rows : by_column) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
  }
  return Status::Ok();
}

bool Runner::HoldsInPart(int data) const {
  if (!opts_.job.data_parts || !exec::HoldsInPart(prog_, plan_, data, CanExchangeSamples())) {
    return false;
  }
  // Loops cut by coordinates need the job's cuts to choose the elements;
  // a job without them (one made by hand) holds the data whole.
  for (int l : exec::LoopsCutBeforeLoad(prog_, plan_, CanExchangeSamples())) {
    if (exec::RootDataSet(prog_, prog_.loops[static_cast<size_t>(l)].data) == data &&
        held_cuts_.count(l) == 0) {
      return false;
    }
  }
  return true;
}

bool Runner::CanExchangeSamples() const { return opts_.workers > 1 && opts_.store != nullptr; }

StatusOr<analysis::RowSample> Runner::SampleLoopRows(const TaskSpec& task,
                                                     const analysis::StepBlocks& blocks,
                                                     const kernel::RunContext& ctx,
                                                     const analysis::PlanInput& in, int64_t limit,
                                                     const std::vector<bool>& want) {
  analysis::RowsFn rows = [&](std::span<const int64_t> elements) {
    return Keys(task.loop, ctx, elements);
  };
  const int root = exec::RootDataSet(prog_, prog_.loops[static_cast<size_t>(task.loop)].data);
  if (root < 0 || !CanExchangeSamples() || !HoldsInPart(root)) {
    return analysis::SampleRows(in, blocks, rows, limit, want);
  }
  RIGEL_ASSIGN_OR_RETURN(analysis::RowSample mine,
                         analysis::SampleRowsOf(in, blocks, rows, limit, want, opts_.rank));
  // One key per loop, run and sample: a run whose rows depend on more than
  // its elements samples again, and those of other runs never mix in.
  const std::string prefix = "rigel/samples/loop" + std::to_string(task.loop) + "/run" +
                             std::to_string(task.launch) + "/n" + std::to_string(limit) + "/w";
  RIGEL_ASSIGN_OR_RETURN(
      std::vector<std::string> theirs,
      ShareWithAll(opts_.store, prefix, opts_.rank, opts_.workers, opts_.collectives_timeout,
                   Encode(mine), task.loop, "the rows its sampled elements touch"));
  std::vector<analysis::RowSample> parts;
  for (int w = 0; w < opts_.workers; ++w) {
    if (w == opts_.rank) {
      parts.push_back(std::move(mine));
      continue;
    }
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample s,
                           Decode(theirs[static_cast<size_t>(w)], in.params, w));
    parts.push_back(std::move(s));
  }
  return analysis::MergeRowSamples(in, want, parts);
}

Status Runner::ExchangeRows(const TaskSpec& task, const kernel::RunContext& ctx,
                            const analysis::PlanInput& in, const analysis::StepLists& steps,
                            std::vector<std::vector<int64_t>>* mine,
                            std::vector<std::vector<int64_t>>* theirs) {
  RIGEL_ASSIGN_OR_RETURN(*mine, Keys(task.loop, ctx, steps.Concatenated()));
  mine->resize(prog_.params.size());
  // Only the cached parameters it writes learn rows with one writer.
  analysis::RowSample shared;
  shared.counts.resize(prog_.params.size());
  for (const analysis::PlanParam& pp : in.loop_params) {
    if (!pp.cached || !pp.written) continue;
    for (int64_t row : (*mine)[static_cast<size_t>(pp.index)]) {
      shared.counts[static_cast<size_t>(pp.index)].emplace_back(row, 1);
    }
  }
  const std::string prefix =
      "rigel/rows/loop" + std::to_string(task.loop) + "/run" + std::to_string(task.launch) + "/w";
  RIGEL_ASSIGN_OR_RETURN(
      std::vector<std::string> shared_by,
      ShareWithAll(opts_.store, prefix, opts_.rank, opts_.workers, opts_.collectives_timeout,
                   Encode(shared), task.loop, "the rows its elements touch"));
  theirs->assign(prog_.params.size(), {});
  for (int w = 0; w < opts_.workers; ++w) {
    if (w == opts_.rank) continue;
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample s, Decode(shared_by[w], in.params, w));
    for (size_t p = 0; p < s.counts.size(); ++p) {
      for (const auto& rc : s.counts[p]) (*theirs)[p].push_back(rc.first);
    }
  }
  for (std::vector<int64_t>& rows : *theirs) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  return Status::Ok();
}

}  // namespace rigel::worker
