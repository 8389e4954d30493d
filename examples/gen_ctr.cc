// `ctr`: Criteo-layout click-through train/test files (label, 13 counts, 26
// hashed categorical ids, tab-separated) from a planted factorization machine.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

enum Stream : uint64_t { kWeights = 1, kCountWeights, kIds, kTrain, kTest, kPilot };

constexpr int64_t kMaxCardinality = 100000000;  // the Zipf tables take 8 bytes a value
constexpr int64_t kMaxLatent = 64;
constexpr double kPositiveRate = 0.25;  // what the bias is solved for (Criteo's is ~0.26)
constexpr int64_t kPilotRows = 8192;    // rows the bias is solved on
// The logit's variance before the bias, and the shares of it of the three
// terms: this spread gives a planted AUC of about 0.77 at the defaults.
constexpr double kLogitVariance = 1.4;
constexpr double kLinearShare = 0.45, kPairShare = 0.35, kCountShare = 0.2;
constexpr double kCountZipf = 1.0;  // exponent of the counts' Zipf law

Status Validate(const CtrOptions& o) {
  RIGEL_RETURN_IF_ERROR(ValidateTrainTest(o.out, o.test_out));
  if (o.rows < 1 || o.test_rows < 1) return InvalidArgument("rows and test_rows must be positive");
  if (o.cardinality < 1 || o.cardinality > kMaxCardinality) {
    return InvalidArgument(fmt::format("cardinality must be between 1 and {}", kMaxCardinality));
  }
  if (!(o.zipf >= 0) || !std::isfinite(o.zipf)) {
    return InvalidArgument("zipf must be finite and >= 0");
  }
  if (!(o.missing >= 0) || !(o.missing < 1)) return InvalidArgument("missing must be in [0, 1)");
  if (o.latent < 1 || o.latent > kMaxLatent) {
    return InvalidArgument(fmt::format("latent must be between 1 and {}", kMaxLatent));
  }
  return Status::Ok();
}

// The id written for `rank` of a categorical field with round keys `keys`: a
// 4-round Feistel network over 16-bit halves with hashed round functions, a
// bijection of 32-bit values, so distinct ranks of one field get distinct ids.
uint32_t CategoryId(const std::array<uint64_t, 4>& keys, int64_t rank) {
  uint32_t left = static_cast<uint32_t>(rank) >> 16, right = static_cast<uint32_t>(rank) & 0xffff;
  for (uint64_t key : keys) {
    const uint32_t next = left ^ (static_cast<uint32_t>(Mix64(key ^ right)) & 0xffff);
    left = right;
    right = next;
  }
  return (left << 16) | right;
}

struct Model {
  uint64_t seed = 0;
  int64_t latent = 0;
  double missing = 0.0;
  std::vector<ZipfSampler> counts;  // per count field, over 0..max_i
  std::vector<ZipfSampler> values;  // per categorical field, over its ranks
  std::array<double, kCtrIntFields> u{};
  std::array<std::array<uint64_t, 4>, kCtrCatFields> id_keys{};  // CategoryId's, per field
  double w_std = 0.0, v_std = 0.0, bias = 0.0;
};

struct Row {
  std::array<int64_t, kCtrIntFields> counts;  // -1: missing
  std::array<int64_t, kCtrCatFields> ranks;   // -1: missing
};

void DrawRow(const Model& m, SplitMix64& rng, Row* row) {
  for (int i = 0; i < kCtrIntFields; ++i) {
    row->counts[i] = rng.Uniform() < m.missing ? -1 : m.counts[i].Sample(rng.Uniform());
  }
  for (int k = 0; k < kCtrCatFields; ++k) {
    row->ranks[k] = rng.Uniform() < m.missing ? -1 : m.values[k].Sample(rng.Uniform());
  }
}

// The planted logit of `row`, bias included.
double Logit(const Model& m, const Row& row) {
  double logit = m.bias;
  for (int i = 0; i < kCtrIntFields; ++i) {
    if (row.counts[i] >= 0) logit += m.u[i] * std::log1p(static_cast<double>(row.counts[i]));
  }
  // sum_{a<b} <v_a, v_b> = (|sum_a v_a|^2 - sum_a |v_a|^2) / 2.
  std::array<double, kMaxLatent> sum{};
  double squares = 0.0;
  for (int k = 0; k < kCtrCatFields; ++k) {
    const int64_t r = row.ranks[k];
    if (r < 0) continue;
    // w(k, r), then v(k, r), from a stream hashed from (seed, k, r).
    SplitMix64 weights(HashCoords(m.seed, kWeights, k, r));
    logit += m.w_std * weights.Normal();
    for (int64_t q = 0; q < m.latent; ++q) {
      const double v = m.v_std * weights.Normal();
      sum[q] += v;
      squares += v * v;
    }
  }
  double pairwise = -squares;
  for (int64_t q = 0; q < m.latent; ++q) pairwise += sum[q] * sum[q];
  return logit + 0.5 * pairwise;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Sets the weights' scales so each term's variance over rows is its share of
// kLogitVariance (in expectation over the weights): a field present with
// probability P whose values have sum_r p_r^2 = S adds w_std^2 (P - P^2 S), a
// pair of fields latent v_std^4 (P^2 - P^4 S S'), a count field u_i^2 times
// the variance of log1p(count) (0 when missing).
void SetScales(const CtrOptions& o, Model* m) {
  const double present = 1.0 - o.missing;
  std::vector<double> s(kCtrCatFields, 0.0);
  for (int k = 0; k < kCtrCatFields; ++k) {
    for (int64_t r = 0; r < m->values[k].size(); ++r) {
      const double p = m->values[k].Probability(r);
      s[k] += p * p;
    }
  }
  double linear = 0.0, pairs = 0.0;
  for (int k = 0; k < kCtrCatFields; ++k) {
    linear += present - present * present * s[k];
    for (int j = k + 1; j < kCtrCatFields; ++j) {
      pairs += present * present - std::pow(present, 4) * s[k] * s[j];
    }
  }
  m->w_std = linear > 0 ? std::sqrt(kLinearShare * kLogitVariance / linear) : 0.0;
  m->v_std =
      pairs > 0
          ? std::pow(kPairShare * kLogitVariance / (static_cast<double>(o.latent) * pairs), 0.25)
          : 0.0;
  for (int i = 0; i < kCtrIntFields; ++i) {
    double mean = 0.0, square = 0.0;
    for (int64_t c = 0; c < m->counts[i].size(); ++c) {
      const double l = std::log1p(static_cast<double>(c));
      mean += m->counts[i].Probability(c) * l;
      square += m->counts[i].Probability(c) * l * l;
    }
    const double var = present * square - present * present * mean * mean;
    const double scale =
        var > 0 ? std::sqrt(kCountShare * kLogitVariance / (kCtrIntFields * var)) : 0.0;
    m->u[i] = scale * SplitMix64(HashCoords(o.seed, kCountWeights, i)).Normal();
  }
}

// Solves for the bias that gives a mean probability of kPositiveRate over a
// pilot sample of its own stream (bisection; the mean is increasing in it).
void SolveBias(Model* m) {
  std::vector<double> logits(kPilotRows);
  Row row;
  m->bias = 0.0;
  for (int64_t i = 0; i < kPilotRows; ++i) {
    SplitMix64 rng(HashCoords(m->seed, kPilot, i));
    DrawRow(*m, rng, &row);
    logits[i] = Logit(*m, row);
  }
  double lo = -50.0, hi = 50.0;
  for (int iter = 0; iter < 80; ++iter) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0.0;
    for (double l : logits) mean += Sigmoid(mid + l);
    (mean / kPilotRows < kPositiveRate ? lo : hi) = mid;
  }
  m->bias = 0.5 * (lo + hi);
}

Model MakeModel(const CtrOptions& o) {
  Model m;
  m.seed = o.seed;
  m.latent = o.latent;
  m.missing = o.missing;
  for (int i = 0; i < kCtrIntFields; ++i) {
    // max_i from 10 to 1000, evenly in log scale.
    const int64_t max = std::llround(std::pow(10.0, 1.0 + 2.0 * i / (kCtrIntFields - 1)));
    m.counts.emplace_back(max + 1, kCountZipf);
  }
  for (int64_t card : CtrCardinalities(o.cardinality)) m.values.emplace_back(card, o.zipf);
  for (int k = 0; k < kCtrCatFields; ++k) {
    for (uint64_t round = 0; round < 4; ++round) {
      m.id_keys[k][round] = HashCoords(o.seed, kIds, k, round);
    }
  }
  SetScales(o, &m);
  SolveBias(&m);
  return m;
}

void AppendRow(const Model& m, const Row& row, bool positive, fmt::memory_buffer* buf) {
  static constexpr char kHex[] = "0123456789abcdef";
  buf->push_back(positive ? '1' : '0');
  for (int64_t c : row.counts) {
    buf->push_back('\t');
    if (c >= 0) fmt::format_to(fmt::appender(*buf), "{}", c);
  }
  for (int k = 0; k < kCtrCatFields; ++k) {
    buf->push_back('\t');
    if (row.ranks[k] < 0) continue;
    uint32_t id = CategoryId(m.id_keys[k], row.ranks[k]);
    char hex[8];
    for (int d = 7; d >= 0; --d, id >>= 4) hex[d] = kHex[id & 15];
    buf->append(hex, hex + 8);
  }
  buf->push_back('\n');
}

// Writes `n` rows of stream `stream`; counts the positives and, if `preds` is
// not null, appends each row's (true probability, label).
std::string WriteRows(const Model& m, int64_t n, Stream stream, int64_t* positives,
                      std::vector<std::pair<double, bool>>* preds) {
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(n) * 280);
  Row row;
  *positives = 0;
  for (int64_t i = 0; i < n; ++i) {
    SplitMix64 rng(HashCoords(m.seed, stream, i));
    DrawRow(m, rng, &row);
    const double p = Sigmoid(Logit(m, row));
    const bool positive = rng.Uniform() < p;
    *positives += positive;
    if (preds) preds->emplace_back(p, positive);
    AppendRow(m, row, positive, &buf);
  }
  return fmt::to_string(buf);
}

// Exact AUC of the probabilities against the labels (Mann-Whitney, ties
// counted half); nan when all labels are equal.
double Auc(std::vector<std::pair<double, bool>> preds) {
  std::sort(preds.begin(), preds.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double positives = 0.0, rank_sum = 0.0;  // sum of the positives' 1-based ranks
  for (size_t i = 0; i < preds.size();) {
    size_t j = i;
    double group_positives = 0.0;
    for (; j < preds.size() && preds[j].first == preds[i].first; ++j) {
      group_positives += preds[j].second;
    }
    rank_sum += group_positives * (0.5 * static_cast<double>(i + 1 + j));  // mid rank
    positives += group_positives;
    i = j;
  }
  const double negatives = static_cast<double>(preds.size()) - positives;
  if (positives == 0 || negatives == 0) return std::nan("");
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

double LogLoss(const std::vector<std::pair<double, bool>>& preds) {
  double sum = 0.0;
  for (const auto& [p, y] : preds) {
    const double q = std::clamp(y ? p : 1.0 - p, 1e-15, 1.0);
    sum -= std::log(q);
  }
  return sum / static_cast<double>(preds.size());
}

}  // namespace

std::vector<int64_t> CtrCardinalities(int64_t cardinality) {
  std::vector<int64_t> cards;
  for (int k = 0; k < kCtrCatFields; ++k) {
    const double c =
        std::pow(static_cast<double>(cardinality), static_cast<double>(k + 1) / kCtrCatFields);
    cards.push_back(std::min(cardinality, std::max<int64_t>(4, std::llround(c))));
  }
  return cards;
}

StatusOr<GenOutput> MakeCtr(const CtrOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  const Model m = MakeModel(o);
  int64_t train_positives = 0, test_positives = 0;
  std::vector<std::pair<double, bool>> preds;
  preds.reserve(static_cast<size_t>(o.test_rows));
  GenOutput out;
  out.files.push_back({o.out, WriteRows(m, o.rows, kTrain, &train_positives, nullptr)});
  out.files.push_back({o.test_out, WriteRows(m, o.test_rows, kTest, &test_positives, &preds)});
  int64_t total = 0;
  for (int64_t card : CtrCardinalities(o.cardinality)) total += card;
  out.summary = {
      fmt::format("rows: {}", o.rows),
      fmt::format("test rows: {}", o.test_rows),
      fmt::format("cardinality: {}", o.cardinality),
      fmt::format("cardinality total: {}", total),
      fmt::format("zipf: {}", o.zipf),
      fmt::format("missing: {}", o.missing),
      fmt::format("latent: {}", o.latent),
      fmt::format("train positive rate: {:.4f}",
                  static_cast<double>(train_positives) / static_cast<double>(o.rows)),
      fmt::format("test positive rate: {:.4f}",
                  static_cast<double>(test_positives) / static_cast<double>(o.test_rows)),
      fmt::format("planted model test log loss: {:.4f}", LogLoss(preds)),
      fmt::format("planted model test AUC: {:.4f}", Auc(std::move(preds))),
  };
  return out;
}

StatusOr<GenReport> GenerateCtr(const CtrOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeCtr(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
