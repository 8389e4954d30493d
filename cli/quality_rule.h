// DSL.md version 3's promise on quality, as `rigel tune` holds a trial of a
// relaxed program to it: at default settings a relaxed program ends within
// 2 points of accuracy (or 2% of loss) of its serial run. tune compares the
// numbers the program printed last in a trial with those of a serial run of
// as many epochs, by their names:
//   - accuracy ("acc" in the name): at most 0.02 below serial's (2 points;
//     2.0 where serial's is above 1, a percentage);
//   - a loss or error ("loss", "rmse", "mse", "err", "inertia"): at most 2%
//     above serial's (lower is fine);
//   - a log-likelihood ("loglik", "likelihood"): at most 2% of its size
//     below serial's (higher is fine).
// Other numbers (counters such as "epoch", LDA's "mean_log_p", which DSL.md
// says is no measure of quality) are not checked. Pure functions;
// thread-safe.
#ifndef RIGEL_CLI_QUALITY_RULE_H_
#define RIGEL_CLI_QUALITY_RULE_H_

#include <map>
#include <string>

namespace rigel::cli {

// Whether `printed` has a number the rule checks.
bool HasQualityMeasure(const std::map<std::string, double>& printed);

// "" when every measure of quality `serial` has is printed in `got` and
// holds the rule above; else the first that does not, in words
// ("test_accuracy 0.81 against serial 0.849: more than 2 points below").
std::string OutsideQualityRule(const std::map<std::string, double>& serial,
                               const std::map<std::string, double>& got);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_QUALITY_RULE_H_
