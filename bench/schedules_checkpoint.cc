// The schedules bench's "checkpoint" figure: what a checkpoint after every
// epoch (`--checkpoint-dir D --checkpoint-every 1`) costs matrix
// factorisation on 2 workers and 2 servers. Each round runs the job without
// and with checkpoints back to back (the order alternating between rounds);
// "ratio" is the mean epoch time of every round's run with checkpoints over
// that of the runs without (the scheduler's --log-json epoch seconds), which
// is what the whole runs' wall times say, with a 90% interval from
// resampling the rounds: a single epoch's time here varies by tens of
// percent, and this shared VM's speed drifts from one run to the next.
// "cpu_ratio" is the same for the CPU seconds of the job's processes.
//
// Comparisons within one run (epochs next to a checkpoint against the
// others) are not made: a checkpoint's cost is not confined to the epochs
// it runs in (the servers copy during one epoch and write during the next,
// and the kernel's journal and page-cache work comes later still), so they
// said less than the checkpoint costs. Also reported: each round's ratio and
// the scheduler's own account of each checkpoint (megabytes, seconds, and
// the seconds the job waited for the servers' copies).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
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

// `field` of `r`'s epochs from the third on (the first two: start-up, and
// the first checkpoint's file of every row).
std::vector<double> SteadyEpochs(const RunResult& r, double EpochPoint::*field) {
  std::vector<double> out;
  for (size_t e = 2; e < r.epochs.size(); ++e) out.push_back(r.epochs[e].*field);
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

// `stat` of every round's runs, with a 90% interval from resampling the
// rounds (a round's runs share the machine's state of the moment): `stat`
// gets the rounds to pool, by index, repeats allowed.
Interval Resampled(size_t rounds,
                   const std::function<double(const std::vector<size_t>& rounds)>& stat) {
  std::vector<size_t> all(rounds);
  for (size_t k = 0; k < rounds; ++k) all[k] = k;
  Interval out;
  out.ratio = stat(all);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, rounds - 1);
  std::vector<double> ratios;
  for (int t = 0; t < 2000; ++t) {
    for (size_t& r : all) r = pick(rng);
    ratios.push_back(stat(all));
  }
  std::sort(ratios.begin(), ratios.end());
  out.low = ratios[ratios.size() / 20];
  out.high = ratios[ratios.size() - 1 - ratios.size() / 20];
  return out;
}

// The mean of every epoch of the rounds `pick` of `runs`.
double PooledMean(const std::vector<std::vector<double>>& runs, const std::vector<size_t>& pick) {
  double sum = 0;
  size_t n = 0;
  for (size_t r : pick) {
    for (double x : runs[r]) sum += x;
    n += runs[r].size();
  }
  return n ? sum / static_cast<double>(n) : NAN;
}

}  // namespace

void Bench::CheckpointRuns() {
  // Per round: each run's steady epochs (SteadyEpochs) and their CPU seconds.
  std::vector<std::vector<double>> plain_e, ckpt_e, plain_cpu, ckpt_cpu;
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
    if (!plain.ok || !ckpt.ok) continue;
    plain_e.push_back(SteadyEpochs(plain, &EpochPoint::epoch_s));
    ckpt_e.push_back(SteadyEpochs(ckpt, &EpochPoint::epoch_s));
    plain_cpu.push_back(SteadyEpochs(plain, &EpochPoint::cpu_s));
    ckpt_cpu.push_back(SteadyEpochs(ckpt, &EpochPoint::cpu_s));
    CheckpointLines(ReadFile(runs_ / ("ckpt_on" + tag) / "scheduler.log"), &write_mb, &write_s,
                    &waited_s);
  }
  if (plain_e.empty()) return;
  std::vector<double> round_ratios;
  for (size_t r = 0; r < plain_e.size(); ++r) {
    round_ratios.push_back(Mean(ckpt_e[r]) / Mean(plain_e[r]));
  }
  auto ratio_of = [&](const std::vector<std::vector<double>>& a,
                      const std::vector<std::vector<double>>& b) {
    return Resampled(plain_e.size(), [&](const std::vector<size_t>& rounds) {
      return PooledMean(a, rounds) / PooledMean(b, rounds);
    });
  };
  const Interval time = ratio_of(ckpt_e, plain_e);
  const Interval cpu_time = ratio_of(ckpt_cpu, plain_cpu);
  Emit({{"bench", "schedules"},
        {"figure", "checkpoint"},
        {"case", "mf_2d_w2_s2/every_epoch"},
        {"metric", "epoch_s"},
        {"ours", Mean(Concat(ckpt_e))},
        {"reference", Mean(Concat(plain_e))},
        {"reference_name", "the same run without checkpoints"},
        {"ratio", time.ratio},
        {"ratio_90ci", {time.low, time.high}},
        {"goal", 1.05},
        {"better", "lower"},
        {"rounds", plain_e.size()},
        {"round_ratios", round_ratios},
        {"cpu_s", Mean(Concat(ckpt_cpu))},
        {"reference_cpu_s", Mean(Concat(plain_cpu))},
        {"cpu_ratio", cpu_time.ratio},
        {"cpu_ratio_90ci", {cpu_time.low, cpu_time.high}},
        {"epochs_per_run", o_.scaling_epochs},
        {"checkpoints", write_s.size()},
        {"checkpoint_s_median", Median(write_s)},
        {"job_waited_s_median", Median(waited_s)},
        {"checkpoint_mb_median", Median(write_mb)}});
  std::fprintf(stderr,
               "  checkpoint every epoch (2-D, 2 workers, 2 servers): %.4f s/epoch against %.4f s "
               "without, ratio %.3f (90%% interval %.3f-%.3f); CPU seconds per epoch %.3f "
               "(%.3f-%.3f) of those without; each checkpoint %.3f s, %.1f MB, the job waited "
               "%.4f s (%zu rounds)\n",
               Mean(Concat(ckpt_e)), Mean(Concat(plain_e)), time.ratio, time.low, time.high,
               cpu_time.ratio, cpu_time.low, cpu_time.high, Median(write_s), Median(write_mb),
               Median(waited_s), plain_e.size());
}

}  // namespace rigel::bench::schedules
