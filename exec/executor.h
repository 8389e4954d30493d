// The serial reference executor: runs a whole program in one process, in the
// order the program states (driver statements in sequence; unordered parallel
// loops over their data in file order; ordered loops in lexicographic order).
// Every distributed run is tested against it.
//
// Determinism: parameters start from ir/param_init.h's pure function;
// rand(), randint() and negative() are HashCoords(seed ^ salt, loop << 32 |
// launch, element, draw) where launch counts earlier runs of the same loop,
// element is the position in the loop's data set and draw counts calls within
// the iteration; splits follow data/dataset.h. Two runs with the same
// inputs and seed print the same bytes.
//
// Not thread-safe; one executor per program run.
#ifndef RIGEL_EXEC_EXECUTOR_H_
#define RIGEL_EXEC_EXECUTOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "data/data_index.h"
#include "data/dataset.h"
#include "data/held.h"
#include "data/held_load.h"
#include "data/part_load.h"
#include "exec/divergence.h"
#include "ir/ir.h"
#include "kernel/kernel.h"

namespace rigel::exec {

// One run of a loop handed to ExecutorOptions::remote.
struct RemoteRun {
  int loop = -1;
  uint64_t launch = 0;  // earlier runs of the same loop
  int64_t epoch = -1;   // the top-level driver loop's iteration; -1 outside one
  // The value of every driver expression the loop body reads (kOuter), by id.
  std::vector<std::pair<int, kernel::OuterValue>> outer;
  const data::Dataset* space = nullptr;  // the iterated data set, sized
  double* accums = nullptr;              // add the run's partial sums here (ir::AccumSlots)
};

// Where a driver stands between two loop runs, and everything it needs to go
// on from there: a checkpoint's driver state (scheduler/checkpoint.h). The
// position is top-level driver statement `stmt`; when that is a `for`, its
// iteration `next` runs next. Variables, accumulators, each loop's count of
// earlier runs (the random streams' position, see above) and the lines
// printed so far are as they were there.
struct DriverState {
  struct Slot {
    bool is_int = false;
    int64_t i = 0;
    double f = 0;
  };
  int64_t stmt = 0;
  int64_t next = 0;
  std::vector<Slot> slots;
  std::vector<double> accums;
  std::vector<uint64_t> launches;
  int64_t prints = 0;
};

struct ExecutorOptions {
  uint64_t seed = 0;            // for rand(), randint(), negative()
  std::ostream* out = nullptr;  // where print() writes; null: std::cout
  std::ostream* log = nullptr;  // timing lines per data set and loop; null: none
  // Where the data loaders' warnings go, one line each (data::Dataset::
  // warnings, "PATH:LINE: warning: ..."); null: nowhere. A run that loads
  // data in several processes sets it in one only.
  std::ostream* warnings = nullptr;
  // Live progress ("\r"-updated line with elements done and ETA) for loops
  // running longer than `progress_after_s`; null: none. Meant for a terminal.
  std::ostream* progress = nullptr;
  double progress_after_s = 2.0;
  // The order in which a run of loop `loop` visits the elements of `data`,
  // when not file order: a permutation of 0 .. count-1 (checked; anything
  // else stops the run with InvalidArgument), or an empty vector for file
  // order. Used to run a loop in the serial order equivalent to a
  // distributed schedule (analysis/order.h). Null: file order.
  std::function<StatusOr<std::vector<int64_t>>(int loop, const data::Dataset& data)> order;
  // When set, loops run elsewhere (the distributed driver, scheduler/driver.h):
  // RunLoop calls this instead of running the kernel here. Its error stops
  // the run.
  std::function<Status(const RemoteRun&)> remote;
  // false: parameters get no memory here (bindings keep their sizes, with
  // null data), for a driver whose loops all run remotely.
  bool allocate_params = true;
  // For a worker: called once with every parameter's rows and width, after
  // the data are loaded and before any parameter is allocated; a parameter
  // it answers false for gets no memory (its binding keeps its shape with
  // null data): the worker holds it in part, in a row cache
  // (analysis/sync/resolve.h). Unset: every parameter whole.
  std::function<std::vector<bool>(const std::vector<int64_t>& rows,
                                  const std::vector<int64_t>& widths)>
      hold_whole;
  // Bytes this process may hold (`rigel run --memory-limit` of a serial run;
  // 0: no limit). Once the data are loaded and the parameters' shapes known,
  // and before they are allocated, a run whose expected peak
  // (analysis::EstimateSerialMemory) is larger fails Create with
  // FailedPrecondition, as a distributed job's scheduler refuses one.
  int64_t memory_limit = 0;
  // For a process that needs a data set's facts but not its elements (the
  // scheduler, when every loop over it is cut by element count): data set
  // `data` (an index into the program's data sets) is taken shape-only from
  // its file's current index (data/data_index.h) when there is one, and
  // loaded otherwise. Unset: every data set is loaded.
  std::function<bool(int data)> facts_only;
  // For data sets that other processes hold in part: with facts_only, data
  // set `data` with no current index is scanned (data/held_load.h ScanFile)
  // instead of loaded; loaded whole (its loops are cut by coordinates), it is
  // scanned too unless a current index has its chunks. The facts and chunks
  // an index or the scan gave are kept as an index entry (facts_entries())
  // to send to those processes.
  std::function<bool(int data)> scan_facts;
  // For a worker that holds data in part (exec/hold_plan.h): data set
  // `data` (a file's) is held in part when hold_part says so, with the
  // elements hold_ranges gives from its facts (a shape-only data set), read
  // in data/held_load.h's chunks, about 2 per one of `hold_workers`
  // workers. Its split parts are then held in part too. Unset: whole.
  // A data set in `entries` (an index entry's text, data/data_index.h
  // IndexEntryText, by data set) takes its facts and chunks from there: the
  // scheduler's scan or index, sent with the job, so that no worker scans.
  std::function<bool(int data)> hold_part;
  std::map<int, std::string> entries;
  std::function<StatusOr<std::vector<data::ElementRange>>(int data, const data::Dataset& shape)>
      hold_ranges;
  // Instead of hold_ranges, where it gives a filter: the elements a worker
  // keeps by their values (loops cut by coordinates: exec/hold_plan.h
  // HeldFilter, which keeps hold_ranges' elements too). Unset, or a null
  // filter: hold_ranges alone.
  // A data set held in part that only its split parts are read from keeps
  // only its facts once the parts are made (exec/hold_plan.h
  // ReadThroughPartsOnly).
  std::function<StatusOr<std::unique_ptr<data::ElementFilter>>(int data,
                                                               const data::Dataset& shape)>
      hold_filter;
  int hold_workers = 1;
  // Called after each iteration `i` of a top-level driver `for lo..hi` (an
  // epoch), for progress lines and per-epoch logs. Its error (a log that
  // cannot be written) stops the run.
  std::function<Status(int64_t i, int64_t lo, int64_t hi)> on_epoch;
  // Called after on_epoch, at the same points: where checkpoints are taken
  // (State() is the state to save). Its error stops the run.
  std::function<Status()> at_checkpoint_point;
  // Called once in each iteration of a top-level driver `for`, before
  // at_checkpoint_point, as soon as no statement left in the iteration can
  // write a parameter: right after the body's last statement that runs, or
  // may run (under an `if`, in a nested `for`), a loop writing one; before
  // the body when no statement does. From there to the iteration's end the
  // parameters hold what they will hold at at_checkpoint_point, so a
  // checkpoint due there can copy them while the rest of the iteration (a
  // test loop that only reads) runs. Its error stops the run.
  std::function<Status()> params_settled;
  // The first `quiet_prints` lines print() makes (counting from the start of
  // the program, lines before a restored state included) are not written:
  // they were, by a run this one resumes after a failure.
  int64_t quiet_prints = 0;
  // Called with every line print() writes (not the quiet ones), without its
  // newline; null: nowhere. Its error stops the run, as does a line `out`
  // cannot take (a full disk under a redirected standard output).
  std::function<Status(const std::string& line)> print_log;
  // How each loop is compiled: passes to skip or print, their statistics,
  // verification (kernel/passes/pipeline.h).
  kernel::CompileOptions compile;
};

// The loader and options a data declaration reads its file with.
data::LoadSpec LoadSpecOf(const ir::DataDecl& d);

class SerialExecutor {
 public:
  // Loads every data set, allocates and initialises parameters, checks the
  // vector widths that depend on data, and compiles every loop. Errors name
  // the program location ("FILE:LINE:COL: error: ...") and, for data, the
  // data file and line; a compiler verification failure is Internal and
  // names the pass. `prog` must outlive the executor.
  static StatusOr<std::unique_ptr<SerialExecutor>> Create(const ir::Program& prog,
                                                          const ExecutorOptions& opts);

  // Runs the driver to the end (from a restored state, when Restore was
  // called). Run-time errors (index out of range, ...) stop the run and are
  // returned with their program location.
  Status Run();

  // The state at the point at_checkpoint_point is called from (before
  // Run: the start).
  DriverState State() const;
  // Makes Run go on from `state` instead of the start. InvalidArgument when
  // `state` does not fit this program (a count of variables, accumulators
  // or loops that differs, a position outside the driver or not at a
  // top-level `for`).
  Status Restore(const DriverState& state);

  // State after (or before) Run(), for tests and tools.
  const std::vector<float>& param(int index) const { return params_[index]; }
  // Allocates and initialises parameter `index` if ExecutorOptions::
  // hold_whole left it without memory (a no-op otherwise).
  void AllocateParam(int index);
  std::vector<float>& mutable_param(int index) { return params_[index]; }
  // Accumulator `index`'s sum; of a vector accumulator, element `k`'s.
  double accum(int index, int64_t k = 0) const {
    return accums_[ir::AccumOffset(prog_.accums, index) + k];
  }
  // Every accumulator's sums, flat (ir::AccumOffset).
  const std::vector<double>& accums() const { return accums_; }
  const data::Dataset& data(int index) const { return *data_[index]; }
  const kernel::Kernel& kernel(int loop) const { return kernels_[loop]; }
  int loops() const { return static_cast<int>(kernels_.size()); }
  // Runs loop `loop` once over all its elements (as the driver would).
  Status RunLoop(int loop);
  // Elements run here so far, every loop's, and seconds spent running them
  // (loops run remotely are not counted).
  int64_t elements_run() const { return elements_run_; }
  double loop_seconds() const { return loop_seconds_; }

  // For the distributed worker (worker/runner.h), which runs loops itself.
  const std::vector<kernel::ParamBinding>& bindings() const { return bindings_; }
  const std::vector<const data::Dataset*>& data_ptrs() const { return data_ptrs_; }
  // For the scheduler: the facts of the data sets ExecutorOptions::scan_facts
  // selected, as index entries, by data set.
  const std::map<int, data::IndexEntry>& facts_entries() const { return facts_entries_; }
  // Sizes the space of loop `loop` when it is sized at launch (a no-op
  // otherwise): to (n, m) as given, or, with n < 0, from the driver's current
  // values. InvalidArgument (with the program location) for negative or
  // overflowing sizes.
  Status SizeSpace(int loop, int64_t n = -1, int64_t m = -1);
  // Driver expression `expr` as an integer (vector widths, sizes) with the
  // driver's current values.
  StatusOr<int64_t> EvalInt(int expr) const;
  // The driver expressions loop `loop`'s body reads (kOuter ids), sorted.
  std::vector<int> OuterExprs(int loop) const;
  // The named numbers printed since the last call (EpochFigures::printed),
  // which are then forgotten. Call from on_epoch.
  std::map<std::string, double> TakePrinted();

 private:
  Status RunDriver();  // Run() without the closing -v lines
  struct Value {
    bool is_int = false;
    int64_t i = 0;
    double f = 0;
    std::string s;  // strings (print only)
  };
  SerialExecutor(const ir::Program& prog, const ExecutorOptions& opts);
  Status LoadData();
  // Data set `k`'s elements that ExecutorOptions::hold_ranges gives.
  StatusOr<data::Dataset> LoadInPart(int k, const data::LoadSpec& spec) const;
  // Data set `k`, read from a file (its facts, its part or the whole).
  StatusOr<data::Dataset> LoadFromFile(int k);
  Status LoadError(const ir::DataDecl& d, const Status& st) const;
  // Keeps the index entry the workers read data set `k` in part with
  // (ExecutorOptions::scan_facts), for one this process loaded whole.
  Status KeepChunks(int k, const data::LoadSpec& spec);
  Status InitParams();
  StatusOr<Value> Eval(int expr) const;
  StatusOr<Value> EvalUnary(const ir::DExpr& e) const;
  StatusOr<Value> EvalBinary(const ir::DExpr& e) const;
  // a fn b for kAdd..kPow into *v (v->i for two ints, else v->f; kPow always
  // v->f); false on integer overflow. Division by zero is the caller's to
  // check.
  static bool Arithmetic(int fn, const Value& a, const Value& b, Value* v);
  // a fn b for the comparisons and kAnd/kOr.
  static bool Compare(int fn, const Value& a, const Value& b);
  // Statements [from, to) of `body` (to past the end: all from `from`).
  Status Exec(const std::vector<ir::DStmt>& body, size_t from = 0, size_t to = SIZE_MAX);
  // A `for` from iteration `first` (default: its lower bound). `index` >= 0:
  // it is the driver's top-level statement `index`, whose iterations are
  // epochs (on_epoch) and end at checkpoint points; -1: a nested loop.
  Status ExecFor(const ir::DStmt& s, int64_t index, std::optional<int64_t> first);
  Status Print(const ir::DStmt& s);
  std::map<std::string, double> printed_;  // TakePrinted's
  Status ErrorAt(ir::Loc loc, const std::string& msg) const;
  // FailedPrecondition when a relaxed parameter of loop `loop` diverged in
  // the run just made (exec/divergence.h): a value is not finite, or its
  // largest magnitude grew 1000-fold since the loop's previous run.
  Status CheckRelaxedDiverged(int loop);
  // "epoch E (run R of this loop)" for the run of `loop` just made.
  std::string RunName(int loop) const;

  const ir::Program& prog_;
  ExecutorOptions opts_;
  std::vector<std::shared_ptr<const data::Dataset>> data_;
  std::vector<const data::Dataset*> data_ptrs_;
  std::map<int, data::IndexEntry> facts_entries_;
  std::vector<std::vector<float>> params_;
  std::vector<kernel::ParamBinding> bindings_;
  std::vector<double> accums_;
  std::vector<Value> slots_;
  std::vector<kernel::Kernel> kernels_;
  std::vector<uint64_t> launches_;
  // Per loop and parameter: the relaxed parameter's magnitudes over the
  // loop's runs (CheckRelaxedDiverged).
  std::vector<std::vector<DivergenceWatch>> watches_;
  // The driver's `for` loops running now, outermost first: (i, lo, hi).
  std::vector<std::array<int64_t, 3>> fors_;
  // How many more times the innermost running `for` and those around it
  // will run their bodies after this iteration (0 outside any).
  int64_t LaunchesLeft() const;
  // Per loop: whether -v said its tier (TierLine).
  std::vector<bool> tier_said_;
  int64_t elements_run_ = 0;
  double loop_seconds_ = 0;
  int64_t prints_ = 0;                         // lines print() made, quiet ones included
  std::optional<DriverState> resume_;          // set by Restore, taken by Run
  int64_t cursor_stmt_ = 0, cursor_next_ = 0;  // State()'s position
  int64_t epoch_ = -1;  // the top-level driver loop's iteration under way (-1: none)
  // Per data set an ordered loop ran over: its lexicographic order
  // (data::OrderedElements; empty when the file is in that order).
  std::map<const data::Dataset*, std::vector<int64_t>> ordered_;
};

// The -v line of loop `loop`'s tier (rigel run -v, a worker's log): "loop 0
// (line 12): jit (auto): compiled in 21.3 ms, after 25.0 ms interpreted", or
// "... interpreted (jit on): WHY".
std::string TierLine(int loop, int line, const kernel::TierReport& r);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_EXECUTOR_H_
