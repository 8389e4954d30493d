// Abstract syntax tree of a `.rgl` program, as parsed, with source locations.
// Owned by a Program; nodes own their children through unique_ptr.
#ifndef RIGEL_FRONTEND_AST_H_
#define RIGEL_FRONTEND_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "frontend/lexer.h"

namespace rigel::frontend::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum Kind {
    kInt,
    kFloat,
    kString,
    kBool,
    kName,
    kBinary,
    kUnary,
    kCall,
    kIndex,
    kAttr,
    kElement
  };
  Kind kind = kInt;
  Loc loc;
  int64_t ival = 0;    // kInt, kBool (0/1)
  double fval = 0;     // kFloat
  std::string str;     // kString text; kName/kCall/kIndex name; kAttr attribute
  Tok op = Tok::kEof;  // kBinary, kUnary
  // kBinary: {lhs, rhs}; kUnary: {operand}; kCall: arguments; kIndex:
  // subscripts (the indexed name is `str`); kAttr: {object}; kElement: {a
  // vector-valued expression, the element index} (`W[i][k]`, `row.x[k]`).
  std::vector<ExprPtr> args;
  std::vector<std::string> arg_names;  // kCall: "" for positional, else `name=`
  std::vector<Loc> arg_name_locs;
  int height = 1;  // of this subtree; the parser bounds it (later stages recurse on the tree)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  enum Kind {
    kConst,        // const NAME = value
    kData,         // data NAME[, NAME] = value (a loader call or split)
    kParam,        // param NAME: f32|i32[rows(, width)] = value
    kAccum,        // accum NAME: f32 (or f32[width])
    kLet,          // let NAME = value
    kVar,          // var NAME = value
    kAssign,       // target op value
    kFor,          // for NAMES in iterable { body }   (range: value..value2)
    kParallelFor,  // parallel [ordered] for NAMES in value [relax ...] { body }
    kIf,           // if value { body } else { else_body }
    kPrint,        // print(args)
  };
  Kind kind = kConst;
  Loc loc;
  std::vector<std::string> names;
  std::vector<Loc> name_locs;
  ExprPtr value;
  ExprPtr value2;         // kFor over a range: the upper bound
  ExprPtr target;         // kAssign: kName or kIndex
  Tok op = Tok::kAssign;  // kAssign operator
  ExprPtr rows, width;    // kParam shape (width null for 1-D); kAccum: a vector's width
  bool is_int = false;    // kParam: i32 elements
  bool ordered = false;
  bool range = false;  // kFor: `lo..hi`
  std::vector<std::string> relax;
  std::vector<Loc> relax_locs;
  std::vector<ExprPtr> args;  // kPrint
  std::vector<StmtPtr> body, else_body;
};

struct Program {
  std::vector<StmtPtr> stmts;
};

}  // namespace rigel::frontend::ast

#endif  // RIGEL_FRONTEND_AST_H_
