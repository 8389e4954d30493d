#include "cli/quality_rule.h"

#include <cmath>
#include <cstdio>

namespace rigel::cli {

namespace {

bool Has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

enum class Measure { kNone, kAccuracy, kLogLikelihood, kLoss };

// Names are matched in this order: "test_accuracy" is an accuracy, and
// "train_loss" a loss.
Measure MeasureOf(const std::string& name) {
  if (Has(name, "acc")) return Measure::kAccuracy;
  if (Has(name, "loglik") || Has(name, "likelihood")) return Measure::kLogLikelihood;
  if (Has(name, "loss") || Has(name, "rmse") || Has(name, "mse") || Has(name, "err") ||
      Has(name, "inertia")) {
    return Measure::kLoss;
  }
  return Measure::kNone;
}

std::string Words(const std::string& name, double got, double serial, const char* why) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s %.6g against serial %.6g: %s", name.c_str(), got, serial, why);
  return buf;
}

}  // namespace

bool HasQualityMeasure(const std::map<std::string, double>& printed) {
  for (const auto& [name, v] : printed) {
    if (MeasureOf(name) != Measure::kNone) return true;
  }
  return false;
}

std::string OutsideQualityRule(const std::map<std::string, double>& serial,
                               const std::map<std::string, double>& got) {
  for (const auto& [name, s] : serial) {
    const Measure m = MeasureOf(name);
    if (m == Measure::kNone) continue;
    auto it = got.find(name);
    if (it == got.end()) return name + " not printed";
    const double g = it->second;
    if (!std::isfinite(g)) return Words(name, g, s, "not finite");
    switch (m) {
      case Measure::kAccuracy:
        if (g < s - (std::abs(s) > 1 ? 2.0 : 0.02)) {
          return Words(name, g, s, "more than 2 points below");
        }
        break;
      case Measure::kLogLikelihood:
        if (g < s - 0.02 * std::abs(s)) return Words(name, g, s, "more than 2% below");
        break;
      case Measure::kLoss:
        if (g > s + 0.02 * std::abs(s)) return Words(name, g, s, "more than 2% above");
        break;
      case Measure::kNone:
        break;
    }
  }
  return "";
}

}  // namespace rigel::cli
