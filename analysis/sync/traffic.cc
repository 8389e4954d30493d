#include "analysis/sync/traffic.h"

#include <cmath>

namespace rigel::analysis::sync {

double Pushed(const ParamRun& r, const std::vector<int64_t>& keys) {
  if (!r.rows->param.written) return 0;
  if (r.changed == nullptr || r.changed->empty()) return static_cast<double>(keys.size());
  double n = 0;
  for (int64_t k : keys) {
    if (k < 0 || static_cast<size_t>(k) >= r.changed->size() || (*r.changed)[k] == 0) continue;
    if (r.share >= 1) {
      ++n;
    } else if (r.writes != nullptr && static_cast<size_t>(k) < r.writes->size()) {
      // A row the run wrote `writes` times is written by this worker's
      // share of the elements with the chance that one of them is its.
      n += 1 - std::pow(1 - r.share, static_cast<double>((*r.writes)[k]));
    } else {
      n += r.share;
    }
  }
  return n;
}

void Move(WorkerCounts* wc, const std::string& what, double rows, double row_bytes, int64_t s) {
  const double b = rows * row_bytes;
  wc->bytes[what] += b;
  if (s == -1) {
    wc->begin_bytes += b;
    wc->begin_rows += rows;
  } else if (s == -2) {
    wc->end_bytes += b;
    wc->end_rows += rows;
  } else {
    wc->step_server_bytes[s] += b;
    wc->step_server_rows[s] += rows;
  }
}

void MoveStepRows(const ParamRun& r, const std::string& what, WorkerCounts* wc) {
  const int p = r.rows->param.index;
  const auto& srv = *r.server_rows;
  for (size_t s = 0; s < srv.size(); ++s) {
    if (srv[s].empty()) continue;
    const double n = static_cast<double>(srv[s][p].size());
    if (n == 0) continue;
    Move(wc, what, n + Pushed(r, srv[s][p]), RowBytes(*r.shape), static_cast<int64_t>(s));
  }
}

}  // namespace rigel::analysis::sync
