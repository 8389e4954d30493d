// `rigel plot`: draws the per-epoch JSON lines of one or more runs
// (`rigel run --log-json`) with gnuplot, every run on the same axes, so a
// serial run and distributed ones compare at a glance.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/file.h"
#include "common/json_reader.h"
#include "common/status.h"

extern char** environ;

namespace rigel::cli {
namespace {

namespace fs = std::filesystem;

struct PlotArgs {
  std::vector<std::string> logs;  // FILE or LABEL=FILE
  std::vector<std::string> metrics;
  std::string x = "epoch";
  std::string out;
  std::string title;
};

// A log as read: its epoch lines, their x values, and the names it holds.
struct Run {
  std::string label, path;
  std::vector<JsonValue> epochs;
  std::vector<double> x;
  std::vector<std::vector<double>> y;  // [metric][point], filled by Plot
  std::set<std::string> printed;       // names the program printed
  std::set<std::string> names;         // every metric the log has, for messages
};

// A metric's value in one epoch line: a printed name first, then a
// top-level number (epoch_s, cpu_s, updates_per_s, ...).
bool Value(const JsonValue& j, const std::string& name, double* v) {
  for (const std::optional<JsonValue>& o : {j.Find("printed"), std::optional<JsonValue>(j)}) {
    std::optional<JsonValue> e = o ? o->Find(name) : std::nullopt;
    if (!e) continue;
    if (e->IsNumber()) {
      *v = *e->AsDouble();
      return true;
    }
    if (e->IsNull()) {  // a NaN the program printed
      *v = std::nan("");
      return true;
    }
  }
  return false;
}

StatusOr<Run> ReadRun(const std::string& spec, const std::string& x) {
  Run r;
  const size_t eq = spec.find('=');
  r.path = eq == std::string::npos ? spec : spec.substr(eq + 1);
  std::ifstream in(r.path);
  if (!in) return NotFound(r.path + ": cannot read this log");
  std::string line;
  int workers = 1;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = r.path + ":" + std::to_string(n);
    RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(line, where));
    if (!j.Has("epoch")) {
      return InvalidArgument(where + ": expected an epoch's JSON object (rigel run --log-json)");
    }
    if (std::optional<JsonValue> printed = j.Find("printed"); printed && printed->IsObject()) {
      RIGEL_ASSIGN_OR_RETURN(auto members, printed->Members());
      for (const auto& [k, v] : members) r.printed.insert(k);
    }
    RIGEL_ASSIGN_OR_RETURN(auto members, j.Members());
    for (const auto& [k, v] : members) {
      if (v.IsNumber()) r.names.insert(k);
    }
    double xv = 0;
    if (!Value(j, x == "seconds" ? "elapsed_s" : "epoch", &xv)) {
      return InvalidArgument(where + ": no " + x + " in this line");
    }
    r.x.push_back(xv);
    RIGEL_ASSIGN_OR_RETURN(int64_t w, j.GetIntOr("workers", workers));
    workers = static_cast<int>(std::clamp<int64_t>(w, 0, std::numeric_limits<int>::max()));
    r.epochs.push_back(std::move(j));
  }
  if (r.x.empty()) return InvalidArgument(r.path + ": holds no epoch line");
  r.names.insert(r.printed.begin(), r.printed.end());
  r.label = eq != std::string::npos
                ? spec.substr(0, eq)
                : fs::path(r.path).filename().string() +
                      (workers > 1 ? " (" + std::to_string(workers) + " workers)" : " (serial)");
  return r;
}

// `metric` in each epoch of `r` (NaN where an epoch lacks it); InvalidArgument
// naming what the log has when no epoch has it.
StatusOr<std::vector<double>> Series(const Run& r, const std::string& metric) {
  std::vector<double> y;
  bool any = false;
  for (const JsonValue& j : r.epochs) {
    double v = std::nan("");
    Value(j, metric, &v);
    any = any || !std::isnan(v);
    y.push_back(v);
  }
  if (!any) {
    std::string names;
    for (const std::string& n : r.names) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgument(r.path + ": no '" + metric + "' in any epoch; it has " + names);
  }
  return y;
}

// The metric drawn when none is named: the first printed name (other than
// the loop counter) that every log has; else seconds per epoch.
std::string DefaultMetric(const std::vector<Run>& runs) {
  for (const std::string& name : runs.empty() ? std::set<std::string>{} : runs[0].printed) {
    if (name == "epoch" || name == "ep" || name == "iter") continue;
    bool everywhere = true;
    for (const Run& r : runs) everywhere = everywhere && r.printed.count(name) > 0;
    if (everywhere) return name;
  }
  return "epoch_s";
}

std::string Quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// Runs gnuplot on `script`; its stderr passes through.
Status RunGnuplot(const std::string& script) {
  std::vector<std::string> args = {"gnuplot", script};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ) != 0) {
    return Unavailable("gnuplot not found (scripts/setup.sh installs gnuplot-nox)");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return Unavailable("gnuplot not found (scripts/setup.sh installs gnuplot-nox)");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Internal("gnuplot failed (see its message above)");
  }
  return Status::Ok();
}

Status Plot(PlotArgs a) {
  std::vector<Run> runs;
  for (const std::string& spec : a.logs) {
    RIGEL_ASSIGN_OR_RETURN(Run r, ReadRun(spec, a.x));
    runs.push_back(std::move(r));
  }
  if (a.metrics.empty()) a.metrics.push_back(DefaultMetric(runs));
  for (Run& r : runs) {
    for (const std::string& metric : a.metrics) {
      RIGEL_ASSIGN_OR_RETURN(std::vector<double> y, Series(r, metric));
      r.y.push_back(std::move(y));
    }
  }
  const std::string ext = fs::path(a.out).extension().string();
  std::string terminal;
  if (ext == ".png") terminal = "pngcairo";
  if (ext == ".svg") terminal = "svg";
  if (ext == ".pdf") terminal = "pdfcairo";
  if (terminal.empty()) return InvalidArgument("-o " + a.out + ": expected a .png, .svg or .pdf");
  char tmpl[] = "/tmp/rigel-plot-XXXXXX";
  if (!mkdtemp(tmpl)) {
    return IoError(std::string("cannot make a temporary directory for the plot under /tmp: ") +
                   std::strerror(errno));
  }
  const std::string tmp = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{tmp};
  const int panels = static_cast<int>(a.metrics.size());
  // gnuplot draws in the temporary directory, and the picture is then
  // written to -o as any other output (common/file.h): a full disk or an
  // unwritable -o is an error naming both, and never a cut picture there.
  const std::string drawn = tmp + "/plot" + ext;
  std::ostringstream gp;
  gp << "set terminal " << terminal << " noenhanced size " << 560 * panels << ",420\n"
     << "set output " << Quote(drawn) << "\nset grid\nset key top right\n"
     << "set datafile missing 'nan'\n";
  if (panels > 1) gp << "set multiplot layout 1," << panels << " title " << Quote(a.title) << "\n";
  if (panels == 1 && !a.title.empty()) gp << "set title " << Quote(a.title) << "\n";
  for (int m = 0; m < panels; ++m) {
    gp << "set xlabel " << Quote(a.x == "seconds" ? "seconds" : "epoch") << "\n"
       << "set ylabel " << Quote(a.metrics[m]) << "\nplot ";
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::string dat = tmp + "/run" + std::to_string(k) + "-" + std::to_string(m) + ".dat";
      std::ostringstream d;
      for (size_t p = 0; p < runs[k].x.size(); ++p) {
        d << runs[k].x[p] << " " << runs[k].y[m][p] << "\n";
      }
      RIGEL_RETURN_IF_ERROR(WriteFileAtomically(dat, d.str()));
      gp << (k ? ", " : "") << Quote(dat) << " using 1:2 with linespoints lw 2 pt 7 ps 0.6 title "
         << Quote(runs[k].label);
    }
    gp << "\n";
  }
  if (panels > 1) gp << "unset multiplot\n";
  const std::string script = tmp + "/plot.gp";
  RIGEL_RETURN_IF_ERROR(WriteFileAtomically(script, gp.str()));
  RIGEL_RETURN_IF_ERROR(RunGnuplot(script));
  auto picture = ReadFileToString(drawn);
  if (!picture.ok() || picture->empty()) return IoError(a.out + ": gnuplot drew nothing");
  Status st = WriteFileAtomically(a.out, *picture);
  return st.ok() ? st : IoError("-o " + st.message());
}

}  // namespace

void AddPlotCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "draw runs' --log-json files (serial against distributed) with gnuplot");
  cmd->add_option("logs", args->logs,
                  "--log-json files, one line per run; LABEL=FILE names its line")
      ->required();
  cmd->add_option("--metric", args->metrics,
                  "what to draw: a name the program printed (e.g. test_rmse) or a figure of the "
                  "log (epoch_s, cpu_s, updates_per_s, ...); repeatable, a panel each; default: "
                  "the first printed name every log has")
      ->expected(1)
      ->take_all();
  cmd->add_option("--x", args->x, "the horizontal axis")
      ->check(CLI::IsMember({"epoch", "seconds"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->out, "the figure: FILE.png, .svg or .pdf")->required();
  cmd->add_option("--title", args->title, "a title over the figure");
  cmd->callback([args, exit_code] {
    Status st = Plot(*args);
    if (!st.ok()) {
      std::cerr << "rigel plot: " << st.message() << "\n";
      *exit_code = 1;
      return;
    }
    std::cout << "rigel plot: wrote " << args->out << "\n";
  });
}

}  // namespace rigel::cli
