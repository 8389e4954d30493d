#include "cli/trial_run.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "common/file.h"
#include "common/json_reader.h"

namespace rigel::cli {

int RunSelf(const std::vector<std::string>& args, const std::string& log) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return -1;
  const std::string exe(buf, static_cast<size_t>(n));
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> argv = {const_cast<char*>(exe.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<double> EpochSeconds(const std::string& log_json) {
  std::vector<double> out;
  auto text = ReadFileToString(log_json);
  std::istringstream in(text.ok() ? *text : "");
  for (std::string line; std::getline(in, line);) {
    // A line that is no epoch (a message, a cut-off last line) counts none.
    StatusOr<JsonValue> j = ParseJson(line, log_json);
    if (!j.ok()) continue;
    StatusOr<double> s = j->GetDouble("epoch_s");
    if (s.ok()) out.push_back(*s);
  }
  return out;
}

namespace {

// The last line of a --log-json file, parsed.
StatusOr<JsonValue> LastLine(const std::string& log_json) {
  auto text = ReadFileToString(log_json);
  std::istringstream in(text.ok() ? *text : "");
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) last = line;
  }
  return ParseJson(last, log_json);
}

}  // namespace

int WholeEpochs(const std::string& log_json) {
  StatusOr<JsonValue> j = LastLine(log_json);
  if (!j.ok()) return 0;
  StatusOr<int64_t> epochs = j->GetIntOr("epochs", 0);
  return epochs.ok() ? static_cast<int>(*epochs) : 0;
}

std::map<std::string, double> LastPrinted(const std::string& log_json) {
  std::map<std::string, double> out;
  StatusOr<JsonValue> j = LastLine(log_json);
  if (!j.ok()) return out;
  std::optional<JsonValue> printed = j->Find("printed");
  if (!printed) return out;
  auto members = printed->Members();
  if (!members.ok()) return out;
  for (const auto& [k, v] : *members) {
    if (v.IsNumber()) out[k] = *v.AsDouble();
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double TrimmedMean(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t cut = v.size() / 10;
  double sum = 0;
  for (size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - 2 * cut);
}

double MedianPrediction(const std::vector<analysis::Observation>& obs,
                        const analysis::CostConstants& k) {
  std::vector<double> s;
  for (const analysis::Observation& o : obs)
    s.push_back(analysis::Predict(o.runs, o.servers, k).seconds);
  return Median(std::move(s));
}

}  // namespace rigel::cli
