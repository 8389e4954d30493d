#include "exec/epoch_log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "common/file.h"
#include "common/json_reader.h"
#include "exec/output_check.h"

namespace rigel::exec {

std::string EpochJson(const EpochFigures& f) {
  nlohmann::json j = {{"epoch", f.epoch},
                      {"epochs", f.epochs},
                      {"elapsed_s", f.elapsed_s},
                      {"epoch_s", f.epoch_s},
                      {"updates", f.updates},
                      {"updates_per_s", f.epoch_s > 0 ? f.updates / f.epoch_s : 0.0},
                      {"compute_s", f.compute_s},
                      {"comm_s", f.comm_s},
                      {"wait_s", f.wait_s},
                      {"cpu_s", f.cpu_s},
                      {"workers", f.workers},
                      {"servers", f.servers},
                      {"replicas_checked", f.replicas_checked}};
  j["bytes"] = nlohmann::json::object();
  for (const auto& [k, v] : f.bytes) j["bytes"][k] = v;
  if (!f.peak_bytes.empty()) {
    j["peak_bytes"] = nlohmann::json::object();
    for (const auto& [k, v] : f.peak_bytes) j["peak_bytes"][k] = v;
  }
  j["batch"] = nlohmann::json::object();
  for (const auto& [loop, b] : f.batch) j["batch"][std::to_string(loop)] = b;
  if (!f.param_bytes.empty()) {
    j["param_bytes"] = nlohmann::json::object();
    for (const auto& [k, v] : f.param_bytes) j["param_bytes"][k] = v;
  }
  if (!f.relaxed.empty()) {
    j["relaxed"] = nlohmann::json::object();
    for (const auto& [loop, values] : f.relaxed) {
      nlohmann::json& o = j["relaxed"][std::to_string(loop)];
      o = nlohmann::json::object();
      for (const auto& [k, v] : values) {
        // drift.<param>: how far the workers' copies of refreshed rows were
        // from the servers' values, as a norm ratio.
        if (k.rfind("norm_sq.", 0) == 0) continue;
        if (k.rfind("drift_sq.", 0) == 0) {
          auto norm = values.find("norm_sq." + k.substr(9));
          const double n = norm == values.end() ? 0.0 : norm->second;
          o["drift." + k.substr(9)] = n > 0 ? std::sqrt(v / n) : 0.0;
          continue;
        }
        o[k] = v;
      }
    }
  }
  if (!f.printed.empty()) {
    j["printed"] = nlohmann::json::object();
    for (const auto& [k, v] : f.printed) j["printed"][k] = v;
  }
  if (!f.tiers.empty()) {
    j["tiers"] = nlohmann::json::object();
    for (const auto& [loop, t] : f.tiers) {
      nlohmann::json& o = j["tiers"][std::to_string(loop)];
      o = {{"tier", t.tier}, {"compile_ms", t.compile_ms}, {"interpreted_ms", t.interpreted_ms}};
      if (t.compiled_workers >= 0) o["compiled_workers"] = t.compiled_workers;
    }
  }
  return j.dump();
}

std::string EpochProgressLine(const EpochFigures& f) {
  double moved = 0;
  // Rows a worker kept from an earlier run were not moved.
  for (const auto& [k, v] : f.bytes) moved += k == "local.kept" ? 0 : v;
  const double eta = f.done > 0 ? f.elapsed_s / static_cast<double>(f.done) *
                                      static_cast<double>(f.epochs - f.done)
                                : 0.0;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "[epoch %lld/%lld] %.1f s elapsed, ETA %.1f s, %.3g updates/s, %.1f MB moved, "
                "compute %.0f%%",
                static_cast<long long>(f.done), static_cast<long long>(f.epochs), f.elapsed_s, eta,
                f.epoch_s > 0 ? f.updates / f.epoch_s : 0.0, moved / 1e6,
                f.epoch_s > 0 ? 100.0 * f.compute_s / f.epoch_s : 0.0);
  std::string line = buf;
  // The mini-batch Rigel chose (analysis/batch.h) decides both the quality
  // and the cost of a relaxed loop: show it.
  for (const auto& [loop, batch] : f.batch) {
    line += ", loop " + std::to_string(loop) + " mini-batch " + std::to_string(batch);
    auto r = f.relaxed.find(loop);
    if (r == f.relaxed.end()) continue;
    auto get = [&](const char* k) {
      auto it = r->second.find(k);
      return it == r->second.end() ? 0.0 : it->second;
    };
    line += " staleness " + std::to_string(static_cast<int64_t>(get("staleness"))) +
            " push bound " + std::to_string(static_cast<int64_t>(get("push_bound")));
  }
  return line + "\n";
}

Status EpochLog::Open(const std::string& path) {
  // The same words as the model files' check (exec/output_check.h): the
  // flag, the path and why, before anything runs.
  RIGEL_RETURN_IF_ERROR(CheckOutputFile("--log-json", path));
  StatusOr<LineFile> f = LineFile::Open(path, LineFile::Mode::kTruncate);
  if (!f.ok()) return IoError("--log-json " + f.status().message());
  out_ = std::move(*f);
  return Status::Ok();
}

Status EpochLog::OpenToGoOn(const std::string& path) {
  RIGEL_RETURN_IF_ERROR(CheckOutputFile("--log-json", path));
  StatusOr<LineFile> f = LineFile::Open(path, LineFile::Mode::kAppend);
  if (!f.ok()) return IoError("--log-json " + f.status().message());
  out_ = std::move(*f);
  path_ = path;
  going_on_ = true;
  return Status::Ok();
}

Status EpochLog::DropRepeated(const EpochFigures& f) {
  StatusOr<std::string> text = ReadFileToString(path_);
  if (!text.ok()) return IoError("--log-json " + text.status().message());
  // The last line of the same epoch: a program with two top-level loops
  // logs epoch 0 twice, and the failed attempt's line is the later one.
  int64_t cut = -1;
  for (size_t at = 0; at < text->size();) {
    const size_t end = std::min(text->find('\n', at), text->size());
    // A line that is not an epoch's (not JSON, or another tool's) stays.
    StatusOr<JsonValue> j = ParseJson(std::string_view(*text).substr(at, end - at), path_);
    if (j.ok() && j->IsObject()) {
      const StatusOr<int64_t> epoch = j->GetIntOr("epoch", -1), epochs = j->GetIntOr("epochs", -1);
      if (epoch.ok() && epochs.ok() && *epoch == f.epoch && *epochs == f.epochs) {
        cut = static_cast<int64_t>(at);
      }
    }
    at = end + 1;
  }
  if (cut < 0) return Status::Ok();
  RIGEL_RETURN_IF_ERROR(out_.Close());
  if (::truncate(path_.c_str(), cut) != 0) {
    return IoError("--log-json " + path_ +
                   ": cannot drop the epochs to be run again: " + std::strerror(errno));
  }
  StatusOr<LineFile> again = LineFile::Open(path_, LineFile::Mode::kAppend);
  if (!again.ok()) return IoError("--log-json " + again.status().message());
  out_ = std::move(*again);
  return Status::Ok();
}

Status EpochLog::Write(const EpochFigures& f) {
  if (going_on_) {
    going_on_ = false;
    RIGEL_RETURN_IF_ERROR(DropRepeated(f));
  }
  Status st = out_.Append(EpochJson(f));
  return st.ok() ? st : IoError("--log-json " + st.message());
}

}  // namespace rigel::exec
