#include "scheduler/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

#include "common/file.h"
#include "common/json_reader.h"

namespace rigel::scheduler {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestFormat = "rigel checkpoint 1";
constexpr const char* kDriverFormat = "rigel driver state 1";

std::string Damaged(const std::string& path, const std::string& why) {
  return path + ": damaged checkpoint file: " + why;
}

json FileJson(const ps::SnapshotFile& f) {
  return {{"name", f.name},
          {"bytes", f.bytes},
          {"checksum", fmt::format("{:016x}", f.checksum)},
          {"rows", f.rows}};
}

// A file entry of a manifest, as FileJson writes it.
StatusOr<ps::SnapshotFile> FileFromJson(const JsonValue& j) {
  ps::SnapshotFile f;
  RIGEL_ASSIGN_OR_RETURN(JsonValue name, j.Get("name"));
  RIGEL_ASSIGN_OR_RETURN(f.name, name.AsString());
  if (f.name.find('/') != std::string::npos || f.name.empty()) {
    return name.Error("file name '" + f.name + "' is not a name within the directory");
  }
  RIGEL_ASSIGN_OR_RETURN(f.bytes, j.GetUint("bytes"));
  RIGEL_ASSIGN_OR_RETURN(JsonValue checksum, j.Get("checksum"));
  RIGEL_ASSIGN_OR_RETURN(std::string hex, checksum.AsString());
  const char* end = hex.data() + hex.size();
  auto [at, ec] = std::from_chars(hex.data(), end, f.checksum, 16);
  if (hex.empty() || hex.size() > 16 || ec != std::errc() || at != end) {
    return checksum.Error("expected 16 hex digits, found '" + hex + "'");
  }
  RIGEL_ASSIGN_OR_RETURN(f.rows, j.GetUint("rows"));
  return f;
}

// The JSON of a checkpoint file whose checksum held; what it lacks or
// mistypes is damage too: "PATH: damaged checkpoint file: KEY: ...".
StatusOr<JsonValue> ParseCheckpointJson(const std::string& path, const std::string& text,
                                        const char* format, const char* not_it) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, path + ": damaged checkpoint file"));
  RIGEL_ASSIGN_OR_RETURN(JsonValue f, j.Get("format"));
  StatusOr<std::string> name = f.AsString();
  if (!name.ok() || *name != format) return f.Error(not_it);
  return j;
}

// Text followed by its checksum line.
std::string Sealed(const std::string& text) {
  return text + fmt::format("checksum xxh64:{:016x}\n", ps::Checksum(text));
}

// The text before a checksum line, checked.
StatusOr<std::string> Unseal(const std::string& path, const std::string& bytes) {
  const size_t line = bytes.rfind("checksum xxh64:");
  if (line == std::string::npos || bytes.size() != line + 15 + 16 + 1 || bytes.back() != '\n') {
    return IoError(Damaged(path,
                           "its last line is not 'checksum xxh64:<16 hex digits>' "
                           "(truncated, or not a checkpoint file)"));
  }
  std::string text = bytes.substr(0, line);
  const std::string want = bytes.substr(line + 15, 16);
  const std::string got = fmt::format("{:016x}", ps::Checksum(text));
  if (want != got) {
    return IoError(Damaged(path, "checksum " + got + ", the file says " + want));
  }
  return text;
}

uint64_t Bits(double d) { return std::bit_cast<uint64_t>(d); }
double Double(uint64_t u) { return std::bit_cast<double>(u); }

StatusOr<std::vector<uint64_t>> Uints(const JsonValue& j, std::string_view key) {
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> items, j.GetArray(key));
  std::vector<uint64_t> out;
  for (const JsonValue& x : items) {
    RIGEL_ASSIGN_OR_RETURN(uint64_t u, x.AsUint());
    out.push_back(u);
  }
  return out;
}

// A driver state file's text (without its checksum line). Errors are the
// reader's InvalidArgument.
StatusOr<exec::DriverState> DriverStateFromText(const std::string& path, const std::string& text) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j,
                         ParseCheckpointJson(path, text, kDriverFormat, "not a driver state file"));
  exec::DriverState st;
  RIGEL_ASSIGN_OR_RETURN(st.stmt, j.GetInt("stmt"));
  RIGEL_ASSIGN_OR_RETURN(st.next, j.GetInt("next"));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> slots, j.GetArray("slots"));
  for (const JsonValue& s : slots) {
    // [is_int, integer value, bits of the float value]
    RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> e, s.Elements());
    if (e.size() != 3) return s.Error("expected [is_int, int, float bits]");
    RIGEL_ASSIGN_OR_RETURN(bool is_int, e[0].AsBool());
    RIGEL_ASSIGN_OR_RETURN(int64_t i, e[1].AsInt());
    RIGEL_ASSIGN_OR_RETURN(uint64_t f, e[2].AsUint());
    st.slots.push_back({is_int, i, Double(f)});
  }
  RIGEL_ASSIGN_OR_RETURN(std::vector<uint64_t> accums, Uints(j, "accums"));
  for (uint64_t a : accums) st.accums.push_back(Double(a));
  RIGEL_ASSIGN_OR_RETURN(st.launches, Uints(j, "launches"));
  RIGEL_ASSIGN_OR_RETURN(st.prints, j.GetInt("prints"));
  return st;
}

// A manifest's text (without its checksum line). Errors are the reader's
// InvalidArgument.
StatusOr<CheckpointManifest> ManifestFromText(const std::string& path, const std::string& text) {
  RIGEL_ASSIGN_OR_RETURN(
      JsonValue j, ParseCheckpointJson(path, text, kManifestFormat, "not a checkpoint manifest"));
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  CheckpointManifest m;
  RIGEL_ASSIGN_OR_RETURN(m.seq, j.GetUint("seq"));
  RIGEL_ASSIGN_OR_RETURN(m.program, j.GetString("program"));
  RIGEL_ASSIGN_OR_RETURN(m.job_key, j.GetString("job_key"));
  RIGEL_ASSIGN_OR_RETURN(m.program_ir, j.GetStringOr("program_ir", ""));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> params, j.GetArray("params"));
  for (const JsonValue& p : params) {
    CheckpointParam cp;
    RIGEL_ASSIGN_OR_RETURN(cp.name, p.GetString("name"));
    RIGEL_ASSIGN_OR_RETURN(cp.rows, p.GetInt("rows"));
    RIGEL_ASSIGN_OR_RETURN(cp.width, p.GetInt("width"));
    m.params.push_back(std::move(cp));
  }
  RIGEL_ASSIGN_OR_RETURN(int64_t servers, j.GetIntIn("servers", 0, kIntMax));
  RIGEL_ASSIGN_OR_RETURN(int64_t workers, j.GetIntIn("workers", 0, kIntMax));
  m.servers = static_cast<int>(servers);
  m.workers = static_cast<int>(workers);
  RIGEL_ASSIGN_OR_RETURN(m.iterations, j.GetInt("iterations"));
  RIGEL_ASSIGN_OR_RETURN(m.every, j.GetString("every"));
  RIGEL_ASSIGN_OR_RETURN(JsonValue driver, j.Get("driver"));
  RIGEL_ASSIGN_OR_RETURN(m.driver, FileFromJson(driver));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> rows, j.GetArray("rows"));
  for (const JsonValue& f : rows) {
    RIGEL_ASSIGN_OR_RETURN(ps::SnapshotFile file, FileFromJson(f));
    m.rows.push_back(std::move(file));
  }
  return m;
}

}  // namespace

std::string ManifestName(uint64_t seq) { return fmt::format("ckpt-{:06d}.manifest", seq); }

StatusOr<ps::SnapshotFile> WriteDriverState(const std::string& dir, uint64_t seq,
                                            const exec::DriverState& st) {
  // Floats as their bits: the resumed run must see exactly these values.
  json slots = json::array();
  for (const auto& s : st.slots) slots.push_back({s.is_int, s.i, Bits(s.f)});
  json accums = json::array();
  for (double a : st.accums) accums.push_back(Bits(a));
  json j = {{"format", kDriverFormat}, {"stmt", st.stmt},  {"next", st.next},
            {"slots", slots},          {"accums", accums}, {"launches", st.launches},
            {"prints", st.prints}};
  ps::SnapshotFile f;
  f.name = fmt::format("ckpt-{:06d}.driver", seq);
  const std::string text = Sealed(j.dump(1) + "\n");
  f.bytes = text.size();
  f.checksum = ps::Checksum(text);
  // Its name is made durable by the manifest's directory fsync.
  RIGEL_RETURN_IF_ERROR(WriteFileDataDurably(dir + "/" + f.name, text));
  return f;
}

StatusOr<exec::DriverState> ReadDriverState(const std::string& dir, const ps::SnapshotFile& file) {
  const std::string path = dir + "/" + file.name;
  RIGEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  if (bytes.size() != file.bytes || ps::Checksum(bytes) != file.checksum) {
    return IoError(
        Damaged(path, fmt::format("{} bytes with checksum {:016x}; the manifest says "
                                  "{} bytes, {:016x}",
                                  bytes.size(), ps::Checksum(bytes), file.bytes, file.checksum)));
  }
  RIGEL_ASSIGN_OR_RETURN(std::string text, Unseal(path, bytes));
  StatusOr<exec::DriverState> st = DriverStateFromText(path, text);
  // The reader's InvalidArgument: the file does not say what it should.
  if (!st.ok()) return IoError(st.status().message());
  return st;
}

Status WriteManifest(const std::string& dir, const CheckpointManifest& m) {
  json params = json::array();
  for (const CheckpointParam& p : m.params) {
    params.push_back({{"name", p.name}, {"rows", p.rows}, {"width", p.width}});
  }
  json rows = json::array();
  for (const ps::SnapshotFile& f : m.rows) rows.push_back(FileJson(f));
  json j = {{"format", kManifestFormat},    {"seq", m.seq},
            {"program", m.program},         {"job_key", m.job_key},
            {"program_ir", m.program_ir},   {"params", params},
            {"servers", m.servers},         {"workers", m.workers},
            {"iterations", m.iterations},   {"every", m.every},
            {"driver", FileJson(m.driver)}, {"rows", rows}};
  // The directory's fsync after the rename makes every name the manifest
  // lists durable too: the rows and driver files were renamed before it.
  return WriteFileDurably(dir + "/" + ManifestName(m.seq), Sealed(j.dump(1) + "\n"));
}

StatusOr<CheckpointManifest> ReadManifest(const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  RIGEL_ASSIGN_OR_RETURN(std::string text, Unseal(path, bytes));
  StatusOr<CheckpointManifest> read = ManifestFromText(path, text);
  if (!read.ok()) return IoError(read.status().message());
  if (fs::path(path).filename().string() != ManifestName(read->seq)) {
    return IoError(Damaged(path, "it says it is " + ManifestName(read->seq)));
  }
  return read;
}

std::string NewestManifest(const std::string& dir) {
  std::error_code ec;
  std::string best;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && name.size() > 9 &&
        name.compare(name.size() - 9, 9, ".manifest") == 0 && name > best) {
      best = name;
    }
  }
  return best.empty() ? "" : (fs::path(dir) / best).string();
}

StatusOr<std::string> FindManifest(const std::string& arg) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) return arg;
  if (!fs::is_directory(arg, ec)) return NotFound(arg + ": no such checkpoint directory or file");
  std::string m = NewestManifest(arg);
  if (m.empty()) {
    return NotFound(arg + ": holds no complete checkpoint (no ckpt-N.manifest)");
  }
  return m;
}

std::string ResumableForm(const ir::Program& prog) {
  ir::Program p = prog;
  for (ir::DStmt& s : p.driver) {
    if (s.kind == ir::DStmt::kFor) s.b = s.a;  // prints "for $ep in 0..0"
  }
  std::istringstream in(ir::Print(p));
  std::string out, line;
  while (std::getline(in, line)) {
    // The path may differ (a copy of the program); a const's value is in
    // the IR wherever it is used.
    if (line.rfind("program ", 0) == 0 || line.rfind("const ", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

namespace {

// "line N of the loop IR: checkpoint `A`, this run `B`" for the first line
// where `a` and `b` differ.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ha = static_cast<bool>(std::getline(ia, la));
    const bool hb = static_cast<bool>(std::getline(ib, lb));
    if (!ha && !hb) return "no line differs";
    if (!ha) la = "(end)";
    if (!hb) lb = "(end)";
    if (!ha || !hb || la != lb) {
      auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(' '));
        return s;
      };
      return "line " + std::to_string(n) + " of the loop IR (`rigel dump-ir`): the checkpoint's `" +
             trim(la) + "`, this run's `" + trim(lb) + "`";
    }
  }
}

}  // namespace

Status VerifyCheckpoint(const std::string& path, const CheckpointManifest& m,
                        const std::string& job_key, const std::string& program_ir,
                        const std::vector<CheckpointParam>& params) {
  if (m.job_key != job_key && (m.program_ir.empty() || m.program_ir != program_ir)) {
    std::string why = m.program_ir.empty()
                          ? "a checkpoint of another program or --set (" + m.program + ", " +
                                m.job_key + "; this run is " + job_key + ")"
                          : "a checkpoint of another program or --set (" + m.program +
                                "): only the top-level loop's bound (e.g. EPOCHS) may change "
                                "when going on from a checkpoint; the first difference is at " +
                                FirstDifference(m.program_ir, program_ir);
    return FailedPrecondition(path + ": " + why);
  }
  if (m.params != params) {
    return FailedPrecondition(path +
                              ": its parameters' names or shapes differ from this "
                              "program's (different data?)");
  }
  const std::string dir = fs::path(path).parent_path().string();
  RIGEL_RETURN_IF_ERROR(ReadDriverState(dir.empty() ? "." : dir, m.driver).status());
  for (const ps::SnapshotFile& f : m.rows) {
    RIGEL_RETURN_IF_ERROR(ps::ReadRowsFile(dir.empty() ? "." : dir, f).status());
  }
  return Status::Ok();
}

StatusOr<int> PruneCheckpoints(const std::string& dir, int keep) {
  std::vector<std::string> manifests;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && name.size() > 9 &&
        name.compare(name.size() - 9, 9, ".manifest") == 0) {
      manifests.push_back(name);
    }
  }
  if (ec) return IoError(dir + ": cannot list: " + ec.message());
  std::sort(manifests.rbegin(), manifests.rend());
  std::set<std::string> kept;
  for (int k = 0; k < keep && k < static_cast<int>(manifests.size()); ++k) {
    RIGEL_ASSIGN_OR_RETURN(CheckpointManifest m, ReadManifest(dir + "/" + manifests[k]));
    kept.insert(manifests[k]);
    kept.insert(m.driver.name);
    for (const ps::SnapshotFile& f : m.rows) kept.insert(f.name);
  }
  // Spares that no server took since the last pruning are removed; the
  // rows files pruned now become the next checkpoint's spares, at most one
  // checkpoint's worth.
  std::vector<fs::path> doomed, retired;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kSparePrefix, 0) == 0) {
      doomed.push_back(e.path());
    } else if (name.rfind("ckpt-", 0) == 0 && !kept.count(name)) {
      (name.ends_with(".rows") ? retired : doomed).push_back(e.path());
    }
  }
  int removed = 0;
  for (const fs::path& p : doomed) removed += fs::remove(p, ec) ? 1 : 0;
  for (const fs::path& p : retired) {
    // A file that cannot be kept as a spare is removed instead.
    if (RetireToSpare(p.string()).ok() || fs::remove(p, ec)) ++removed;
  }
  return removed;
}

Status PrepareCheckpointDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot make the checkpoint directory: " + ec.message());
  const std::string probe = dir + "/.rigel-write-test";
  Status st = WriteFileDurably(probe, "rigel\n");
  if (!st.ok()) {
    return IoError("cannot write checkpoints to " + dir + ": " + st.message());
  }
  fs::remove(probe, ec);
  return Status::Ok();
}

}  // namespace rigel::scheduler
