// The schedules bench's "checkpoint" figure: what a checkpoint after every
// epoch (`--checkpoint-dir D --checkpoint-every 1`) costs matrix
// factorisation on 2 workers and 2 servers. Each round runs the job without
// and with checkpoints back to back (the order alternating between rounds);
// its ratio is the steady epoch time with checkpoints over the one without
// (the scheduler's --log-json epoch seconds: an epoch's figure includes the
// checkpoint taken after the epoch before it). A third run per round takes a
// checkpoint every other epoch: "alternate_ratio" is the median epoch after a
// checkpoint over the median epoch after none, within that run, which the
// drift of this shared VM between runs does not touch. Reported: the median ratio
// over the rounds (and each round's), and the scheduler's own account of
// each checkpoint (megabytes, seconds, and the seconds the job waited for the
// servers' copies; the rest is written while the next epoch runs).
#include <cmath>
#include <cstdio>
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

}  // namespace

void Bench::CheckpointRuns() {
  std::vector<double> ratios, alt_ratios, plain_s, ckpt_s, write_s, write_mb, waited_s;
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
    if (alt.ok) {
      std::vector<double> after, between;
      for (size_t e = 2; e < alt.epochs.size(); ++e) {
        (e % 2 == 0 ? after : between).push_back(alt.epochs[e].epoch_s);
      }
      alt_ratios.push_back(Median(after) / Median(between));
    }
    if (!plain.ok || !ckpt.ok) continue;
    const double a = Steady(plain, &EpochPoint::epoch_s), b = Steady(ckpt, &EpochPoint::epoch_s);
    plain_s.push_back(a);
    ckpt_s.push_back(b);
    ratios.push_back(b / a);
    CheckpointLines(ReadFile(runs_ / ("ckpt_on" + tag) / "scheduler.log"), &write_mb, &write_s,
                    &waited_s);
  }
  if (ratios.empty()) return;
  const double ratio = Median(ratios);
  Emit({{"bench", "schedules"},
        {"figure", "checkpoint"},
        {"case", "mf_2d_w2_s2/every_epoch"},
        {"metric", "epoch_s"},
        {"ours", Median(ckpt_s)},
        {"reference", Median(plain_s)},
        {"reference_name", "the same run without checkpoints"},
        {"ratio", ratio},
        {"goal", 1.05},
        {"better", "lower"},
        {"rounds", ratios.size()},
        {"round_ratios", ratios},
        {"alternate_ratio", Median(alt_ratios)},
        {"alternate_round_ratios", alt_ratios},
        {"epochs_per_run", o_.scaling_epochs},
        {"checkpoints", write_s.size()},
        {"checkpoint_s_median", Median(write_s)},
        {"job_waited_s_median", Median(waited_s)},
        {"checkpoint_mb_median", Median(write_mb)}});
  std::fprintf(stderr,
               "  checkpoint every epoch (2-D, 2 workers, 2 servers): %.3f s/epoch against %.3f s "
               "without, ratio %.3f (overhead %+.1f%%); each checkpoint %.3f s, %.1f MB "
               "(medians of %zu rounds)\n",
               Median(ckpt_s), Median(plain_s), ratio, 100 * (ratio - 1), Median(write_s),
               Median(write_mb), ratios.size());
}

}  // namespace rigel::bench::schedules
