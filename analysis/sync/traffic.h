// What the units' traffic models share (analysis/sync/units.h): a row's
// bytes, the rows a written parameter pushes, and adding moved rows to a
// worker's counts. Internal to analysis/sync/.
//
// Thread-safe: pure functions of their arguments.
#ifndef RIGEL_ANALYSIS_SYNC_TRAFFIC_H_
#define RIGEL_ANALYSIS_SYNC_TRAFFIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/sync/units.h"

namespace rigel::analysis::sync {

// The bytes of one row's values.
inline double RowBytes(const ParamShape& s) { return static_cast<double>(s.width) * 4.0; }

// How many of `keys` a written parameter pushes: those the run changed (a
// row with a zero delta is not pushed), scaled by the worker's share where
// its rows are all rows. Zero when it is not written.
double Pushed(const ParamRun& r, const std::vector<int64_t>& keys);

// Adds `rows` rows of `row_bytes` each, moved at step `s` (before the steps
// when s is -1, after them when -2), to `wc` under the name `what` (as the
// run's metrics name it: "local", "ps", ...).
void Move(WorkerCounts* wc, const std::string& what, double rows, double row_bytes, int64_t s);

// Every step's server rows of `r`'s parameter, with its pushes, under `what`
// (the `ps` strategy, and a `local` parameter's shared rows).
void MoveStepRows(const ParamRun& r, const std::string& what, WorkerCounts* wc);

}  // namespace rigel::analysis::sync

#endif  // RIGEL_ANALYSIS_SYNC_TRAFFIC_H_
