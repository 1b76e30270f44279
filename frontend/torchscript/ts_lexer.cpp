#include "frontend/torchscript/ts_lexer.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <limits>

#include "ir/error.h"

namespace kiln::frontend::torchscript {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's keywords: never names, whatever the parser then makes of them.
constexpr std::string_view kKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

// Operators and punctuation, longest first.
constexpr std::string_view kOps3[] = {"**=", "//=", ">>=", "<<=", "..."};
constexpr std::string_view kOps2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", "+=",
                                      "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":="};
constexpr std::string_view kOps1 = "()[]{},:.;@=+-*/%&|^~<>";

// A piece of source for a message: at most 40 bytes, printable ASCII only.
std::string clip(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 40) out += "...";
  return out;
}

std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Whether a decimal float literal too large or too small for a double is too large (Python
// then gives inf) rather than too small (0.0): the power of ten of its first nonzero digit.
bool overflows(std::string_view literal) {
  size_t e = literal.find_first_of("eE");
  std::string_view mantissa = literal.substr(0, e);
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = literal.substr(e + 1);
    bool negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    for (char c : digits) exponent = std::min<int64_t>(exponent * 10 + (c - '0'), 1'000'000'000);
    if (negative) exponent = -exponent;
  }
  size_t point = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, point);
  size_t first = whole.find_first_not_of('0');
  if (first != std::string_view::npos) return exponent + static_cast<int64_t>(whole.size() - first) > 0;
  std::string_view fraction = point == std::string_view::npos ? "" : mantissa.substr(point + 1);
  size_t nonzero = fraction.find_first_not_of('0');
  return nonzero != std::string_view::npos && exponent - static_cast<int64_t>(nonzero) > 0;
}

}  // namespace

void syntax_error(const std::string& file, int line, int column, std::string_view found,
                  std::string_view expected) {
  fail("{}:{}:{}: found {}, expected {}", file, line, column, found, expected);
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Name: return fmt::format("name '{}'", clip(token.text));
    case TokenKind::Keyword:
    case TokenKind::Op: return fmt::format("'{}'", token.text);
    case TokenKind::Int:
    case TokenKind::Float: return fmt::format("number {}", clip(token.text));
    case TokenKind::String: return fmt::format("string \"{}\"", clip(token.text));
    case TokenKind::Newline: return "the end of the line";
    case TokenKind::Indent: return "an indented line";
    case TokenKind::Dedent: return "the end of an indented block";
    case TokenKind::End: return "the end of the file";
  }
  return "a token";
}

void Lexer::newline() {
  if (peek() == '\r' && peek(1) == '\n') ++pos_;
  ++pos_;
  line_start_ = pos_;
  if (line_ < INT_MAX) ++line_;
}

int Lexer::column() const { return static_cast<int>(std::min<size_t>(pos_ - line_start_ + 1, INT_MAX)); }

void Lexer::error_here(std::string_view found, std::string_view expected) const {
  syntax_error(file_, line_, column(), found, expected);
}

Token Lexer::next() {
  Token token;
  if (pending_dedents_ > 0) {
    --pending_dedents_;
    token.kind = TokenKind::Dedent;
    token.line = line_;
    token.column = column();
    return token;
  }
  if (at_line_start_ && brackets_.empty()) {
    switch (read_indentation(token)) {
      case Indentation::Same: break;
      case Indentation::Changed: return token;
      case Indentation::EndOfFile: return end_of_file();
    }
  }
  skip_blanks();
  if (at_end()) return end_of_file();
  token.line = line_;
  token.column = column();
  char c = peek();
  if (at_newline()) {  // only outside brackets: skip_blanks() took those inside
    newline();
    at_line_start_ = true;
    token.kind = TokenKind::Newline;
    return token;
  }
  at_line_start_ = false;
  if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number();
  if (c == '"' || c == '\'') return string_literal(0, false);
  if (is_name_start(c)) {
    // A string prefix: r, u, b, f and their pairs, in either case.
    size_t n = 0;
    while (n < 2 && is_name_start(peek(n)) &&
           std::string_view("rRuUbBfF").find(peek(n)) != std::string_view::npos)
      ++n;
    if (n > 0 && (peek(n) == '"' || peek(n) == '\'')) {
      std::string prefix(text_.substr(pos_, n));
      std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](char p) { return p | 0x20; });
      if (prefix.find('b') != std::string::npos) error_here("a bytes literal", "a string");
      if (prefix.find('f') != std::string::npos) error_here("an f-string", "a plain string");
      if (prefix == "ur" || prefix == "ru" || prefix == "uu" || prefix == "rr") {
        error_here(fmt::format("string prefix '{}'", text_.substr(pos_, n)), "r or u");
      }
      return string_literal(n, prefix == "r");
    }
    return name_or_keyword();
  }
  return op();
}

Lexer::Indentation Lexer::read_indentation(Token& token) {
  while (true) {
    size_t start = pos_;
    while (peek() == ' ') ++pos_;
    if (at_end()) return Indentation::EndOfFile;
    if (peek() == '\t') error_here("a tab in the indentation", "spaces");
    if (peek() == '\f') error_here("a form feed in the indentation", "spaces");
    if (peek() == '#') {
      while (!at_end() && !at_newline()) ++pos_;
      if (at_end()) return Indentation::EndOfFile;
    }
    if (at_newline()) {  // a blank line or a comment line: no tokens
      newline();
      continue;
    }
    at_line_start_ = false;
    int width = static_cast<int>(std::min<size_t>(pos_ - start, INT_MAX));
    token.line = line_;
    token.column = column();
    if (width > indents_.back()) {
      indents_.push_back(width);
      token.kind = TokenKind::Indent;
      return Indentation::Changed;
    }
    if (width < indents_.back()) {
      int closed = 0;
      while (width < indents_.back()) {
        indents_.pop_back();
        ++closed;
      }
      if (width != indents_.back()) {
        error_here(fmt::format("an indentation of {} spaces", width),
                   fmt::format("{} spaces, as an enclosing block", indents_.back()));
      }
      pending_dedents_ = closed - 1;
      token.kind = TokenKind::Dedent;
      return Indentation::Changed;
    }
    return Indentation::Same;
  }
}

void Lexer::skip_blanks() {
  while (!at_end()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\f') {
      ++pos_;
    } else if (c == '#') {
      while (!at_end() && !at_newline()) ++pos_;
    } else if (c == '\\') {
      if (peek(1) != '\n' && peek(1) != '\r')
        error_here("'\\'", "a line break after a line-continuation backslash");
      ++pos_;
      newline();
    } else if (at_newline() && !brackets_.empty()) {
      newline();
    } else {
      return;
    }
  }
}

Token Lexer::end_of_file() {
  Token token;
  token.line = line_;
  token.column = column();
  if (!brackets_.empty()) {
    const Bracket& b = brackets_.back();
    error_here("the end of the file",
               fmt::format("a closing bracket for the '{}' at {}:{}", b.open, b.line, b.column));
  }
  if (!at_line_start_) {  // the last line has no line break
    at_line_start_ = true;
    token.kind = TokenKind::Newline;
  } else if (indents_.size() > 1) {
    indents_.pop_back();
    token.kind = TokenKind::Dedent;
  } else {
    token.kind = TokenKind::End;
  }
  return token;
}

Token Lexer::number() {
  Token token;
  token.kind = TokenKind::Int;
  token.line = line_;
  token.column = column();
  const size_t start = pos_;
  auto too_large = [&](std::string_view literal) {
    syntax_error(file_, token.line, token.column, fmt::format("integer literal {}", clip(literal)),
                 "a value below 2**63");
  };
  // The literal so far with the character after it: for a name or a '.' straight after it.
  auto check_end = [&] {
    std::string_view literal = text_.substr(start, pos_ - start);
    if (is_name_char(peek()) || peek() == '.') {
      error_here(fmt::format("'{}{}'", clip(literal), peek()),
                 "a number (without suffixes or digit separators)");
    }
    token.text = std::string(literal);
    return literal;
  };

  const char base_char = static_cast<char>(peek(1) | 0x20);
  if (peek() == '0' && (base_char == 'x' || base_char == 'o' || base_char == 'b')) {
    const uint64_t base = base_char == 'x' ? 16 : base_char == 'o' ? 8 : 2;
    pos_ += 2;
    uint64_t value = 0;
    for (int d = digit_value(peek()); d >= 0 && static_cast<uint64_t>(d) < base; d = digit_value(peek())) {
      if (value > (static_cast<uint64_t>(INT64_MAX) - d) / base)
        too_large(text_.substr(start, pos_ + 1 - start));
      value = value * base + static_cast<uint64_t>(d);
      ++pos_;
    }
    if (pos_ == start + 2)
      error_here(fmt::format("'{}'", text_.substr(start, 2)), "digits after the base prefix");
    check_end();
    token.int_value = static_cast<int64_t>(value);
    return token;
  }

  bool is_float = false;
  while (is_digit(peek())) ++pos_;
  if (peek() == '.') {
    is_float = true;
    ++pos_;
    while (is_digit(peek())) ++pos_;
  }
  if (peek() == 'e' || peek() == 'E') {
    const size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
    const bool digits = is_digit(peek(1 + sign));
    pos_ += 1 + sign;
    if (!digits)
      error_here(fmt::format("'{}'", clip(text_.substr(start, pos_ - start))), "the digits of an exponent");
    is_float = true;
    while (is_digit(peek())) ++pos_;
  }
  const std::string_view literal = check_end();

  if (is_float) {
    token.kind = TokenKind::Float;
    auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), token.float_value);
    if (ec == std::errc::result_out_of_range) {
      token.float_value = overflows(literal) ? std::numeric_limits<double>::infinity() : 0.0;
    } else if (ec != std::errc() || end != literal.data() + literal.size()) {
      syntax_error(file_, token.line, token.column, fmt::format("'{}'", clip(literal)), "a float literal");
    }
    return token;
  }
  if (literal.size() > 1 && literal[0] == '0' && literal.find_first_not_of('0') != std::string_view::npos) {
    syntax_error(file_, token.line, token.column, fmt::format("'{}'", clip(literal)),
                 "a decimal number without leading zeros");
  }
  uint64_t value = 0;
  for (char c : literal) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (static_cast<uint64_t>(INT64_MAX) - d) / 10) too_large(literal);
    value = value * 10 + d;
  }
  token.int_value = static_cast<int64_t>(value);
  return token;
}

Token Lexer::string_literal(size_t prefix_length, bool raw) {
  Token token;
  token.kind = TokenKind::String;
  token.line = line_;
  token.column = column();
  pos_ += prefix_length;
  const char quote = peek();
  const bool triple = peek(1) == quote && peek(2) == quote;
  pos_ += triple ? 3 : 1;
  const std::string unterminated =
      fmt::format("the closing quote of the string at {}:{}", token.line, token.column);
  while (true) {
    if (at_end()) error_here("the end of the file", unterminated);
    char c = peek();
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      pos_ += triple ? 3 : 1;
      return token;
    }
    if (at_newline()) {
      if (!triple) error_here("the end of the line", unterminated);
      newline();
      token.text += '\n';
    } else if (c == '\0') {
      error_here("byte 0x00", "text");
    } else if (c == '\\' && raw) {
      // A raw string keeps the backslash, and the quote or backslash after it.
      token.text += c;
      ++pos_;
      if (peek() == quote || peek() == '\\') token.text += text_[pos_++];
    } else if (c == '\\') {
      escape(token.text);
    } else {
      token.text += c;
      ++pos_;
    }
  }
}

void Lexer::escape(std::string& out) {
  const int line = line_;
  const int column_at = column();
  auto bad = [&](size_t length, std::string_view expected) {
    syntax_error(file_, line, column_at, fmt::format("escape '{}'", clip(text_.substr(pos_ - 1, length))),
                 expected);
  };
  ++pos_;  // the backslash
  if (at_end()) error_here("the end of the file", "an escape sequence after '\\'");
  char c = peek();
  switch (c) {
    case '\n':
    case '\r':
      newline();  // a line continuation inside the string
      return;
    case '\\':
    case '\'':
    case '"': out += c; break;
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'v': out += '\v'; break;
    case 'x': {
      // One byte, as an octal escape (neither python_print nor TorchScript's reader uses \x).
      int hi = digit_value(peek(1)), lo = digit_value(peek(2));
      if (hi < 0 || lo < 0) bad(4, "two hex digits after \\x");
      out += static_cast<char>(hi * 16 + lo);
      pos_ += 3;
      return;
    }
    case 'u':
    case 'U': {
      size_t digits = c == 'u' ? 4 : 8;
      uint32_t cp = 0;
      for (size_t i = 1; i <= digits; ++i) {
        int d = digit_value(peek(i));
        if (d < 0) bad(digits + 2, fmt::format("{} hex digits after \\{}", digits, c));
        cp = cp * 16 + static_cast<uint32_t>(d);
      }
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        bad(digits + 2, "a unicode code point that is not a surrogate");
      append_utf8(out, cp);
      pos_ += digits + 1;
      return;
    }
    case 'N': bad(2, "an escape other than \\N{...}"); return;
    default:
      if (c >= '0' && c <= '7') {
        // python_print writes a non-printable byte as \ooo, and TorchScript's reader reads it back
        // as that byte (not as a code point, as Python would).
        unsigned value = 0;
        size_t n = 0;
        while (n < 3 && peek() >= '0' && peek() <= '7') {
          value = value * 8 + static_cast<unsigned>(peek() - '0');
          ++pos_;
          ++n;
        }
        if (value > 0xff)
          syntax_error(file_, line, column_at, fmt::format("escape '\\{:o}'", value),
                       "an octal escape up to \\377");
        out += static_cast<char>(value);
        return;
      }
      out += '\\';  // Python keeps an unknown escape as it is; the character is read next
      return;
  }
  ++pos_;
}

Token Lexer::name_or_keyword() {
  Token token;
  token.line = line_;
  token.column = column();
  size_t start = pos_;
  while (is_name_char(peek())) ++pos_;
  token.text = std::string(text_.substr(start, pos_ - start));
  bool keyword = std::find(std::begin(kKeywords), std::end(kKeywords), token.text) != std::end(kKeywords);
  token.kind = keyword ? TokenKind::Keyword : TokenKind::Name;
  return token;
}

Token Lexer::op() {
  Token token;
  token.kind = TokenKind::Op;
  token.line = line_;
  token.column = column();
  std::string_view rest = text_.substr(pos_);
  for (std::string_view o : kOps3) {
    if (rest.starts_with(o)) token.text = o;
  }
  if (token.text.empty()) {
    for (std::string_view o : kOps2) {
      if (rest.starts_with(o)) token.text = o;
    }
  }
  if (token.text.empty()) {
    char c = peek();
    if (kOps1.find(c) == std::string_view::npos) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        error_here(describe_char(c), "ASCII outside strings and comments");
      }
      error_here(describe_char(c), "a name, a number, a string or an operator");
    }
    token.text = std::string(1, c);
    if (c == '(' || c == '[' || c == '{') {
      brackets_.push_back({c, token.line, token.column});
    } else if ((c == ')' || c == ']' || c == '}') && !brackets_.empty()) {
      brackets_.pop_back();  // whether it matches is the parser's to check
    }
  }
  pos_ += token.text.size();
  return token;
}

}  // namespace kiln::frontend::torchscript
