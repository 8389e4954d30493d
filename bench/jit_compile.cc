// bench/jit_compile: how long the JIT tier (kernel/jit/) takes to compile a
// loop body, over every body of the example programs: each example runs
// serially in a fresh `rigel run -v --jit on` process (one epoch or
// iteration), whose -v lines give each loop's compile time and its parts (to
// LLVM IR, LLVM's optimiser, code generation). A fresh process is what a
// user's run pays; the first body of a process also pays for LLVM's code
// being paged in. --runs N repeats the set (default 3; 1 with --quick).
//
// One JSON line per body (its median over the runs) and one for the set:
// the median and 90th percentile over all bodies' runs, against the issue's
// 50 ms at the 90th percentile. A table on stderr. Exit 1 if a run failed or
// a body was not compiled (a build without LLVM prints one "skipped" line).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/proc.h"

namespace rigel::bench {
namespace {

namespace fs = std::filesystem;

struct Body {
  std::string program;
  int loop = 0;
  std::vector<double> total, lower, optimise, code;
  int64_t instructions = 0;
};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999) - 1;
  return v[std::min(k, v.size() - 1)];
}

int Main(int runs) {
  const fs::path source = RIGEL_SOURCE_DIR, bin = RIGEL_BIN_DIR;
  const fs::path work = fs::temp_directory_path() / "rigel_bench_jit_compile";
  fs::create_directories(work);
  // One epoch or iteration: every loop runs (and so is compiled) once.
  const std::vector<std::pair<std::string, std::vector<std::string>>> examples = {
      {"bias.rgl", {"EPOCHS=1"}},      {"ctr_fm.rgl", {"EPOCHS=1"}},
      {"dense_lr.rgl", {"EPOCHS=1"}},  {"fm.rgl", {"EPOCHS=1"}},
      {"kmeans.rgl", {"ITERS=1"}},     {"lda.rgl", {"ITERS=1"}},
      {"mf.rgl", {"EPOCHS=1"}},        {"softmax.rgl", {"EPOCHS=1"}},
      {"sparse_lr.rgl", {"EPOCHS=1"}}, {"wavefront.rgl", {"N=64", "M=64"}},
      {"word2vec.rgl", {"EPOCHS=1"}},  {"word2vec_heldout.rgl", {"EPOCHS=1"}},
  };
  static const std::regex kLine(
      R"(loop (\d+) \(line \d+\): jit \(on\): compiled in ([0-9.]+) ms \(IR ([0-9.]+), optimiser )"
      R"(([0-9.]+), code ([0-9.]+); (\d+) IR instructions\))");
  static const std::regex kSkip(R"(loop \d+ \(line \d+\): interpreted \(jit on\): (.*))");
  std::map<std::pair<std::string, int>, Body> bodies;
  bool failed = false;
  for (int r = 0; r < runs; ++r) {
    for (const auto& [file, sets] : examples) {
      std::vector<std::string> argv = {(bin / "rigel").string(),
                                       "run",
                                       (source / "examples" / file).string(),
                                       "-v",
                                       "--jit",
                                       "on"};
      for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
      const fs::path out = work / "out", err = work / "err";
      ProcResult p = Run(argv, out, err, 600);
      const std::string said = ReadFile(err);
      std::smatch m;
      if (std::regex_search(said, m, kSkip)) {
        std::printf("{\"bench\": \"jit_compile\", \"skipped\": \"%s\"}\n", m[1].str().c_str());
        return 0;
      }
      if (p.rc != 0) {
        std::fprintf(stderr, "jit_compile: %s failed (exit %d):\n%s", Join(argv).c_str(), p.rc,
                     Tail(err, 8).c_str());
        failed = true;
        continue;
      }
      std::istringstream lines(said);
      for (std::string line; std::getline(lines, line);) {
        if (!std::regex_search(line, m, kLine)) continue;
        Body& b = bodies[{file, std::stoi(m[1])}];
        b.program = file;
        b.loop = std::stoi(m[1]);
        b.total.push_back(std::stod(m[2]));
        b.lower.push_back(std::stod(m[3]));
        b.optimise.push_back(std::stod(m[4]));
        b.code.push_back(std::stod(m[5]));
        b.instructions = std::stoll(m[6]);
      }
    }
  }
  std::vector<double> all;
  std::fprintf(stderr, "%-22s %4s %9s %7s %9s %7s %7s\n", "program", "loop", "total ms", "IR ms",
               "optimiser", "code ms", "IR ins");
  for (const auto& [key, b] : bodies) {
    all.insert(all.end(), b.total.begin(), b.total.end());
    std::fprintf(stderr, "%-22s %4d %9.1f %7.1f %9.1f %7.1f %7lld\n", b.program.c_str(), b.loop,
                 Percentile(b.total, 0.5), Percentile(b.lower, 0.5), Percentile(b.optimise, 0.5),
                 Percentile(b.code, 0.5), static_cast<long long>(b.instructions));
    std::printf(
        "{\"bench\": \"jit_compile\", \"case\": \"%s/loop%d\", \"metric\": \"compile ms\", "
        "\"ours\": %.2f, \"ir_ms\": %.2f, \"optimiser_ms\": %.2f, \"code_ms\": %.2f, "
        "\"ir_instructions\": %lld, \"runs\": %zu}\n",
        b.program.c_str(), b.loop, Percentile(b.total, 0.5), Percentile(b.lower, 0.5),
        Percentile(b.optimise, 0.5), Percentile(b.code, 0.5),
        static_cast<long long>(b.instructions), b.total.size());
  }
  const double p50 = Percentile(all, 0.5), p90 = Percentile(all, 0.9);
  std::fprintf(stderr,
               "%zu bodies, %zu compiles: median %.1f ms, 90th percentile %.1f ms (goal <= 50)\n",
               bodies.size(), all.size(), p50, p90);
  std::printf(
      "{\"bench\": \"jit_compile\", \"case\": \"example_bodies/p90\", \"metric\": \"compile ms\", "
      "\"ours\": %.2f, \"median\": %.2f, \"bodies\": %zu, \"compiles\": %zu, \"goal\": 50, "
      "\"better\": \"lower\"}\n",
      p90, p50, bodies.size(), all.size());
  fs::remove_all(work);
  return failed || bodies.empty() ? 1 : 0;
}

}  // namespace
}  // namespace rigel::bench

int main(int argc, char** argv) {
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      runs = 1;
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: jit_compile [--quick] [--runs N]\n");
      return 2;
    }
  }
  return rigel::bench::Main(runs);
}
