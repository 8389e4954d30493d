// Runs of this `rigel` binary as a child process, for commands that measure
// real runs (`rigel calibrate`, `rigel tune`), and what they logged.
// Not thread-safe (forks).
#ifndef RIGEL_CLI_TRIAL_RUN_H_
#define RIGEL_CLI_TRIAL_RUN_H_

#include <map>
#include <string>
#include <vector>

#include "analysis/cost.h"

namespace rigel::cli {

// Runs this binary with `args`, its output to the file `log`; returns its
// exit status (128 + N when killed by signal N; -1 when it cannot start).
int RunSelf(const std::vector<std::string>& args, const std::string& log);

// The epoch_s of each line of a --log-json file (none if it cannot be read).
std::vector<double> EpochSeconds(const std::string& log_json);

// The "printed" numbers of the last line of a --log-json file, by name
// (none if it cannot be read or printed nothing).
std::map<std::string, double> LastPrinted(const std::string& log_json);

// The "epochs" of the last line of a --log-json file: how many epochs the
// whole run has (0 if it cannot be read).
int WholeEpochs(const std::string& log_json);

// The median (the upper one of an even count); 0 for none.
double Median(std::vector<double> v);

// The mean of `v` without its lowest and highest tenth (rounded down); 0
// for none. Trials' epochs on a small machine fall into two modes (bias on
// the 2-core VM: 3.0 or 4.5 ms per epoch, at random from run to run), where
// a median jumps from one mode to the other as one run changes side.
double TrimmedMean(std::vector<double> v);

// The median over `obs` of the epoch seconds `k` predicts for each.
double MedianPrediction(const std::vector<analysis::Observation>& obs,
                        const analysis::CostConstants& k);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_TRIAL_RUN_H_
