// `docs`: an LDA corpus (one document of words `w{id}` per line) drawn from
// planted, mostly disjoint topics, which go to `<out>.topics`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

enum Stream : uint64_t { kWordPerm = 1, kDocs };

Status Validate(const DocsOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.docs < 1 || o.topics < 1 || o.vocab < 1 || o.doc_len < 1) {
    return InvalidArgument("docs, topics, vocab and doc_len must be positive");
  }
  if (o.topic_words < 1 || o.topic_words > o.vocab) {
    return InvalidArgument("topic_words must be in [1, vocab]");
  }
  if (!(o.alpha > 0) || !std::isfinite(o.alpha)) {
    return InvalidArgument("alpha must be finite and > 0");
  }
  return Status::Ok();
}

// log of a Gamma(a, 1) draw: Marsaglia-Tsang for a >= 1; for a < 1, the boost
// Gamma(a) = Gamma(a + 1) * U^(1/a), kept in logs because U^(1/a) underflows
// for small a.
double LogGamma(double a, SplitMix64& rng) {
  if (a < 1.0) {
    const double u = 1.0 - rng.Uniform();  // in (0, 1]
    return LogGamma(a + 1.0, rng) + std::log(u) / a;
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = rng.Normal();
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = rng.Uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x ||
        std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
      return std::log(d * v);
    }
  }
}

// theta ~ Dirichlet(alpha, ..., alpha) as a cumulative distribution over
// topics (last entry exactly 1).
void DrawTopicCdf(double alpha, SplitMix64& rng, std::vector<double>* cdf) {
  double top = -HUGE_VAL;
  for (double& g : *cdf) top = std::max(top, g = LogGamma(alpha, rng));
  double sum = 0.0;
  for (double& g : *cdf) g = sum += std::exp(g - top);
  for (double& g : *cdf) g /= sum;
  cdf->back() = 1.0;
}

}  // namespace

StatusOr<GenOutput> MakeDocs(const DocsOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  // Topic t owns slots [t * topic_words, (t + 1) * topic_words) of a shuffled
  // vocabulary, wrapping around when the vocabulary is too small.
  const std::vector<int64_t> word_of_slot =
      SeededPermutation(o.vocab, HashCoords(o.seed, kWordPerm));
  auto word = [&](int64_t topic, int64_t rank) {
    return word_of_slot[(topic * o.topic_words + rank) % o.vocab];
  };
  const ZipfSampler within_topic(o.topic_words, 1.0);
  fmt::memory_buffer topic_buf;
  for (int64_t t = 0; t < o.topics; ++t) {
    for (int64_t r = 0; r < o.topic_words; ++r) {
      if (r > 0) topic_buf.push_back(' ');
      fmt::format_to(fmt::appender(topic_buf), "w{}:{:.6f}", word(t, r),
                     within_topic.Probability(r));
    }
    topic_buf.push_back('\n');
  }

  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(o.docs * o.doc_len) * 6);
  std::vector<int64_t> counts(static_cast<size_t>(o.vocab), 0);
  std::vector<double> topic_cdf(static_cast<size_t>(o.topics));
  const int64_t lo = std::max<int64_t>(1, o.doc_len / 2), hi = o.doc_len + o.doc_len / 2;
  int64_t tokens = 0;
  for (int64_t d = 0; d < o.docs; ++d) {
    // One stream per document: document d does not depend on the others.
    SplitMix64 rng(HashCoords(o.seed, kDocs, d));
    DrawTopicCdf(o.alpha, rng, &topic_cdf);
    const int64_t len = lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
    for (int64_t i = 0; i < len; ++i) {
      const int64_t z =
          std::upper_bound(topic_cdf.begin(), topic_cdf.end(), rng.Uniform()) - topic_cdf.begin();
      const int64_t w = word(std::min(z, o.topics - 1), within_topic.Sample(rng.Uniform()));
      ++counts[w];
      if (i > 0) buf.push_back(' ');
      fmt::format_to(fmt::appender(buf), "w{}", w);
    }
    buf.push_back('\n');
    tokens += len;
  }
  const int64_t distinct = std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c; });
  GenOutput out;
  out.files.push_back({o.out, fmt::to_string(buf)});
  out.files.push_back({o.out + ".topics", fmt::to_string(topic_buf)});
  out.summary = {
      fmt::format("docs: {}", o.docs),    fmt::format("tokens: {}", tokens),
      fmt::format("vocab: {}", distinct), fmt::format("topics: {}", o.topics),
      fmt::format("alpha: {}", o.alpha),  fmt::format("topic words: {}", o.topic_words),
  };
  return out;
}

StatusOr<GenReport> GenerateDocs(const DocsOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeDocs(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
