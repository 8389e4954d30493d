#include "exec/executor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <utility>

#include "analysis/memory.h"
#include "common/int_math.h"
#include "data/held_load.h"
#include "exec/hold_plan.h"
#include "exec/init_params.h"
#include "ir/param_init.h"
#include "kernel/float_ops.h"

namespace rigel::exec {

using data::DataKind;
using data::Dataset;

SerialExecutor::SerialExecutor(const ir::Program& prog, const ExecutorOptions& opts)
    : prog_(prog), opts_(opts) {
  if (!opts_.out) opts_.out = &std::cout;
}

Status SerialExecutor::ErrorAt(ir::Loc loc, const std::string& msg) const {
  return InvalidArgument(ir::FormatDiagnostic(*prog_.source, loc, msg));
}

namespace {

// One side of a width check as a user reads it: "train.dim = 10", or for a
// number the const it came from ("D = 12", when exactly one const has that
// value; consts are folded to numbers before this runs), or just "12".
std::string WidthText(const ir::Program& prog, int expr, int64_t value) {
  const std::string text = ir::PrintExpr(prog, expr);
  const std::string number = std::to_string(value);
  if (text != number) return text + " = " + number;
  std::string name;
  int matches = 0;
  for (const auto& [n, v] : prog.consts) {
    if (v == static_cast<double>(value)) {
      name = n;
      ++matches;
    }
  }
  return matches == 1 ? name + " = " + number : number;
}

bool WritesParams(const std::vector<ir::Inst>& body) {
  for (const ir::Inst& in : body) {
    if (in.op == ir::Op::kWrite || WritesParams(in.body) || WritesParams(in.else_body)) {
      return true;
    }
  }
  return false;
}

// Whether running `s` may write a parameter: a loop of its own, or one in
// its body or else-body, that does.
bool WritesParams(const ir::Program& prog, const ir::DStmt& s) {
  if (s.kind == ir::DStmt::kParallel && WritesParams(prog.loops[s.index].body)) return true;
  for (const auto* body : {&s.body, &s.else_body}) {
    for (const ir::DStmt& t : *body) {
      if (WritesParams(prog, t)) return true;
    }
  }
  return false;
}

// The first statement of `body` from which on none writes a parameter
// (ExecutorOptions::params_settled).
size_t SettledFrom(const ir::Program& prog, const std::vector<ir::DStmt>& body) {
  size_t k = body.size();
  while (k > 0 && !WritesParams(prog, body[k - 1])) --k;
  return k;
}

}  // namespace

StatusOr<std::unique_ptr<SerialExecutor>> SerialExecutor::Create(const ir::Program& prog,
                                                                 const ExecutorOptions& opts) {
  std::unique_ptr<SerialExecutor> ex(new SerialExecutor(prog, opts));
  ex->accums_.assign(ir::AccumSlots(prog.accums), 0.0);
  ex->slots_.assign(prog.slot_names.size(), Value{});
  ex->launches_.assign(prog.loops.size(), 0);
  RIGEL_RETURN_IF_ERROR(ex->LoadData());
  for (const ir::WidthCheck& c : prog.width_checks) {
    RIGEL_ASSIGN_OR_RETURN(Value a, ex->Eval(c.a));
    RIGEL_ASSIGN_OR_RETURN(Value b, ex->Eval(c.b));
    if (a.i != b.i) {
      return ex->ErrorAt(c.loc, "vector width mismatch in " + c.what + ": " +
                                    WidthText(prog, c.a, a.i) + " vs " + WidthText(prog, c.b, b.i));
    }
  }
  RIGEL_RETURN_IF_ERROR(ex->InitParams());
  SerialExecutor* self = ex.get();
  kernel::WidthFn widths = [self](int expr) -> StatusOr<int64_t> {
    RIGEL_ASSIGN_OR_RETURN(Value v, self->Eval(expr));
    return v.i;
  };
  for (size_t l = 0; l < prog.loops.size(); ++l) {
    auto k = kernel::Kernel::Compile(prog, static_cast<int>(l), widths, opts.compile);
    // A failed verification is a bug in the compiler, not in the program.
    if (!k.ok() && k.status().code() == StatusCode::kInternal) return k.status();
    if (!k.ok()) return ex->ErrorAt(prog.loops[l].loc, k.status().message());
    ex->kernels_.push_back(std::move(k).value());
  }
  ex->tier_said_.assign(prog.loops.size(), false);
  return ex;
}

data::LoadSpec LoadSpecOf(const ir::DataDecl& d) {
  data::LoadSpec s;
  s.kind = d.kind;
  s.triples = {d.sep, d.base, d.skip_header, d.ignore_extra};
  s.libsvm = {d.base, d.labels};
  if (d.criteo) {
    s.libsvm.format = data::LibsvmFormat::kCriteo;
    s.libsvm.buckets = d.buckets;
    s.libsvm.shared_buckets = d.shared_buckets;
  }
  s.tokens = {d.min_count, d.lines};
  s.dense_csv = {d.label, d.sep, d.skip_header};
  return s;
}

Status SerialExecutor::LoadData() {
  data_.resize(prog_.data.size());
  for (size_t k = 0; k < prog_.data.size(); ++k) {
    const ir::DataDecl& d = prog_.data[k];
    auto start = std::chrono::steady_clock::now();
    StatusOr<data::Dataset> loaded = Internal("unloaded");
    if (d.split_parent >= 0) {
      // Both parts come from one split of the parent; the second part reuses it.
      if (d.split_part == 1 && k > 0 && prog_.data[k - 1].split_parent == d.split_parent &&
          data_[k]) {
        continue;
      }
      auto parts = data::SplitDataset(*data_[d.split_parent], d.split_test, d.split_seed);
      if (!parts.ok()) return ErrorAt(d.loc, parts.status().message());
      data_[k] = std::make_shared<data::Dataset>(std::move(parts->first));
      if (k + 1 < prog_.data.size() && prog_.data[k + 1].split_parent == d.split_parent) {
        data_[k + 1] = std::make_shared<data::Dataset>(std::move(parts->second));
      }
      continue;
    }
    switch (d.kind) {
      case data::DataKind::kTriples:
      case data::DataKind::kLibsvm:
      case data::DataKind::kTokens:
      case data::DataKind::kDenseCsv:
        loaded = LoadFromFile(static_cast<int>(k));
        break;
      case data::DataKind::kGrid:
      case data::DataKind::kRange: {
        if (d.sized_at_launch) {
          loaded = data::MakeRange(0);  // sized by RunLoop
          break;
        }
        RIGEL_ASSIGN_OR_RETURN(Value n, Eval(d.grid_n));
        RIGEL_ASSIGN_OR_RETURN(Value m, Eval(d.grid_m));
        if (!n.is_int || !m.is_int || n.i < 0 || m.i < 0) {
          return ErrorAt(d.loc, "iteration space sizes must be non-negative integers");
        }
        int64_t total;
        if (__builtin_mul_overflow(n.i, m.i, &total)) {
          return ErrorAt(d.loc, "grid(" + std::to_string(n.i) + ", " + std::to_string(m.i) +
                                    ") has more elements than fit in 64 bits");
        }
        loaded = d.kind == data::DataKind::kGrid ? data::MakeGrid(n.i, m.i) : data::MakeRange(n.i);
        break;
      }
    }
    if (!loaded.ok()) return LoadError(d, loaded.status());
    data_[k] = std::make_shared<data::Dataset>(std::move(loaded).value());
    if (opts_.warnings) {
      for (const std::string& w : data_[k]->warnings) *opts_.warnings << w << "\n";
    }
    if (opts_.log && !d.path.empty()) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const data::Dataset& got = *data_[k];
      // Facts come from an index (which knows the whole load's digest) or a
      // scan of the file chunk by chunk.
      const char* from = got.digest.empty() ? ", by a scan" : ", from its index";
      *opts_.log << (got.shape_only ? "facts of " : "loaded ") << d.name << " (" << d.path
                 << (got.shape_only ? from : "") << "): ";
      if (got.in_part) *opts_.log << got.HeldCount() << " of ";
      *opts_.log << got.count << " elements in " << secs << " s\n";
    }
  }
  // Held in part, a data set only its split parts are read from is not
  // needed once they are made: its elements would double what the worker
  // holds (a parent and its parts hold the same elements).
  for (size_t k = 0; k < data_.size(); ++k) {
    if (data_[k] && data_[k]->in_part && ReadThroughPartsOnly(prog_, static_cast<int>(k))) {
      data_[k] = std::make_shared<data::Dataset>(data::HoldingNothing(*data_[k]));
    }
  }
  for (const auto& d : data_) data_ptrs_.push_back(d.get());
  return Status::Ok();
}

// A data set read from a file: its facts only (from a current index, or a
// scan in chunks) where this process needs no more, its part where it holds
// one, or the whole file.
StatusOr<data::Dataset> SerialExecutor::LoadFromFile(int k) {
  const ir::DataDecl& d = prog_.data[static_cast<size_t>(k)];
  const data::LoadSpec spec = LoadSpecOf(d);
  const bool scan = opts_.scan_facts && opts_.scan_facts(k);
  // A process that needs only the facts takes them from a current index
  // instead of loading the file (data/data_index.h).
  if (opts_.facts_only && opts_.facts_only(k)) {
    RIGEL_ASSIGN_OR_RETURN(std::optional<data::IndexEntry> index,
                           data::ReadCurrentIndexEntry(d.path, spec));
    if (index) {
      StatusOr<data::Dataset> shape = data::ShapeOnly(*index, d.path);
      if (scan) facts_entries_[k] = std::move(*index);
      return shape;
    }
    // Those that hold it in part read only the chunks they need: a scan
    // gives the facts and the chunks, holding one at a time. Cut as an
    // index cuts it: the workers read whichever chunks hold their parts.
    if (scan) {
      RIGEL_ASSIGN_OR_RETURN(data::ScannedFile scanned,
                             data::ScanFileFor(d.path, spec, data::kIndexChunks / 2));
      facts_entries_[k] = data::EntryOfScan(spec, scanned);
      return data::ShapeOfScan(d.path, spec, scanned);
    }
  }
  if (opts_.hold_part && opts_.hold_part(k)) return LoadInPart(k, spec);
  StatusOr<data::Dataset> loaded = data::LoadFile(d.path, spec);
  if (loaded.ok() && scan) RIGEL_RETURN_IF_ERROR(KeepChunks(k, spec));
  return loaded;
}

// The error of a data set that could not be loaded, placed where its path
// came from.
Status SerialExecutor::LoadError(const ir::DataDecl& d, const Status& st) const {
  const bool missing = st.code() == StatusCode::kNotFound;
  const std::string what = "cannot load data set '" + d.name + "': " + st.message();
  // A path from the command line is the command line's error: no caret
  // under the program's own (overridden) path.
  if (d.path_from_set) {
    return InvalidArgument(
        "--set " + d.name + ".path=" + d.path + ": " + what +
        (missing ? " (a relative path given with --set is taken from the current directory)" : ""));
  }
  const bool example = d.path.find("examples/data/") != std::string::npos;
  return ErrorAt(d.loc,
                 what + (missing && example ? " (the examples' data are made by the build, or by "
                                              "`rigel gen`; see examples/README.md)"
                                            : ""));
}

// A data set this process loads whole (its loops are cut by coordinates)
// that the workers hold in part: they read it in the chunks of a current
// index or of a scan, which the job sends.
Status SerialExecutor::KeepChunks(int k, const data::LoadSpec& spec) {
  const std::string& path = prog_.data[static_cast<size_t>(k)].path;
  RIGEL_ASSIGN_OR_RETURN(std::optional<data::IndexEntry> index,
                         data::ReadCurrentIndexEntry(path, spec));
  if (index && !index->chunks.empty()) {
    facts_entries_[k] = std::move(*index);
    return Status::Ok();
  }
  RIGEL_ASSIGN_OR_RETURN(data::ScannedFile scanned,
                         data::ScanFileFor(path, spec, data::kIndexChunks / 2));
  facts_entries_[k] = data::EntryOfScan(spec, scanned);
  return Status::Ok();
}

StatusOr<data::Dataset> SerialExecutor::LoadInPart(int k, const data::LoadSpec& spec) const {
  const std::string& path = prog_.data[static_cast<size_t>(k)].path;
  // The facts and chunks the scheduler sent, or a current index, spare a
  // scan.
  std::optional<data::IndexEntry> index;
  if (auto sent = opts_.entries.find(k); sent != opts_.entries.end()) {
    RIGEL_ASSIGN_OR_RETURN(
        index, data::IndexEntryFromText(sent->second, spec,
                                        "the scheduler's facts of data set '" +
                                            prog_.data[static_cast<size_t>(k)].name + "'"));
  } else {
    RIGEL_ASSIGN_OR_RETURN(index, data::ReadCurrentIndexEntry(path, spec));
  }
  data::ScannedFile scan;
  if (index && !index->chunks.empty()) {
    scan = data::ScanOfIndex(std::move(*index));
  } else {
    RIGEL_ASSIGN_OR_RETURN(scan, data::ScanFileFor(path, spec, opts_.hold_workers));
  }
  // Only the count and shape attributes decide what is held.
  const data::Dataset shape = data::ShapeOfScan(path, spec, scan, /*vocabulary=*/false);
  std::unique_ptr<data::ElementFilter> keep;
  if (opts_.hold_filter) {
    RIGEL_ASSIGN_OR_RETURN(keep, opts_.hold_filter(k, shape));
  }
  if (keep) return data::LoadHeld(path, spec, scan, {}, keep.get());
  RIGEL_ASSIGN_OR_RETURN(std::vector<data::ElementRange> ranges, opts_.hold_ranges(k, shape));
  return data::LoadHeld(path, spec, scan, std::move(ranges));
}

Status SerialExecutor::InitParams() {
  std::vector<int64_t> rows, widths;
  for (const ir::ParamDecl& p : prog_.params) {
    RIGEL_ASSIGN_OR_RETURN(Value n, Eval(p.rows));
    if (!n.is_int || n.i < 1) {
      return ErrorAt(p.loc, "parameter '" + p.name + "' has " + std::to_string(n.i) +
                                " rows; it needs at least 1");
    }
    const int64_t width = p.width > 0 ? p.width : 1;
    if (n.i > (int64_t{1} << 34) / width) {
      return ErrorAt(p.loc, "parameter '" + p.name + "' is too large for one process (" +
                                std::to_string(n.i) + " x " + std::to_string(width) + ")");
    }
    RIGEL_RETURN_IF_ERROR(CheckInitRows(p, n.i));
    rows.push_back(n.i);
    widths.push_back(width);
  }
  // Checked before the allocation, which is most of a large model's memory:
  // a run that would not fit stops here rather than being killed later.
  if (opts_.memory_limit > 0 && opts_.allocate_params) {
    RIGEL_RETURN_IF_ERROR(analysis::CheckMemoryLimit(
        analysis::EstimateSerialMemory(analysis::MemoryInputsOf(prog_, data_ptrs(), rows, widths)),
        opts_.memory_limit));
  }
  std::vector<bool> whole(prog_.params.size(), opts_.allocate_params);
  if (opts_.allocate_params && opts_.hold_whole) {
    whole = opts_.hold_whole(rows, widths);
    whole.resize(prog_.params.size(), true);
  }
  params_.resize(prog_.params.size());
  for (size_t k = 0; k < prog_.params.size(); ++k) {
    bindings_.push_back({nullptr, rows[k], widths[k]});
    if (whole[k]) AllocateParam(static_cast<int>(k));
  }
  return Status::Ok();
}

void SerialExecutor::AllocateParam(int index) {
  kernel::ParamBinding& b = bindings_[static_cast<size_t>(index)];
  if (b.data != nullptr) return;
  const ir::ParamDecl& p = prog_.params[static_cast<size_t>(index)];
  std::vector<float>& values = params_[static_cast<size_t>(index)];
  values.resize(static_cast<size_t>(b.rows * b.width));
  for (int64_t r = 0; r < b.rows; ++r) ir::InitialRow(p, r, values.data() + r * b.width);
  b.data = values.data();
}

StatusOr<SerialExecutor::Value> SerialExecutor::Eval(int id) const {
  const ir::DExpr& e = prog_.exprs[id];
  Value v;
  v.is_int = e.is_int;
  switch (e.kind) {
    case ir::DExpr::kInt:
      v.i = e.ival;
      v.f = static_cast<double>(e.ival);
      return v;
    case ir::DExpr::kFloat:
      v.f = e.fval;
      return v;
    case ir::DExpr::kString:
      v.s = e.str;
      return v;
    case ir::DExpr::kDataAttr: {
      const data::Dataset& d = *data_[e.index];
      v.i = e.str == "count"  ? d.count
            : e.str == "rows" ? d.rows
            : e.str == "cols" ? d.cols
            : e.str == "dim"  ? d.dim
            : e.str == "docs" ? d.docs
                              : d.vocab;
      v.f = static_cast<double>(v.i);
      return v;
    }
    case ir::DExpr::kAccum: {
      int64_t slot = ir::AccumOffset(prog_.accums, e.index);
      if (e.a >= 0) {
        RIGEL_ASSIGN_OR_RETURN(Value k, Eval(e.a));
        const ir::AccumDecl& a = prog_.accums[e.index];
        if (k.i < 0 || k.i >= a.width) {
          return ErrorAt(e.loc, "element index " + std::to_string(k.i) +
                                    " out of range for accumulator '" + a.name + "' (width " +
                                    std::to_string(a.width) + ")");
        }
        slot += k.i;
      }
      // An accum is f32 to the program; it is summed in double internally.
      v.f = static_cast<float>(accums_[slot]);
      return v;
    }
    case ir::DExpr::kSlot:
      return slots_[e.index];
    case ir::DExpr::kUnary:
      return EvalUnary(e);
    case ir::DExpr::kBinary:
      return EvalBinary(e);
  }
  return Internal("bad driver expression");
}

StatusOr<SerialExecutor::Value> SerialExecutor::EvalUnary(const ir::DExpr& e) const {
  RIGEL_ASSIGN_OR_RETURN(Value a, Eval(e.a));
  Value v;
  v.is_int = e.is_int;
  if (e.fn == ir::kNot) {
    v.i = a.is_int ? !a.i : !a.f;
  } else if (e.fn == ir::kNeg || (e.fn == ir::kAbs && v.is_int)) {
    if (a.is_int && a.i == std::numeric_limits<int64_t>::min()) {
      return ErrorAt(e.loc, "integer overflow");
    }
    bool negate = e.fn == ir::kNeg || a.i < 0;
    v.i = negate ? -a.i : a.i;
    v.f = e.fn == ir::kNeg ? -a.f : a.f;
  } else if (e.fn == ir::kF32ToInt) {
    if (a.is_int) {
      v.i = a.i;
    } else {
      auto i = kernel::TruncToInt(a.f);
      if (!i) return ErrorAt(e.loc, kernel::BadIntMessage(a.f));
      v.i = *i;
    }
  } else {
    v.f = kernel::ApplyUn(e.fn, a.is_int ? static_cast<double>(a.i) : a.f);
  }
  v.f = v.is_int ? static_cast<double>(v.i) : v.f;
  return v;
}

StatusOr<SerialExecutor::Value> SerialExecutor::EvalBinary(const ir::DExpr& e) const {
  RIGEL_ASSIGN_OR_RETURN(Value a, Eval(e.a));
  RIGEL_ASSIGN_OR_RETURN(Value b, Eval(e.b));
  Value v;
  v.is_int = e.is_int;
  if (e.fn >= ir::kLt) {
    bool r = Compare(e.fn, a, b);
    v.i = r;
    v.f = r;
    return v;
  }
  if ((e.fn == ir::kDiv || e.fn == ir::kMod) && a.is_int && b.is_int && b.i == 0) {
    return ErrorAt(e.loc, e.fn == ir::kDiv ? "integer division by zero" : "integer modulo by zero");
  }
  if (!Arithmetic(e.fn, a, b, &v)) return ErrorAt(e.loc, "integer overflow");
  if (v.is_int) v.f = static_cast<double>(v.i);
  return v;
}

bool SerialExecutor::Arithmetic(int fn, const Value& a, const Value& b, Value* v) {
  bool ints = a.is_int && b.is_int;
  double x = a.is_int ? static_cast<double>(a.i) : a.f;
  double y = b.is_int ? static_cast<double>(b.i) : b.f;
  switch (fn) {
    case ir::kAdd:
      if (ints) return !__builtin_add_overflow(a.i, b.i, &v->i);
      v->f = x + y;
      break;
    case ir::kSub:
      if (ints) return !__builtin_sub_overflow(a.i, b.i, &v->i);
      v->f = x - y;
      break;
    case ir::kMul:
      if (ints) return !__builtin_mul_overflow(a.i, b.i, &v->i);
      v->f = x * y;
      break;
    case ir::kDiv:
      if (!ints) {
        v->f = x / y;
      } else if (b.i == -1 && a.i == std::numeric_limits<int64_t>::min()) {
        return false;
      } else {
        v->i = a.i / b.i;
      }
      break;
    case ir::kMod:  // ints only (the checker), b != 0 (EvalBinary)
      v->i = FlooredMod(a.i, b.i);
      break;
    case ir::kMin:
      ints ? void(v->i = std::min(a.i, b.i)) : void(v->f = std::min(x, y));
      break;
    case ir::kMax:
      ints ? void(v->i = std::max(a.i, b.i)) : void(v->f = std::max(x, y));
      break;
    case ir::kPow:  // f32 (the checker): ints are promoted
      v->f = std::pow(x, y);
      break;
    default:
      break;
  }
  return true;
}

bool SerialExecutor::Compare(int fn, const Value& a, const Value& b) {
  bool ints = a.is_int && b.is_int;
  double x = a.is_int ? static_cast<double>(a.i) : a.f;
  double y = b.is_int ? static_cast<double>(b.i) : b.f;
  switch (fn) {
    case ir::kLt:
      return x < y;
    case ir::kLe:
      return x <= y;
    case ir::kGt:
      return x > y;
    case ir::kGe:
      return x >= y;
    case ir::kEq:
      return ints ? a.i == b.i : x == y;
    case ir::kNe:
      return ints ? a.i != b.i : x != y;
    case ir::kAnd:
      return (a.is_int ? a.i != 0 : a.f != 0) && (b.is_int ? b.i != 0 : b.f != 0);
    case ir::kOr:
      return (a.is_int ? a.i != 0 : a.f != 0) || (b.is_int ? b.i != 0 : b.f != 0);
    default:
      return false;
  }
}

namespace {

Status CheckPermutation(const std::vector<int64_t>& order, int64_t count, const ir::Loop& l) {
  std::vector<bool> seen(static_cast<size_t>(count), false);
  bool ok = static_cast<int64_t>(order.size()) == count;
  for (size_t k = 0; ok && k < order.size(); ++k) {
    ok = order[k] >= 0 && order[k] < count && !seen[order[k]];
    if (ok) seen[order[k]] = true;
  }
  if (ok) return Status::Ok();
  return InvalidArgument("the iteration order given for loop " + std::to_string(l.id) + " (line " +
                         std::to_string(l.loc.line) + ") is not a permutation of its " +
                         std::to_string(count) + " elements");
}

}  // namespace

Status SerialExecutor::SizeSpace(int loop, int64_t n, int64_t m) {
  const ir::Loop& l = prog_.loops[loop];
  const ir::DataDecl& space = prog_.data[l.data];
  if (!space.sized_at_launch) return Status::Ok();
  if (n < 0) {
    RIGEL_ASSIGN_OR_RETURN(Value vn, Eval(space.grid_n));
    RIGEL_ASSIGN_OR_RETURN(Value vm, Eval(space.grid_m));
    n = vn.i;
    m = vm.i;
  }
  int64_t total;
  if (n < 0 || m < 0 || __builtin_mul_overflow(n, m, &total)) {
    return ErrorAt(space.loc,
                   "iteration space sizes must be non-negative and their product "
                   "must fit in 64 bits, got " +
                       std::to_string(n) + " and " + std::to_string(m));
  }
  data_[l.data] = std::make_shared<data::Dataset>(
      space.kind == data::DataKind::kGrid ? data::MakeGrid(n, m) : data::MakeRange(n));
  data_ptrs_[l.data] = data_[l.data].get();
  return Status::Ok();
}

namespace {

void CollectOuter(const std::vector<ir::Inst>& body, std::vector<int>* ids) {
  for (const ir::Inst& in : body) {
    if (in.op == ir::Op::kOuter) ids->push_back(in.index);
    CollectOuter(in.body, ids);
    CollectOuter(in.else_body, ids);
  }
}

}  // namespace

StatusOr<int64_t> SerialExecutor::EvalInt(int expr) const {
  RIGEL_ASSIGN_OR_RETURN(Value v, Eval(expr));
  return v.is_int ? v.i : static_cast<int64_t>(v.f);
}

std::vector<int> SerialExecutor::OuterExprs(int loop) const {
  std::vector<int> ids;
  CollectOuter(prog_.loops[loop].body, &ids);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Status SerialExecutor::RunLoop(int loop) {
  const ir::Loop& l = prog_.loops[loop];
  kernel::RunContext ctx;
  ctx.params = &bindings_;
  ctx.data = &data_ptrs_;
  ctx.accums = accums_.data();
  ctx.seed = opts_.seed;
  ctx.launch = launches_[loop]++;
  // What the program still runs of this loop after this launch (for --jit
  // auto's cost rule): the launches the enclosing `for`s have left.
  const int64_t later_launches = LaunchesLeft();
  ctx.outer = [this](int id) -> StatusOr<kernel::OuterValue> {
    RIGEL_ASSIGN_OR_RETURN(Value v, Eval(id));
    return kernel::OuterValue{v.is_int, v.i, v.f};
  };
  RIGEL_RETURN_IF_ERROR(SizeSpace(loop));
  if (opts_.remote) {
    RemoteRun run;
    run.loop = loop;
    run.launch = ctx.launch;
    run.epoch = epoch_;
    for (int id : OuterExprs(loop)) {
      RIGEL_ASSIGN_OR_RETURN(kernel::OuterValue v, ctx.outer(id));
      run.outer.emplace_back(id, v);
    }
    run.space = data_ptrs_[l.data];
    run.accums = accums_.data();
    return opts_.remote(run);
  }
  // The workers watch a distributed run's copies; this process holds them
  // only when it runs the loop itself.
  watches_.resize(prog_.loops.size());
  watches_[loop].resize(prog_.params.size());
  for (size_t p = 0; p < prog_.params.size() && p < l.relaxed.size(); ++p) {
    if (!l.relaxed[p] || prog_.params[p].is_int) continue;
    watches_[loop][p].Before(bindings_[p].data, bindings_[p].rows, bindings_[p].width);
  }
  auto start = std::chrono::steady_clock::now();
  int64_t count = data_ptrs_[l.data]->count;
  const int64_t later = later_launches * count;
  std::vector<int64_t> order;
  if (opts_.order) {
    RIGEL_ASSIGN_OR_RETURN(order, opts_.order(loop, *data_ptrs_[l.data]));
    if (!order.empty()) RIGEL_RETURN_IF_ERROR(CheckPermutation(order, count, l));
  }
  if (order.empty() && l.ordered) {
    // `ordered` promises lexicographic order of the loop variables, and a
    // triples file need not be sorted: file order is not that order.
    const data::Dataset* d = data_ptrs_[l.data];
    auto cached = ordered_.find(d);
    if (cached == ordered_.end()) {
      cached = ordered_.emplace(d, data::OrderedElements(*d)).first;
    }
    order = cached->second;
  }
  if (!order.empty()) {
    // Runs of consecutive elements go to the kernel as one range.
    for (size_t k = 0; k < order.size();) {
      size_t end = k + 1;
      while (end < order.size() && order[end] == order[end - 1] + 1) ++end;
      ctx.work_left = later + static_cast<int64_t>(order.size() - end);
      RIGEL_RETURN_IF_ERROR(kernels_[loop].Run(ctx, order[k], order[end - 1] + 1));
      k = end;
    }
  } else if (!opts_.progress) {
    ctx.work_left = later;
    RIGEL_RETURN_IF_ERROR(kernels_[loop].Run(ctx, 0, count));
  } else {
    // Chunks are large enough that the per-call frame setup is noise, small
    // enough that the line moves about every tenth of a second.
    constexpr int64_t kChunk = 1 << 15;
    bool shown = false;
    for (int64_t b = 0; b < count; b += kChunk) {
      ctx.work_left = later + count - std::min(count, b + kChunk);
      RIGEL_RETURN_IF_ERROR(kernels_[loop].Run(ctx, b, std::min(count, b + kChunk)));
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      int64_t done = std::min(count, b + kChunk);
      if (secs >= opts_.progress_after_s && done < count) {
        char buf[160];
        double rate = done / secs;
        std::snprintf(buf, sizeof buf,
                      "\r  loop %d (line %d): %5.1f%%  %.3g elements/s  ETA %.0f s ", loop,
                      l.loc.line, 100.0 * done / count, rate, (count - done) / rate);
        *opts_.progress << buf << std::flush;
        shown = true;
      }
    }
    if (shown) *opts_.progress << "\r" << std::string(72, ' ') << "\r" << std::flush;
  }
  RIGEL_RETURN_IF_ERROR(CheckRelaxedDiverged(loop));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  elements_run_ += count;
  loop_seconds_ += secs;
  if (opts_.log) {
    // Microseconds: a loop over a small data set takes well under 1 ms.
    char buf[160];
    std::snprintf(buf, sizeof buf, "loop %d (line %d): %" PRId64 " iterations in %.6f s (%.3g/s)\n",
                  loop, l.loc.line, count, secs, secs > 0 ? count / secs : 0.0);
    *opts_.log << buf;
    if (!tier_said_[loop]) {
      const kernel::TierReport r = kernels_[loop].tier();
      // Said once, when the tier is settled: compiled, or interpreted for
      // a reason (auto says nothing while the body has not repaid a compile).
      if (r.compiled || !r.why.empty()) {
        *opts_.log << TierLine(loop, l.loc.line, r);
        tier_said_[loop] = true;
      }
    }
  }
  return Status::Ok();
}

std::string TierLine(int loop, int line, const kernel::TierReport& r) {
  char buf[200];
  if (r.compiled) {
    if (r.cached) {
      std::snprintf(buf, sizeof buf, "loop %d (line %d): jit (%s): an equal body compiled before",
                    loop, line, kernel::JitModeName(r.mode));
    } else {
      std::snprintf(buf, sizeof buf,
                    "loop %d (line %d): jit (%s): compiled in %.1f ms (IR %.1f, optimiser %.1f, "
                    "code %.1f; %lld IR instructions)",
                    loop, line, kernel::JitModeName(r.mode), r.compile_ms, r.lower_ms,
                    r.optimise_ms, r.codegen_ms, static_cast<long long>(r.ir_instructions));
    }
    std::string out = buf;
    if (r.interpreted_ms > 0) {
      std::snprintf(buf, sizeof buf, ", after %.1f ms interpreted", r.interpreted_ms);
      out += buf;
    }
    return out + "\n";
  }
  std::snprintf(buf, sizeof buf, "loop %d (line %d): interpreted (jit %s): ", loop, line,
                kernel::JitModeName(r.mode));
  if (!r.why.empty()) return buf + r.why + "\n";
  if (r.compiling) {
    std::snprintf(buf + std::strlen(buf), sizeof buf - std::strlen(buf),
                  "compiling since %.1f ms interpreted\n", r.interpreted_ms);
    return buf;
  }
  std::snprintf(buf + std::strlen(buf), sizeof buf - std::strlen(buf),
                "%.1f ms interpreted; what was left would not have repaid a compile (%.1f ms "
                "expected)\n",
                r.interpreted_ms, kernel::ExpectedCompileMs());
  return buf;
}

// DSL.md versions 3 and 4: a relaxed parameter that diverges, finite or not,
// stops the job, naming the parameter, the row, the loop's line and the
// epoch. Serially every relaxed parameter the loop touches is scanned once
// per run (a distributed run checks each merged delta, and each worker its
// copy after each run: worker/runner.cc).
Status SerialExecutor::CheckRelaxedDiverged(int loop) {
  const ir::Loop& l = prog_.loops[loop];
  for (size_t p = 0; p < prog_.params.size(); ++p) {
    if (p >= l.relaxed.size() || !l.relaxed[p] || prog_.params[p].is_int) continue;
    const kernel::ParamBinding& b = bindings_[p];
    const std::string what = watches_[loop][p].After(prog_.params[p].name, b.data, b.rows, b.width);
    if (what.empty()) continue;
    return FailedPrecondition(
        ir::FormatDiagnostic(*prog_.source, l.loc,
                             "a relaxed parameter diverged in " + RunName(loop) + ": " + what +
                                 "; the job stops here (a smaller learning rate keeps the "
                                 "updates smaller)"));
  }
  return Status::Ok();
}

std::string SerialExecutor::RunName(int loop) const {
  const uint64_t run = launches_[loop] - 1;
  return epoch_ >= 0
             ? "epoch " + std::to_string(epoch_) + " (run " + std::to_string(run) + " of this loop)"
             : "run " + std::to_string(run) + " of this loop";
}

Status SerialExecutor::Exec(const std::vector<ir::DStmt>& body, size_t from, size_t to) {
  for (size_t k = from; k < std::min(to, body.size()); ++k) {
    const ir::DStmt& s = body[k];
    switch (s.kind) {
      case ir::DStmt::kFor:
        // Only the driver's own loops have epochs and checkpoint points.
        RIGEL_RETURN_IF_ERROR(
            ExecFor(s, &body == &prog_.driver ? &s - body.data() : -1, std::nullopt));
        break;
      case ir::DStmt::kParallel:
        RIGEL_RETURN_IF_ERROR(RunLoop(s.index));
        break;
      case ir::DStmt::kPrint:
        RIGEL_RETURN_IF_ERROR(Print(s));
        break;
      case ir::DStmt::kAccumSet: {
        RIGEL_ASSIGN_OR_RETURN(Value v, Eval(s.a));
        // A vector accumulator takes the value in every element.
        const ir::AccumDecl& a = prog_.accums[s.index];
        double* first = accums_.data() + ir::AccumOffset(prog_.accums, s.index);
        std::fill(first, first + std::max<int64_t>(a.width, 1),
                  v.is_int ? static_cast<double>(v.i) : v.f);
        break;
      }
      case ir::DStmt::kLet: {
        RIGEL_ASSIGN_OR_RETURN(Value v, Eval(s.a));
        // f32 variables take int values as f32 (the checker allows only that).
        if (!prog_.slot_is_int[s.slot] && v.is_int) {
          v.is_int = false;
          v.f = static_cast<double>(v.i);
        }
        slots_[s.slot] = v;
        break;
      }
      case ir::DStmt::kIf: {
        RIGEL_ASSIGN_OR_RETURN(Value c, Eval(s.a));
        bool taken = c.is_int ? c.i != 0 : c.f != 0;
        RIGEL_RETURN_IF_ERROR(Exec(taken ? s.body : s.else_body));
        break;
      }
    }
  }
  return Status::Ok();
}

std::map<std::string, double> SerialExecutor::TakePrinted() { return std::exchange(printed_, {}); }

Status SerialExecutor::Print(const ir::DStmt& s) {
  std::string line, name;
  for (size_t k = 0; k < s.args.size(); ++k) {
    RIGEL_ASSIGN_OR_RETURN(Value v, Eval(s.args[k]));
    if (k) line += ' ';
    const bool text = prog_.exprs[s.args[k]].kind == ir::DExpr::kString;
    // A number right after a string is logged under that string's name
    // (--log-json "printed"); resumed runs log it too, as they compute it.
    if (!text && !name.empty()) printed_[name] = v.is_int ? static_cast<double>(v.i) : v.f;
    name.clear();
    if (text) {
      name = v.s;
      while (!name.empty() && (name.back() == ':' || name.back() == '=' || name.back() == ' ')) {
        name.pop_back();
      }
      name.erase(0, name.find_first_not_of(' '));
    }
    if (text) {
      line += v.s;
    } else if (v.is_int) {
      line += std::to_string(v.i);
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.6g", v.f);
      line += buf;
    }
  }
  // A resumed run does not print again what the failed one printed.
  if (prints_++ < opts_.quiet_prints) return Status::Ok();
  errno = 0;
  *opts_.out << line << '\n';
  opts_.out->flush();
  if (!*opts_.out) {
    // std::cout's failure comes from a write(2) whose errno is still set;
    // a stream of the caller's may not say why.
    const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
    return IoError(prog_.path + ":" + std::to_string(s.loc.line) + ": print() cannot write " +
                   (opts_.out == &std::cout ? "to the standard output" : "its line") + why);
  }
  if (opts_.print_log) RIGEL_RETURN_IF_ERROR(opts_.print_log(line));
  return Status::Ok();
}

int64_t SerialExecutor::LaunchesLeft() const {
  // The innermost loop's later iterations, then each enclosing loop's later
  // iterations times a whole run of the loops inside it.
  int64_t left = 0, per = 1;
  for (auto f = fors_.rbegin(); f != fors_.rend(); ++f) {
    const auto [i, lo, hi] = *f;
    left += std::max<int64_t>(0, hi - i - 1) * per;
    per *= std::max<int64_t>(1, hi - lo);
  }
  return left;
}

Status SerialExecutor::ExecFor(const ir::DStmt& s, int64_t index, std::optional<int64_t> first) {
  RIGEL_ASSIGN_OR_RETURN(Value lo, Eval(s.a));
  RIGEL_ASSIGN_OR_RETURN(Value hi, Eval(s.b));
  // Where the parameters settle is the same in every iteration.
  const size_t settled = index >= 0 && opts_.params_settled ? SettledFrom(prog_, s.body) : 0;
  // This loop's position while its body runs (LaunchesLeft), whichever way
  // the body returns.
  fors_.push_back({lo.i, lo.i, hi.i});
  struct Pop {
    std::vector<std::array<int64_t, 3>>* fors;
    ~Pop() { fors->pop_back(); }
  } pop{&fors_};
  for (int64_t i = first.value_or(lo.i); i < hi.i; ++i) {
    fors_.back()[0] = i;
    Value v;
    v.is_int = true;
    v.i = i;
    v.f = static_cast<double>(i);
    slots_[s.slot] = v;
    if (index >= 0) epoch_ = i;
    if (index >= 0 && opts_.params_settled) {
      RIGEL_RETURN_IF_ERROR(Exec(s.body, 0, settled));
      RIGEL_RETURN_IF_ERROR(opts_.params_settled());
      RIGEL_RETURN_IF_ERROR(Exec(s.body, settled));
    } else {
      RIGEL_RETURN_IF_ERROR(Exec(s.body));
    }
    if (index < 0) continue;
    if (opts_.on_epoch) RIGEL_RETURN_IF_ERROR(opts_.on_epoch(i, lo.i, hi.i));
    cursor_stmt_ = index;
    cursor_next_ = i + 1;
    if (opts_.at_checkpoint_point) RIGEL_RETURN_IF_ERROR(opts_.at_checkpoint_point());
  }
  return Status::Ok();
}

Status SerialExecutor::Run() {
  Status st = RunDriver();
  if (opts_.log) {
    for (size_t l = 0; l < kernels_.size(); ++l) {
      if (!tier_said_[l] && launches_[l] > 0) {
        *opts_.log << TierLine(static_cast<int>(l), prog_.loops[l].loc.line, kernels_[l].tier());
      }
    }
  }
  return st;
}

Status SerialExecutor::RunDriver() {
  if (!resume_) return Exec(prog_.driver);
  const DriverState st = *resume_;
  resume_.reset();
  const std::vector<ir::DStmt>& top = prog_.driver;
  RIGEL_RETURN_IF_ERROR(ExecFor(top[st.stmt], st.stmt, st.next));
  // Exec knows top-level loops by their body being the driver's: a copy of
  // one statement is not, so loops go through ExecFor here.
  for (size_t k = st.stmt + 1; k < top.size(); ++k) {
    if (top[k].kind == ir::DStmt::kFor) {
      RIGEL_RETURN_IF_ERROR(ExecFor(top[k], static_cast<int64_t>(k), std::nullopt));
    } else {
      RIGEL_RETURN_IF_ERROR(Exec(std::vector<ir::DStmt>{top[k]}));
    }
  }
  return Status::Ok();
}

DriverState SerialExecutor::State() const {
  DriverState st;
  st.stmt = cursor_stmt_;
  st.next = cursor_next_;
  for (const Value& v : slots_) st.slots.push_back(DriverState::Slot{v.is_int, v.i, v.f});
  st.accums = accums_;
  st.launches = launches_;
  st.prints = prints_;
  return st;
}

Status SerialExecutor::Restore(const DriverState& st) {
  auto mismatch = [](const std::string& what, size_t has, size_t program) {
    return InvalidArgument("the saved driver state has " + std::to_string(has) + " " + what +
                           "; this program has " + std::to_string(program));
  };
  if (st.slots.size() != slots_.size())
    return mismatch("variables", st.slots.size(), slots_.size());
  if (st.accums.size() != accums_.size()) {
    return mismatch("accumulator slots", st.accums.size(), accums_.size());
  }
  if (st.launches.size() != launches_.size()) {
    return mismatch("loops", st.launches.size(), launches_.size());
  }
  if (st.stmt < 0 || st.stmt >= static_cast<int64_t>(prog_.driver.size()) ||
      prog_.driver[st.stmt].kind != ir::DStmt::kFor) {
    return InvalidArgument("the saved driver state stands at statement " + std::to_string(st.stmt) +
                           ", which is not a top-level for loop");
  }
  for (size_t k = 0; k < slots_.size(); ++k) {
    slots_[k].is_int = st.slots[k].is_int;
    slots_[k].i = st.slots[k].i;
    slots_[k].f = st.slots[k].f;
  }
  accums_ = st.accums;
  launches_ = st.launches;
  prints_ = st.prints;
  cursor_stmt_ = st.stmt;
  cursor_next_ = st.next;
  resume_ = st;
  return Status::Ok();
}

}  // namespace rigel::exec
