// `corpus`: topical token stream for word2vec (words `w0`, `w1`, ...).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

enum Stream : uint64_t { kText = 1, kWordPerm };

// Segment lengths; one segment per line, about the span of a few word2vec
// windows, so a window mostly sees words of one topic.
constexpr int64_t kMinSegment = 8;
constexpr int64_t kMaxSegment = 24;

Status Validate(const CorpusOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.tokens < 1 || o.topics < 1 || o.stop_words < 1) {
    return InvalidArgument("tokens, topics and stop_words must be positive");
  }
  if (o.vocab < o.stop_words + o.topics) {
    return InvalidArgument("vocab must be at least stop_words + topics");
  }
  if (!(o.stop_fraction >= 0) || !(o.stop_fraction <= 1) || !(o.zipf >= 0) ||
      !std::isfinite(o.zipf)) {
    return InvalidArgument("stop_fraction must be in [0, 1], zipf finite and >= 0");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<GenOutput> MakeCorpus(const CorpusOptions& o) {
  RIGEL_RETURN_IF_ERROR(Validate(o));
  // Word ids are shuffled so neither frequency nor topic can be read off the
  // spelling: stop words and topics own random sets of ids.
  const std::vector<int64_t> word_of_slot =
      SeededPermutation(o.vocab, HashCoords(o.seed, kWordPerm));
  const int64_t topic_words = (o.vocab - o.stop_words) / o.topics;
  // Slots [0, stop_words) are stop words; topic t owns the next topic_words
  // slots; the remainder of the division goes to the last topic.
  auto topic_size = [&](int64_t t) {
    return t + 1 < o.topics ? topic_words : o.vocab - o.stop_words - t * topic_words;
  };
  const ZipfSampler stop_zipf(o.stop_words, o.zipf);
  const ZipfSampler topic_zipf(topic_words, o.zipf);
  const ZipfSampler last_zipf(topic_size(o.topics - 1), o.zipf);

  SplitMix64 rng(HashCoords(o.seed, kText));
  fmt::memory_buffer buf;
  buf.reserve(static_cast<size_t>(o.tokens) * 6);
  std::vector<int64_t> counts(static_cast<size_t>(o.vocab), 0);
  int64_t written = 0, segments = 0;
  while (written < o.tokens) {
    const int64_t topic = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(o.topics)));
    const ZipfSampler& zipf = topic + 1 < o.topics ? topic_zipf : last_zipf;
    const int64_t base = o.stop_words + topic * topic_words;
    int64_t len = kMinSegment + static_cast<int64_t>(rng.Below(kMaxSegment - kMinSegment + 1));
    if (len > o.tokens - written) len = o.tokens - written;
    for (int64_t t = 0; t < len; ++t) {
      const bool stop = rng.Uniform() < o.stop_fraction;
      const int64_t slot =
          stop ? stop_zipf.Sample(rng.Uniform()) : base + zipf.Sample(rng.Uniform());
      const int64_t word = word_of_slot[slot];
      ++counts[word];
      if (t > 0) buf.push_back(' ');
      fmt::format_to(fmt::appender(buf), "w{}", word);
    }
    buf.push_back('\n');
    written += len;
    ++segments;
  }
  int64_t distinct = 0, frequent = 0;
  for (int64_t c : counts) {
    distinct += c > 0;
    frequent += c >= 5;
  }
  GenOutput out;
  out.files.push_back({o.out, fmt::to_string(buf)});
  out.summary = {
      fmt::format("tokens: {}", written),
      fmt::format("vocab: {}", distinct),
      fmt::format("vocab with count >= 5: {}", frequent),
      fmt::format("topics: {}", o.topics),
      fmt::format("segments: {}", segments),
  };
  return out;
}

StatusOr<GenReport> GenerateCorpus(const CorpusOptions& opts) {
  RIGEL_ASSIGN_OR_RETURN(GenOutput out, MakeCorpus(opts));
  return WriteGenOutput(out, opts.write_info);
}

}  // namespace rigel::examples
