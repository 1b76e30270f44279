#include "frontend/stablehlo/mlir_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "ir/error.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr int kMaxNesting = 200;       // brackets, regions and attributes inside each other
constexpr size_t kMaxRank = 64;        // dims of one tensor type (the importer's limit is lower)
constexpr int64_t kMaxResults = 4096;  // `%0:N = ...`

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}
bool value_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-'; }

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& file, const std::set<std::string>& known_ops)
      : t_(text), file_(file), known_ops_(known_ops) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < t_.size(); ++i)
      if (t_[i] == '\n') line_starts_.push_back(i + 1);
  }

  Module module() {
    Module m;
    m.file = file_;
    bool seen_module = false;
    for (;;) {
      ws();
      if (at_end()) break;
      if (peek() == '#') {
        alias();
      } else if (word_ahead("module")) {
        if (seen_module) error("a second module (one module a file)");
        seen_module = true;
        ident();
        ws();
        if (peek() == '@') symbol();
        ws();
        if (word_ahead("attributes")) {
          ident();
          attr(true);
        }
        expect('{', "'{' opening the module's body");
        for (;;) {
          ws();
          if (eat('}')) break;
          if (at_end()) error("the module's body ends early: expected '}'");
          if (peek() == '"') generic_into(m, op());
          else func_into(m);
        }
        location();
      } else if (word_ahead("func.func")) {
        func_into(m);
      } else if (peek() == '"') {
        generic_into(m, op());
      } else {
        error(fmt::format("expected 'module', 'func.func' or a #alias, found {}", describe_here()));
      }
    }
    if (m.funcs.empty()) fail("{}: no func.func in the text (expected StableHLO as jax.jit(f).lower(...).as_text() prints it)", file_);
    // Argument names given through location aliases (`loc(#loc3)`, #loc3 = loc("x")).
    for (auto& [name, f] : m.funcs)
      for (std::string& l : f.arg_locs)
        if (!l.empty() && l[0] == '#') {
          auto it = loc_aliases_.find(l);
          l = it == loc_aliases_.end() ? "" : it->second;
        }
    return m;
  }

 private:
  // ---- characters ----------------------------------------------------------------------
  bool at_end() const { return p_ >= t_.size(); }
  char peek(size_t k = 0) const { return p_ + k < t_.size() ? t_[p_ + k] : '\0'; }
  Loc loc_at(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    size_t line = static_cast<size_t>(it - line_starts_.begin());
    return Loc{static_cast<int>(line), static_cast<int>(pos - line_starts_[line - 1] + 1)};
  }
  Loc here() {
    ws();
    return loc_at(p_);
  }
  [[noreturn]] void error_at(size_t pos, const std::string& msg) const {
    Loc l = loc_at(std::min(pos, t_.size()));
    fail("{}:{}:{}: {}", file_, l.line, l.col, msg);
  }
  [[noreturn]] void error(const std::string& msg) const { error_at(p_, msg); }
  std::string describe_here() const {
    if (at_end()) return "the end of the text";
    size_t n = 0;
    while (p_ + n < t_.size() && n < 24 && !std::isspace(static_cast<unsigned char>(t_[p_ + n]))) ++n;
    if (n <= 1) return printable(t_[p_]);
    return fmt::format("'{}'", t_.substr(p_, n));
  }

  void ws() {
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
  bool eat(char c) {
    ws();
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  bool eat_arrow() {
    ws();
    if (peek() != '-' || peek(1) != '>') return false;
    p_ += 2;
    return true;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) error(fmt::format("expected {}, found {}", what, describe_here()));
  }
  // True when the next bare identifier is exactly `w`.
  bool word_ahead(const char* w) {
    ws();
    size_t n = std::strlen(w);
    return t_.compare(p_, n, w) == 0 && !ident_char(peek(n)) && peek(n) != '-';
  }
  std::string ident() {
    ws();
    if (!ident_start(peek())) error(fmt::format("expected a name, found {}", describe_here()));
    size_t start = p_;
    while (!at_end() && ident_char(peek())) ++p_;
    return t_.substr(start, p_ - start);
  }
  // %name, %name#N
  std::string value_name() {
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
  std::string symbol() {
    ws();
    if (peek() != '@') error(fmt::format("expected a symbol (@name), found {}", describe_here()));
    ++p_;
    if (peek() == '"') return string_lit();
    if (!ident_start(peek())) error("expected a name after '@'");
    size_t start = p_;
    while (!at_end() && (ident_char(peek()) || peek() == '-')) ++p_;
    return t_.substr(start, p_ - start);
  }
  std::string string_lit() {
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
  // Skips a bracketed group starting at the current character ('(', '[', '{' or '<'),
  // honouring strings and "->"; returns the text inside.
  std::string group() {
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

  // ---- numbers, types, attributes ---------------------------------------------------------
  Attr number() {
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

  TensorType tensor_type() {
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

  // A type in an attribute (`1 : i64`, `dense<...> : tensor<4xf32>`): tensor types are read,
  // other types only skipped.
  std::optional<TensorType> attr_type() {
    ws();
    if (word_ahead("tensor")) return tensor_type();
    if (peek() == '!') ++p_;
    ident();
    ws();
    if (peek() == '<') group();
    return std::nullopt;
  }

  Attr attr(bool typed) {
    if (++depth_ > kMaxNesting) error("attributes nested too deeply");
    Attr a = attr_inner(typed);
    --depth_;
    return a;
  }

  Attr attr_inner(bool typed) {
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
  bool peek_colon() {
    ws();
    return peek() == ':';
  }

  // `#name = value` at the top level: location aliases are kept for argument names.
  void alias() {
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

  // An optional `loc(...)`; returns the name a location such as loc("x") gives, "#locN" for a
  // reference to an alias, or "".
  std::string location() {
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

  static void merge(Op& op, const Attr& dict) {
    for (size_t k = 0; k < dict.keys.size(); ++k) op.attrs[dict.keys[k]] = dict.items[k];
  }

  // ---- ops --------------------------------------------------------------------------------
  // `(type, ...) -> (type, ...)`, `type -> type`, `type, type` or `type`.
  void signature(Op& op) {
    ws();
    if (peek() == '(') {
      ++p_;
      if (!eat(')')) {
        do op.operand_types.push_back(tensor_type());
        while (eat(','));
        expect(')', "',' or ')' in the operand types");
      }
      if (!eat_arrow()) error(fmt::format("expected '->' after the operand types, found {}", describe_here()));
      result_types(op);
      return;
    }
    std::vector<TensorType> types;
    do types.push_back(tensor_type());
    while (eat(','));
    if (eat_arrow()) {
      op.operand_types = types;
      result_types(op);
    } else {
      op.result_types = {types.back()};
      if (types.size() > 1) op.operand_types.assign(types.begin(), types.end() - 1);
    }
  }
  void result_types(Op& op) {
    if (eat('(')) {
      if (eat(')')) return;
      do op.result_types.push_back(tensor_type());
      while (eat(','));
      expect(')', "',' or ')' in the result types");
    } else {
      op.result_types.push_back(tensor_type());
    }
  }

  std::vector<std::string> operand_list(char close) {
    std::vector<std::string> out;
    if (eat(close)) return out;
    do out.push_back(value_name());
    while (eat(','));
    if (!eat(close)) error(fmt::format("expected ',' or '{}' in the operand list, found {}", close, describe_here()));
    return out;
  }

  Block region() {
    expect('{', "'{' opening a region");
    if (++depth_ > kMaxNesting) error("regions nested too deeply");
    Block b;
    ws();
    if (peek() == '^') {
      ++p_;
      ident();
      if (eat('(')) {
        if (!eat(')')) {
          do {
            std::string name = value_name();
            expect(':', "':' after a block argument");
            b.args.emplace_back(name, tensor_type());
            b.arg_locs.push_back(location());
          } while (eat(','));
          expect(')', "',' or ')' after the block arguments");
        }
      }
      expect(':', "':' after the block label");
    }
    for (;;) {
      ws();
      if (eat('}')) break;
      if (peek() == '^') error("regions of more than one block are not supported");
      if (at_end()) error("the text ends inside a region: expected '}'");
      b.ops.push_back(op());
    }
    --depth_;
    return b;
  }

  Op op() {
    Op op;
    ws();
    size_t start = p_;
    op.loc = loc_at(p_);
    if (peek() == '%') {
      do {
        std::string name = value_name();
        if (eat(':')) {
          Attr n = number();
          if (n.kind != Attr::Kind::Int || n.i < 1 || n.i > kMaxResults)
            error_at(start, fmt::format("bad result count (1 to {})", kMaxResults));
          for (int64_t k = 0; k < n.i; ++k) op.results.push_back(fmt::format("{}#{}", name, k));
        } else {
          op.results.push_back(name);
        }
      } while (eat(','));
      expect('=', "'=' after the results");
      ws();
      op.loc = loc_at(p_);
    }
    size_t name_pos = p_;
    if (peek() == '"') {
      op.name = string_lit();
      generic_rest(op);
    } else {
      op.name = ident();
      if (op.name == "return") op.name = "func.return";
      if (op.name == "call") op.name = "func.call";
      try {
        pretty_rest(op);
      } catch (const Error& e) {
        std::string msg = e.what();
        std::string prefix = fmt::format("{}:", file_);
        if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
        Loc l = loc_at(name_pos);
        if (!known_ops_.empty() && !known_ops_.count(op.name))
          fail("{}:{}:{}: unsupported op '{}'", file_, l.line, l.col, op.name);
        fail("{}:{}:{}: cannot read '{}': {}", file_, l.line, l.col, op.name, msg);
      }
    }
    location();
    return op;
  }

  void generic_rest(Op& op) {
    expect('(', "'(' opening the operands");
    op.operands = operand_list(')');
    ws();
    if (peek() == '[') error("ops with successor blocks are not supported");
    if (peek() == '<') {
      ++p_;
      Attr props = attr(true);
      if (props.kind != Attr::Kind::Dict) error_at(p_, "expected '<{' properties '}>'");
      merge(op, props);
      expect('>', "'>' closing the properties");
    }
    ws();
    if (peek() == '(') {
      ++p_;
      do op.regions.push_back(region());
      while (eat(','));
      expect(')', "')' after the regions");
    }
    ws();
    if (peek() == '{') {
      Attr d = attr(true);
      merge(op, d);
    }
    expect(':', "':' and the op's function type");
    signature(op);
    if (op.name == "func.call") {
      auto callee = op.attrs.find("callee");
      if (callee == op.attrs.end() || callee->second.kind != Attr::Kind::Word || callee->second.s.size() < 2 ||
          callee->second.s[0] != '@')
        error_at(p_, "func.call without a callee = @name");
      op.callee = callee->second.s.substr(1);
    }
  }

  // The generic form of a module and its functions: `"builtin.module"() ({ ... })` and
  // `"func.func"() <{sym_name = "main", function_type = (...) -> ...}> ({ ^bb0(...): ... })`.
  void generic_into(Module& m, const Op& op) {
    auto fail_at = [&](const std::string& msg) { fail("{}:{}:{}: {}", file_, op.loc.line, op.loc.col, msg); };
    if (op.name == "builtin.module") {
      if (op.regions.size() != 1) fail_at("builtin.module needs one region");
      for (const Op& inner : op.regions[0].ops) generic_into(m, inner);
      return;
    }
    if (op.name != "func.func") fail_at(fmt::format("expected a module or a function, found '{}'", op.name));
    auto name = op.attrs.find("sym_name");
    auto type = op.attrs.find("function_type");
    if (name == op.attrs.end() || name->second.kind != Attr::Kind::String) fail_at("func.func without a sym_name");
    if (type == op.attrs.end() || type->second.kind != Attr::Kind::Opaque) fail_at("func.func without a function_type");
    if (op.regions.size() != 1) fail_at("func.func needs one region (its body)");
    Func f;
    f.name = name->second.s;
    f.loc = op.loc;
    f.body = op.regions[0];
    f.args = f.body.args;
    f.arg_locs = f.body.arg_locs;
    f.arg_locs.resize(f.args.size());
    // The results: the types after the top-level "->" of the function type.
    const std::string& ft = type->second.s;
    size_t arrow = std::string::npos;
    int depth = 0;
    for (size_t k = 0; k + 1 < ft.size() && arrow == std::string::npos; ++k) {
      if (ft[k] == '(' || ft[k] == '<') ++depth;
      else if (ft[k] == ')' || (ft[k] == '>' && k > 0 && ft[k - 1] != '-')) --depth;
      else if (depth == 0 && ft[k] == '-' && ft[k + 1] == '>') arrow = k;
    }
    if (arrow == std::string::npos) fail_at("func.func: function_type without '->'");
    try {
      std::string results = ft.substr(arrow + 2);
      Parser sub(results, file_, known_ops_);
      Op holder;
      sub.result_types(holder);
      sub.ws();
      if (!sub.at_end()) sub.error("unexpected text after the result types");
      f.results = holder.result_types;
    } catch (const Error& e) {
      fail_at(fmt::format("func.func: cannot read the result types of its function_type: {}", e.what()));
    }
    if (m.funcs.count(f.name)) fail_at(fmt::format("function @{} is defined twice", f.name));
    m.funcs.emplace(f.name, std::move(f));
  }

  // The custom forms: operands, bare keywords, `name = value` pairs, groups, then `: types`.
  void pretty_rest(Op& op) {
    if (op.name == "func.return" || op.name == "stablehlo.return") {
      ws();
      if (peek() != '%') return;
      op.operands = operand_list_open();
      expect(':', "':' and the returned types");
      signature(op);
      return;
    }
    if (op.name == "func.call") {
      op.callee = symbol();
      expect('(', "'(' opening the call's operands");
      op.operands = operand_list(')');
      expect(':', "':' and the call's function type");
      signature(op);
      return;
    }
    std::vector<std::string> inits;
    for (;;) {
      ws();
      char c = peek();
      if (c == ':') break;
      if (at_end() || c == '}' || c == ')' || c == ']')
        error(fmt::format("expected ':' and the op's types, found {}", describe_here()));
      if (c == '%') {
        op.operands.push_back(value_name());
      } else if (c == ',') {
        ++p_;
      } else if (c == '(') {
        ++p_;
        for (;;) {
          ws();
          if (eat(')')) break;
          if (eat(',')) continue;
          if (peek() == '%') {
            op.operands.push_back(value_name());
          } else if (word_ahead("init")) {
            ident();
            expect(':', "':' after 'init'");
            inits.push_back(value_name());
          } else {
            error(fmt::format("expected a value or ')', found {}", describe_here()));
          }
        }
      } else if (c == '[') {
        slice_spec(op);
      } else if (c == '{') {
        Attr d = attr(true);
        merge(op, d);
      } else if (c == '<' && peek(1) == '{') {
        ++p_;
        Attr d = attr(true);
        merge(op, d);
        expect('>', "'>' closing the properties");
      } else if (word_ahead("dense") || word_ahead("array")) {
        op.attrs["value"] = attr(false);
      } else if (ident_start(c)) {
        std::string w = ident();
        ws();
        if (peek() == '=') {
          ++p_;
          op.attrs[w] = keyword_value();
        } else {
          op.words.push_back(w);
        }
      } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
        Attr n = number();
        op.words.push_back(n.kind == Attr::Kind::Int ? std::to_string(n.i) : fmt::format("{}", n.f));
      } else {
        error(fmt::format("unexpected {}", describe_here()));
      }
    }
    op.num_inits = static_cast<int>(inits.size());
    op.operands.insert(op.operands.end(), inits.begin(), inits.end());
    expect(':', "':'");
    signature(op);
    ws();
    if (word_ahead("reducer")) {
      ident();
      Block b;
      while (eat('(')) {
        do {
          std::string name = value_name();
          expect(':', "':' after a reducer argument");
          b.args.emplace_back(name, tensor_type());
        } while (eat(','));
        expect(')', "')' after the reducer arguments");
      }
      Block body = region();
      body.args = std::move(b.args);
      op.regions.push_back(std::move(body));
    }
  }
  std::vector<std::string> operand_list_open() {
    std::vector<std::string> out;
    do out.push_back(value_name());
    while (eat(','));
    return out;
  }

  // A value after `name =` in the pretty form; `[..] x [..]` (dot_general's dims) and
  // `[..]x[..]->[..]` (convolution's dim_numbers) become lists of lists.
  Attr keyword_value() {
    Attr first = attr(false);
    if (first.kind != Attr::Kind::List) return first;
    ws();
    if (!(peek() == 'x' && !ident_char(peek(1)))) return first;
    Attr joined;
    joined.kind = Attr::Kind::List;
    joined.loc = first.loc;
    joined.s = "joined";
    joined.items.push_back(first);
    ++p_;
    joined.items.push_back(attr(false));
    if (eat_arrow()) joined.items.push_back(attr(false));
    return joined;
  }

  // stablehlo.slice's `[0:2, 1:3:2]`.
  void slice_spec(Op& op) {
    expect('[', "'['");
    if (eat(']')) return;
    do {
      std::vector<int64_t> dim;
      for (;;) {
        Attr n = number();
        if (n.kind != Attr::Kind::Int) error_at(p_, "slice bounds must be integers");
        dim.push_back(n.i);
        if (dim.size() == 3 || !eat(':')) break;
      }
      if (dim.size() < 2) error("expected start:limit or start:limit:stride in a slice");
      op.slice.push_back(dim);
    } while (eat(','));
    expect(']', "',' or ']' in the slice");
  }

  // ---- functions --------------------------------------------------------------------------
  void func_into(Module& m) {
    ws();
    if (!word_ahead("func.func")) {
      error(fmt::format("expected 'func.func', found {}", describe_here()));
    }
    Func f;
    f.loc = loc_at(p_);
    ident();
    while (word_ahead("public") || word_ahead("private") || word_ahead("nested")) ident();
    f.name = symbol();
    expect('(', "'(' opening the arguments");
    if (!eat(')')) {
      do {
        std::string name = value_name();
        expect(':', "':' after an argument");
        TensorType type = tensor_type();
        ws();
        if (peek() == '{') attr(true);
        f.args.emplace_back(name, type);
        f.arg_locs.push_back(location());
      } while (eat(','));
      expect(')', "',' or ')' after the arguments");
    }
    if (eat_arrow()) {
      if (eat('(')) {
        if (!eat(')')) {
          do {
            f.results.push_back(tensor_type());
            ws();
            if (peek() == '{') attr(true);
          } while (eat(','));
          expect(')', "',' or ')' after the result types");
        }
      } else {
        f.results.push_back(tensor_type());  // without parentheses a result has no attributes
      }
    }
    if (word_ahead("attributes")) {
      ident();
      attr(true);
    }
    f.body = region();
    location();
    if (m.funcs.count(f.name)) error_at(0, fmt::format("function @{} is defined twice", f.name));
    m.funcs.emplace(f.name, std::move(f));
  }

  const std::string& t_;
  std::string file_;
  size_t p_ = 0;
  int depth_ = 0;
  std::vector<size_t> line_starts_;
  std::map<std::string, std::string> loc_aliases_;
  const std::set<std::string>& known_ops_;
};

}  // namespace

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : dims) s += fmt::format("{}x", d);
  static const std::pair<ir::DType, const char*> names[] = {
      {ir::DType::F32, "f32"}, {ir::DType::F64, "f64"}, {ir::DType::F16, "f16"}, {ir::DType::BF16, "bf16"},
      {ir::DType::Bool, "i1"}, {ir::DType::I8, "i8"},   {ir::DType::I16, "i16"}, {ir::DType::I32, "i32"},
      {ir::DType::I64, "i64"}, {ir::DType::U8, "ui8"},  {ir::DType::U16, "ui16"}, {ir::DType::U32, "ui32"},
      {ir::DType::U64, "ui64"}};
  for (const auto& [dt, n] : names)
    if (dt == dtype) return s + n + ">";
  return s + std::string(ir::dtype_name(dtype)) + ">";
}

std::optional<ir::DType> element_type(const std::string& w) {
  static const std::pair<const char*, ir::DType> names[] = {
      {"f32", ir::DType::F32},  {"f64", ir::DType::F64},   {"f16", ir::DType::F16},   {"bf16", ir::DType::BF16},
      {"i1", ir::DType::Bool},  {"i8", ir::DType::I8},     {"i16", ir::DType::I16},   {"i32", ir::DType::I32},
      {"i64", ir::DType::I64},  {"si8", ir::DType::I8},    {"si16", ir::DType::I16},  {"si32", ir::DType::I32},
      {"si64", ir::DType::I64}, {"ui8", ir::DType::U8},    {"ui16", ir::DType::U16},  {"ui32", ir::DType::U32},
      {"ui64", ir::DType::U64}};
  for (const auto& [n, dt] : names)
    if (w == n) return dt;
  return std::nullopt;
}

const Attr* Attr::find(const std::string& key) const {
  for (size_t k = 0; k < keys.size() && k < items.size(); ++k)
    if (keys[k] == key) return &items[k];
  return nullptr;
}

std::string Attr::describe() const {
  switch (kind) {
    case Kind::Int: return std::to_string(i);
    case Kind::Float: return fmt::format("{}", f);
    case Kind::Bool: return i ? "true" : "false";
    case Kind::String: return fmt::format("\"{}\"", s);
    case Kind::Word:
    case Kind::Opaque: return s;
    case Kind::Dense: return "dense<...>";
    case Kind::DenseArray: return "array<...>";
    case Kind::List: return "[...]";
    case Kind::Dict: return "{...}";
    case Kind::Type: return type ? type->str() : "a type";
  }
  return "?";
}

Module parse_module(const std::string& text, const std::string& file, const std::set<std::string>& known_ops) {
  return Parser(text, file, known_ops).module();
}

}  // namespace kiln::frontend::stablehlo
