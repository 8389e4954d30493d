// Private to checker*.cc: the Checker class shared by the declaration/driver
// part (checker.cc) and the loop-body part (checker_body.cc).
#ifndef RIGEL_FRONTEND_CHECKER_INTERNAL_H_
#define RIGEL_FRONTEND_CHECKER_INTERNAL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/checker.h"

namespace rigel::frontend::internal {

// What a global name refers to.
struct Global {
  enum Kind { kConst, kData, kParam, kAccum } kind;
  int index = -1;  // const: DExpr id; data set, param or accum: declaration index
};

// A typed value during body lowering; reg < 0 means an error was reported.
struct Val {
  int reg = -1;
  ir::Type type = ir::Type::kF32;
  bool ok() const { return reg >= 0; }
};

class Checker {
 public:
  Checker(std::shared_ptr<const SourceFile> source, const CompileOptions& opts, Diagnostics* d);
  ir::Program Run(const ast::Program& prog);

  // --- checker.cc: declarations, driver, driver expressions.
  void TopLevel(const ast::Stmt& s);
  void Const(const ast::Stmt& s);
  void Data(const ast::Stmt& s);
  // Data for `data train, test = split(...)`.
  void DataSplit(const ast::Stmt& s);
  // Binds a loader call's arguments by the loader's parameter names (d->kind).
  std::optional<std::vector<const ast::Expr*>> LoaderArgs(const ast::Expr& call, ir::DataDecl* d);
  // Fill a grid/range's size, or a file loader's path and options, from its
  // bound arguments `a`; false after an error.
  bool DataSize(const ast::Expr& call, const std::vector<const ast::Expr*>& a, ir::DataDecl* d);
  bool DataFile(const ast::Expr& call, const std::vector<const ast::Expr*>& a, ir::DataDecl* d);
  bool DataOption(const ast::Expr& arg, const std::string& what, ir::DataDecl* d);
  void Param(const ast::Stmt& s);
  void ParamInit(const ast::Expr& init, ir::ParamDecl* p);
  void Accum(const ast::Stmt& s);
  void DriverStmt(const ast::Stmt& s, std::vector<ir::DStmt>* out);
  // DriverStmt for one kind of statement each, filling `d`; those returning
  // bool return false after an error that drops the statement.
  bool DriverFor(const ast::Stmt& s, ir::DStmt* d);
  void DriverLet(const ast::Stmt& s, ir::DStmt* d);
  void DriverIf(const ast::Stmt& s, ir::DStmt* d);
  bool DriverAssign(const ast::Stmt& s, ir::DStmt* d);
  // `s = x` for a vector accumulator (every element) and the refused driver
  // forms of accumulator `accum` (s[k] = x, s op= x); false after an error.
  bool DriverAccumSet(const ast::Stmt& s, int accum, ir::DStmt* d);
  // Sets d's kind and slot or accumulator for an assignment to `t`, and
  // *target to t's current value.
  bool AssignTarget(const ast::Expr& t, ir::DStmt* d, int* target);
  // Lowers a driver expression; returns DExpr id or -1 after an error.
  int DExprOf(const ast::Expr& e);
  // DExprOf for one kind of expression each.
  int DExprName(const ast::Expr& e);
  int DExprAttr(const ast::Expr& e);
  int DExprUnary(const ast::Expr& e);
  int DExprBinary(const ast::Expr& e);
  int DExprCall(const ast::Expr& e);
  // Accumulator `accum` read as `e`: a scalar by name, a vector's element by
  // `s[k]` (k an int); a vector read whole is an error.
  int DExprAccum(const ast::Expr& e, int accum);
  // x op y for a constant +, -, * or /; -1 after reporting a division by zero
  // or an overflow.
  int FoldIntBinary(ir::BinOp op, int64_t x, int64_t y, Loc loc);
  int AddExpr(ir::DExpr e);
  int ConstInt(int64_t v);
  std::optional<double> ConstValue(int id, bool* is_int) const;
  std::optional<int64_t> ConstIntOf(const ast::Expr& e, const char* what);
  std::optional<double> ConstNumberOf(const ast::Expr& e, const char* what);
  int DataAttr(int data, const std::string& attr, Loc loc);
  void Declare(const std::string& name, Loc loc, Global g);
  const Global* FindGlobal(const std::string& name) const;
  int FindSlot(const std::string& name) const;
  std::string DescribeName(const std::string& name) const;
  // window(`window_data`, POS, r) with POS (the expression `pos`) a position
  // of data set `pos_data`: what is wrong and what to write.
  std::string WrongPositionMessage(const ast::Expr& pos, int pos_data, int window_data) const;

  // --- checker_body.cc: parallel loops.
  void Parallel(const ast::Stmt& s, std::vector<ir::DStmt>* out);
  void BodyStmts(const std::vector<ast::StmtPtr>& stmts, std::vector<ir::Inst>* out);
  void BodyStmt(const ast::Stmt& s, std::vector<ir::Inst>* out);
  void BodyElementAssign(const ast::Stmt& s, uint8_t op, std::vector<ir::Inst>* out);
  void BodyIntWrite(const ast::Stmt& s, Val v, ir::Inst* w, std::vector<ir::Inst>* out);
  void BodyAssign(const ast::Stmt& s, std::vector<ir::Inst>* out);
  // `s += x`, `s += v` or `s[k] += x` (s.target) on accumulator `accum`;
  // `op` is the assignment's BinOp (only kAdd is allowed).
  void BodyAccumAdd(const ast::Stmt& s, uint8_t op, int accum, std::vector<ir::Inst>* out);
  // The vector in `reg` has an accumulator's `width` (now, or once data load).
  void CheckAccumWidth(int reg, int64_t width, Loc loc);
  void BodyFor(const ast::Stmt& s, std::vector<ir::Inst>* out);
  Val Lower(const ast::Expr& e, std::vector<ir::Inst>* out);
  // Lower for names, attributes and indexed parameters.
  Val LowerName(const ast::Expr& e, std::vector<ir::Inst>* out);
  Val LowerAttr(const ast::Expr& e, std::vector<ir::Inst>* out);
  Val LowerIndex(const ast::Expr& e, std::vector<ir::Inst>* out);
  // A driver variable or const `e`, read inside the loop.
  Val LowerDriverValue(const ast::Expr& e, std::vector<ir::Inst>* out);
  // Reads parameter `param` as `e` (a name or an index expression) names it.
  Val ReadParam(const ast::Expr& e, int param, std::vector<ir::Inst>* out);
  // `row.attr`, where `local` is the register of a data row.
  Val RowAttr(const ast::Expr& e, int local, std::vector<ir::Inst>* out);
  Val Call(const ast::Expr& e, std::vector<ir::Inst>* out);
  // Reports an unknown function, a wrong argument count or a named argument.
  bool CheckCallShape(const ast::Expr& e);
  // Call for one built-in (or family) each; `args` are the lowered arguments.
  Val CallZeros(const ast::Expr& e, std::vector<ir::Inst>* out);
  Val CallNegative(const ast::Expr& e, std::vector<ir::Inst>* out);
  Val CallRandInt(const ast::Expr& e, const std::vector<Val>& args, std::vector<ir::Inst>* out);
  Val CallReduce(const ast::Expr& e, const std::vector<Val>& args, std::vector<ir::Inst>* out);
  Val CallClip(const ast::Expr& e, const std::vector<Val>& args, std::vector<ir::Inst>* out);
  // Language v2: max/min/argmax/argmin of a vector, onehot(k, K), and an
  // element of a vector (`v[k]`, `W[i][k]`, `row.x[k]`).
  Val CallPick(const ast::Expr& e, const std::vector<Val>& args, std::vector<ir::Inst>* out);
  Val CallOneHot(const ast::Expr& e, std::vector<ir::Inst>* out);
  Val Element(Val v, const ast::Expr& index, Loc loc, std::vector<ir::Inst>* out);
  Val Binary(ir::BinOp op, Val a, Val b, Loc loc, std::vector<ir::Inst>* out);
  Val Unary(ir::UnFn fn, Val a, Loc loc, std::vector<ir::Inst>* out);
  Val ParamAccess(const ast::Expr& e, int param, std::vector<ir::Inst>* out, ir::Access* mode,
                  int* sub_a, int* sub_b);
  Val ToF32(Val v, std::vector<ir::Inst>* out);
  Val ConstF(double v, std::vector<ir::Inst>* out);
  int NewReg(ir::Type t, int width_expr = -1);
  void CheckWidths(int reg_a, int reg_b, Loc loc, const char* what);
  int FindLocal(const std::string& name) const;

  // Shared.
  void Error(Loc loc, std::string msg) { diags_->Error(loc, std::move(msg)); }

  std::shared_ptr<const SourceFile> source_;
  const CompileOptions& opts_;
  Diagnostics* diags_;
  ir::Program prog_;
  std::map<std::string, Global> globals_;
  std::map<std::string, std::string> const_overrides_;
  std::map<std::string, std::string> path_overrides_;
  // Driver scopes (name -> slot), innermost last.
  std::vector<std::map<std::string, int>> driver_scopes_;
  std::vector<bool> slot_is_int_, slot_mut_, slot_is_loop_;
  // True if driver expression `expr` reads a driver variable or accumulator,
  // i.e. has no value before the driver runs.
  bool UsesDriverState(int expr) const;
  // Reports a grid whose constant N x M (its element count) overflows int64;
  // sizes known only at run time are the executor's to check.
  void CheckGridSize(const ir::DataDecl& d);
  int NewSlot(const std::string& name, Loc loc, bool is_int, bool mut);
  // Matches a call's positional and named arguments against `names`; the
  // first `required` are mandatory. Returns one entry per name (null if
  // absent), or nullopt after reporting an error.
  std::optional<std::vector<const ast::Expr*>> BindArgs(const ast::Expr& call,
                                                        const std::vector<std::string>& names,
                                                        size_t required);
  std::optional<std::string> StringArg(const ast::Expr* e, const char* what);
  // Body state while lowering a parallel loop.
  ir::Loop* loop_ = nullptr;
  std::vector<std::map<std::string, int>> body_scopes_;
  std::map<int, bool> loop_var_regs_;
  // Per register of the loop being checked that holds a position of a tokens
  // data set (its loop variable t, and t plus or minus an integer): that
  // data set. A split part numbers its positions from 0, so a position of
  // one data set read as another's names the wrong word (window's check).
  std::map<int, int> position_of_;
};

const char* TypeName(ir::Type t);
// The operator of a binary expression's token (+, <, and, ...).
ir::BinOp BinOpOf(Tok t);

}  // namespace rigel::frontend::internal

#endif  // RIGEL_FRONTEND_CHECKER_INTERNAL_H_
