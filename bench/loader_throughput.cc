// Loader throughput: parses generated triples and libsvm text (and a9a when
// present) with Rigel's loaders and with a plain getline + strtol/strtof
// parser of the same format, and prints one JSON line per figure (DESIGN.md).
//
//   loader_throughput [--quick] [--a9a PATH]
//
// Only parsing is timed (the text is already in memory for both parsers), so
// the figures do not depend on the page cache or the disk.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/hash.h"
#include "data/dataset.h"

namespace {

using rigel::data::Dataset;

constexpr double kMB = 1e6;
constexpr uint64_t kSeed = 20240601;

// Appends `v` in decimal.
void AppendInt(std::string* s, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  s->append(buf, r.ptr);
}

// Appends `v` with `digits` decimals.
void AppendFixed(std::string* s, float v, int digits) {
  char buf[48];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
  s->append(buf, r.ptr);
}

// MovieLens-like ratings: "user,item,rating" with 1-based indices.
std::string MakeTriples(size_t bytes) {
  rigel::SplitMix64 rng(kSeed);
  std::string s;
  s.reserve(bytes + 64);
  while (s.size() < bytes) {
    AppendInt(&s, 1 + static_cast<int64_t>(rng.Below(1000000)));
    s += ',';
    AppendInt(&s, 1 + static_cast<int64_t>(rng.Below(100000)));
    s += ',';
    AppendFixed(&s, static_cast<float>(0.5 + 4.5 * rng.Uniform()), 3);
    s += '\n';
  }
  return s;
}

// Sparse classification data: "+1 idx:val ..." with sorted 1-based indices,
// half binary features (as in a9a), half real-valued ones.
std::string MakeLibsvm(size_t bytes) {
  rigel::SplitMix64 rng(kSeed + 1);
  std::string s;
  s.reserve(bytes + 1024);
  while (s.size() < bytes) {
    s += rng.Below(2) ? "+1" : "-1";
    const int nfeat = 5 + static_cast<int>(rng.Below(36));
    int64_t idx = 0;
    for (int f = 0; f < nfeat; ++f) {
      idx += 1 + static_cast<int64_t>(rng.Below(5000));
      s += ' ';
      AppendInt(&s, idx);
      s += ':';
      if (rng.Below(2)) {
        s += '1';
      } else {
        AppendFixed(&s, static_cast<float>(rng.Uniform()), 5);
      }
    }
    s += '\n';
  }
  return s;
}

// The straightforward parsers one would write first: a line at a time from a
// stream, numbers with strtol/strtof. Same outputs as ours, no error detail.
int64_t ReferenceTriples(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<int32_t> ti, tj;
  std::vector<float> tv;
  int64_t rows = 0, cols = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    char* p;
    long i = std::strtol(line.c_str(), &p, 10);
    if (*p++ != ',') return -1;
    long j = std::strtol(p, &p, 10);
    if (*p++ != ',') return -1;
    float v = std::strtof(p, &p);
    ti.push_back(static_cast<int32_t>(i - 1));
    tj.push_back(static_cast<int32_t>(j - 1));
    tv.push_back(v);
    rows = std::max<int64_t>(rows, i);
    cols = std::max<int64_t>(cols, j);
  }
  return static_cast<int64_t>(tv.size()) + rows + cols;
}

int64_t ReferenceLibsvm(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<float> labels, values;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> index;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    char* p;
    labels.push_back(std::strtof(line.c_str(), &p));
    for (;;) {
      while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
      if (*p == '\0') break;
      long idx = std::strtol(p, &p, 10);
      if (*p++ != ':') return -1;
      index.push_back(static_cast<int32_t>(idx - 1));
      values.push_back(std::strtof(p, &p));
    }
    offsets.push_back(static_cast<int64_t>(index.size()));
  }
  return static_cast<int64_t>(labels.size() + values.size());
}

// Best-of-`reps` throughput of `parse` over `bytes` bytes, in MB/s.
double BestMBps(size_t bytes, int reps, const std::function<int64_t()>& parse) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    int64_t sink = parse();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sink < 0) {
      std::fprintf(stderr, "parse failed\n");
      std::exit(1);
    }
    best = std::max(best, static_cast<double>(bytes) / kMB / s);
  }
  return best;
}

void PrintFigure(const char* name, double ours, double ref, const char* ref_name, double goal) {
  std::printf(
      "{\"bench\": \"loader\", \"case\": \"%s\", \"metric\": \"MB/s\", \"ours\": %.1f, "
      "\"reference\": %.1f, \"reference_name\": \"%s\", \"ratio\": %.3f, ",
      name, ours, ref, ref_name, ours / ref);
  if (goal > 0) std::printf("\"goal\": %.1f, ", goal);
  std::printf("\"better\": \"higher\"}\n");
  std::fflush(stdout);
}

// Times ours and the reference on `text`; prints the figures and a table row.
void RunCase(const char* name, const std::string& text, bool libsvm, bool with_floor) {
  const std::string path = std::string("<") + name + ">";
  auto ours_parse = [&]() -> int64_t {
    auto r = libsvm ? rigel::data::ParseLibsvm(text, path, {})
                    : rigel::data::ParseTriples(text, path, {.base = 1});
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
      return -1;
    }
    return r->count;
  };
  auto ref_parse = [&]() { return libsvm ? ReferenceLibsvm(text) : ReferenceTriples(text); };
  // Best of 3 on the big inputs; small ones (a9a) get more tries so that a
  // single scheduler hiccup does not decide the figure.
  const int reps = text.size() >= 50'000'000 ? 3 : 10;
  const double ours = BestMBps(text.size(), reps, ours_parse);
  const double ref = BestMBps(text.size(), reps, ref_parse);
  PrintFigure(name, ours, ref, "getline+strtof", 0);
  if (with_floor) {
    const std::string floor_name = std::string(name) + "_vs_50MBps";
    PrintFigure(floor_name.c_str(), ours, 50.0, "issue goal 50 MB/s", 1.0);
  }
  std::fprintf(stderr, "%-14s %9.1f %12.1f %16.1f %8.2fx\n", name, text.size() / kMB, ours, ref,
               ours / ref);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string a9a_path;
  bool a9a_given = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--a9a") == 0 && i + 1 < argc) {
      a9a_path = argv[++i];
      a9a_given = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--a9a PATH]\n", argv[0]);
      return 2;
    }
  }
  if (!a9a_given) a9a_path = "../shared/data/a9a";
  const size_t bytes = quick ? 10'000'000 : 100'000'000;

  std::fprintf(stderr, "%-14s %9s %12s %16s %9s\n", "case", "MB", "ours MB/s", "getline MB/s",
               "ratio");
  RunCase("triples", MakeTriples(bytes), /*libsvm=*/false, /*with_floor=*/true);
  RunCase("libsvm", MakeLibsvm(bytes), /*libsvm=*/true, /*with_floor=*/true);
  if (std::filesystem::exists(a9a_path)) {
    auto text = rigel::ReadFileToString(a9a_path);
    if (!text.ok()) {
      std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
      return 1;
    }
    RunCase("libsvm/a9a", *text, /*libsvm=*/true, /*with_floor=*/false);
  } else if (a9a_given) {
    std::fprintf(stderr, "%s: no such file\n", a9a_path.c_str());
    return 1;
  } else {
    std::fprintf(stderr, "(no %s: a9a case skipped)\n", a9a_path.c_str());
  }
  return 0;
}
