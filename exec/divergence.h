// When a relaxed parameter has diverged (DSL.md versions 3 and 4): a value
// that is not finite, or a largest magnitude that grew kDivergenceGrowth-fold
// or more over one run of a loop. Values that blow up stay finite for many
// epochs (an FM on a9a at 8 workers went 8e3, 3e11, 4e18, 2e27 while its
// accuracy printed as a number), so finiteness alone lets a diverged model
// end with exit status 0. A run's magnitude is compared with the smallest
// it had after an earlier run: later runs of a stable loop change the scale
// by a few times at most, and one blowing up 100-fold an epoch crosses
// 1000-fold in two. Growth is counted from 1 at least: a value near zero (an
// SVM's bias at 3e-7 after one epoch, 0.02 after the next) has no scale of
// its own, so a run diverged once its largest value reaches 1000 times the
// larger of 1 and that smallest. The first run moves parameters from their initialisers by large
// factors (word2vec's uniform(+-0.5 / D) about 100-fold at D = 32, and
// about 2000-fold at D = 300), so it diverged only past kFirstRunGrowth
// times the initial magnitude and kFirstRunFloor in size (a word2vec on 8
// workers that blew up in its first epoch had values near 5000); from
// zeros() it has no scale to grow from.
//
// The serial executor scans every relaxed parameter after each run of a
// loop; a worker scans its copy of each relaxed parameter the loop touched
// (worker/runner.cc). Pure functions; thread-safe.
#ifndef RIGEL_EXEC_DIVERGENCE_H_
#define RIGEL_EXEC_DIVERGENCE_H_

#include <cstdint>
#include <string>

namespace rigel::exec {

inline constexpr double kDivergenceGrowth = 1000;
inline constexpr double kFirstRunGrowth = 1e4;
inline constexpr double kFirstRunFloor = 1e3;

// The largest magnitude of a parameter's values, where it is, and the first
// value that is not finite, if any.
struct Magnitude {
  bool scanned = false;  // false: no run measured it yet
  float largest = 0;     // |value|
  int64_t row = -1, col = -1;
  bool finite = true;
  float bad = 0;  // the first non-finite value (finite == false)
  int64_t bad_row = -1, bad_col = -1;
};

// Scans `rows` x `width` floats; with `slots` (a parameter held in part,
// kernel::ParamBinding::slots), only the rows it holds, row r at
// data + slots[r] * width. A null `data` holds nothing.
Magnitude ScanMagnitude(const float* data, int64_t rows, int64_t width,
                        const int32_t* slots = nullptr);

// Empty when `now` (after a run) is fine against `before` (the smallest
// magnitude after an earlier run of the loop; for the first run, `first`
// set, the initial values); else what diverged, naming `param`, the
// row and the values: "'V' row 17 is not finite (nan at column 3)" or "the
// largest value of 'V' grew from 0.52 (row 3) to 8.1e+05 (row 17),
// 1.558e+06-fold over the loop's runs since (1000-fold, and to 1000 or
// more, is divergence)".
std::string Divergence(const std::string& param, const Magnitude& before, const Magnitude& now,
                       bool first = false);

// One relaxed parameter over the runs of one loop: Before each run (the
// first takes the initial magnitude), After it (Divergence against the
// smallest magnitude after an earlier run, or the initial values after the
// first). Thread-compatible.
class DivergenceWatch {
 public:
  // `data`, `rows`, `width` and `slots` as ScanMagnitude takes them.
  void Before(const float* data, int64_t rows, int64_t width, const int32_t* slots = nullptr);
  // Empty when the run left the parameter fine (see Divergence).
  std::string After(const std::string& param, const float* data, int64_t rows, int64_t width,
                    const int32_t* slots = nullptr);
  const Magnitude& last() const { return last_; }

 private:
  Magnitude last_;     // after the last run, or the initial values
  Magnitude least_;    // the smallest after any run
  bool first_ = true;  // no run has ended yet
};

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_DIVERGENCE_H_
