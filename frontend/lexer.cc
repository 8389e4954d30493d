#include "frontend/lexer.h"

#include <charconv>
#include <string_view>
#include <unordered_map>

namespace rigel::frontend {

const char* TokName(Tok t) {
  switch (t) {
    case Tok::kEof:
      return "end of file";
    case Tok::kNewline:
      return "end of line";
    case Tok::kIdent:
      return "identifier";
    case Tok::kInt:
      return "integer";
    case Tok::kFloat:
      return "number";
    case Tok::kString:
      return "string";
    case Tok::kConst:
      return "'const'";
    case Tok::kData:
      return "'data'";
    case Tok::kParam:
      return "'param'";
    case Tok::kAccum:
      return "'accum'";
    case Tok::kVar:
      return "'var'";
    case Tok::kLet:
      return "'let'";
    case Tok::kFor:
      return "'for'";
    case Tok::kParallel:
      return "'parallel'";
    case Tok::kOrdered:
      return "'ordered'";
    case Tok::kIn:
      return "'in'";
    case Tok::kRelax:
      return "'relax'";
    case Tok::kIf:
      return "'if'";
    case Tok::kElse:
      return "'else'";
    case Tok::kPrint:
      return "'print'";
    case Tok::kAnd:
      return "'and'";
    case Tok::kOr:
      return "'or'";
    case Tok::kNot:
      return "'not'";
    case Tok::kTrue:
      return "'true'";
    case Tok::kFalse:
      return "'false'";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLBracket:
      return "'['";
    case Tok::kRBracket:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kSemicolon:
      return "';'";
    case Tok::kDot:
      return "'.'";
    case Tok::kDotDot:
      return "'..'";
    case Tok::kAssign:
      return "'='";
    case Tok::kPlusAssign:
      return "'+='";
    case Tok::kMinusAssign:
      return "'-='";
    case Tok::kStarAssign:
      return "'*='";
    case Tok::kSlashAssign:
      return "'/='";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kPercent:
      return "'%'";
    case Tok::kEq:
      return "'=='";
    case Tok::kNe:
      return "'!='";
    case Tok::kLt:
      return "'<'";
    case Tok::kLe:
      return "'<='";
    case Tok::kGt:
      return "'>'";
    case Tok::kGe:
      return "'>='";
  }
  return "token";
}

namespace {

const std::unordered_map<std::string_view, Tok>& Keywords() {
  static const auto* kw = new std::unordered_map<std::string_view, Tok>{
      {"const", Tok::kConst}, {"data", Tok::kData},         {"param", Tok::kParam},
      {"accum", Tok::kAccum}, {"var", Tok::kVar},           {"let", Tok::kLet},
      {"for", Tok::kFor},     {"parallel", Tok::kParallel}, {"ordered", Tok::kOrdered},
      {"in", Tok::kIn},       {"relax", Tok::kRelax},       {"if", Tok::kIf},
      {"else", Tok::kElse},   {"print", Tok::kPrint},       {"and", Tok::kAnd},
      {"or", Tok::kOr},       {"not", Tok::kNot},           {"true", Tok::kTrue},
      {"false", Tok::kFalse}};
  return *kw;
}

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(const SourceFile& src, Diagnostics* diags) : s_(src.text()), diags_(diags) {}

  std::vector<Token> Run() {
    while (pos_ < s_.size()) Step();
    Emit(Tok::kNewline, Here());
    Emit(Tok::kEof, Here());
    return std::move(out_);
  }

 private:
  Loc Here() const { return {line_, static_cast<int>(pos_ - line_start_) + 1}; }

  static bool StartsStatement(Tok t) {
    switch (t) {
      case Tok::kConst:
      case Tok::kData:
      case Tok::kParam:
      case Tok::kAccum:
      case Tok::kLet:
      case Tok::kVar:
      case Tok::kParallel:
      case Tok::kPrint:
      case Tok::kFor:
      case Tok::kIf:
        return true;
      default:
        return false;
    }
  }

  void Emit(Tok kind, Loc loc, std::string text = {}) {
    if (depth_ == 0) newline_in_parens_ = false;
    // Newlines inside () and [] carry no meaning; repeated newlines collapse.
    if (kind == Tok::kNewline) {
      if (depth_ > 0) {
        if (!newline_in_parens_) first_skipped_newline_ = loc;
        newline_in_parens_ = true;
        return;
      }
      if (!out_.empty() && out_.back().kind == Tok::kNewline) return;
    }
    Token t;
    t.kind = kind;
    t.loc = loc;
    t.text = std::move(text);
    out_.push_back(std::move(t));
  }

  void Step() {
    char c = s_[pos_];
    Loc loc = Here();
    if (c == '\n') {
      Emit(Tok::kNewline, loc);
      ++pos_;
      ++line_;
      line_start_ = pos_;
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
      return;
    }
    if (c == '#') {
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      return;
    }
    if (IsIdentStart(c)) return Ident(loc);
    if (IsDigit(c)) return Number(loc);
    if (c == '"') return String(loc);
    Punct(loc);
  }

  void Ident(Loc loc) {
    size_t b = pos_;
    while (pos_ < s_.size() && (IsIdentStart(s_[pos_]) || IsDigit(s_[pos_]))) ++pos_;
    std::string_view word = s_.substr(b, pos_ - b);
    auto it = Keywords().find(word);
    // A statement keyword on a new line cannot continue an expression: the
    // brackets before it were left open. Closing them here lets the parser
    // report the unclosed bracket and go on with this statement.
    if (it != Keywords().end() && depth_ > 0 && newline_in_parens_ && StartsStatement(it->second)) {
      depth_ = 0;
      Emit(Tok::kNewline, first_skipped_newline_);
    }
    Emit(it == Keywords().end() ? Tok::kIdent : it->second, loc, std::string(word));
  }

  void Number(Loc loc) {
    size_t b = pos_;
    bool is_float = false;
    while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    // "0..K" is a range: a '.' only starts a fraction when a digit follows.
    if (pos_ + 1 < s_.size() && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
      is_float = true;
      ++pos_;
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && IsDigit(s_[p])) {
        is_float = true;
        pos_ = p;
        while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
      }
    }
    std::string text(s_.substr(b, pos_ - b));
    if (pos_ < s_.size() && IsIdentStart(s_[pos_])) {
      diags_->Error(loc, "malformed number '" + text + s_[pos_] + "'");
    }
    Token t;
    t.loc = loc;
    t.text = text;
    if (is_float) {
      t.kind = Tok::kFloat;
      auto r = std::from_chars(text.data(), text.data() + text.size(), t.fval);
      if (r.ec != std::errc()) diags_->Error(loc, "number '" + text + "' is out of range");
    } else {
      t.kind = Tok::kInt;
      auto r = std::from_chars(text.data(), text.data() + text.size(), t.ival);
      if (r.ec != std::errc()) diags_->Error(loc, "integer '" + text + "' is too large");
      t.fval = static_cast<double>(t.ival);
    }
    out_.push_back(std::move(t));
  }

  void String(Loc loc) {
    ++pos_;
    std::string value;
    while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\n') {
      char c = s_[pos_];
      // A backslash before the line end escapes nothing: the string is
      // unterminated (consuming the '\n' here would desynchronise line numbers).
      if (c == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] != '\n') {
        char n = s_[pos_ + 1];
        if (n == '"' || n == '\\') {
          value += n;
        } else if (n == 'n') {
          value += '\n';
        } else if (n == 't') {
          value += '\t';
        } else {
          diags_->Error(Here(), "unknown escape '\\" + Shown(n) + "' in string");
        }
        pos_ += 2;
        continue;
      }
      value += c;
      ++pos_;
    }
    if (pos_ >= s_.size() || s_[pos_] != '"') {
      diags_->Error(loc, "unterminated string");
    } else {
      ++pos_;
    }
    Emit(Tok::kString, loc, std::move(value));
  }

  void Punct(Loc loc) {
    char c = s_[pos_];
    char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
    auto two = [&](Tok t) {
      pos_ += 2;
      Emit(t, loc);
    };
    auto one = [&](Tok t) {
      pos_ += 1;
      Emit(t, loc);
    };
    switch (c) {
      case '(':
        ++depth_;
        return one(Tok::kLParen);
      case ')':
        if (depth_ > 0) --depth_;
        return one(Tok::kRParen);
      case '[':
        ++depth_;
        return one(Tok::kLBracket);
      case ']':
        if (depth_ > 0) --depth_;
        return one(Tok::kRBracket);
      case '{':
        return one(Tok::kLBrace);
      case '}':
        return one(Tok::kRBrace);
      case ',':
        return one(Tok::kComma);
      case ':':
        return one(Tok::kColon);
      case ';':
        return one(Tok::kSemicolon);
      case '.':
        return n == '.' ? two(Tok::kDotDot) : one(Tok::kDot);
      case '=':
        return n == '=' ? two(Tok::kEq) : one(Tok::kAssign);
      case '+':
        return n == '=' ? two(Tok::kPlusAssign) : one(Tok::kPlus);
      case '-':
        return n == '=' ? two(Tok::kMinusAssign) : one(Tok::kMinus);
      case '*':
        return n == '=' ? two(Tok::kStarAssign) : one(Tok::kStar);
      case '/':
        return n == '=' ? two(Tok::kSlashAssign) : one(Tok::kSlash);
      case '%':
        return one(Tok::kPercent);
      case '<':
        return n == '=' ? two(Tok::kLe) : one(Tok::kLt);
      case '>':
        return n == '=' ? two(Tok::kGe) : one(Tok::kGt);
      case '!':
        if (n == '=') return two(Tok::kNe);
        break;
      default:
        break;
    }
    diags_->Error(loc, "unexpected character '" + Shown(c) + "'");
    ++pos_;
  }

  // A byte as messages show it: printable ASCII as is, anything else (NUL,
  // control bytes, UTF-8 parts) as \xHH so messages stay one printable line.
  static std::string Shown(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    static const char kHex[] = "0123456789abcdef";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 0xf];
  }

  std::string_view s_;
  Diagnostics* diags_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
  int depth_ = 0;
  bool newline_in_parens_ = false;  // a newline was skipped inside open brackets
  Loc first_skipped_newline_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> Lex(const SourceFile& source, Diagnostics* diags) {
  return Lexer(source, diags).Run();
}

}  // namespace rigel::frontend
