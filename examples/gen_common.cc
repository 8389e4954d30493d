// Pieces shared by the generators: Zipf sampling, seeded permutations, writing
// outputs with their .info summary, and reading figures back from a summary.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>

#include "common/file.h"
#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {

ZipfSampler::ZipfSampler(int64_t n, double exponent) {
  cdf_.resize(static_cast<size_t>(std::max<int64_t>(n, 1)));
  double sum = 0.0;
  for (size_t k = 0; k < cdf_.size(); ++k) {
    sum += std::pow(static_cast<double>(k + 1), -exponent);
    cdf_[k] = sum;
  }
  for (double& c : cdf_) c /= sum;
  // Guard against rounding leaving the last entry a hair below 1, which would
  // let u close to 1 fall off the end.
  cdf_.back() = 1.0;
}

int64_t ZipfSampler::Sample(double u) const {
  auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  if (it == cdf_.end()) --it;
  return static_cast<int64_t>(it - cdf_.begin());
}

double ZipfSampler::Probability(int64_t k) const {
  if (k < 0 || k >= size()) return 0.0;
  return k == 0 ? cdf_[0] : cdf_[k] - cdf_[k - 1];
}

std::vector<int64_t> SeededPermutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> perm(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  SplitMix64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i + 1)));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

Status ValidateTrainTest(const std::string& out, const std::string& test_out) {
  if (out.empty() || test_out.empty()) {
    return InvalidArgument("--out (train) and --test-out are required");
  }
  if (out == test_out) return InvalidArgument("--out and --test-out are the same");
  return Status::Ok();
}

Status ValidateFeatureDraws(int64_t dim, int64_t nnz) {
  if (dim >= std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("dim must fit in 32 bits (loaders use int32)");
  }
  // Repeats are drawn again, so keep the features drawn well below dim.
  if (3 * nnz > dim) return InvalidArgument("nnz must be at most dim / 3");
  return Status::Ok();
}

Status ValidateFeatureValues(double zipf, double weight_std, double real_fraction) {
  if (!(zipf >= 0) || !std::isfinite(zipf) || !(weight_std >= 0) || !std::isfinite(weight_std) ||
      !(real_fraction >= 0) || !(real_fraction <= 1)) {
    return InvalidArgument("zipf and weight_std must be finite and >= 0, real_fraction in [0, 1]");
  }
  return Status::Ok();
}

void DrawFeatures(int64_t k, const ZipfSampler& zipf, const std::vector<int64_t>& feature_of_rank,
                  SplitMix64& rng, std::vector<int64_t>* feats) {
  feats->clear();
  while (static_cast<int64_t>(feats->size()) < k) {
    const int64_t f = feature_of_rank[zipf.Sample(rng.Uniform())];
    // Samples are short, so a linear scan for repeats is cheapest.
    if (std::find(feats->begin(), feats->end(), f) == feats->end()) feats->push_back(f);
  }
  std::sort(feats->begin(), feats->end());  // libsvm convention: ascending indices
}

void DrawValues(const std::vector<int64_t>& feats, const std::vector<uint8_t>& is_real,
                SplitMix64& rng, std::vector<double>* vals) {
  vals->clear();
  for (int64_t f : feats) {
    // Models use the values as written, so they are rounded here.
    vals->push_back(is_real[f] ? std::nearbyint((0.1 + 1.9 * rng.Uniform()) * 1e3) / 1e3 : 1.0);
  }
}

void AppendFeatures(const std::vector<int64_t>& feats, const std::vector<double>& vals,
                    const std::vector<uint8_t>* is_real, fmt::memory_buffer* buf) {
  for (size_t t = 0; t < feats.size(); ++t) {
    if (is_real && (*is_real)[feats[t]]) {
      fmt::format_to(fmt::appender(*buf), " {}:{:.3f}", feats[t] + 1, vals[t]);
    } else {
      fmt::format_to(fmt::appender(*buf), " {}:1", feats[t] + 1);
    }
  }
}

StatusOr<GenReport> WriteGenOutput(const GenOutput& out, bool write_info) {
  GenReport report;
  report.summary = out.summary;
  for (const GenFile& f : out.files) {
    // Create the folder (e.g. examples/data/) so callers need not.
    std::filesystem::path parent = std::filesystem::path(f.path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return IoError(parent.string() + ": cannot create directory: " + ec.message());
    RIGEL_RETURN_IF_ERROR(WriteFileAtomically(f.path, f.contents));
    report.paths.push_back(f.path);
  }
  if (write_info && !out.files.empty()) {
    std::string text;
    for (const std::string& line : out.summary) text += line + "\n";
    std::string info_path = out.files.front().path + ".info";
    RIGEL_RETURN_IF_ERROR(WriteFileAtomically(info_path, text));
    report.paths.push_back(info_path);
  }
  return report;
}

StatusOr<double> SummaryValue(const std::string& summary_text, const std::string& name) {
  const std::string key = name + ": ";
  size_t pos = 0;
  while (pos < summary_text.size()) {
    size_t eol = summary_text.find('\n', pos);
    if (eol == std::string::npos) eol = summary_text.size();
    if (summary_text.compare(pos, key.size(), key) == 0) {
      std::string value = summary_text.substr(pos + key.size(), eol - pos - key.size());
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (end == value.c_str()) {
        return InvalidArgument("summary value of '" + name + "' is not a number: " + value);
      }
      return v;
    }
    pos = eol + 1;
  }
  return NotFound("no '" + name + "' line in summary");
}

}  // namespace rigel::examples
