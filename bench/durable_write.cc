// Durable writes of a checkpoint's rows file: a new file each time, the old
// one removed (what checkpoints did before spares), against overwriting a
// spare in place (common/file.h, WriteFileDataDurably with reuse_spare).
// Both fsync the data and rename, as a checkpoint does. What is measured is
// the CPU time of the whole machine (/proc/stat: user, system, interrupts
// and steal, kernel threads included: the journal, writeback, discards),
// since on a machine the job fills that is what a checkpoint takes from it;
// the CPU time of this process alone is reported beside it. The two ways
// alternate in blocks, and an idle block of the same length is subtracted,
// so the drift of a shared machine touches both alike.
//
//   durable_write [--quick] [--dir DIR] [--bytes N] [--blocks N]
//
// One JSON line: "ours" (spare overwritten) and "reference" (new file) in
// milliseconds of machine CPU per file, their ratio (lower is better), and
// the same for this process's CPU time.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/file.h"

namespace {

namespace fs = std::filesystem;

// Busy seconds of every CPU of the machine so far.
double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

double ProcessSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

void Die(const std::string& what) {
  std::fprintf(stderr, "durable_write: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  size_t bytes = 1440076;  // a server's rows file of the checkpoint bench (mf, 2 servers)
  int blocks = 16;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--quick") {
      quick = true;
    } else if (a == "--dir") {
      dir = value();
    } else if (a == "--bytes") {
      bytes = std::stoull(value());
    } else if (a == "--blocks") {
      blocks = std::stoi(value());
    } else {
      Die("unknown argument " + a + " (expected --quick, --dir, --bytes, --blocks)");
    }
  }
  if (quick) blocks = 2;
  // Beside the checkpoints users keep: the working directory's file system,
  // not a tmpfs.
  if (dir.empty()) dir = (fs::current_path() / ("durable_write." + std::to_string(getpid())));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) Die("cannot make " + dir + ": " + ec.message());

  const std::string contents(bytes, '\x5a');
  const std::vector<std::string_view> pieces = {contents};
  constexpr int kPerBlock = 40;
  // One write per 15 ms: checkpoints come at most once an epoch, and a
  // write's deferred kernel work should land in its own block.
  constexpr auto kPace = std::chrono::milliseconds(15);
  int n = 0;
  auto write_new = [&] {
    const std::string name = dir + "/new-" + std::to_string(n);
    if (!rigel::WriteFileDataDurably(name, pieces).ok()) Die("cannot write " + name);
    // A checkpoint keeps two: the one before the last goes.
    fs::remove(dir + "/new-" + std::to_string(n - 2), ec);
  };
  auto write_spare = [&] {
    const std::string name = dir + "/spare-" + std::to_string(n);
    if (!rigel::WriteFileDataDurably(name, pieces, true).ok()) Die("cannot write " + name);
    const std::string old = dir + "/spare-" + std::to_string(n - 2);
    if (fs::exists(old) && !rigel::RetireToSpare(old).ok()) Die("cannot retire " + old);
  };
  auto nothing = [] {};
  double machine[3] = {0, 0, 0}, process[3] = {0, 0, 0};
  for (int b = 0; b < blocks; ++b) {
    for (int k = 0; k < 3; ++k) {
      // The order turns with the block, so no way always follows another.
      const int way = (k + b) % 3;
      const double m0 = MachineBusySeconds(), p0 = ProcessSeconds();
      for (int j = 0; j < kPerBlock; ++j, ++n) {
        const auto start = std::chrono::steady_clock::now();
        if (way == 0) write_new();
        if (way == 1) write_spare();
        if (way == 2) nothing();
        std::this_thread::sleep_until(start + kPace);
      }
      machine[way] += MachineBusySeconds() - m0;
      process[way] += ProcessSeconds() - p0;
    }
  }
  fs::remove_all(dir, ec);
  const double files = static_cast<double>(blocks) * kPerBlock;
  const double ref = (machine[0] - machine[2]) / files * 1e3;
  const double ours = (machine[1] - machine[2]) / files * 1e3;
  const double ref_p = (process[0] - process[2]) / files * 1e3;
  const double ours_p = (process[1] - process[2]) / files * 1e3;
  std::printf(
      "{\"bench\":\"durable_write\",\"figure\":\"rows_file\",\"bytes\":%zu,\"files\":%.0f,"
      "\"metric\":\"machine_cpu_ms_per_file\",\"ours\":%.4f,\"reference\":%.4f,"
      "\"reference_name\":\"a new file each time, the old one removed\",\"ratio\":%.4f,"
      "\"better\":\"lower\",\"process_cpu_ms_per_file\":%.4f,"
      "\"reference_process_cpu_ms_per_file\":%.4f,\"process_ratio\":%.4f}\n",
      bytes, files, ours, ref, ours / ref, ours_p, ref_p, ours_p / ref_p);
  std::fprintf(stderr,
               "  %.2f MB, durably: a spare overwritten %.3f ms of machine CPU (%.3f of this "
               "process), a new file %.3f (%.3f): ratio %.3f (%.0f files each)\n",
               bytes / 1e6, ours, ours_p, ref, ref_p, ours / ref, files);
  return 0;
}
