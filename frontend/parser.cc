#include "frontend/parser.h"

#include <algorithm>
#include <string>
#include <utility>

#include "frontend/lexer.h"

namespace rigel::frontend {
namespace {

using ast::Expr;
using ast::ExprPtr;
using ast::Stmt;
using ast::StmtPtr;

// Deep nesting is legal but pointless; the limit keeps recursion bounded on
// hostile input (the fuzzer finds stack overflows otherwise). It bounds both
// the parser's recursion and the height of each expression tree, which the
// checker and IR printer recurse on (under ASan a checker frame takes ~3 KiB).
constexpr int kMaxDepth = 200;

struct SyntaxError {};

class Parser {
 public:
  Parser(std::vector<Token> toks, Diagnostics* diags) : t_(std::move(toks)), diags_(diags) {}

  ast::Program Run() {
    ast::Program prog;
    SkipNewlines();
    while (!At(Tok::kEof)) {
      try {
        prog.stmts.push_back(TopLevel());
        EndStatement();
      } catch (SyntaxError&) {
        Recover();
        // Recover() stops before a '}' so blocks can close; at top level
        // there is no block, so the brace must be consumed to make progress.
        if (At(Tok::kRBrace)) Next();
      }
      SkipNewlines();
    }
    return prog;
  }

 private:
  const Token& Peek(int k = 0) const {
    size_t i = std::min(p_ + k, t_.size() - 1);
    return t_[i];
  }
  bool At(Tok k) const { return Peek().kind == k; }
  Token Next() {
    Token t = Peek();
    if (p_ < t_.size() - 1) ++p_;
    return t;
  }
  bool Accept(Tok k) {
    if (!At(k)) return false;
    Next();
    return true;
  }
  [[noreturn]] void Fail(Loc loc, const std::string& msg) {
    diags_->Error(loc, msg);
    throw SyntaxError{};
  }
  std::string Found() const {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kIdent:
        return "'" + t.text + "'";
      case Tok::kInt:
      case Tok::kFloat:
        return "'" + t.text + "'";
      case Tok::kString:
        return "string \"" + t.text + "\"";
      default:
        return TokName(t.kind);
    }
  }
  Token Expect(Tok k, const char* what) {
    if (!At(k)) Fail(Peek().loc, std::string("expected ") + what + ", found " + Found());
    return Next();
  }
  void SkipNewlines() {
    while (At(Tok::kNewline) || At(Tok::kSemicolon)) Next();
  }
  void EndStatement() {
    if (At(Tok::kNewline) || At(Tok::kSemicolon) || At(Tok::kEof) || At(Tok::kRBrace)) return;
    Fail(Peek().loc, "expected end of statement, found " + Found());
  }
  // Skips to the next statement boundary at the current brace depth.
  void Recover() {
    int depth = 0;
    while (!At(Tok::kEof)) {
      if (At(Tok::kLBrace)) ++depth;
      if (At(Tok::kRBrace)) {
        if (depth == 0) return;
        --depth;
        Next();
        if (depth == 0 && (At(Tok::kNewline) || At(Tok::kSemicolon))) return;
        continue;
      }
      if (depth == 0 && (At(Tok::kNewline) || At(Tok::kSemicolon))) return;
      Next();
    }
  }

  StmtPtr NewStmt(Stmt::Kind k, Loc loc) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->loc = loc;
    return s;
  }

  void Name(Stmt* s, const char* what) {
    Token n = Expect(Tok::kIdent, what);
    s->names.push_back(n.text);
    s->name_locs.push_back(n.loc);
  }

  StmtPtr TopLevel() {
    Loc loc = Peek().loc;
    switch (Peek().kind) {
      case Tok::kConst: {
        Next();
        auto s = NewStmt(Stmt::kConst, loc);
        Name(s.get(), "a constant name");
        Expect(Tok::kAssign, "'='");
        s->value = Expression();
        return s;
      }
      case Tok::kData: {
        Next();
        auto s = NewStmt(Stmt::kData, loc);
        Name(s.get(), "a data set name");
        while (Accept(Tok::kComma)) Name(s.get(), "a data set name");
        Expect(Tok::kAssign, "'='");
        s->value = Expression();
        return s;
      }
      case Tok::kParam: {
        Next();
        auto s = NewStmt(Stmt::kParam, loc);
        Name(s.get(), "a parameter name");
        Expect(Tok::kColon, "':'");
        s->is_int = ElementType(/*allow_int=*/true);
        Expect(Tok::kLBracket, "'[' and the parameter's shape");
        s->rows = Expression();
        if (Accept(Tok::kComma)) s->width = Expression();
        Expect(Tok::kRBracket, "']'");
        Expect(Tok::kAssign, "'=' and an initialiser");
        s->value = Expression();
        return s;
      }
      case Tok::kAccum: {
        Next();
        auto s = NewStmt(Stmt::kAccum, loc);
        Name(s.get(), "an accumulator name");
        Expect(Tok::kColon, "':'");
        ElementType(/*allow_int=*/false);
        if (Accept(Tok::kLBracket)) {  // a vector accumulator: accum s: f32[K]
          s->width = Expression();
          Expect(Tok::kRBracket, "']'");
        }
        return s;
      }
      default:
        return Statement(0);
    }
  }

  // f32, or for a parameter also i32; returns whether it is i32.
  bool ElementType(bool allow_int) {
    Token t = Expect(Tok::kIdent,
                     allow_int ? "the element type 'f32' or 'i32'" : "the element type 'f32'");
    if (t.text == "f32") return false;
    if (allow_int && t.text == "i32") return true;
    Fail(t.loc, "unknown element type '" + t.text + "' (" +
                    (allow_int ? "a parameter is f32 or i32" : "an accumulator is f32") + ")");
    return false;
  }

  std::vector<StmtPtr> Block(int depth) {
    Expect(Tok::kLBrace, "'{'");
    std::vector<StmtPtr> body;
    SkipNewlines();
    while (!At(Tok::kRBrace)) {
      if (At(Tok::kEof)) Fail(Peek().loc, "expected '}', found end of file");
      try {
        body.push_back(Statement(depth + 1));
        EndStatement();
      } catch (SyntaxError&) {
        Recover();
      }
      SkipNewlines();
    }
    Next();
    return body;
  }

  StmtPtr Statement(int depth) {
    if (depth > kMaxDepth) Fail(Peek().loc, "statements nested too deeply");
    Loc loc = Peek().loc;
    switch (Peek().kind) {
      case Tok::kConst:
      case Tok::kData:
      case Tok::kParam:
      case Tok::kAccum:
        Fail(loc,
             std::string(TokName(Peek().kind)) + " declarations are only allowed at top level");
      case Tok::kLet:
      case Tok::kVar: {
        bool is_let = Next().kind == Tok::kLet;
        auto s = NewStmt(is_let ? Stmt::kLet : Stmt::kVar, loc);
        Name(s.get(), "a name");
        Expect(Tok::kAssign, "'='");
        s->value = Expression();
        return s;
      }
      case Tok::kPrint: {
        Next();
        auto s = NewStmt(Stmt::kPrint, loc);
        Expect(Tok::kLParen, "'(' after print");
        if (!At(Tok::kRParen)) {
          do s->args.push_back(Expression());
          while (Accept(Tok::kComma));
        }
        Expect(Tok::kRParen, "')'");
        return s;
      }
      case Tok::kIf: {
        Next();
        auto s = NewStmt(Stmt::kIf, loc);
        s->value = Expression();
        s->body = Block(depth);
        if (Accept(Tok::kElse)) {
          if (At(Tok::kIf)) {
            s->else_body.push_back(Statement(depth + 1));
          } else {
            s->else_body = Block(depth);
          }
        }
        return s;
      }
      case Tok::kFor: {
        Next();
        auto s = NewStmt(Stmt::kFor, loc);
        Pattern(s.get());
        Expect(Tok::kIn, "'in'");
        s->value = Expression();
        if (Accept(Tok::kDotDot)) {
          s->range = true;
          s->value2 = Expression();
        }
        s->body = Block(depth);
        return s;
      }
      case Tok::kParallel: {
        Next();
        auto s = NewStmt(Stmt::kParallelFor, loc);
        s->ordered = Accept(Tok::kOrdered);
        Expect(Tok::kFor, "'for' after 'parallel'");
        Pattern(s.get());
        Expect(Tok::kIn, "'in'");
        s->value = Expression();
        if (Accept(Tok::kRelax)) {
          do {
            Token n = Expect(Tok::kIdent, "a parameter name after 'relax'");
            s->relax.push_back(n.text);
            s->relax_locs.push_back(n.loc);
          } while (Accept(Tok::kComma));
        }
        s->body = Block(depth);
        return s;
      }
      default: {
        ExprPtr target = Expression();
        Tok op = Peek().kind;
        if (op != Tok::kAssign && op != Tok::kPlusAssign && op != Tok::kMinusAssign &&
            op != Tok::kStarAssign && op != Tok::kSlashAssign) {
          Fail(Peek().loc,
               "expected an assignment ('=', '+=', '-=', '*=' or '/='), found " + Found());
        }
        if (target->kind != Expr::kName && target->kind != Expr::kIndex) {
          Fail(target->loc,
               "the left side of an assignment must be a name or an indexed parameter");
        }
        Next();
        auto s = NewStmt(Stmt::kAssign, loc);
        s->target = std::move(target);
        s->op = op;
        s->value = Expression();
        return s;
      }
    }
  }

  void Pattern(Stmt* s) {
    if (Accept(Tok::kLParen)) {
      do Name(s, "a loop variable name");
      while (Accept(Tok::kComma));
      Expect(Tok::kRParen, "')'");
    } else {
      Name(s, "a loop variable name");
    }
  }

  // Precedence climbing: or < and < not < comparison < additive < multiplicative < unary.
  ExprPtr Expression() { return Or(0); }

  ExprPtr Binary(Tok op, Loc loc, ExprPtr l, ExprPtr r) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::kBinary;
    e->op = op;
    e->loc = loc;
    e->args.push_back(std::move(l));
    e->args.push_back(std::move(r));
    return Bounded(std::move(e));
  }
  ExprPtr Unary(Tok op, Loc loc, ExprPtr x) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::kUnary;
    e->op = op;
    e->loc = loc;
    e->args.push_back(std::move(x));
    return Bounded(std::move(e));
  }
  // Sets the height of `e` from its children. Guard() alone does not bound it:
  // `1 + 1 + ... + 1` is parsed by a loop into a left-leaning tree as tall as
  // the chain is long.
  ExprPtr Bounded(ExprPtr e) {
    for (const ExprPtr& a : e->args) e->height = std::max(e->height, a->height + 1);
    if (e->height > kMaxDepth) {
      Fail(e->loc, "expression too deep (more than " + std::to_string(kMaxDepth) +
                       " nested or chained operators)");
    }
    return e;
  }
  void Guard(int depth) {
    if (depth > kMaxDepth) Fail(Peek().loc, "expression nested too deeply");
  }

  ExprPtr Or(int d) {
    Guard(d);
    ExprPtr l = And(d + 1);
    while (At(Tok::kOr)) {
      Loc loc = Next().loc;
      l = Binary(Tok::kOr, loc, std::move(l), And(d + 1));
    }
    return l;
  }
  ExprPtr And(int d) {
    ExprPtr l = Not(d + 1);
    while (At(Tok::kAnd)) {
      Loc loc = Next().loc;
      l = Binary(Tok::kAnd, loc, std::move(l), Not(d + 1));
    }
    return l;
  }
  ExprPtr Not(int d) {
    Guard(d);
    if (At(Tok::kNot)) {
      Loc loc = Next().loc;
      return Unary(Tok::kNot, loc, Not(d + 1));
    }
    return Comparison(d + 1);
  }
  ExprPtr Comparison(int d) {
    ExprPtr l = Additive(d + 1);
    Tok k = Peek().kind;
    if (k == Tok::kEq || k == Tok::kNe || k == Tok::kLt || k == Tok::kLe || k == Tok::kGt ||
        k == Tok::kGe) {
      Loc loc = Next().loc;
      l = Binary(k, loc, std::move(l), Additive(d + 1));
    }
    return l;
  }
  ExprPtr Additive(int d) {
    ExprPtr l = Multiplicative(d + 1);
    while (At(Tok::kPlus) || At(Tok::kMinus)) {
      Token op = Next();
      l = Binary(op.kind, op.loc, std::move(l), Multiplicative(d + 1));
    }
    return l;
  }
  ExprPtr Multiplicative(int d) {
    ExprPtr l = UnaryMinus(d + 1);
    while (At(Tok::kStar) || At(Tok::kSlash) || At(Tok::kPercent)) {
      Token op = Next();
      l = Binary(op.kind, op.loc, std::move(l), UnaryMinus(d + 1));
    }
    return l;
  }
  ExprPtr UnaryMinus(int d) {
    Guard(d);
    if (At(Tok::kMinus)) {
      Loc loc = Next().loc;
      return Unary(Tok::kMinus, loc, UnaryMinus(d + 1));
    }
    return Postfix(d + 1);
  }
  ExprPtr Postfix(int d) {
    ExprPtr e = Primary(d + 1);
    while (At(Tok::kDot) ||
           (At(Tok::kLBracket) &&
            (e->kind == Expr::kIndex || e->kind == Expr::kAttr || e->kind == Expr::kElement))) {
      if (At(Tok::kLBracket)) {
        auto el = std::make_unique<Expr>();
        el->kind = Expr::kElement;
        el->loc = Next().loc;
        el->args.push_back(std::move(e));
        el->args.push_back(Or(d + 1));
        Expect(Tok::kRBracket, "']'");
        e = Bounded(std::move(el));
        continue;
      }
      Next();
      Token a = Expect(Tok::kIdent, "an attribute name after '.'");
      auto at = std::make_unique<Expr>();
      at->kind = Expr::kAttr;
      at->loc = a.loc;
      at->str = a.text;
      at->args.push_back(std::move(e));
      e = Bounded(std::move(at));
    }
    return e;
  }
  ExprPtr Primary(int d) {
    Guard(d);
    Token t = Peek();
    auto e = std::make_unique<Expr>();
    e->loc = t.loc;
    switch (t.kind) {
      case Tok::kInt:
        Next();
        e->kind = Expr::kInt;
        e->ival = t.ival;
        e->fval = t.fval;
        e->str = t.text;
        return e;
      case Tok::kFloat:
        Next();
        e->kind = Expr::kFloat;
        e->fval = t.fval;
        e->str = t.text;
        return e;
      case Tok::kString:
        Next();
        e->kind = Expr::kString;
        e->str = t.text;
        return e;
      case Tok::kTrue:
      case Tok::kFalse:
        Next();
        e->kind = Expr::kBool;
        e->ival = t.kind == Tok::kTrue;
        return e;
      case Tok::kLParen: {
        Next();
        ExprPtr inner = Or(d + 1);
        Expect(Tok::kRParen, "')'");
        return inner;
      }
      case Tok::kIdent: {
        Next();
        e->str = t.text;
        if (At(Tok::kLParen)) {
          Next();
          e->kind = Expr::kCall;
          if (!At(Tok::kRParen)) {
            do {
              if (At(Tok::kIdent) && Peek(1).kind == Tok::kAssign) {
                Token n = Next();
                Next();
                e->arg_names.push_back(n.text);
                e->arg_name_locs.push_back(n.loc);
              } else {
                e->arg_names.emplace_back();
                e->arg_name_locs.push_back(Peek().loc);
              }
              e->args.push_back(Or(d + 1));
            } while (Accept(Tok::kComma));
          }
          Expect(Tok::kRParen, "')' to close the call");
          return Bounded(std::move(e));
        }
        if (At(Tok::kLBracket)) {
          Next();
          e->kind = Expr::kIndex;
          do e->args.push_back(Or(d + 1));
          while (Accept(Tok::kComma));
          Expect(Tok::kRBracket, "']'");
          return Bounded(std::move(e));
        }
        e->kind = Expr::kName;
        return e;
      }
      default:
        Fail(t.loc, "expected an expression, found " + Found());
    }
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  Diagnostics* diags_;
};

}  // namespace

ast::Program Parse(const SourceFile& source, Diagnostics* diags) {
  return Parser(Lex(source, diags), diags).Run();
}

}  // namespace rigel::frontend
