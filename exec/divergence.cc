#include "exec/divergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rigel::exec {

namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

namespace {

// Adds row `row`'s `width` values to m.
void ScanRow(const float* v, int64_t row, int64_t width, Magnitude* m) {
  for (int64_t c = 0; c < width; ++c) {
    if (!std::isfinite(v[c])) {
      if (m->finite) {
        m->finite = false;
        m->bad = v[c];
        m->bad_row = row;
        m->bad_col = c;
      }
      continue;
    }
    const float a = std::fabs(v[c]);
    if (a > m->largest) {
      m->largest = a;
      m->row = row;
      m->col = c;
    }
  }
}

}  // namespace

Magnitude ScanMagnitude(const float* data, int64_t rows, int64_t width, const int32_t* slots) {
  Magnitude m;
  m.scanned = true;
  if (data == nullptr) return m;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = r;
    if (slots != nullptr) {
      at = slots[r];
      if (at < 0) continue;
    }
    ScanRow(data + at * width, r, width, &m);
  }
  return m;
}

std::string Divergence(const std::string& param, const Magnitude& before, const Magnitude& now,
                       bool first) {
  if (!now.finite) {
    return "'" + param + "' row " + std::to_string(now.bad_row) + " is not finite (" +
           Number(now.bad) + " at column " + std::to_string(now.bad_col) + ")";
  }
  // A zero magnitude (a parameter still at zeros()) gives no scale to grow
  // from; the next run's does.
  if (!before.scanned || before.largest <= 0) return "";
  const double grown = static_cast<double>(now.largest) / before.largest;
  if (first) {
    if (grown < kFirstRunGrowth || now.largest < kFirstRunFloor) return "";
  } else if (now.largest < kDivergenceGrowth * std::max(1.0, static_cast<double>(before.largest))) {
    return "";
  }
  return "the largest value of '" + param + "' grew from " + Number(before.largest) + " (row " +
         std::to_string(before.row) + ") to " + Number(now.largest) + " (row " +
         std::to_string(now.row) + "), " + Number(grown) + "-fold " +
         (first ? "in the loop's first run from its initial values (" + Number(kFirstRunGrowth) +
                      "-fold to " + Number(kFirstRunFloor) + " or more is divergence)"
                : "over the loop's runs since (" + Number(kDivergenceGrowth) +
                      "-fold, and to 1000 or more, is divergence)");
}

void DivergenceWatch::Before(const float* data, int64_t rows, int64_t width, const int32_t* slots) {
  if (first_ && !last_.scanned) last_ = ScanMagnitude(data, rows, width, slots);
}

std::string DivergenceWatch::After(const std::string& param, const float* data, int64_t rows,
                                   int64_t width, const int32_t* slots) {
  const Magnitude now = ScanMagnitude(data, rows, width, slots);
  std::string what = Divergence(param, first_ ? last_ : least_, now, first_);
  // Against the smallest after any run, not the last one: a parameter
  // blowing up 100-fold an epoch is caught in its second such epoch.
  if (first_ || now.largest < least_.largest) least_ = now;
  last_ = now;
  first_ = false;
  return what;
}

}  // namespace rigel::exec
