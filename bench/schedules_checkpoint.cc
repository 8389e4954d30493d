// The schedules bench's "checkpoint" figure: what a checkpoint after every
// epoch (`--checkpoint-dir D --checkpoint-every 1`) costs matrix
// factorisation on 2 workers and 2 servers. Each round runs the job without
// and with checkpoints back to back (the order alternating between rounds);
// "ratio" is the mean epoch time of every round's run with checkpoints over
// that of the runs without (the scheduler's --log-json epoch seconds: an
// epoch's figure includes the checkpoint taken after the epoch before it),
// which is what the whole runs' wall times say. A third run per round takes
// a checkpoint every other epoch: "alternate_ratio" is its mean epoch after
// a checkpoint over its mean epoch after none, which the drift of this
// shared VM between runs does not touch. Each comes with a 90% interval from
// resampling the rounds, since a single epoch's time here varies by tens of
// percent. Also reported: each round's ratios and the scheduler's own
// account of each checkpoint (megabytes, seconds, and the seconds the job
// waited for the servers' copies; the rest is written while the next epoch
// runs).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <regex>
#include <sstream>

#include "bench/schedules.h"

namespace rigel::bench::schedules {

namespace fs = std::filesystem;

namespace {

// The megabytes, seconds and seconds the job waited of each "driver:
// checkpoint N written" line.
void CheckpointLines(const std::string& log, std::vector<double>* mb, std::vector<double>* secs,
                     std::vector<double>* waited) {
  static const std::regex line(
      R"(driver: checkpoint \d+ written .*\(([0-9.]+) MB\) in ([0-9.]+) s, of which the job )"
      R"(waited ([0-9.]+) s)");
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    mb->push_back(std::stod(m[1]));
    secs->push_back(std::stod(m[2]));
    waited->push_back(std::stod(m[3]));
  }
}

// Epoch times of `r` from the third epoch on, every `step`-th from `first`
// (the first two: start-up, and the first checkpoint's file of every row).
std::vector<double> SteadyEpochs(const RunResult& r, size_t first, size_t step) {
  std::vector<double> out;
  for (size_t e = 2 + first; e < r.epochs.size(); e += step) out.push_back(r.epochs[e].epoch_s);
  return out;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? NAN : sum / static_cast<double>(v.size());
}

std::vector<double> Concat(const std::vector<std::vector<double>>& rounds) {
  std::vector<double> out;
  for (const auto& r : rounds) out.insert(out.end(), r.begin(), r.end());
  return out;
}

struct Interval {
  double ratio = NAN, low = NAN, high = NAN;
};

// The mean of every epoch of `a` over the mean of every epoch of `b` (what
// the whole runs' times say), with a 90% interval from resampling the
// rounds (a round's runs share the machine's state of the moment).
Interval PooledRatio(const std::vector<std::vector<double>>& a,
                     const std::vector<std::vector<double>>& b) {
  Interval out;
  out.ratio = Mean(Concat(a)) / Mean(Concat(b));
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, a.size() - 1);
  std::vector<double> ratios;
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::vector<double>> ra, rb;
    for (size_t k = 0; k < a.size(); ++k) {
      const size_t r = pick(rng);
      ra.push_back(a[r]);
      rb.push_back(b[r]);
    }
    ratios.push_back(Mean(Concat(ra)) / Mean(Concat(rb)));
  }
  std::sort(ratios.begin(), ratios.end());
  out.low = ratios[ratios.size() / 20];
  out.high = ratios[ratios.size() - 1 - ratios.size() / 20];
  return out;
}

}  // namespace

void Bench::CheckpointRuns() {
  // Per round: the steady epochs (after the first two: start-up and the
  // first checkpoint's full file) of each run.
  std::vector<std::vector<double>> plain_e, ckpt_e, after_e, between_e;
  std::vector<double> write_s, write_mb, waited_s;
  for (int round = 0; round < o_.rounds; ++round) {
    const std::string tag = "_r" + std::to_string(round);
    const fs::path dir = runs_ / ("checkpoints" + tag);
    fs::remove_all(dir);
    RunResult plain, ckpt;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == (round % 2 == 0)) {
        plain = Cluster("ckpt_off" + tag, mf_, {}, 2, 2, o_.scaling_epochs);
      } else {
        ckpt = Cluster("ckpt_on" + tag, mf_, {}, 2, 2, o_.scaling_epochs,
                       {"--checkpoint-dir", dir.string(), "--checkpoint-every", "1"});
      }
    }
    record_commands_ = false;
    // Every other epoch in one run: the epochs that follow a checkpoint
    // against those that do not, free of the drift between runs.
    const fs::path alt_dir = runs_ / ("checkpoints_alt" + tag);
    fs::remove_all(alt_dir);
    RunResult alt = Cluster("ckpt_alt" + tag, mf_, {}, 2, 2, o_.scaling_epochs,
                            {"--checkpoint-dir", alt_dir.string(), "--checkpoint-every", "2"});
    if (!plain.ok || !ckpt.ok || !alt.ok) continue;
    plain_e.push_back(SteadyEpochs(plain, 0, 1));
    ckpt_e.push_back(SteadyEpochs(ckpt, 0, 1));
    after_e.push_back(SteadyEpochs(alt, 0, 2));
    between_e.push_back(SteadyEpochs(alt, 1, 2));
    CheckpointLines(ReadFile(runs_ / ("ckpt_on" + tag) / "scheduler.log"), &write_mb, &write_s,
                    &waited_s);
  }
  if (plain_e.empty()) return;
  std::vector<double> round_ratios, alt_round_ratios;
  for (size_t r = 0; r < plain_e.size(); ++r) {
    round_ratios.push_back(Mean(ckpt_e[r]) / Mean(plain_e[r]));
    alt_round_ratios.push_back(Mean(after_e[r]) / Mean(between_e[r]));
  }
  const Interval between = PooledRatio(ckpt_e, plain_e);
  const Interval within = PooledRatio(after_e, between_e);
  Emit({{"bench", "schedules"},
        {"figure", "checkpoint"},
        {"case", "mf_2d_w2_s2/every_epoch"},
        {"metric", "epoch_s"},
        {"ours", Mean(Concat(ckpt_e))},
        {"reference", Mean(Concat(plain_e))},
        {"reference_name", "the same run without checkpoints"},
        {"ratio", between.ratio},
        {"ratio_90ci", {between.low, between.high}},
        {"goal", 1.05},
        {"better", "lower"},
        {"rounds", plain_e.size()},
        {"round_ratios", round_ratios},
        {"alternate_ratio", within.ratio},
        {"alternate_ratio_90ci", {within.low, within.high}},
        {"alternate_round_ratios", alt_round_ratios},
        {"epochs_per_run", o_.scaling_epochs},
        {"checkpoints", write_s.size()},
        {"checkpoint_s_median", Median(write_s)},
        {"job_waited_s_median", Median(waited_s)},
        {"checkpoint_mb_median", Median(write_mb)}});
  std::fprintf(stderr,
               "  checkpoint every epoch (2-D, 2 workers, 2 servers): %.4f s/epoch against %.4f s "
               "without, ratio %.3f (90%% interval %.3f-%.3f); within one run, epochs after a "
               "checkpoint over epochs after none %.3f (%.3f-%.3f); each checkpoint %.3f s, "
               "%.1f MB, the job waited %.3f s (%zu rounds)\n",
               Mean(Concat(ckpt_e)), Mean(Concat(plain_e)), between.ratio, between.low,
               between.high, within.ratio, within.low, within.high, Median(write_s),
               Median(write_mb), Median(waited_s), plain_e.size());
}

}  // namespace rigel::bench::schedules
