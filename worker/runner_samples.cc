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

StatusOr<analysis::RowSample> Decode(const std::string& bytes, int64_t params, int from) {
  size_t at = 0;
  bool bad = false;
  auto next = [&]() -> int64_t {
    int64_t v = 0;
    if (at + sizeof v > bytes.size()) {
      bad = true;
      return 0;
    }
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  analysis::RowSample s;
  s.counts.resize(static_cast<size_t>(params));
  s.sampled = next();
  while (!bad && at < bytes.size()) {
    const int64_t p = next();
    const int64_t n = next();
    if (bad || p < 0 || p >= params || n < 0 ||
        static_cast<uint64_t>(n) > (bytes.size() - at) / 16) {
      bad = true;
      break;
    }
    auto& c = s.counts[static_cast<size_t>(p)];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t row = next();
      c.emplace_back(row, next());
    }
  }
  if (bad) {
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

}  // namespace

bool Runner::HoldsInPart(int data) const {
  return opts_.job.data_parts && exec::HoldsInPart(prog_, plan_, data, CanExchangeSamples());
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
  RIGEL_RETURN_IF_ERROR(SetLarge(opts_.store, prefix + std::to_string(opts_.rank), Encode(mine)));
  std::vector<analysis::RowSample> parts;
  for (int w = 0; w < opts_.workers; ++w) {
    if (w == opts_.rank) {
      parts.push_back(std::move(mine));
      continue;
    }
    StatusOr<std::string> theirs =
        GetLarge(opts_.store, prefix + std::to_string(w), opts_.collectives_timeout);
    if (!theirs.ok()) {
      return Unavailable(
          "loop " + std::to_string(task.loop) + ": worker " + std::to_string(w) +
          " did not share the rows its sampled elements touch: " + theirs.status().message());
    }
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample s, Decode(*theirs, in.params, w));
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
  RIGEL_RETURN_IF_ERROR(SetLarge(opts_.store, prefix + std::to_string(opts_.rank), Encode(shared)));
  theirs->assign(prog_.params.size(), {});
  for (int w = 0; w < opts_.workers; ++w) {
    if (w == opts_.rank) continue;
    StatusOr<std::string> got =
        GetLarge(opts_.store, prefix + std::to_string(w), opts_.collectives_timeout);
    if (!got.ok()) {
      return Unavailable("loop " + std::to_string(task.loop) + ": worker " + std::to_string(w) +
                         " did not share the rows its elements touch: " + got.status().message());
    }
    RIGEL_ASSIGN_OR_RETURN(analysis::RowSample s, Decode(*got, in.params, w));
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
