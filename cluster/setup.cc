#include "cluster/setup.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "common/json_reader.h"

namespace rigel::cluster {

namespace {

// Inverse pairs of ir::ParamDecl::Init and the wire's and the file's forms.
wire::ParamSpec::Init InitToWire(ir::ParamDecl::Init i) {
  switch (i) {
    case ir::ParamDecl::kZeros:
      return wire::ParamSpec::Init::ZEROS;
    case ir::ParamDecl::kFill:
      return wire::ParamSpec::Init::FILL;
    case ir::ParamDecl::kNormal:
      return wire::ParamSpec::Init::NORMAL;
    case ir::ParamDecl::kUniform:
      return wire::ParamSpec::Init::UNIFORM;
    case ir::ParamDecl::kRandInt:
      return wire::ParamSpec::Init::RANDINT;
    case ir::ParamDecl::kFile:
      return wire::ParamSpec::Init::FILE;
  }
  return wire::ParamSpec::Init::ZEROS;
}

bool InitFromWire(wire::ParamSpec::Init i, ir::ParamDecl::Init* out) {
  switch (i) {
    case wire::ParamSpec::Init::ZEROS:
      *out = ir::ParamDecl::kZeros;
      return true;
    case wire::ParamSpec::Init::FILL:
      *out = ir::ParamDecl::kFill;
      return true;
    case wire::ParamSpec::Init::NORMAL:
      *out = ir::ParamDecl::kNormal;
      return true;
    case wire::ParamSpec::Init::UNIFORM:
      *out = ir::ParamDecl::kUniform;
      return true;
    case wire::ParamSpec::Init::FILE:
      *out = ir::ParamDecl::kFile;
      return true;
    case wire::ParamSpec::Init::RANDINT:
      *out = ir::ParamDecl::kRandInt;
      return true;
  }
  return false;  // an enumerant this build does not know
}

bool InitFromName(const std::string& name, ir::ParamDecl::Init* out) {
  static const std::pair<const char*, ir::ParamDecl::Init> kNames[] = {
      {"zeros", ir::ParamDecl::kZeros},
      {"fill", ir::ParamDecl::kFill},
      {"normal", ir::ParamDecl::kNormal},
      {"uniform", ir::ParamDecl::kUniform},
      {"randint", ir::ParamDecl::kRandInt}};
  for (const auto& [n, i] : kNames) {
    if (name == n) {
      *out = i;
      return true;
    }
  }
  return false;
}

Status OutOfRange(const std::string& what, const std::string& key, int64_t v, int64_t lo,
                  int64_t hi) {
  return InvalidArgument(what + ": " + key + ": " + std::to_string(v) + " is outside " +
                         std::to_string(lo) + ".." + std::to_string(hi));
}

// The ranges both forms must respect, checked once the struct is built.
Status CheckSetup(const ClusterSetup& s, const std::string& what) {
  if (s.servers < 1 || s.servers > 4096) return OutOfRange(what, "servers", s.servers, 1, 4096);
  if (s.workers < 1 || s.workers > 65536) return OutOfRange(what, "workers", s.workers, 1, 65536);
  RIGEL_RETURN_IF_ERROR(ValidateJobOptions(s.options, what));
  for (const ParamSpec& p : s.params) {
    const std::string key = "params." + p.decl.name;
    if (p.decl.name.empty()) return InvalidArgument(what + ": params: a parameter has no name");
    if (p.rows < 1 || p.rows > (int64_t{1} << 40)) {
      return OutOfRange(what, key + ".rows", p.rows, 1, int64_t{1} << 40);
    }
    if (p.decl.width < 0 || p.decl.width > (1 << 24)) {
      return OutOfRange(what, key + ".width", p.decl.width, 0, 1 << 24);
    }
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> PairsFromWire(
    capnp::List<wire::NamedText>::Reader list) {
  std::vector<std::pair<std::string, std::string>> out;
  for (wire::NamedText::Reader kv : list) out.emplace_back(kv.getName(), kv.getValue());
  return out;
}

void PairsToWire(const std::vector<std::pair<std::string, std::string>>& pairs,
                 capnp::List<wire::NamedText>::Builder out) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    out[i].setName(pairs[i].first);
    out[i].setValue(pairs[i].second);
  }
}

}  // namespace

StatusOr<ShardMap> ClusterSetup::MakeShardMap() const {
  std::vector<ShardedParam> sp;
  for (size_t p = 0; p < params.size(); ++p) {
    sp.push_back({params[p].decl.name, params[p].rows, Width(static_cast<int>(p)), params[p].hash});
  }
  return ShardMap::Create(std::move(sp), servers);
}

void SetupToWire(const ClusterSetup& s, wire::Plan::Builder out) {
  out.setServers(static_cast<uint32_t>(s.servers));
  out.setWorkers(static_cast<uint32_t>(s.workers));
  auto o = out.initOptions();
  o.setStalenessAuto(s.options.staleness == kStalenessAuto);
  o.setStaleness(static_cast<uint32_t>(std::max(s.options.staleness, 0)));
  o.setPushBound(s.options.push_bound);
  o.setMergeEvery(s.options.merge_every);
  o.setPushAge(s.options.push_age);
  o.setCacheMb(s.options.cache_mb);
  o.setExchangeTimeoutMs(s.options.exchange_timeout_ms);
  o.setNoHotRows(!s.options.hot_rows);
  o.setNoDataParts(!s.options.data_parts);
  o.setNoScaledMerges(!s.options.scaled_merges);
  o.setBatch(s.options.batch);
  o.setSyncEvery(s.options.sync_every);
  o.setDevice(s.options.device);
  o.setCollectives(s.options.collectives);
  auto params = out.initParams(static_cast<unsigned>(s.params.size()));
  for (size_t i = 0; i < s.params.size(); ++i) {
    const ParamSpec& p = s.params[i];
    auto w = params[i];
    w.setName(p.decl.name);
    w.setRows(p.rows);
    w.setWidth(p.decl.width);
    w.setHash(p.hash);
    w.setInit(InitToWire(p.decl.init));
    w.setA(p.decl.a);
    w.setB(p.decl.b);
    w.setSeed(p.decl.seed);
    w.setInitFile(p.decl.file);
    w.setInitFileOffset(p.decl.file_offset);
    w.setInitFileBytes(p.decl.file_bytes);
    w.setInitFileRows(p.decl.file_rows);
    w.setInitFileInt(p.decl.file_int);
  }
  out.setHasJob(s.job.has_value());
  if (!s.job) return;
  auto j = out.initJob();
  j.setProgram(s.job->program);
  PairsToWire(s.job->sets, j.initSets(static_cast<unsigned>(s.job->sets.size())));
  j.setSeed(s.job->seed);
  j.setRestored(s.job->restored);
  j.setPlan(s.job->plan);
  PairsToWire(s.job->data, j.initData(static_cast<unsigned>(s.job->data.size())));
  PairsToWire(s.job->files, j.initFiles(static_cast<unsigned>(s.job->files.size())));
  PairsToWire(s.job->scans, j.initScans(static_cast<unsigned>(s.job->scans.size())));
  PairsToWire(s.job->cuts, j.initCuts(static_cast<unsigned>(s.job->cuts.size())));
  j.setInitParams(s.job->init_params);
  j.setInitParamsFingerprint(s.job->init_params_fingerprint);
  j.setJit(s.job->jit);
}

StatusOr<ClusterSetup> SetupFromWire(wire::Plan::Reader in, const std::string& what) {
  ClusterSetup s;
  // Unsigned wire fields beyond int's range become negative here and fail
  // CheckSetup's ranges instead of wrapping into plausible values.
  s.servers = static_cast<int>(std::min<uint32_t>(in.getServers(), 1u << 30));
  s.workers = static_cast<int>(std::min<uint32_t>(in.getWorkers(), 1u << 30));
  auto o = in.getOptions();
  s.options.staleness = o.getStalenessAuto()
                            ? kStalenessAuto
                            : static_cast<int>(std::min<uint32_t>(o.getStaleness(), 1u << 30));
  s.options.push_bound = o.getPushBound();
  s.options.merge_every = o.getMergeEvery();
  s.options.push_age = o.getPushAge();
  s.options.cache_mb = o.getCacheMb() == 0 ? 1024 : o.getCacheMb();
  s.options.exchange_timeout_ms = o.getExchangeTimeoutMs() == 0 ? 30000 : o.getExchangeTimeoutMs();
  s.options.hot_rows = !o.getNoHotRows();
  s.options.data_parts = !o.getNoDataParts();
  s.options.scaled_merges = !o.getNoScaledMerges();
  s.options.batch = o.getBatch();
  s.options.sync_every = o.getSyncEvery();
  s.options.device = o.getDevice();
  s.options.collectives = o.hasCollectives() ? std::string(o.getCollectives()) : "gloo";
  for (wire::ParamSpec::Reader w : in.getParams()) {
    ParamSpec p;
    p.decl.name = w.getName();
    p.rows = w.getRows();
    p.decl.width = w.getWidth();
    p.hash = w.getHash();
    if (!InitFromWire(w.getInit(), &p.decl.init)) {
      return InvalidArgument(what + ": params." + p.decl.name + ".init: unknown initialiser");
    }
    p.decl.a = w.getA();
    p.decl.b = w.getB();
    p.decl.seed = w.getSeed();
    p.decl.file = w.getInitFile();
    p.decl.file_offset = w.getInitFileOffset();
    p.decl.file_bytes = w.getInitFileBytes();
    p.decl.file_rows = w.getInitFileRows();
    p.decl.file_int = w.getInitFileInt();
    s.params.push_back(std::move(p));
  }
  if (in.getHasJob()) {
    auto j = in.getJob();
    JobSpec job;
    job.program = j.getProgram();
    job.sets = PairsFromWire(j.getSets());
    job.seed = j.getSeed();
    job.restored = j.getRestored();
    job.plan = j.getPlan();
    job.data = PairsFromWire(j.getData());
    job.files = PairsFromWire(j.getFiles());
    job.scans = PairsFromWire(j.getScans());
    job.cuts = PairsFromWire(j.getCuts());
    job.init_params = j.getInitParams();
    job.init_params_fingerprint = j.getInitParamsFingerprint();
    job.jit = j.getJit().size() == 0 ? "auto" : std::string(j.getJit().cStr());
    if (job.jit != "auto" && job.jit != "on" && job.jit != "off") {
      return InvalidArgument(what + ": job.jit is '" + job.jit + "', not auto, on or off");
    }
    if (job.program.empty()) return InvalidArgument(what + ": job.program: empty");
    s.job = std::move(job);
  }
  RIGEL_RETURN_IF_ERROR(CheckSetup(s, what));
  return s;
}

namespace {

// An integer member of a setup file; a missing one reads as mistyped
// ("KEY: expected an integer").
StatusOr<int64_t> SetupInt(const JsonValue& o, std::string_view key) {
  std::optional<JsonValue> v = o.Find(key);
  if (!v) return o.FieldError(key, "expected an integer");
  return v->AsInt();
}

// A count of the setup as an int: values outside it are clamped to one past
// its range so that CheckSetup names them.
StatusOr<int> SetupCount(const JsonValue& o, std::string_view key) {
  RIGEL_ASSIGN_OR_RETURN(int64_t x, SetupInt(o, key));
  return static_cast<int>(std::clamp<int64_t>(x, -1, 1 << 30));
}

// One element of "params": its name, shape, sharding and initialiser.
StatusOr<ParamSpec> ReadParamSpec(const JsonValue& root, const JsonValue& pj) {
  ParamSpec p;
  RIGEL_ASSIGN_OR_RETURN(p.decl.name, pj.GetString("name"));
  const std::string key = "params." + p.decl.name;
  RIGEL_ASSIGN_OR_RETURN(p.rows, SetupInt(pj, "rows"));
  RIGEL_ASSIGN_OR_RETURN(p.decl.width, SetupInt(pj, "width"));
  RIGEL_ASSIGN_OR_RETURN(std::string shard, pj.GetStringOr("shard", ""));
  if (shard != "range" && shard != "hash") {
    return root.FieldError(key + ".shard", "expected \"range\" or \"hash\"");
  }
  p.hash = shard == "hash";
  RIGEL_ASSIGN_OR_RETURN(std::string init, pj.GetStringOr("init", "zeros"));
  if (!InitFromName(init, &p.decl.init)) {
    return root.FieldError(key + ".init", "unknown initialiser '" + init + "'");
  }
  RIGEL_ASSIGN_OR_RETURN(p.decl.a, pj.GetDoubleOr("a", 0.0));
  RIGEL_ASSIGN_OR_RETURN(p.decl.b, pj.GetDoubleOr("b", 0.0));
  RIGEL_ASSIGN_OR_RETURN(p.decl.seed, pj.GetUintOr("seed", 0));
  return p;
}

}  // namespace

StatusOr<ClusterSetup> SetupFromJson(const std::string& text, const std::string& what) {
  RIGEL_ASSIGN_OR_RETURN(JsonValue j, ParseJson(text, what));
  ClusterSetup s;
  if (!j.IsObject()) return j.Error("expected an object, found " + j.Describe());
  RIGEL_ASSIGN_OR_RETURN(s.servers, SetupCount(j, "servers"));
  RIGEL_ASSIGN_OR_RETURN(s.workers, SetupCount(j, "workers"));
  RIGEL_ASSIGN_OR_RETURN(s.options.staleness, SetupCount(j, "staleness"));
  RIGEL_ASSIGN_OR_RETURN(std::vector<JsonValue> params, j.GetArray("params"));
  for (const JsonValue& pj : params) {
    RIGEL_ASSIGN_OR_RETURN(ParamSpec p, ReadParamSpec(j, pj));
    s.params.push_back(std::move(p));
  }
  RIGEL_RETURN_IF_ERROR(CheckSetup(s, what));
  return s;
}

}  // namespace rigel::cluster
