// bench/models: the sparse-embedding benchmark. For each model, Rigel serially
// and on local clusters of 2 and 4 workers (2 servers) at default flags,
// against the peer a user would pick instead, on the same input in the same
// run. Quality is what each model measures of data it does not train on
// (DSL.md version 4):
//
//   sparse_lr  examples/sparse_lr.rgl on ../shared/data/a9a: test accuracy
//              on a9a.t; peer: Debian's liblinear-train -s 0 (L2 logistic
//              regression), its test accuracy.
//   fm         tests/e2e/programs/fm.rgl (an order-2 factorization machine) on
//              a9a: test accuracy; peer: the same liblinear run.
//   word2vec   examples/word2vec_heldout.rgl (examples/word2vec.rgl's loop on
//              95% of the positions), 3 epochs over the first --words words
//              of ../shared/data/gutenberg-28m.txt (default 1M; 0: all): the
//              held-out loss of the other 5%; peer: Debian's fasttext
//              skipgram -minn 0 -maxn 0 -t 1 -loss ns (no subsampling: both
//              train on the same pairs), the same dim, window, negatives and
//              min count, on 1 and 2 threads (its rate: the words/sec/thread
//              it reports, times threads). fastText reports only its training
//              loss (`reference_measure`), so its speed is the comparison.
//   lda        examples/lda.rgl on its generated documents, 30 sweeps: the
//              per-token log-likelihood; no peer here.
//   mf         examples/mf.rgl (the 2-D plan) on 1.1M generated ratings
//              (`rigel gen ratings --count 1100000`): test RMSE, and
//   mf_relaxed the same loop with `relax W, H` (data-parallel, row caches);
//              no peer here (bench/interp_mf compares the loop with a
//              hand-written one).
//   ctr_fm     examples/ctr_fm.rgl (a factorization machine over hashed
//              Criteo-layout fields, 2^20 buckets, 2 epochs) on `rigel gen
//              ctr` data (200k training rows, 40k test; 5k and 1k with
//              --quick): test AUC; peer: liblinear-train -s 0 on the same
//              hashed features (the criteo loader's, written as libsvm, the
//              integer fields scaled as the program scales them), its test
//              AUC from liblinear-predict -b 1's probabilities.
//
// Serially each model runs twice: every loop body compiled to native code
// (`--jit on`, the serial run the cluster lines compare with) and the
// interpreter alone (`--jit off`), whose line carries `jit_speedup` (its
// epoch over the compiled run's) and for word2vec `jit_words_speedup` (the
// compiled run's words/s over its own; goal 1.6). The clusters run at
// Rigel's default, --jit auto.
//
// The cluster lines carry the ratios the issue sets goals for, against the
// serial run of the same model in the same bench run: `epoch_ratio` (the
// cluster's epoch / serial's; its goal on 2 workers), `cpu_ratio` (CPU
// seconds of every process per epoch), `quality_delta` (relative, cluster -
// serial), and for mf_relaxed `bytes_ratio` against mf's 2-D plan on as
// many workers.
//
// Per run: seconds per epoch (the --log-json epochs after the first, median),
// bytes moved per epoch, CPU seconds of every process (the run's own
// children included), the final quality the program prints, and words/s for
// word2vec. One JSON line per run (DESIGN.md), a table on stderr, and a
// gnuplot figure of quality against time per model (--plot FILE, default
// WORK/models.png). Peers that are not installed are reported with a null
// reference (scripts/setup.sh installs them). --quick: 2 epochs and 10^5
// words, a smoke run (ctest's bench.models_quick). --only MODEL: that model
// alone. --transport ucx|both: the cluster runs on UCX, or on ZeroMQ and then
// UCX (the UCX lines add zmq_epoch_ratio, zmq_cpu_ratio and
// zmq_quality_delta against the ZeroMQ run of the same size). Exit 1 if a
// run failed.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/proc.h"
#include "data/dataset.h"
#include "data/part_load.h"

namespace rigel::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// examples/ctr_fm.rgl's defaults: its bucket count and the scale of the
// integer fields.
constexpr int64_t kCtrBuckets = int64_t{1} << 20;
constexpr float kCtrIntScale = 0.15f;

struct Options {
  fs::path source = RIGEL_SOURCE_DIR, bin = RIGEL_BIN_DIR, work = "/tmp/rigel_bench_models";
  fs::path plot;
  int64_t words = 1000000;
  double timeout_s = 600;
  bool quick = false;  // 2 epochs, 10^5 words: a smoke run
  std::string only;    // run this model alone ("": every model)
  // The transports the cluster runs use, each in turn ("zmq", "ucx").
  std::vector<std::string> transports = {"zmq"};
};

// One epoch of a Rigel run: its --log-json line and the quality printed.
struct Epoch {
  double elapsed_s = 0, epoch_s = 0, bytes = 0, cpu_s = 0, updates_per_s = 0, quality = 0;
};

struct RunOut {
  bool ok = false;
  std::string name;  // "rigel serial", "rigel 2 workers", "fasttext 1 thread", ...
  std::vector<Epoch> epochs;
  ProcResult proc;
  double quality = 0;  // final
  double rate = 0;     // words/s (word2vec)
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Values after `key` on each printed line, in order.
std::vector<double> Series(const std::string& out, const std::string& key) {
  std::vector<double> v;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      if (w == key && words >> w) v.push_back(std::atof(w.c_str()));
    }
  }
  return v;
}

class Models {
 public:
  explicit Models(Options o) : o_(std::move(o)) {}

  int Main() {
    fs::create_directories(o_.work);
    const fs::path data = o_.source / ".." / "shared" / "data";
    const fs::path a9a = data / "a9a", corpus = data / "gutenberg-28m.txt";
    if (!Wanted("sparse_lr") && !Wanted("fm")) {
      // not asked for
    } else if (fs::exists(a9a)) {
      RunOut lin = Liblinear(a9a);
      Model("sparse_lr", o_.source / "examples/sparse_lr.rgl", A9aSets(a9a), "test_accuracy", {lin},
            1.5);
      Model("fm", o_.source / "tests/e2e/programs/fm.rgl", A9aSets(a9a), "test_accuracy", {lin},
            1.5);
    } else {
      std::fprintf(stderr, "models: %s not found: sparse_lr and fm skipped\n", a9a.c_str());
    }
    if (!Wanted("word2vec")) {
      // not asked for
    } else if (fs::exists(corpus)) {
      const fs::path words = Words(corpus);
      std::vector<RunOut> peers = {Fasttext(words, 1), Fasttext(words, 2)};
      const std::string epochs = o_.quick ? "EPOCHS=2" : "EPOCHS=3";
      Model("word2vec", o_.source / "examples/word2vec_heldout.rgl",
            {"corpus.path=" + words.string(), epochs}, "heldout", peers, 0.75);
    } else {
      std::fprintf(stderr, "models: %s not found: word2vec skipped\n", corpus.c_str());
    }
    Model("lda", o_.source / "examples/lda.rgl", {o_.quick ? "ITERS=2" : "ITERS=30"}, "loglik", {},
          0);
    if (Wanted("mf") || Wanted("mf_relaxed")) {
      const fs::path ratings = Ratings();
      if (ratings.empty()) return 1;
      const std::vector<std::string> mf_sets = {"ratings.path=" + ratings.string(),
                                                o_.quick ? "EPOCHS=2" : "EPOCHS=10"};
      Model("mf", o_.source / "examples/mf.rgl", mf_sets, "test_rmse", {}, 0);
      Model("mf_relaxed", MfRelaxed(), mf_sets, "test_rmse", {}, 0);
    }
    if (const auto ctr = Wanted("ctr_fm") ? CtrData() : std::nullopt) {
      Model("ctr_fm", o_.source / "examples/ctr_fm.rgl",
            {"train.path=" + ctr->first.string(), "test.path=" + ctr->second.string(),
             "BUCKETS=" + std::to_string(kCtrBuckets)},
            "test_auc", {LiblinearCtr(ctr->first, ctr->second)}, 0);
    }
    Plot();
    return failed_ ? 1 : 0;
  }

 private:
  std::vector<std::string> A9aSets(const fs::path& a9a) const {
    std::vector<std::string> sets = {"train.path=" + a9a.string(),
                                     "test.path=" + a9a.string() + ".t"};
    if (o_.quick) sets.push_back("EPOCHS=2");
    return sets;
  }

  // 1.1M generated ratings (10^5 with --quick), made once in the work
  // directory; empty if `rigel gen` failed (said on stderr).
  fs::path Ratings() {
    const int64_t count = o_.quick ? 100000 : 1100000;
    const fs::path out = o_.work / ("ratings-" + std::to_string(count) + ".csv");
    if (fs::exists(out)) return out;
    ProcResult g = Run({(o_.bin / "rigel").string(), "gen", "ratings", "--out", out.string(),
                        "--count", std::to_string(count), "--no-info"},
                       o_.work / "gen.out", o_.work / "gen.err", o_.timeout_s);
    if (g.rc != 0) {
      std::fprintf(stderr, "models: rigel gen ratings failed (exit %d):\n%s", g.rc,
                   Tail(o_.work / "gen.err", 8).c_str());
      return {};
    }
    return out;
  }

  // examples/mf.rgl with its training loop relaxed (`relax W, H`), in the
  // work directory, its data path made absolute.
  fs::path MfRelaxed() {
    const fs::path out = o_.work / "mf_relaxed.rgl";
    std::string text = ReadFile(o_.source / "examples/mf.rgl");
    auto replace = [&](const std::string& from, const std::string& to) {
      const size_t at = text.find(from);
      if (at != std::string::npos) text.replace(at, from.size(), to);
    };
    replace("parallel for (i, j, v) in train {", "parallel for (i, j, v) in train relax W, H {");
    replace("\"data/ratings.csv\"",
            "\"" + (o_.source / "examples/data/ratings.csv").string() + "\"");
    std::ofstream(out) << text;
    return out;
  }

  // The first o_.words words of the corpus, one line per input line.
  fs::path Words(const fs::path& corpus) {
    if (o_.words <= 0) return corpus;
    const fs::path out = o_.work / ("words-" + std::to_string(o_.words) + ".txt");
    if (fs::exists(out)) return out;
    std::ifstream in(corpus);
    std::ofstream w(out);
    int64_t n = 0;
    for (std::string line; n < o_.words && std::getline(in, line);) {
      std::istringstream words(line);
      bool first = true;
      for (std::string x; n < o_.words && words >> x; ++n) {
        w << (first ? "" : " ") << x;
        first = false;
      }
      w << "\n";
    }
    return out;
  }

  // `jit`: the --jit flag ("": none, Rigel's default).
  RunOut Rigel(const std::string& tag, const fs::path& program,
               const std::vector<std::string>& sets, const std::string& key, int workers,
               const std::string& transport = "zmq", const std::string& jit = "") {
    RunOut r;
    r.name = workers > 0 ? "rigel " + std::to_string(workers) + " workers" : "rigel serial";
    if (workers > 0 && transport != "zmq") r.name += " " + transport;
    if (jit == "off") r.name += " interpreter";
    const fs::path log = o_.work / (tag + ".jsonl");
    std::vector<std::string> argv = {(o_.bin / "rigel").string(), "run", program.string(),
                                     "--log-json", log.string()};
    if (!jit.empty()) argv.insert(argv.end(), {"--jit", jit});
    for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
    if (workers > 0) {
      argv.insert(argv.end(), {"--workers", std::to_string(workers), "--servers", "2", "--run-dir",
                               (o_.work / (tag + ".run")).string(), "--transport", transport});
    }
    const fs::path out = o_.work / (tag + ".out"), err = o_.work / (tag + ".err");
    r.proc = Run(argv, out, err, o_.timeout_s);
    const std::string text = ReadFile(out);
    std::vector<double> q = Series(text, key);
    std::istringstream lines(ReadFile(log));
    for (std::string line; std::getline(lines, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      Epoch e;
      e.elapsed_s = j.value("elapsed_s", 0.0);
      e.epoch_s = j.value("epoch_s", 0.0);
      e.cpu_s = j.value("cpu_s", 0.0);
      e.updates_per_s = j.value("updates_per_s", 0.0);
      for (const auto& [k, v] : j["bytes"].items())
        e.bytes += k == "local.kept" ? 0 : v.get<double>();
      r.epochs.push_back(e);
    }
    for (size_t k = 0; k < r.epochs.size() && k < q.size(); ++k) r.epochs[k].quality = q[k];
    r.ok = r.proc.rc == 0 && !q.empty() && !r.epochs.empty();
    if (!r.ok) {
      failed_ = true;
      std::fprintf(stderr, "models: %s failed (exit %d%s): %s\n%s", tag.c_str(), r.proc.rc,
                   r.proc.timed_out ? ", timed out" : "", Join(argv).c_str(), Tail(err, 8).c_str());
      return r;
    }
    r.quality = q.back();
    return r;
  }

  RunOut Liblinear(const fs::path& a9a) {
    RunOut r;
    r.name = "liblinear -s 0";
    const fs::path train = "/usr/bin/liblinear-train", predict = "/usr/bin/liblinear-predict";
    if (!fs::exists(train) || !fs::exists(predict)) return r;
    const fs::path model = o_.work / "a9a.model";
    ProcResult t = Run({train.string(), "-s", "0", "-q", a9a.string(), model.string()},
                       o_.work / "liblinear.out", o_.work / "liblinear.err", o_.timeout_s);
    ProcResult p = Run(
        {predict.string(), a9a.string() + ".t", model.string(), (o_.work / "a9a.pred").string()},
        o_.work / "predict.out", o_.work / "predict.err", o_.timeout_s);
    std::smatch m;
    const std::string said = ReadFile(o_.work / "predict.out");
    static const std::regex kAccuracy(R"(Accuracy = ([0-9.]+)%)");
    if (t.rc != 0 || p.rc != 0 || !std::regex_search(said, m, kAccuracy)) return r;
    r.ok = true;
    r.proc = t;  // training time; prediction is not an epoch's work
    r.quality = std::atof(m[1].str().c_str()) / 100;
    return r;
  }

  bool Wanted(const std::string& model) const { return o_.only.empty() || o_.only == model; }

  // Generated Criteo-layout data, made once in the work directory; none if
  // `rigel gen ctr` failed (said on stderr).
  std::optional<std::pair<fs::path, fs::path>> CtrData() {
    const int64_t rows = o_.quick ? 5000 : 200000;
    const fs::path train = o_.work / ("ctr-" + std::to_string(rows) + ".tsv");
    const fs::path test = o_.work / ("ctr-" + std::to_string(rows) + "-test.tsv");
    if (fs::exists(train) && fs::exists(test)) return std::make_pair(train, test);
    ProcResult g = Run({(o_.bin / "rigel").string(), "gen", "ctr", "--out", train.string(),
                        "--test-out", test.string(), "--rows", std::to_string(rows), "--test-rows",
                        std::to_string(rows / 5), "--seed", "5", "--no-info"},
                       o_.work / "gen.out", o_.work / "gen.err", o_.timeout_s);
    if (g.rc != 0) {
      std::fprintf(stderr, "models: rigel gen ctr failed (exit %d):\n%s", g.rc,
                   Tail(o_.work / "gen.err", 8).c_str());
      failed_ = true;
      return std::nullopt;
    }
    return std::make_pair(train, test);
  }

  // liblinear's L2 logistic regression on the features examples/ctr_fm.rgl
  // sees, its test AUC the quality.
  RunOut LiblinearCtr(const fs::path& train, const fs::path& test) {
    RunOut r;
    r.name = "liblinear -s 0 (hashed)";
    const fs::path bin = "/usr/bin/liblinear-train", predict = "/usr/bin/liblinear-predict";
    if (!fs::exists(bin) || !fs::exists(predict)) return r;
    const fs::path train_svm = o_.work / "ctr-train.svm", test_svm = o_.work / "ctr-test.svm";
    std::vector<float> labels;
    if (!CtrAsLibsvm(train, train_svm, nullptr) || !CtrAsLibsvm(test, test_svm, &labels)) return r;
    const fs::path model = o_.work / "ctr.model", pred = o_.work / "ctr.pred";
    ProcResult t = Run({bin.string(), "-s", "0", "-q", train_svm.string(), model.string()},
                       o_.work / "ctr-liblinear.out", o_.work / "ctr-liblinear.err", o_.timeout_s);
    ProcResult p =
        Run({predict.string(), "-b", "1", test_svm.string(), model.string(), pred.string()},
            o_.work / "ctr-predict.out", o_.work / "ctr-predict.err", o_.timeout_s);
    if (t.rc != 0 || p.rc != 0) return r;
    // "labels 1 0" (or "labels 0 1"), then per test row its label and the
    // probability of each, in that order.
    std::istringstream lines(ReadFile(pred));
    std::string header, word;
    std::getline(lines, header);
    std::istringstream h(header);
    h >> word;
    int positive_column = -1;
    for (int k = 0; h >> word; ++k) {
      if (word == "1") positive_column = k;
    }
    std::vector<double> p1;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream in(line);
      std::vector<double> v;
      for (double x; in >> x;) v.push_back(x);
      if (positive_column < 0 || v.size() < static_cast<size_t>(positive_column) + 2) return r;
      p1.push_back(v[static_cast<size_t>(positive_column) + 1]);
    }
    if (p1.size() != labels.size() || p1.empty()) return r;
    r.ok = true;
    r.proc = t;
    r.quality = Auc(p1, labels);
    return r;
  }

  // Loads a Criteo-layout file as examples/ctr_fm.rgl does and writes it in
  // libsvm's format (1-based indices; integer fields times INT_SCALE);
  // `labels`, when given, gets each row's label.
  bool CtrAsLibsvm(const fs::path& tsv, const fs::path& out, std::vector<float>* labels) {
    data::LibsvmOptions o;
    o.format = data::LibsvmFormat::kCriteo;
    o.buckets = kCtrBuckets;
    auto d = data::LoadFile(tsv.string(), data::LoadSpec::Of(o));
    if (!d.ok()) {
      std::fprintf(stderr, "models: %s\n", d.status().message().c_str());
      failed_ = true;
      return false;
    }
    std::ofstream f(out);
    std::vector<std::pair<int32_t, float>> row;
    for (int64_t n = 0; n < d->count; ++n) {
      const float y = d->labels[static_cast<size_t>(n)];
      if (labels != nullptr) labels->push_back(y);
      row.clear();
      for (int64_t k = d->feat_offset[static_cast<size_t>(n)];
           k < d->feat_offset[static_cast<size_t>(n) + 1]; ++k) {
        const int32_t i = d->feat_index[static_cast<size_t>(k)];
        row.emplace_back(i, d->feat_value[static_cast<size_t>(k)] * (i < 13 ? kCtrIntScale : 1.0f));
      }
      // liblinear wants ascending indices, each once: fields hashed into
      // one bucket add up, as the program's sums over the row do.
      std::sort(row.begin(), row.end());
      f << (y > 0.5f ? 1 : 0);
      for (size_t k = 0; k < row.size();) {
        float x = 0;
        const int32_t i = row[k].first;
        for (; k < row.size() && row[k].first == i; ++k) x += row[k].second;
        f << ' ' << i + 1 << ':' << x;
      }
      f << '\n';
    }
    return static_cast<bool>(f);
  }

  // The chance that a positive scores above a negative, ties one half.
  static double Auc(const std::vector<double>& score, const std::vector<float>& label) {
    std::vector<size_t> order(score.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
    double positives = 0, negatives = 0, wins = 0;
    for (size_t k = 0; k < order.size();) {
      size_t end = k;
      double pos = 0, neg = 0;
      while (end < order.size() && score[order[end]] == score[order[k]]) {
        (label[order[end]] > 0.5f ? pos : neg) += 1;
        ++end;
      }
      wins += pos * negatives + 0.5 * pos * neg;
      positives += pos;
      negatives += neg;
      k = end;
    }
    return positives > 0 && negatives > 0 ? wins / (positives * negatives) : 0.0;
  }

  RunOut Fasttext(const fs::path& words, int threads) {
    RunOut r;
    r.name = "fasttext " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
    const fs::path bin = "/usr/bin/fasttext";
    if (!fs::exists(bin)) return r;
    const std::string tag = "fasttext" + std::to_string(threads);
    // examples/word2vec.rgl: D 32, WINDOW 5, NEG 5, min_count 5, lr 0.025.
    r.proc = Run({bin.string(), "skipgram",
                  "-input",     words.string(),
                  "-output",    (o_.work / tag).string(),
                  "-dim",       "32",
                  "-ws",        "5",
                  "-neg",       "5",
                  "-minn",      "0",
                  "-maxn",      "0",
                  "-t",         "1",
                  "-loss",      "ns",
                  "-minCount",  "5",
                  "-lr",        "0.025",
                  "-epoch",     "1",
                  "-thread",    std::to_string(threads),
                  "-verbose",   "2"},
                 o_.work / (tag + ".out"), o_.work / (tag + ".err"), o_.timeout_s);
    // The progress line is rewritten with '\r'; the last one has the totals.
    const std::string said =
        ReadFile(o_.work / (tag + ".err")) + ReadFile(o_.work / (tag + ".out"));
    static const std::regex kLoss(R"(avg\.loss:\s*([0-9.]+))");
    std::optional<double> loss;
    for (auto it = std::sregex_iterator(said.begin(), said.end(), kLoss);
         it != std::sregex_iterator(); ++it) {
      loss = std::atof((*it)[1].str().c_str());
    }
    if (r.proc.rc != 0 || !loss) return r;
    // Its own training rate (the process also reads the corpus twice and
    // writes the model, which Rigel's epoch time does not count either).
    static const std::regex kRate(R"(words/sec/thread:\s*([0-9]+))");
    double per_thread = 0;
    for (auto it = std::sregex_iterator(said.begin(), said.end(), kRate);
         it != std::sregex_iterator(); ++it) {
      per_thread = std::atof((*it)[1].str().c_str());
    }
    r.ok = true;
    r.quality = *loss;
    r.rate = per_thread * threads;
    return r;
  }

  // `epoch_goal`: the 2 workers' epoch over serial's the issue asks for (0:
  // none).
  void Model(const std::string& model, const fs::path& program,
             const std::vector<std::string>& sets, const std::string& key,
             const std::vector<RunOut>& peers, double epoch_goal) {
    if (!Wanted(model)) return;
    double serial_epoch = 0, serial_cpu = 0, serial_quality = 0, serial_rate = 0;
    // The zmq cluster run of each size, which a ucx one is compared with.
    std::map<int, std::array<double, 3>> zmq_run;  // epoch, cpu per epoch, quality
    // Serially with every body compiled (the baseline of the cluster runs),
    // then with the interpreter alone (`jit_speedup`: its epoch over the
    // compiled one's); the clusters at Rigel's default (--jit auto).
    struct Spec {
      int workers;
      std::string transport, jit;
    };
    std::vector<Spec> runs = {{0, "zmq", "on"}, {0, "zmq", "off"}};
    for (int workers : {2, 4}) {
      for (const std::string& t : o_.transports) runs.push_back({workers, t, ""});
    }
    for (const auto& [workers, transport, jit] : runs) {
      RunOut r = Rigel(model + (workers ? "_w" + std::to_string(workers) : "_serial") +
                           (transport == "zmq" ? "" : "_" + transport) +
                           (jit == "off" ? "_interpreter" : ""),
                       program, sets, key, workers, transport, jit);
      if (!r.ok) continue;
      std::vector<double> epoch_s, bytes;
      double cpu = 0;
      for (size_t k = 0; k < r.epochs.size(); ++k) {
        cpu += r.epochs[k].cpu_s;
        if (k > 0 || r.epochs.size() == 1) epoch_s.push_back(r.epochs[k].epoch_s);
        bytes.push_back(r.epochs[k].bytes);
      }
      json j = {{"bench", "models"},
                {"model", model},
                {"run", r.name},
                {"metric", key},
                {"ours", r.quality},
                {"epoch_s", Median(epoch_s)},
                {"epochs", r.epochs.size()},
                {"bytes_per_epoch", Median(bytes)},
                {"cpu_s_epochs", cpu},
                {"process_wall_s", r.proc.wall_s},
                {"process_cpu_s", r.proc.cpu_s}};
      if (model == "word2vec") j["words_per_s"] = r.epochs.back().updates_per_s;
      const double cpu_per_epoch = cpu / static_cast<double>(r.epochs.size());
      if (workers == 0 && jit == "off") {
        // The interpreter against the compiled serial run of this bench run.
        j["jit"] = "off";
        if (serial_epoch > 0)
          j["jit_speedup"] = Median(epoch_s) > 0 ? Median(epoch_s) / serial_epoch : 0.0;
        if (model == "word2vec" && r.epochs.back().updates_per_s > 0) {
          j["jit_words_speedup"] = serial_rate / r.epochs.back().updates_per_s;
          j["jit_words_goal"] = 1.6;
        }
        j["quality_delta"] = (r.quality - serial_quality) / std::fabs(serial_quality);
      } else if (workers == 0) {
        j["jit"] = "on";
        serial_epoch = Median(epoch_s);
        serial_cpu = cpu_per_epoch;
        serial_quality = r.quality;
        serial_rate = r.epochs.back().updates_per_s;
      } else if (serial_epoch > 0) {
        j["epoch_ratio"] = Median(epoch_s) / serial_epoch;
        if (epoch_goal > 0 && workers == 2) j["epoch_goal"] = epoch_goal;
        j["cpu_ratio"] = serial_cpu > 0 ? cpu_per_epoch / serial_cpu : 0.0;
        j["quality_delta"] = (r.quality - serial_quality) / std::fabs(serial_quality);
        j["transport"] = transport;
        if (transport == "zmq") {
          zmq_run[workers] = {Median(epoch_s), cpu_per_epoch, r.quality};
        } else if (zmq_run.count(workers)) {
          // Against the same cluster on ZeroMQ in this bench run.
          const auto& z = zmq_run[workers];
          j["zmq_epoch_ratio"] = z[0] > 0 ? Median(epoch_s) / z[0] : 0.0;
          j["zmq_cpu_ratio"] = z[1] > 0 ? cpu_per_epoch / z[1] : 0.0;
          j["zmq_quality_delta"] = (r.quality - z[2]) / std::fabs(z[2]);
        }
        if (model == "mf") mf_bytes_[workers] = Median(bytes);
        if (model == "mf_relaxed" && mf_bytes_[workers] > 0) {
          j["bytes_ratio"] = Median(bytes) / mf_bytes_[workers];
          j["bytes_goal"] = 2.0;
        }
      }
      json refs = json::array();
      for (const RunOut& p : peers) {
        json ref = {{"reference_name", p.name}};
        if (!p.ok) {
          ref["reference"] = nullptr;
          ref["note"] = "not installed or failed (scripts/setup.sh installs it)";
        } else {
          ref["reference"] = p.quality;
          if (model == "word2vec") ref["reference_measure"] = "training loss";
          ref["reference_wall_s"] = p.proc.wall_s;
          ref["reference_cpu_s"] = p.proc.cpu_s;
          if (p.rate > 0) {
            ref["reference_words_per_s"] = p.rate;
            ref["speed_ratio"] = r.epochs.back().updates_per_s / p.rate;
          }
        }
        refs.push_back(ref);
      }
      j["references"] = refs;
      std::printf("%s\n", j.dump().c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "%-9s %-16s %-13s %9.4f  %8.3f s/epoch  %9.3g B/epoch  %7.2f cpu s\n",
                   model.c_str(), r.name.c_str(), key.c_str(), r.quality, Median(epoch_s),
                   Median(bytes), cpu);
      curves_.push_back({model, r.name, r.epochs});
    }
    for (const RunOut& p : peers) {
      if (!p.ok) continue;
      std::fprintf(stderr, "%-9s %-16s %-13s %9.4f  %8.3f s (whole run)\n", model.c_str(),
                   p.name.c_str(), model == "word2vec" ? "training loss" : key.c_str(), p.quality,
                   p.proc.wall_s);
      // fastText's loss is a training loss: not on a held-out loss's axis.
      if (model != "word2vec") points_.push_back({model, p.name, p.proc.wall_s, p.quality});
    }
  }

  // One panel per model: quality against elapsed seconds, Rigel's epochs as
  // lines, each peer as a point at the end of its run.
  void Plot() {
    const fs::path png = o_.plot.empty() ? o_.work / "models.png" : o_.plot;
    std::vector<std::string> models;
    for (const Curve& c : curves_) {
      if (std::find(models.begin(), models.end(), c.model) == models.end()) {
        models.push_back(c.model);
      }
    }
    if (models.empty()) return;
    const fs::path script = o_.work / "models.gp";
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1500,1000 noenhanced\nset output '" << png.string() << "'\n"
       << "set multiplot layout 2,4\nset key bottom right\nset grid\n";
    for (const std::string& m : models) {
      gp << "set title '" << m << "'\nset xlabel 'seconds'\nset ylabel '"
         << (m == "word2vec"                  ? "held-out loss"
             : m == "lda"                     ? "per-token log-likelihood"
             : m == "mf" || m == "mf_relaxed" ? "test RMSE"
             : m == "ctr_fm"                  ? "test AUC"
                                              : "test accuracy")
         << "'\n";
      gp << "set logscale x\nplot ";
      bool first = true;
      int n = 0;
      for (const Curve& c : curves_) {
        if (c.model != m) continue;
        const fs::path dat = o_.work / (m + "_" + std::to_string(n++) + ".dat");
        std::ofstream d(dat);
        for (const Epoch& e : c.epochs) d << e.elapsed_s << " " << e.quality << "\n";
        gp << (first ? "" : ", ") << "'" << dat.string() << "' with linespoints title '" << c.name
           << "'";
        first = false;
      }
      for (const Point& p : points_) {
        if (p.model != m) continue;
        const fs::path dat = o_.work / (m + "_" + std::to_string(n++) + ".dat");
        std::ofstream(dat) << p.seconds << " " << p.quality << "\n";
        gp << ", '" << dat.string() << "' with points pointsize 2 title '" << p.name << "'";
      }
      gp << "\nunset logscale x\n";
    }
    gp << "unset multiplot\n";
    gp.close();
    ProcResult r = Run({"/usr/bin/gnuplot", script.string()}, o_.work / "gnuplot.out",
                       o_.work / "gnuplot.err", 60);
    if (r.rc == 0) {
      std::fprintf(stderr, "models: figure %s\n", png.c_str());
    } else {
      std::fprintf(stderr, "models: gnuplot failed (exit %d); its script is %s\n", r.rc,
                   script.c_str());
    }
  }

  struct Curve {
    std::string model, name;
    std::vector<Epoch> epochs;
  };
  struct Point {
    std::string model, name;
    double seconds, quality;
  };

  Options o_;
  bool failed_ = false;
  std::map<int, double> mf_bytes_;  // by workers: the 2-D plan's bytes per epoch, for mf_relaxed
  std::vector<Curve> curves_;
  std::vector<Point> points_;
};

}  // namespace
}  // namespace rigel::bench

int main(int argc, char** argv) {
  rigel::bench::Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "models: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
      o.words = 100000;
    } else if (a == "--words") {
      o.words = std::atoll(value().c_str());
    } else if (a == "--plot") {
      o.plot = value();
    } else if (a == "--work-dir") {
      o.work = value();
    } else if (a == "--timeout") {
      o.timeout_s = std::atof(value().c_str());
    } else if (a == "--only") {
      o.only = value();
    } else if (a == "--transport") {
      const std::string t = value();
      if (t != "zmq" && t != "ucx" && t != "both") {
        std::fprintf(stderr, "models: --transport zmq, ucx or both\n");
        return 2;
      }
      o.transports =
          t == "both" ? std::vector<std::string>{"zmq", "ucx"} : std::vector<std::string>{t};
    } else {
      std::fprintf(stderr,
                   "usage: models [--quick] [--words N (0: the whole corpus)] [--plot FILE.png] "
                   "[--work-dir DIR] [--timeout S] [--only MODEL] [--transport zmq|ucx|both]\n");
      return 2;
    }
  }
  return rigel::bench::Models(o).Main();
}
