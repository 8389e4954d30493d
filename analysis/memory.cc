#include "analysis/memory.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/sync/resolve.h"
#include "analysis/sync/units.h"
#include "data/feature_sketch.h"

namespace rigel::analysis {
namespace {

int64_t ParamBytes(const MemoryInputs::Param& p) { return p.rows * p.width * 4; }

// The units that keep each parameter on the workers, over every loop of the
// plan (each listed once), and how the job resolves the plan.
struct ParamUses {
  std::vector<std::vector<const sync::Unit*>> units;  // by parameter
  sync::Resolved resolved;
};

ParamUses Uses(const ir::Program& prog, const Plan& plan, const MemoryInputs& in) {
  ParamUses uses;
  uses.resolved = sync::Resolve(prog, plan, in);
  uses.units.resize(prog.params.size());
  for (const std::vector<PlanParam>& loop : uses.resolved.loops) {
    for (const PlanParam& p : loop) {
      const sync::Unit* u = sync::UnitOf(p);
      std::vector<const sync::Unit*>& list = uses.units[static_cast<size_t>(p.index)];
      if (u != nullptr && std::find(list.begin(), list.end(), u) == list.end()) list.push_back(u);
    }
  }
  return uses;
}

// The rows a table can touch when every access of it, in every loop, is by
// a feature index of a data set (row.features, analysis/access.h
// Subscript::features_of): at most those data sets' feature entries, all of
// them (`all`, what the servers create) or the share a worker holds
// (`worker`, what its cache fetches). -1 when some access is not so bounded.
struct TouchBound {
  int64_t all = -1;
  int64_t worker = -1;
};

std::vector<TouchBound> TouchBounds(const Plan& plan, const MemoryInputs& in, size_t params) {
  std::vector<std::vector<int>> sets(params);
  std::vector<bool> bounded(params, true), seen(params, false);
  for (const LoopPlan& lp : plan.loops) {
    for (const ParamAccess& a : lp.accesses.accesses) {
      if (a.param < 0 || static_cast<size_t>(a.param) >= params) continue;
      const size_t p = static_cast<size_t>(a.param);
      seen[p] = true;
      const int d = a.subs.empty() ? -1 : a.subs[0].features_of;
      if (d < 0 || static_cast<size_t>(d) >= in.data.size()) {
        bounded[p] = false;
      } else if (std::find(sets[p].begin(), sets[p].end(), d) == sets[p].end()) {
        sets[p].push_back(d);
      }
    }
  }
  std::vector<TouchBound> out(params);
  for (size_t p = 0; p < params; ++p) {
    if (!seen[p] || !bounded[p]) continue;
    double all = 0, worker = 0;
    for (int d : sets[p]) {
      // Each id names one row: at most the distinct ids, where counted.
      const MemoryInputs::Data& data = in.data[static_cast<size_t>(d)];
      const double share = std::min(1.0, data.worker_share);
      const data::DistinctCounts& ids = data.distinct_features;
      const int64_t distinct = data::DistinctInShare(ids, 1.0);
      const int64_t distinct_share = data::DistinctInShare(ids, share);
      const double entries = static_cast<double>(data.features);
      all += distinct >= 0 ? std::min(entries, static_cast<double>(distinct)) : entries;
      worker += distinct_share >= 0 ? std::min(entries * share, static_cast<double>(distinct_share))
                                    : entries * share;
    }
    out[p] = {static_cast<int64_t>(all), static_cast<int64_t>(std::ceil(worker))};
  }
  return out;
}

void Add(ProcessMemory* p, std::string what, int64_t bytes) {
  if (bytes <= 0) return;
  p->parts.push_back({std::move(what), bytes});
  p->total += bytes;
}

// A scan of a tokens corpus in chunks (data/held_load.h ScanFile) keeps each
// chunk's words, in order of first appearance with their counts, until it
// merges them into the vocabulary (data/part_load.cc MergeVocabulary), whose
// map, lists and kept words cost more per word. Each chunk's distinct words
// follow from how the words grew from the first half to all (Heaps' law,
// data/feature_sketch.h DistinctInShare). Bytes measured per word on the
// Gutenberg corpus (docs/planner.md, "Memory").
int64_t ScanWordsBytes(const MemoryInputs::Data& d) {
  constexpr int64_t kChunkWordBytes = 46, kMergedWordBytes = 140;
  if (d.scan_chunk_bytes <= 0 || d.distinct_words.distinct <= 0 || d.file_bytes <= 0) return 0;
  const int64_t chunks = (d.file_bytes + d.scan_chunk_bytes - 1) / d.scan_chunk_bytes;
  const int64_t per_chunk =
      data::DistinctInShare(d.distinct_words, 1.0 / static_cast<double>(chunks));
  return chunks * std::max<int64_t>(per_chunk, 0) * kChunkWordBytes +
         d.distinct_words.distinct * kMergedWordBytes;
}

void Sort(ProcessMemory* p) {
  std::stable_sort(p->parts.begin(), p->parts.end(),
                   [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
}

// The data sets a worker (its share of those held in part) or the scheduler
// (whole) holds, and the largest text parsed at once. As a serial run's
// (EstimateSerialMemory), a file's text is freed before the file's data set
// is split: the text counts only as far as it exceeds the split parts.
void AddData(const MemoryInputs& in, bool scheduler, ProcessMemory* p) {
  const MemoryInputs::Data* largest = nullptr;
  int64_t largest_text = 0, all = 0, read = 0;
  for (const MemoryInputs::Data& d : in.data) {
    if (scheduler && d.facts_only) {
      // Its facts came from an index, or from a scan holding one chunk.
      if (d.scan_chunk_bytes > largest_text) {
        largest = &d;
        largest_text = d.scan_chunk_bytes;
      }
      Add(p, "the words of data set '" + d.name + "' counted while it is scanned",
          ScanWordsBytes(d));
      continue;
    }
    const bool part = !scheduler && d.worker_share < 1.0;
    const int64_t bytes =
        part ? static_cast<int64_t>(d.worker_share * static_cast<double>(d.bytes)) : d.bytes;
    Add(p, "data set '" + d.name + "'" + (part ? " (its part)" : ""), bytes);
    all += bytes;
    if (!d.split_part) read += bytes;
    const int64_t text = !scheduler && d.chunk_bytes > 0 ? d.chunk_bytes : d.file_bytes;
    if (text > largest_text) {
      largest = &d;
      largest_text = text;
    }
  }
  if (largest != nullptr) {
    const bool chunk = scheduler ? largest->facts_only : largest->chunk_bytes > 0;
    Add(p,
        (chunk ? "a chunk of the text of data set '" : "text of data set '") + largest->name +
            "' while it is parsed",
        std::max<int64_t>(0, read + largest_text - all));
  }
}

// The bytes of a hash store's `rows` rows of width `width`
// (ps/row_store.cc HashStore): per lock stripe, rows in chunks of 256 and
// a table of 16-byte slots, a power of two at most 3/4 full.
int64_t HashStoreBytes(int64_t rows, int64_t width) {
  constexpr int64_t kStripes = 16, kChunkRows = 256;
  const int64_t per = (rows + kStripes - 1) / kStripes;
  const int64_t chunks = (per + kChunkRows - 1) / kChunkRows;
  const auto table = std::max<uint64_t>(16, std::bit_ceil(static_cast<uint64_t>(per * 4 / 3 + 1)));
  return kStripes * (chunks * kChunkRows * width * 4 + static_cast<int64_t>(table) * 16);
}

// What one server holds of parameter `p`: its shard (a range store makes
// every row of its range at the start; a hash store the rows first touched),
// the changed and dirty marks the service keeps per row of the whole table
// (ps/service.h), and what the units keeping it hold there.
void AddServerShare(const Plan& plan, const MemoryInputs& in, int p, const TouchBound& touch,
                    int64_t cache_rows, const std::vector<const sync::Unit*>& units,
                    ProcessMemory* server) {
  const MemoryInputs::Param& pr = in.params[static_cast<size_t>(p)];
  const int64_t servers = std::max(1, in.servers);
  const int64_t touched = touch.all >= 0 ? std::min(pr.rows, touch.all) : pr.rows;
  const int64_t created = (touched + servers - 1) / servers;
  const bool hashed = sync::ShardedByHash(plan, p);
  Add(server, "shard of parameter '" + pr.name + "'",
      hashed ? HashStoreBytes(created, pr.width)
             : (pr.rows + servers - 1) / servers * pr.width * 4);
  Add(server, "changed and dirty marks of '" + pr.name + "'", (pr.rows + 63) / 64 * 16);
  const sync::ServerShare share{&pr, created, cache_rows, std::max(1, in.workers),
                                static_cast<int>(servers)};
  for (const sync::Unit* u : units) {
    for (MemoryPart& part : u->ServerMemory(share)) Add(server, std::move(part.what), part.bytes);
  }
}

}  // namespace

MemoryInputs MemoryInputsOf(const ir::Program& prog, const std::vector<const data::Dataset*>& data,
                            const std::vector<int64_t>& rows, const std::vector<int64_t>& widths) {
  MemoryInputs in;
  for (size_t k = 0; k < prog.data.size() && k < data.size(); ++k) {
    const ir::DataDecl& decl = prog.data[k];
    MemoryInputs::Data d;
    d.name = decl.name;
    d.bytes = data::ColumnBytes(*data[k]);
    d.elements = data[k]->count;
    d.features = data::FeatureEntries(*data[k]);
    d.distinct_features = data::DistinctFeatures(*data[k]);
    d.distinct_words = data[k]->distinct_words;
    d.facts_only = data[k]->shape_only;
    d.split_part = decl.split_parent >= 0;
    // A split part's path is its parent's: the parent read the file.
    if (decl.split_parent < 0 && !data[k]->path.empty()) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(data[k]->path, ec);
      if (!ec) d.file_bytes = static_cast<int64_t>(size);
    }
    in.data.push_back(std::move(d));
  }
  for (size_t p = 0; p < prog.params.size() && p < rows.size() && p < widths.size(); ++p) {
    in.params.push_back({prog.params[p].name, rows[p], widths[p]});
  }
  return in;
}

MemoryEstimate EstimateMemory(const ir::Program& prog, const Plan& plan, const MemoryInputs& in) {
  const ParamUses uses = Uses(prog, plan, in);
  ProcessMemory worker{"worker", 0, {}}, server{"server", 0, {}}, scheduler{"scheduler", 0, {}};
  Add(&worker, "the program and its libraries", kWorkerBaseBytes);
  Add(&server, "the program and its libraries", kServerBaseBytes);
  Add(&scheduler, "the program and its libraries", kSchedulerBaseBytes);
  AddData(in, false, &worker);
  AddData(in, true, &scheduler);

  int64_t all_params = 0;
  const std::vector<TouchBound> touch = TouchBounds(plan, in, in.params.size());
  for (size_t p = 0; p < in.params.size(); ++p) {
    const MemoryInputs::Param& pr = in.params[p];
    const int64_t bytes = ParamBytes(pr);
    all_params += bytes;
    const bool in_part = uses.resolved.held_in_part(static_cast<int>(p));
    if (!in_part) Add(&worker, "parameter '" + pr.name + "', a copy on every worker", bytes);
    // A partial cache fetches only the rows its worker's elements touch.
    int64_t cache_rows = p < uses.resolved.cache_rows.size() ? uses.resolved.cache_rows[p] : 0;
    if (uses.resolved.partial(static_cast<int>(p)) && touch[p].worker >= 0) {
      cache_rows = std::min(cache_rows, touch[p].worker);
    }
    if (p < uses.units.size()) {
      for (const sync::Unit* u : uses.units[p]) {
        for (MemoryPart& part : u->WorkerMemory(pr, cache_rows, in_part)) {
          Add(&worker, std::move(part.what), part.bytes);
        }
      }
    }
    AddServerShare(plan, in, static_cast<int>(p), touch[p], cache_rows,
                   p < uses.units.size() ? uses.units[p] : std::vector<const sync::Unit*>{},
                   &server);
  }
  // Each loop's steps keep the element ids of every worker's blocks, and
  // the worker its own again as steps.
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    const LoopPlan& lp = plan.loops[l];
    if (lp.id < 0 || lp.id >= static_cast<int>(prog.loops.size())) continue;
    const int data = prog.loops[static_cast<size_t>(lp.id)].data;
    if (data < 0 || data >= static_cast<int>(in.data.size())) continue;  // a grid or range
    const MemoryInputs::Data& d = in.data[static_cast<size_t>(data)];
    const int64_t n = d.elements;
    const int workers = std::max(1, in.workers);
    // Blocks cut by element count are ranges (analysis/order.h ElementList),
    // and so are a worker's steps over them (analysis/step_lists.h); others
    // list every worker's elements (its own only, of data held in part),
    // which its steps share.
    const bool ranges = lp.schedule.kind == ScheduleKind::kDataParallel ||
                        lp.schedule.kind == ScheduleKind::kSerial;
    const double listed = std::min(1.0, d.worker_share) * static_cast<double>(n);
    Add(&worker, "element lists of loop " + std::to_string(lp.id),
        ranges ? 0 : 8 * static_cast<int64_t>(listed));
    // A worker slices every worker's elements to find the rows only it
    // writes of a parameter this loop caches and writes, when it holds them
    // all; held in part, the workers exchange their own rows instead
    // (worker/runner_samples.cc).
    const std::vector<PlanParam>& resolved = uses.resolved.loops[l];
    const bool one_writer = std::any_of(resolved.begin(), resolved.end(),
                                        [](const PlanParam& p) { return p.cached && p.written; });
    const bool all = one_writer && d.worker_share >= 1.0;
    Add(&worker, "row keys of loop " + std::to_string(lp.id) + " while its rows are planned",
        24 * (all ? d.features : d.features / workers));
    if (one_writer && !all) {
      // Those rows go through the scheduler's rendezvous store, which keeps
      // every worker's list and the message it came in.
      int64_t rows = 0;
      for (const PlanParam& p : resolved) {
        if (!p.cached || !p.written || static_cast<size_t>(p.index) >= in.params.size()) continue;
        const int64_t whole = in.params[static_cast<size_t>(p.index)].rows;
        const int64_t bound = touch[static_cast<size_t>(p.index)].worker;
        rows += std::min(whole, bound >= 0 ? bound : d.features / workers);
      }
      Add(&scheduler,
          "the rows the workers of loop " + std::to_string(lp.id) + " share through its store",
          16 * workers * rows);
    }
  }
  if (in.save_params) Add(&scheduler, "parameters gathered to be saved", 2 * all_params);
  MemoryEstimate m;
  for (ProcessMemory* p : {&worker, &server, &scheduler}) {
    Sort(p);
    m.processes.push_back(std::move(*p));
  }
  return m;
}

MemoryEstimate EstimateSerialMemory(const MemoryInputs& in) {
  ProcessMemory serial{"serial", 0, {}};
  Add(&serial, "the program and its libraries", kSerialBaseBytes);
  // A file's text is parsed, then freed, and only then split: at its peak
  // the process holds the largest text beside the data sets read from files,
  // or every data set with the split parts and no text.
  int64_t all = 0, read = 0, text = 0;
  const MemoryInputs::Data* largest = nullptr;
  for (const MemoryInputs::Data& d : in.data) {
    Add(&serial, "data set '" + d.name + "'", d.bytes);
    all += d.bytes;
    if (!d.split_part) read += d.bytes;
    if (d.file_bytes > text) {
      text = d.file_bytes;
      largest = &d;
    }
  }
  if (largest != nullptr) {
    Add(&serial, "text of data set '" + largest->name + "' while it is parsed",
        std::max<int64_t>(0, read + text - all));
  }
  for (const MemoryInputs::Param& pr : in.params) {
    Add(&serial, "parameter '" + pr.name + "'", ParamBytes(pr));
  }
  Sort(&serial);
  MemoryEstimate m;
  m.processes.push_back(std::move(serial));
  return m;
}

std::string ShowBytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  char buf[32];
  if (b >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  } else if (b >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f KB", b / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  }
  return buf;
}

namespace {

std::string PartsText(const ProcessMemory& p, int parts) {
  std::string s;
  for (int k = 0; k < parts && k < static_cast<int>(p.parts.size()); ++k) {
    if (k > 0) s += "; ";
    s += p.parts[static_cast<size_t>(k)].what + ": " +
         ShowBytes(p.parts[static_cast<size_t>(k)].bytes);
  }
  return s;
}

}  // namespace

std::string MemoryJson(const MemoryEstimate& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const ProcessMemory& p : m.processes) {
    nlohmann::ordered_json& r = j[p.role];
    r["bytes"] = p.total;
    r["parts"] = nlohmann::ordered_json::array();
    for (const MemoryPart& part : p.parts) {
      r["parts"].push_back({{"what", part.what}, {"bytes", part.bytes}});
    }
  }
  return j.dump();
}

std::string MemoryText(const MemoryEstimate& m, int parts) {
  std::string s;
  for (const ProcessMemory& p : m.processes) {
    s += "  " + p.role + ": " + ShowBytes(p.total) + " (" + PartsText(p, parts) + ")\n";
  }
  return s;
}

Status CheckMemoryLimit(const MemoryEstimate& m, int64_t limit) {
  if (limit <= 0) return Status::Ok();
  for (const ProcessMemory& p : m.processes) {
    if (p.total <= limit) continue;
    const char* hint =
        p.role == "server" ? "more --servers divide the parameters among them"
        : p.role == "serial"
            ? "a serial run holds every data set and parameter whole; a "
              "distributed run (--workers) holds data sets that only "
              "data-parallel loops read in part on each worker"
            : "every worker holds a copy of every parameter but those held in part (a "
              "relaxed table in a row cache: a smaller --cache-mb makes it smaller), and every "
              "data set whole except those only data-parallel loops read (exec/hold_plan.h), so "
              "more workers make only the data held in part smaller";
    return FailedPrecondition("--memory-limit " + ShowBytes(limit) + ": a " +
                              (p.role == "serial" ? "serial run" : p.role) + " would need about " +
                              ShowBytes(p.total) + " (" + PartsText(p, 3) + "); " + hint +
                              " (docs/planner.md, \"Memory\")");
  }
  return Status::Ok();
}

}  // namespace rigel::analysis
