// Tokeniser for `.rgl` programs (DSL.md "Lexical").
//
// Newlines are tokens (they end statements) except inside parentheses and
// brackets, where they are skipped so long calls can span lines. Lexical
// errors are reported to Diagnostics and the offending bytes skipped.
#ifndef RIGEL_FRONTEND_LEXER_H_
#define RIGEL_FRONTEND_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"

namespace rigel::frontend {

enum class Tok : uint8_t {
  kEof, kNewline, kIdent, kInt, kFloat, kString,
  // keywords
  kConst, kData, kParam, kAccum, kVar, kLet, kFor, kParallel, kOrdered, kIn, kRelax, kIf, kElse,
  kPrint, kAnd, kOr, kNot, kTrue, kFalse,
  // punctuation and operators
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace, kComma, kColon, kSemicolon, kDot,
  kDotDot, kAssign, kPlusAssign, kMinusAssign, kStarAssign, kSlashAssign, kPlus, kMinus, kStar,
  kSlash, kPercent, kEq, kNe, kLt, kLe, kGt, kGe,
};

// How a token is written, for messages: "'+='", "identifier", "end of line".
const char* TokName(Tok t);

struct Token {
  Tok kind = Tok::kEof;
  Loc loc;
  std::string text;  // identifier name, string contents (unescaped), or number spelling
  int64_t ival = 0;
  double fval = 0;
};

// Tokenises the whole source. The result always ends with kEof.
std::vector<Token> Lex(const SourceFile& source, Diagnostics* diags);

}  // namespace rigel::frontend

#endif  // RIGEL_FRONTEND_LEXER_H_
