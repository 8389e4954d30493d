// The loop IR: what the checker produces from a program and every later stage
// (analysis, serial executor, distributed workers) consumes.
//
// A Program holds declarations, the driver (serial statements run by one
// process) and one Loop per `parallel for`. A loop body is a structured list of
// typed instructions over virtual registers: scalar arithmetic, vector (row)
// arithmetic, explicit parameter reads and writes with their subscript
// registers and access mode, accumulator updates, and nested control (inner
// for loops, sparse-feature loops, window loops, if). Registers that hold
// `let` values are defined once; `var` registers may be reassigned (kMove).
// Expressions outside loop bodies (sizes, driver lets, prints) are DExpr trees.
//
// Documented in docs/architecture.md; `rigel dump-ir` prints it (ir/print.cc);
// ir/verify.h checks a loop body's invariants.
#ifndef RIGEL_IR_IR_H_
#define RIGEL_IR_IR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "ir/source.h"

namespace rigel::ir {

enum class Type : uint8_t { kInt, kF32, kBool, kVec, kRow };

// ---------------------------------------------------------------------------
// Driver expressions (evaluated by one process, in double precision for f32).
struct DExpr {
  enum Kind : uint8_t {
    kInt,
    kFloat,
    kString,
    kDataAttr,  // data[index].attr (count, rows, cols, dim, vocab)
    kAccum,     // accumulator `index`; of a vector accumulator, element `a` (an int DExpr id)
    kSlot,      // driver variable (loop variable or let) `index`
    kUnary,     // fn(a)
    kBinary,    // a op b
  };
  Kind kind = kInt;
  bool is_int = false;  // result type: int (true) or f32 (false); strings: false
  int64_t ival = 0;
  double fval = 0;
  std::string str;  // kString text, kDataAttr attribute name
  int index = -1;
  int fn = 0;          // kUnary: UnFn; kBinary: BinOp
  int a = -1, b = -1;  // operand DExpr ids
  Loc loc;
};

// Scalar/vector unary functions (also elementwise on vectors).
enum UnFn : uint8_t {
  kNeg,
  kNot,
  kSqrt,
  kExp,
  kLog,
  kAbs,
  kTanh,
  kSigmoid,
  kLog1pExp,
  kIntToF32,
  // Language v2: floor and ceil (f32 to f32), int (f32 to int, toward zero;
  // NaN or out of the int range is a run-time error).
  kFloor,
  kCeil,
  kF32ToInt,
  // An int written to an i32 parameter (held as f32): exact within
  // [-kMaxExactInt, kMaxExactInt]; outside, a run-time error.
  kIntToI32,
};
// Binary operators; kMin/kMax/kPow are the builtins. kAdd..kMod are
// arithmetic (kMod: ints only, floored), kPow f32 only (x to the power y),
// kLt..kNe comparisons (kEq/kNe also of two bools), kAnd/kOr logic.
enum BinOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kMin,
  kMax,
  kPow,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
};
const char* UnFnName(int fn);
const char* BinOpName(int op);

// ---------------------------------------------------------------------------
// Declarations.
struct DataDecl {
  std::string name;
  data::DataKind kind = data::DataKind::kRange;
  Loc loc;
  std::string path;  // resolved path (relative to the program file)
  std::string path_as_written;
  bool path_from_set = false;  // `path` came from --set NAME.path=FILE
  // Loader options (only those of `kind` matter).
  char sep = ',';
  int64_t base = 0;
  bool skip_header = false;
  bool ignore_extra = false;  // triples(..., extra="ignore")
  int64_t min_count = 1;
  bool lines = false;  // tokens(..., lines=true): one document per line
  data::LibsvmLabels labels = data::LibsvmLabels::kAuto;  // libsvm(..., labels=...)
  // criteo(path, buckets=, fields=): a libsvm-kind data set read from the
  // Criteo layout (data::LibsvmFormat::kCriteo), its categorical values
  // hashed into `buckets` buckets of one shared range or of one per field.
  bool criteo = false;
  int64_t buckets = int64_t{1} << 20;
  bool shared_buckets = true;
  int64_t label = 0;
  int grid_n = -1, grid_m = -1;  // grid/range sizes: DExpr ids
  // An inline grid/range whose size reads driver variables: sized anew each
  // time its loop runs instead of once at load time.
  bool sized_at_launch = false;
  // split(parent, test=, seed=): this is part `split_part` (0 train, 1 test).
  int split_parent = -1;
  int split_part = 0;
  double split_test = 0;
  uint64_t split_seed = 0;
};

// i32 parameter values are held exactly as f32 within [-2^24, 2^24].
constexpr int64_t kMaxExactInt = int64_t{1} << 24;

struct ParamDecl {
  std::string name;
  Loc loc;
  int rows = -1;      // DExpr id of the row count
  int64_t width = 0;  // 0 for a 1-D parameter (scalar rows)
  // i32 elements: ints to the program, held as f32 rows (exact integers up
  // to 2^24 in magnitude, which writes check), so that rows, deltas and
  // sums move as every other parameter's do.
  bool is_int = false;
  enum Init : uint8_t { kZeros, kFill, kNormal, kUniform, kRandInt, kFile } init = kZeros;
  // fill: a; normal: mean a, std b; uniform: lo a, hi b; randint: n a
  double a = 0, b = 0;
  uint64_t seed = 0;
  // file (`rigel run --init-params`, exec/init_params.h): row r of the
  // parameter is file_rows x width values of 4 bytes at file_offset + r x
  // width x 4 in the file `file` of file_bytes bytes, i32 when file_int.
  std::string file;
  uint64_t file_offset = 0;
  uint64_t file_bytes = 0;
  int64_t file_rows = 0;
  bool file_int = false;
};

struct AccumDecl {
  std::string name;
  Loc loc;
  int64_t width = 0;  // 0 for a scalar (accum s: f32), else K (accum s: f32[K])
};

// Accumulators live in one flat array of doubles (the executor's sums, the
// kernel's RunContext::accums, the workers' partial sums on the wire), in
// declaration order: a scalar takes one slot, a vector its width.
inline int64_t AccumSlots(const std::vector<AccumDecl>& accums) {
  int64_t n = 0;
  for (const AccumDecl& a : accums) n += a.width > 0 ? a.width : 1;
  return n;
}
// The first slot of accumulator `accum` (which must be an index of `accums`).
inline int64_t AccumOffset(const std::vector<AccumDecl>& accums, int accum) {
  int64_t n = 0;
  for (int a = 0; a < accum; ++a) n += accums[a].width > 0 ? accums[a].width : 1;
  return n;
}

// ---------------------------------------------------------------------------
// Loop bodies.
struct Reg {
  Type type = Type::kF32;
  int64_t width = -1;   // kVec: static width when known, else -1
  int width_expr = -1;  // kVec: DExpr id of the width (always set)
  int row_data = -1;    // kRow: the data set the row belongs to
  bool named = false;   // bound by let/var (not an expression temporary)
  bool mut = false;     // a `var`
  std::string name;     // for printing
};

enum class Op : uint8_t {
  kConstI,       // dst = ival
  kConstF,       // dst = fval
  kOuter,        // dst = value of driver expression `index`, fixed for the whole loop run
  kMove,         // dst (a var) = a
  kUnary,        // dst = fn(a); scalar or elementwise on a vector
  kBinary,       // dst = a op b; scalar, vector-vector or vector-scalar (broadcast)
  kClip,         // dst = clip(a, b, c)
  kDot,          // dst = dot(a, b)
  kSum,          // dst = sum(a)
  kNorm,         // dst = norm(a) (Euclidean)
  kZeros,        // dst = zero vector of dst's width
  kRand,         // dst = uniform [0,1) (see docs: pure function of seed, run, element, draw)
  kRandInt,      // dst = uniform int in [0, a)
  kNegative,     // dst = token id from data `index`'s unigram^0.75 table
  kRowLabel,     // dst = label of row register a (data `index`)
  kRowX,         // dst = dense features of row register a (data `index`), a vector
  kRead,         // dst = param `index` [a (, b)] in `mode`
  kWrite,        // param `index` [a (, b)] (op)= c, in `mode`
  kAccumAdd,     // accumulator `index` += a (f32); a vector accumulator: += a (a vector of
                 // its width, element-wise), or with b >= 0 element b (int) += a (f32),
                 // out of range a run-time error
  kFor,          // for dst in a..b { body }
  kForFeatures,  // for (dst, dst2) in features of row a (data `index`) { body }
  kForWindow,    // for dst in window(data `index`, a, b) { body }
  kIf,           // if a { body } else { else_body }
  // Language v2.
  kElem,     // dst (f32) = element b (int) of vector a; out of range is a run-time error
  kVecPick,  // dst = fn of vector a: kPickMax, kPickMin (f32), kPickArgMax, kPickArgMin (int)
  kOneHot,   // dst (vector of dst's width) = 1 at a (int), 0 elsewhere; a outside: error
  kSetElem,  // element b (int) of var vector dst (fn)= c (f32), in place; a == dst (the
             // vector is read too); fn a BinOp or kPlainAssign; out of range: run-time error
  kSample,   // dst (int) = k drawn with probability a[k] / sum(a) from f32 vector a; one
             // draw like kRandInt; a negative or NaN element or no positive one: error
};

// kVecPick's fn. Ties go to the first index.
enum PickFn : uint8_t { kPickMax, kPickMin, kPickArgMax, kPickArgMin };

// How a parameter is touched.
enum class Access : uint8_t {
  kElement,  // 1-D p[a] or 2-D p[a, b]: a scalar
  kRow,      // 2-D p[a]: a vector of the parameter's width
  kWhole,    // 1-D p (no subscript): a vector of all rows
};

struct Inst {
  Op op = Op::kConstI;
  Access mode = Access::kElement;
  uint8_t fn = 0;  // UnFn / BinOp; kWrite: BinOp of a compound assignment or 0xff for '='
  int dst = -1, dst2 = -1, a = -1, b = -1, c = -1;
  int index = -1;  // param / data / accum / DExpr id, by op
  int64_t ival = 0;
  double fval = 0;
  Loc loc;
  std::vector<Inst> body, else_body;
};
constexpr uint8_t kPlainAssign = 0xff;

struct Loop {
  int id = 0;
  Loc loc;
  bool ordered = false;
  int data = -1;              // iterated data set (inline grid/range get a DataDecl too)
  std::vector<int> vars;      // loop variable registers, in pattern order
  std::vector<bool> relaxed;  // per param
  std::vector<Reg> regs;
  std::vector<Inst> body;
};

// Driver statements.
struct DStmt {
  enum Kind : uint8_t { kFor, kParallel, kPrint, kAccumSet, kLet, kIf };
  Kind kind = kPrint;
  Loc loc;
  int slot = -1;          // kFor loop variable / kLet slot
  int a = -1, b = -1;     // kFor bounds / kLet, kAccumSet, kIf value (DExpr ids)
  int index = -1;         // kParallel loop id; kAccumSet accumulator (a vector one: every element)
  std::vector<int> args;  // kPrint DExpr ids
  std::vector<DStmt> body, else_body;
};

// A vector width equality that depends on data attributes, checked once the
// data are loaded (both sides are DExpr ids).
struct WidthCheck {
  int a = -1, b = -1;
  Loc loc;
  std::string what;
};

struct Program {
  std::string path;
  std::shared_ptr<const SourceFile> source;            // for run-time diagnostics
  std::vector<std::pair<std::string, double>> consts;  // after --set, for reference
  std::vector<DataDecl> data;
  std::vector<ParamDecl> params;
  std::vector<AccumDecl> accums;
  std::vector<DExpr> exprs;
  std::vector<std::string> slot_names;  // driver slots
  std::vector<bool> slot_is_int;        // a slot's type: int, else f32
  std::vector<Loop> loops;
  std::vector<DStmt> driver;
  std::vector<WidthCheck> width_checks;
};

// Human-readable dump (stable format; used by `rigel dump-ir` and tests).
std::string Print(const Program& p);
// One loop (a loop of `p` or a rewritten copy of it) as Print writes it.
std::string PrintLoop(const Program& p, const Loop& l);
// Renders one driver expression as source-like text.
std::string PrintExpr(const Program& p, int expr);

}  // namespace rigel::ir

#endif  // RIGEL_IR_IR_H_
