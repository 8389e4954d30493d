#include "bench/run_log.h"

#include <algorithm>
#include <sstream>

namespace rigel::bench {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

namespace {

std::vector<nlohmann::json> Epochs(const std::string& log) {
  std::vector<nlohmann::json> all;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) all.push_back(std::move(j));
  }
  return all;
}

}  // namespace

std::vector<nlohmann::json> LaterEpochs(const std::string& log) {
  std::vector<nlohmann::json> all = Epochs(log);
  if (all.size() > 1) all.erase(all.begin());
  return all;
}

double LaterEpochSeconds(const std::string& log) {
  std::vector<double> s;
  for (const nlohmann::json& e : LaterEpochs(log)) s.push_back(e.value("epoch_s", 0.0));
  return Median(std::move(s));
}

double MeanLaterEpochSeconds(const std::string& log) {
  const std::vector<nlohmann::json> later = LaterEpochs(log);
  double sum = 0;
  for (const nlohmann::json& e : later) sum += e.value("epoch_s", 0.0);
  return later.empty() ? 0 : sum / static_cast<double>(later.size());
}

std::map<std::string, double> LastPrinted(const std::string& log) {
  std::map<std::string, double> out;
  const std::vector<nlohmann::json> all = Epochs(log);
  if (all.empty() || !all.back().contains("printed")) return out;
  for (const auto& [k, v] : all.back().at("printed").items()) {
    if (v.is_number()) out[k] = v.get<double>();
  }
  return out;
}

}  // namespace rigel::bench
