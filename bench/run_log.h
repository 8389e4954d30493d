// Reading a run's `--log-json` file (docs/distributed.md, "Per-epoch log")
// in the benches that compare runs: bench/planner.cc, bench/planner_tune.cc.
// Not thread-safe.
#ifndef RIGEL_BENCH_RUN_LOG_H_
#define RIGEL_BENCH_RUN_LOG_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rigel::bench {

// The median (the mean of the middle two of an even count); 0 for none.
double Median(std::vector<double> v);

// The epochs of a log's text after the first (all of them when there is
// one); a line that is not JSON is skipped.
std::vector<nlohmann::json> LaterEpochs(const std::string& log);

// The median epoch_s of LaterEpochs(log); 0 when it has none.
double LaterEpochSeconds(const std::string& log);

// The mean epoch_s of LaterEpochs(log), what the epochs cost in all; 0 when
// it has none. On the 2-core VM epochs of a few ms take one of two speeds in
// spells, which moves a median by the gap between them.
double MeanLaterEpochSeconds(const std::string& log);

// The "printed" numbers of the log's last epoch by name (none when empty).
std::map<std::string, double> LastPrinted(const std::string& log);

}  // namespace rigel::bench

#endif  // RIGEL_BENCH_RUN_LOG_H_
