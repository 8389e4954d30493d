#include "node/launch_env.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <functional>

extern char** environ;

namespace rigel::node {

namespace {

// The value of `name`, or "" when unset.
std::string Get(const Env& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// A non-negative decimal integer; -1 when `s` is not one.
int64_t ParseCount(std::string_view s) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return -1;
  return v;
}

struct Convention {
  Launcher launcher;
  const char* rank;
  const char* size;
};

// The order the file comment gives: OpenMPI sets PMIx's too, and a Slurm
// allocation's variables may be inherited by an mpirun started inside it.
constexpr Convention kConventions[] = {
    {Launcher::kOpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {Launcher::kPmi, "PMI_RANK", "PMI_SIZE"},
    {Launcher::kSlurm, "SLURM_PROCID", "SLURM_NTASKS"},
    {Launcher::kPmix, "PMIX_RANK", "PMIX_SIZE"},
    {Launcher::kTorch, "RANK", "WORLD_SIZE"},
};

// FNV-1a: a job id that is not a number (PMIx namespaces) still gives a port.
uint64_t HashText(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// The launcher's id of this job, the same in every rank; "" when unknown.
std::string JobId(Launcher l, const Env& env) {
  switch (l) {
    case Launcher::kOpenMpi: {
      std::string id = Get(env, "OMPI_MCA_ess_base_jobid");
      return id.empty() ? Get(env, "PMIX_NAMESPACE") : id;
    }
    case Launcher::kSlurm: {
      std::string job = Get(env, "SLURM_JOB_ID");
      return job.empty() ? "" : job + "." + Get(env, "SLURM_STEP_ID");
    }
    case Launcher::kPmix:
      return Get(env, "PMIX_NAMESPACE");
    case Launcher::kPmi:
      return Get(env, "PMI_KVSNAME").empty() ? Get(env, "PMIX_NAMESPACE") : Get(env, "PMI_KVSNAME");
    default:
      return "";
  }
}

// Whether every rank runs on this host, as far as the launcher says.
bool AllLocal(const LaunchRank& r, const Env& env) {
  const char* local = nullptr;
  switch (r.launcher) {
    case Launcher::kOpenMpi:
      local = "OMPI_COMM_WORLD_LOCAL_SIZE";
      break;
    case Launcher::kPmi:
      local = "MPI_LOCALNRANKS";
      break;
    case Launcher::kPmix:
      local = "PMIX_LOCAL_SIZE";
      break;
    case Launcher::kSlurm:
      return Get(env, "SLURM_STEP_NUM_NODES") == "1" ||
             (Get(env, "SLURM_STEP_NUM_NODES").empty() && Get(env, "SLURM_JOB_NUM_NODES") == "1");
    default:
      return false;
  }
  return ParseCount(Get(env, local)) == r.size;
}

// "HOST:PORT", "tcp://HOST:PORT", "ucx://HOST:PORT", "HOST", "[v6]:PORT"; port
// 0 when absent; *scheme is the scheme given ("" when none).
Status SplitHostPort(std::string s, const std::string& what, std::string* host, int* port,
                     std::string* scheme) {
  scheme->clear();
  for (const char* prefix : {"tcp://", "ucx://"}) {
    if (s.rfind(prefix, 0) == 0) {
      *scheme = std::string(prefix, 3);
      s = s.substr(6);
    }
  }
  if (scheme->empty() && s.find("://") != std::string::npos) {
    return InvalidArgument(fmt::format("{}: '{}' is neither tcp:// nor ucx://", what, s));
  }
  *port = 0;
  size_t colon = s.rfind(':');
  const bool v6 = !s.empty() && s[0] == '[';
  if (colon != std::string::npos && (!v6 || s.find(']') < colon)) {
    int64_t p = ParseCount(std::string_view(s).substr(colon + 1));
    if (p < 1 || p > 65535) {
      return InvalidArgument(fmt::format("{}: '{}' has no port in 1..65535 after ':'", what, s));
    }
    *port = static_cast<int>(p);
    s = s.substr(0, colon);
  }
  if (v6 && s.size() > 2 && s.back() == ']') s = s.substr(1, s.size() - 2);
  if (s.empty()) return InvalidArgument(what + ": no host in '" + s + "'");
  *host = s;
  return Status::Ok();
}

}  // namespace

Env CurrentEnv() {
  Env env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

const char* LauncherName(Launcher l) {
  switch (l) {
    case Launcher::kFlags:
      return "--rank/--size";
    case Launcher::kOpenMpi:
      return "OpenMPI";
    case Launcher::kPmi:
      return "PMI";
    case Launcher::kSlurm:
      return "Slurm";
    case Launcher::kPmix:
      return "PMIx";
    case Launcher::kTorch:
      return "RANK/WORLD_SIZE";
  }
  return "?";
}

StatusOr<LaunchRank> RankFromEnv(const Env& env) {
  std::string looked;
  for (const Convention& c : kConventions) {
    std::string rank = Get(env, c.rank), size = Get(env, c.size);
    looked += fmt::format("{}{}/{}", looked.empty() ? "" : ", ", c.rank, c.size);
    if (rank.empty() || size.empty()) continue;
    int64_t r = ParseCount(rank), n = ParseCount(size);
    if (r < 0) return InvalidArgument(fmt::format("{}='{}' is not a rank", c.rank, rank));
    if (n < 1) return InvalidArgument(fmt::format("{}='{}' is not a process count", c.size, size));
    if (r >= n) {
      return InvalidArgument(
          fmt::format("{}={} is outside the job of {}={} processes", c.rank, r, c.size, n));
    }
    return LaunchRank{static_cast<int>(r), static_cast<int>(n), c.launcher};
  }
  return NotFound("no launcher's rank in the environment (looked for " + looked +
                  "); give --rank and --size");
}

StatusOr<std::vector<std::string>> ExpandHostList(std::string_view list) {
  std::vector<std::string> out;
  auto bad = [&](size_t at, const std::string& what) {
    return InvalidArgument(fmt::format("host list '{}' at character {}: {}", list, at + 1, what));
  };
  // One name with bracket groups: expanded left to right as a product.
  std::function<Status(size_t, size_t, std::string)> expand = [&](size_t i, size_t end,
                                                                  std::string prefix) -> Status {
    size_t open = list.find('[', i);
    if (open == std::string_view::npos || open >= end) {
      prefix.append(list.substr(i, end - i));
      if (prefix.find(']') != std::string::npos) return bad(i, "']' without '['");
      out.push_back(std::move(prefix));
      return Status::Ok();
    }
    size_t close = list.find(']', open);
    if (close == std::string_view::npos || close >= end) return bad(open, "'[' without ']'");
    prefix.append(list.substr(i, open - i));
    std::string_view ranges = list.substr(open + 1, close - open - 1);
    if (ranges.empty()) return bad(open, "empty brackets");
    size_t k = 0;
    while (k <= ranges.size()) {
      size_t comma = ranges.find(',', k);
      if (comma == std::string_view::npos) comma = ranges.size();
      std::string_view item = ranges.substr(k, comma - k);
      size_t dash = item.find('-');
      std::string_view lo_s = item.substr(0, dash);
      std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
      int64_t lo = ParseCount(lo_s), hi = ParseCount(hi_s);
      if (lo_s.empty() || hi_s.empty() || lo < 0 || hi < lo) {
        return bad(open + 1 + k,
                   "expected N or N-M with N <= M, found '" + std::string(item) + "'");
      }
      if (hi - lo > 100000) return bad(open + 1 + k, "range of more than 100000 hosts");
      for (int64_t v = lo; v <= hi; ++v) {
        std::string num = std::to_string(v);
        // Zero padding follows the lower bound's width, as Slurm does.
        if (num.size() < lo_s.size()) num.insert(0, lo_s.size() - num.size(), '0');
        RIGEL_RETURN_IF_ERROR(expand(close + 1, end, prefix + num));
      }
      k = comma + 1;
    }
    return Status::Ok();
  };
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '[') ++depth;
    if (i < list.size() && list[i] == ']') --depth;
    if (i < list.size() && (list[i] != ',' || depth > 0)) continue;
    if (i == start) return bad(i, "empty host name");
    RIGEL_RETURN_IF_ERROR(expand(start, i, ""));
    start = i + 1;
  }
  return out;
}

StatusOr<SchedulerEndpoint> FindScheduler(const std::string& flag, const LaunchRank& rank,
                                          const Env& env) {
  SchedulerEndpoint ep;
  if (!flag.empty()) {
    RIGEL_RETURN_IF_ERROR(SplitHostPort(flag, "--scheduler", &ep.host, &ep.port, &ep.scheme));
    ep.how = "--scheduler";
  } else if (std::string r = Get(env, "RIGEL_SCHEDULER"); !r.empty()) {
    RIGEL_RETURN_IF_ERROR(SplitHostPort(r, "RIGEL_SCHEDULER", &ep.host, &ep.port, &ep.scheme));
    ep.how = "RIGEL_SCHEDULER";
  } else if (std::string m = Get(env, "MASTER_ADDR"); !m.empty()) {
    RIGEL_RETURN_IF_ERROR(SplitHostPort(m, "MASTER_ADDR", &ep.host, &ep.port, &ep.scheme));
    if (std::string p = Get(env, "MASTER_PORT"); !p.empty()) {
      int64_t v = ParseCount(p);
      if (v < 1 || v > 65535) return InvalidArgument("MASTER_PORT='" + p + "' is not a port");
      ep.port = static_cast<int>(v);
    }
    ep.how = "MASTER_ADDR";
  } else if (AllLocal(rank, env)) {
    ep.host = "127.0.0.1";
    ep.how = fmt::format("every rank on this host ({})", LauncherName(rank.launcher));
  } else if (rank.launcher == Launcher::kSlurm) {
    const char* var =
        Get(env, "SLURM_STEP_NODELIST").empty() ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
    std::string nodes = Get(env, var);
    if (nodes.empty()) {
      return FailedPrecondition(
          "Slurm gave no SLURM_STEP_NODELIST or SLURM_JOB_NODELIST; give --scheduler HOST:PORT");
    }
    RIGEL_ASSIGN_OR_RETURN(std::vector<std::string> hosts, ExpandHostList(nodes));
    ep.host = hosts.front();
    ep.how = std::string("first host of ") + var;
  } else {
    return FailedPrecondition(fmt::format(
        "cannot tell where rank 0 runs: the {} ranks are on several hosts; give --scheduler "
        "HOST:PORT (rank 0's host) or set MASTER_ADDR",
        LauncherName(rank.launcher)));
  }
  if (ep.port == 0) {
    std::string id = JobId(rank.launcher, env);
    if (id.empty()) {
      return FailedPrecondition(
          fmt::format("no port for the scheduler: {} gives no job id to derive one from; give "
                      "--scheduler HOST:PORT or set MASTER_PORT",
                      LauncherName(rank.launcher)));
    }
    ep.port = kPortBase + static_cast<int>(HashText(id) % kPortSpan);
    ep.how += fmt::format(", port from job id {}", id);
  }
  return ep;
}

NodeRole RoleOfRank(int rank, int servers) {
  if (rank == 0) return {"scheduler", 0};
  if (rank <= servers) return {"server", rank - 1};
  return {"worker", rank - 1 - servers};
}

}  // namespace rigel::node
