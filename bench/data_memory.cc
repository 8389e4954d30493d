// Issue 32's figures: what a worker of a 4-worker job holds at its peak when
// workers hold only their part of the data (the default) against the same
// job with `--data-parts off` (every worker loads every data set whole, as
// all did before), what a worker holds with no data (a job over 3 lines),
// `examples/mf.rgl` on 8M generated ratings (issue 43: a worker of its 2-D
// loop holds only its blocks' elements) against the serial process and
// against whole loads, and how long a 4-worker word2vec job over the 5.3M-word corpus takes from
// the scheduler's start to every worker being ready: with parts, and with
// parts and the corpus' index (`rigel index`), each against whole loads
// without an index. One JSON line per figure (DESIGN.md), a table on stderr.
//
//   data_memory [--quick] [--corpus PATH] [--a9a PATH]
//
// Peaks are the last epoch's `peak_bytes` of --log-json (VmHWM); the load
// time is the scheduler log's "every worker is ready N s after the scheduler
// started". Each figure is the median of 3 runs (1 with --quick). The
// corpus (default ../shared/data/gutenberg-28m.txt) is copied to a temporary
// directory, where its index is written, and its first 1M words are taken
// for the memory figures; a missing default file skips its cases.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "bench/proc.h"
#include "bench/run_log.h"

namespace fs = std::filesystem;
using rigel::bench::Median;
using rigel::bench::ReadFile;

namespace {

const std::string kSrc = RIGEL_SOURCE_DIR;
const std::string kRigel = std::string(RIGEL_BIN_DIR) + "/rigel";

struct Job {
  std::string program;
  std::vector<std::string> sets;
  std::vector<std::string> flags = {};  // more options of `rigel run`
  int servers = 2;
  int epochs = 1;
};

// `job` with every worker loading every data set whole.
Job Whole(Job job) {
  job.flags.insert(job.flags.end(), {"--data-parts", "off"});
  return job;
}

struct Measured {
  double worker_peak = 0;  // bytes
  double ready_s = 0;      // scheduler start to every worker ready
  bool ok = false;
};

// Runs `job` on `workers` workers and its servers for its epochs; serially
// when `workers` is 0 (the peak is then the process's, no load time).
Measured RunOnce(const Job& job, int workers, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> argv = {kRigel,
                                   "run",
                                   job.program,
                                   "--log-json",
                                   (dir / "log.json").string(),
                                   "--stop-after-epochs",
                                   std::to_string(job.epochs)};
  if (workers > 0) {
    argv.insert(argv.end(), {"--workers", std::to_string(workers), "--servers",
                             std::to_string(job.servers), "--run-dir", (dir / "run").string()});
  }
  for (const std::string& s : job.sets) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), job.flags.begin(), job.flags.end());
  rigel::bench::ProcResult r = rigel::bench::Run(argv, dir / "out", dir / "err", 600);
  Measured m;
  if (r.rc != 0) {
    std::cerr << "data_memory: " << rigel::bench::Join(argv) << " failed (" << r.rc << "):\n"
              << rigel::bench::Tail(dir / "err", 10);
    return m;
  }
  const std::vector<nlohmann::json> epochs = rigel::bench::LaterEpochs(ReadFile(dir / "log.json"));
  if (epochs.empty()) return m;
  m.worker_peak = epochs.back()["peak_bytes"].value(workers > 0 ? "worker" : "process", 0.0);
  if (workers == 0) {
    m.ok = m.worker_peak > 0;
    return m;
  }
  std::smatch match;
  const std::string log = ReadFile(dir / "run" / "scheduler.log");
  static const std::regex kReady("every worker is ready ([0-9.]+) s after");
  if (std::regex_search(log, match, kReady)) m.ready_s = std::stod(match[1].str());
  m.ok = m.worker_peak > 0 && m.ready_s > 0;
  return m;
}

Measured Median3(const Job& job, int workers, const fs::path& dir, int runs) {
  std::vector<double> peaks, ready;
  for (int k = 0; k < runs; ++k) {
    Measured m = RunOnce(job, workers, dir);
    if (!m.ok) return m;
    peaks.push_back(m.worker_peak);
    ready.push_back(m.ready_s);
  }
  return {Median(peaks), Median(ready), true};
}

void Print(const std::string& c, const std::string& metric, double ours, double ref,
           const std::string& ref_name, double goal) {
  nlohmann::json j;
  j["bench"] = "data_memory";
  j["case"] = c;
  j["metric"] = metric;
  j["ours"] = ours;
  j["reference"] = ref;
  j["reference_name"] = ref_name;
  j["ratio"] = ref > 0 ? ours / ref : 0.0;
  j["goal"] = goal;
  j["better"] = "lower";
  std::cout << j.dump() << std::endl;
  std::fprintf(stderr, "%-34s %-12s %12.3f %12.3f %7.3f (goal %.2f)\n", c.c_str(), metric.c_str(),
               ours, ref, ref > 0 ? ours / ref : 0.0, goal);
}

// A worker's peak when `job` runs on 4 workers holding their parts against
// the same with whole loads, printed as case `name` with issue 32's goal;
// the runs, or nullopt when one failed.
std::optional<std::pair<Measured, Measured>> PartsAgainstWhole(const std::string& name,
                                                               const Job& job, const fs::path& dir,
                                                               int runs) {
  const Measured parts = Median3(job, 4, dir, runs);
  const Measured whole = Median3(Whole(job), 4, dir, runs);
  if (!parts.ok || !whole.ok) return std::nullopt;
  Print(name, "bytes", parts.worker_peak, whole.worker_peak,
        "the same 4-worker job with --data-parts off (every worker loads the whole data)", 0.4);
  return std::make_pair(parts, whole);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string corpus = "../shared/data/gutenberg-28m.txt", a9a = "../shared/data/a9a";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else if (a == "--a9a" && i + 1 < argc) {
      a9a = argv[++i];
    } else {
      std::fprintf(stderr, "usage: data_memory [--quick] [--corpus PATH] [--a9a PATH]\n");
      return 2;
    }
  }
  const int runs = quick ? 1 : 3;
  const fs::path tmp =
      fs::temp_directory_path() / ("rigel-data-memory-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::fprintf(stderr, "%-34s %-12s %12s %12s %7s\n", "case", "metric", "ours", "reference",
               "ratio");
  int failed = 0;
  // A job over 3 lines: what a worker holds before it holds any data.
  {
    std::ofstream(tmp / "tiny.csv") << "0,0,1\n1,1,2\n2,0,3\n";
    Job tiny{kSrc + "/tests/e2e/programs/rowsum.rgl", {"A.path=" + (tmp / "tiny.csv").string()}};
    Measured m = Median3(tiny, 4, tmp / "run", runs);
    failed += !m.ok;
    if (m.ok) Print("empty/worker_peak", "bytes", m.worker_peak, 0, "none (a job over 3 lines)", 0);
  }
  if (fs::exists(a9a)) {
    Job job{kSrc + "/examples/sparse_lr.rgl", {"train.path=" + fs::absolute(a9a).string()}};
    failed += !PartsAgainstWhole("a9a/worker_peak", job, tmp / "run", runs);
  } else {
    std::fprintf(stderr, "data_memory: %s not found: a9a skipped\n", a9a.c_str());
  }
  // Issue 43: examples/mf.rgl on 8M ratings (200k users, 100k items), 4
  // workers and 1 server, 3 epochs: a worker against the serial process.
  {
    const fs::path ratings = tmp / "ratings.csv";
    rigel::bench::ProcResult gen =
        rigel::bench::Run({kRigel, "gen", "ratings", "--out", ratings.string(), "--rows", "200000",
                           "--cols", "100000", "--count", "8000000", "--seed", "3", "--no-info"},
                          tmp / "gen.out", tmp / "gen.err", 600);
    Job mf{kSrc + "/examples/mf.rgl", {"ratings.path=" + ratings.string()}, {}, 1, 3};
    const Measured serial = gen.rc == 0 ? Median3(mf, 0, tmp / "run", runs) : Measured{};
    const auto both =
        serial.ok ? PartsAgainstWhole("mf-8M/worker_peak", mf, tmp / "run", runs) : std::nullopt;
    failed += !serial.ok || !both;
    if (serial.ok && both) {
      Print("mf-8M/worker_peak (serial)", "bytes", both->first.worker_peak, serial.worker_peak,
            "the serial process", 0.4);
    }
    fs::remove(ratings);
  }
  if (fs::exists(corpus)) {
    // The corpus and its first 1M words, where an index may be written.
    const fs::path whole = tmp / "corpus.txt", head = tmp / "corpus-1m.txt";
    fs::copy_file(corpus, whole, fs::copy_options::overwrite_existing);
    {
      const std::string text = ReadFile(whole);
      size_t at = 0;
      for (int words = 0; words < 1'000'000 && at != std::string::npos; ++words) {
        at = text.find_first_not_of(" \n\t\r", at);
        if (at != std::string::npos) at = text.find_first_of(" \n\t\r", at);
      }
      std::ofstream(head) << text.substr(0, at == std::string::npos ? text.size() : at) << "\n";
    }
    Job small{kSrc + "/examples/word2vec.rgl", {"corpus.path=" + head.string()}};
    failed += !PartsAgainstWhole("word2vec-1M/worker_peak", small, tmp / "run", runs);
    Job big{kSrc + "/examples/word2vec.rgl", {"corpus.path=" + whole.string()}};
    const auto both = PartsAgainstWhole("word2vec-5.3M/worker_peak", big, tmp / "run", runs);
    rigel::bench::ProcResult ix =
        rigel::bench::Run({kRigel, "index", big.program, "--set", big.sets[0]}, tmp / "index.out",
                          tmp / "index.err", 600);
    Measured indexed = ix.rc == 0 ? Median3(big, 4, tmp / "run", runs) : Measured{};
    failed += !both || !indexed.ok;
    if (both && indexed.ok) {
      const std::string today = "the same 4-worker job loading whole, without the data's index";
      Print("word2vec-5.3M/ready_s (parts)", "seconds", both->first.ready_s, both->second.ready_s,
            today, 0.5);
      Print("word2vec-5.3M/ready_s (parts, index)", "seconds", indexed.ready_s,
            both->second.ready_s, today, 0.5);
    }
  } else {
    std::fprintf(stderr, "data_memory: %s not found: the corpus' cases skipped\n", corpus.c_str());
  }
  fs::remove_all(tmp);
  return failed > 0 ? 1 : 0;
}
