#include "frontend/stablehlo/mlir_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ir/error.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr size_t kMaxRank = 64;  // dims of one tensor type (the importer's limit is lower)

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

}  // namespace

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

namespace {
bool value_char(char c) { return ident_char(c) || c == '-'; }
}  // namespace

MlirReader::MlirReader(const std::string& text, const std::string& file) : t_(text), file_(file) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < t_.size(); ++i)
    if (t_[i] == '\n') line_starts_.push_back(i + 1);
}

Loc MlirReader::loc_at(size_t pos) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
  size_t line = static_cast<size_t>(it - line_starts_.begin());
  return Loc{static_cast<int>(line), static_cast<int>(pos - line_starts_[line - 1] + 1)};
}

void MlirReader::error_at(size_t pos, const std::string& msg) const {
  Loc l = loc_at(std::min(pos, t_.size()));
  fail("{}:{}:{}: {}", file_, l.line, l.col, msg);
}

std::string MlirReader::describe_here() const {
  if (at_end()) return "the end of the text";
  size_t n = 0;
  while (p_ + n < t_.size() && n < 24 && !std::isspace(static_cast<unsigned char>(t_[p_ + n]))) ++n;
  if (n <= 1) return printable(t_[p_]);
  return fmt::format("'{}'", t_.substr(p_, n));
}

void MlirReader::ws() {
  while (!at_end()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++p_;
    } else if (c == '/' && peek(1) == '/') {
      while (!at_end() && peek() != '\n') ++p_;
    } else {
      break;
    }
  }
}

bool MlirReader::eat(char c) {
  ws();
  if (peek() != c) return false;
  ++p_;
  return true;
}

bool MlirReader::eat_arrow() {
  ws();
  if (peek() != '-' || peek(1) != '>') return false;
  p_ += 2;
  return true;
}

void MlirReader::expect(char c, const char* what) {
  if (!eat(c)) error(fmt::format("expected {}, found {}", what, describe_here()));
}

bool MlirReader::word_ahead(const char* w) {
  ws();
  size_t n = std::strlen(w);
  return t_.compare(p_, n, w) == 0 && !ident_char(peek(n)) && peek(n) != '-';
}

std::string MlirReader::ident() {
  ws();
  if (!ident_start(peek())) error(fmt::format("expected a name, found {}", describe_here()));
  size_t start = p_;
  while (!at_end() && ident_char(peek())) ++p_;
  return t_.substr(start, p_ - start);
}

std::string MlirReader::value_name() {
  ws();
  if (peek() != '%') error(fmt::format("expected a value (%name), found {}", describe_here()));
  size_t start = p_++;
  while (!at_end() && value_char(peek())) ++p_;
  if (p_ == start + 1) error("expected a value name after '%'");
  if (peek() == '#') {
    ++p_;
    size_t digits = p_;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++p_;
    if (p_ == digits || p_ - digits > 9) error("expected a result number after '#'");
  }
  return t_.substr(start, p_ - start);
}

std::string MlirReader::symbol() {
  ws();
  if (peek() != '@') error(fmt::format("expected a symbol (@name), found {}", describe_here()));
  ++p_;
  if (peek() == '"') return string_lit();
  if (!ident_start(peek())) error("expected a name after '@'");
  size_t start = p_;
  while (!at_end() && (ident_char(peek()) || peek() == '-')) ++p_;
  return t_.substr(start, p_ - start);
}

std::string MlirReader::string_lit() {
  ws();
  size_t start = p_;
  if (peek() != '"') error(fmt::format("expected a string, found {}", describe_here()));
  ++p_;
  std::string s;
  for (;;) {
    if (at_end()) error_at(start, "unterminated string");
    char c = t_[p_++];
    if (c == '"') break;
    if (c == '\n') error_at(start, "unterminated string (a newline inside it)");
    if (c != '\\') {
      s += c;
      continue;
    }
    if (at_end()) error_at(start, "unterminated string");
    char e = t_[p_++];
    if (e == '"' || e == '\\') s += e;
    else if (e == 'n') s += '\n';
    else if (e == 't') s += '\t';
    else if (std::isxdigit(static_cast<unsigned char>(e)) && std::isxdigit(static_cast<unsigned char>(peek()))) {
      s += static_cast<char>(std::stoi(std::string{e, t_[p_++]}, nullptr, 16));
    } else {
      error_at(p_ - 2, "invalid escape in a string");
    }
  }
  return s;
}

std::string MlirReader::group() {
  ws();
  size_t start = p_;
  std::string stack;
  auto closer = [](char c) { return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>'; };
  do {
    if (at_end()) error_at(start, fmt::format("unbalanced '{}': the text ends before its '{}'", t_[start], closer(t_[start])));
    char c = peek();
    if (c == '"') {
      string_lit();
      continue;
    }
    if (c == '-' && peek(1) == '>') {
      p_ += 2;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (stack.size() >= static_cast<size_t>(kMaxNesting)) error("brackets nested too deeply");
      stack.push_back(closer(c));
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (stack.empty() || c != stack.back())
        error(fmt::format("unbalanced {}: expected '{}'", printable(c), stack.empty() ? ' ' : stack.back()));
      stack.pop_back();
    }
    ++p_;
  } while (!stack.empty());
  return t_.substr(start + 1, p_ - start - 2);
}

Attr MlirReader::number() {
  ws();
  Attr a;
  a.loc = loc_at(p_);
  size_t start = p_;
  if (peek() == '-' || peek() == '+') ++p_;
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
    p_ += 2;
    size_t digits = p_;
    while (!at_end() && std::isxdigit(static_cast<unsigned char>(peek()))) ++p_;
    if (p_ == digits || p_ - digits > 16) error_at(start, "malformed hexadecimal number");
    a.kind = Attr::Kind::Int;
    a.i = static_cast<int64_t>(std::stoull(t_.substr(digits, p_ - digits), nullptr, 16));
    if (t_[start] == '-') a.i = -a.i;
    return a;
  }
  size_t digits = p_;
  while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++p_;
  if (p_ == digits) error(fmt::format("expected a number, found {}", describe_here()));
  bool is_float = false;
  if (peek() == '.') {
    is_float = true;
    ++p_;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++p_;
  }
  if (peek() == 'e' || peek() == 'E') {
    is_float = true;
    ++p_;
    if (peek() == '-' || peek() == '+') ++p_;
    size_t exp = p_;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++p_;
    if (p_ == exp) error_at(start, "malformed number: no digits in the exponent");
  }
  std::string text = t_.substr(start, p_ - start);
  if (is_float) {
    a.kind = Attr::Kind::Float;
    a.f = std::strtod(text.c_str(), nullptr);
  } else {
    a.kind = Attr::Kind::Int;
    errno = 0;
    long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) error_at(start, fmt::format("integer {} is out of range", text));
    a.i = v;
  }
  return a;
}

TensorType MlirReader::tensor_type() {
  ws();
  size_t start = p_;
  if (!word_ahead("tensor")) {
    std::string what = describe_here();
    if (peek() == '!' || ident_start(peek())) error(fmt::format("unsupported type {} (only tensor<...> types are)", what));
    error(fmt::format("expected a tensor type, found {}", what));
  }
  p_ += 6;
  if (peek() != '<') error("expected '<' after 'tensor'");
  ++p_;
  TensorType type;
  for (;;) {
    if (peek() == '?') error("dynamic dims ('?') are not supported: lower the function with static shapes");
    if (peek() == '*') error("unranked tensors are not supported");
    if (!std::isdigit(static_cast<unsigned char>(peek()))) break;
    size_t digits = p_;
    int64_t d = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      if (d > (INT64_MAX - 9) / 10) error_at(digits, "tensor dim is too large");
      d = d * 10 + (peek() - '0');
      ++p_;
    }
    if (type.dims.size() >= kMaxRank) error_at(start, fmt::format("tensor type has more than {} dims", kMaxRank));
    type.dims.push_back(d);
    if (peek() != 'x') error(fmt::format("expected 'x' after a tensor dim, found {}", describe_here()));
    ++p_;
  }
  size_t et = p_;
  while (!at_end() && std::isalnum(static_cast<unsigned char>(peek()))) ++p_;
  std::string elem = t_.substr(et, p_ - et);
  auto dt = element_type(elem);
  if (!dt) {
    while (peek() == '<' || peek() == '.') {
      if (peek() == '<') group();
      else ++p_;
    }
    error_at(et, fmt::format("unsupported element type '{}'", elem.empty() ? t_.substr(et, 1) : t_.substr(et, p_ - et)));
  }
  type.dtype = *dt;
  ws();
  if (peek() == ',') error("tensor encodings (bounded dynamic dims, sparsity) are not supported");
  if (peek() != '>') error(fmt::format("expected '>' closing the tensor type, found {}", describe_here()));
  ++p_;
  return type;
}

std::optional<TensorType> MlirReader::attr_type() {
  ws();
  if (word_ahead("tensor")) return tensor_type();
  if (peek() == '!') ++p_;
  ident();
  ws();
  if (peek() == '<') group();
  return std::nullopt;
}

Attr MlirReader::attr(bool typed) {
  if (++depth_ > kMaxNesting) error("attributes nested too deeply");
  Attr a = attr_inner(typed);
  --depth_;
  return a;
}

Attr MlirReader::attr_inner(bool typed) {
  ws();
  Attr a;
  a.loc = loc_at(p_);
  char c = peek();
  if (c == '[') {
    a.kind = Attr::Kind::List;
    ++p_;
    if (eat(']')) return a;
    do a.items.push_back(attr(typed));
    while (eat(','));
    expect(']', "',' or ']' in a list");
  } else if (c == '{') {
    a.kind = Attr::Kind::Dict;
    ++p_;
    if (eat('}')) return a;
    do {
      ws();
      std::string key = peek() == '"' ? string_lit() : ident();
      a.keys.push_back(key);
      a.items.push_back(eat('=') ? attr(true) : Attr{});  // no value: a unit attribute
    } while (eat(','));
    expect('}', "',' or '}' in an attribute dictionary");
  } else if (c == '"') {
    a.kind = Attr::Kind::String;
    a.s = string_lit();
  } else if (c == '#' || c == '<') {
    size_t start = p_;
    if (c == '#') {
      ++p_;
      while (!at_end() && ident_char(peek())) ++p_;
    }
    if (peek() == '<') group();
    a.kind = Attr::Kind::Opaque;
    a.s = t_.substr(start, p_ - start);
  } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
    a = number();
    if (typed && peek_colon()) {
      ++p_;
      attr_type();
    }
  } else if (word_ahead("dense")) {
    p_ += 5;
    if (peek() != '<') error("expected '<' after 'dense'");
    a.kind = Attr::Kind::Dense;
    a.s = group();
    if (typed && peek_colon()) {
      ++p_;
      a.type = attr_type();
    }
  } else if (word_ahead("array")) {
    p_ += 5;
    if (peek() != '<') error("expected '<' after 'array'");
    ++p_;
    a.kind = Attr::Kind::DenseArray;
    std::string elem = ident();
    if (eat(':')) {
      do {
        ws();
        if (word_ahead("true") || word_ahead("false")) {
          Attr b;
          b.kind = Attr::Kind::Int;
          b.i = ident() == "true";
          a.items.push_back(b);
        } else {
          a.items.push_back(number());
        }
      } while (eat(','));
    }
    expect('>', "',' or '>' in an array<...>");
    a.s = elem;
  } else if (word_ahead("true") || word_ahead("false")) {
    a.kind = Attr::Kind::Bool;
    a.i = ident() == "true";
  } else if (word_ahead("tensor")) {
    a.kind = Attr::Kind::Type;
    a.type = tensor_type();
  } else if (ident_start(c)) {
    a.kind = Attr::Kind::Word;
    a.s = ident();
    ws();
    if (peek() == '<') a.s += "<" + group() + ">";  // a type such as complex<f32>
  } else if (c == '@') {
    a.kind = Attr::Kind::Word;
    a.s = "@" + symbol();
  } else if (c == '(') {
    a.kind = Attr::Kind::Opaque;  // a function type or a location
    size_t start = p_;
    group();
    if (eat_arrow()) {
      ws();
      if (peek() == '(') group();
      else attr_type();
    }
    a.s = t_.substr(start, p_ - start);
  } else {
    error(fmt::format("expected an attribute value, found {}", describe_here()));
  }
  return a;
}

void MlirReader::alias() {
  size_t start = p_;
  ++p_;
  while (!at_end() && ident_char(peek())) ++p_;
  std::string name = t_.substr(start, p_ - start);
  if (name.size() < 2) error_at(start, "expected an alias name after '#'");
  expect('=', "'=' after an alias name");
  if (word_ahead("loc")) {
    std::string inside = location();
    loc_aliases_[name] = inside;
  } else {
    attr(true);
  }
}

std::string MlirReader::location() {
  if (!word_ahead("loc")) return "";
  p_ += 3;
  ws();
  if (peek() != '(') error("expected '(' after 'loc'");
  size_t open = p_;
  group();
  size_t end = p_;
  p_ = open + 1;
  std::string name;
  ws();
  if (peek() == '"') {
    name = string_lit();
  } else if (peek() == '#') {
    size_t s = p_++;
    while (!at_end() && ident_char(peek())) ++p_;
    name = t_.substr(s, p_ - s);
  }
  p_ = end;
  return name;
}

}  // namespace kiln::frontend::stablehlo
