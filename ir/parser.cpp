#include "ir/parser.h"

#include <charconv>
#include <cstdlib>
#include <deque>
#include <limits>
#include <optional>

#include "ir/op_registry.h"

namespace kiln::ir {
namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c) || c == '.'; }

enum class Tok { Ident, Value, Number, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // unescaped for strings and quoted value names; "->" is one punct
  int line = 1;
  int col = 1;
};

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}
  size_t size() const { return text_.size(); }

  [[noreturn]] void error_at(int line, int col, const std::string& message) const {
    fail("{}:{}:{}: {}", source_, line, col, message);
  }

  Token next() {
    skip_space_and_comments();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    if (c == '%') {
      advance();
      t.kind = Tok::Value;
      if (peek() == '"') {
        t.text = string_body(t.line, t.col);
        if (t.text.empty()) error_at(t.line, t.col, "a value name cannot be empty");
      } else {
        while (pos_ < text_.size() && is_ident_char(text_[pos_])) t.text += advance();
        if (t.text.empty()) error_at(t.line, t.col, "expected a value name after '%'");
      }
    } else if (c == '"') {
      t.kind = Tok::String;
      t.text = string_body(t.line, t.col);
    } else if (is_digit(c) || (c == '-' && (is_digit(peek(1)) || is_ident_start(peek(1))))) {
      t.kind = Tok::Number;
      t.text += advance();
      while (pos_ < text_.size()) {
        char d = text_[pos_];
        bool exponent_sign = (d == '+' || d == '-') && (t.text.back() == 'e' || t.text.back() == 'E');
        if (!is_ident_char(d) && !exponent_sign) break;
        t.text += advance();
      }
    } else if (is_ident_start(c)) {
      t.kind = Tok::Ident;
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) t.text += advance();
    } else if (c == '-' && peek(1) == '>') {
      t.kind = Tok::Punct;
      t.text = "->";
      advance();
      advance();
    } else if (std::string_view("(){}[],:=@?").find(c) != std::string_view::npos) {
      t.kind = Tok::Punct;
      t.text = std::string(1, advance());
    } else {
      auto u = static_cast<unsigned char>(c);
      error_at(t.line, t.col, u >= 0x20 && u < 0x7f ? fmt::format("unexpected character '{}'", c)
                                                     : fmt::format("unexpected byte 0x{:02x}", u));
    }
    return t;
  }

 private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char advance() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else {
        break;
      }
    }
  }
  static int hex_value(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // At the opening quote; returns the unescaped contents.
  std::string string_body(int line, int col) {
    advance();
    std::string out;
    for (;;) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') error_at(line, col, "unterminated string");
      int esc_line = line_, esc_col = col_;
      char c = advance();
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) error_at(line, col, "unterminated string");
      char e = advance();
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'x': {
          int hi = hex_value(peek()), lo = hex_value(peek(1));
          if (hi < 0 || lo < 0) error_at(esc_line, esc_col, "\\x must be followed by two hex digits");
          advance();
          advance();
          out += static_cast<char>(hi * 16 + lo);
          break;
        }
        default: error_at(esc_line, esc_col, fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

bool looks_like_float(const std::string& number) {
  return number.find_first_of(".eEin") != std::string::npos;
}

// Names visible while parsing a graph: its own values defined so far, then enclosing graphs'.
struct Scope {
  Graph* graph;
  const Scope* parent;
  Value* find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (Value* v = s->graph->find_value(name)) return v;
    return nullptr;
  }
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : lex_(text, source) {}

  std::unique_ptr<Graph> parse() {
    auto g = std::make_unique<Graph>();
    graph(*g, nullptr);
    if (peek().kind != Tok::End) error(peek(), "expected end of input after the graph");
    return g;
  }

 private:
  // --- tokens ---------------------------------------------------------------

  const Token& peek(size_t ahead = 0) {
    while (buffer_.size() <= ahead) buffer_.push_back(lex_.next());
    return buffer_[ahead];
  }
  Token take() {
    peek();
    Token t = std::move(buffer_.front());
    buffer_.pop_front();
    return t;
  }
  bool is_punct(const Token& t, std::string_view p) const { return t.kind == Tok::Punct && t.text == p; }
  bool is_ident(const Token& t, std::string_view s) const { return t.kind == Tok::Ident && t.text == s; }
  bool accept(std::string_view punct) {
    if (!is_punct(peek(), punct)) return false;
    take();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of input";
      case Tok::Value: return fmt::format("value '%{}'", t.text);
      case Tok::String: return "a string";
      default: return fmt::format("'{}'", t.text);
    }
  }
  [[noreturn]] void error(const Token& at, const std::string& message) {
    lex_.error_at(at.line, at.col, message);
  }
  Token expect(std::string_view punct) {
    if (!is_punct(peek(), punct)) error(peek(), fmt::format("expected '{}', found {}", punct, describe(peek())));
    return take();
  }
  void expect_keyword(std::string_view word) {
    if (!is_ident(peek(), word)) error(peek(), fmt::format("expected '{}', found {}", word, describe(peek())));
    take();
  }
  // A graph, node, attribute or op name: an identifier or a string.
  Token name(std::string_view what) {
    if (peek().kind != Tok::Ident && peek().kind != Tok::String)
      error(peek(), fmt::format("expected {}, found {}", what, describe(peek())));
    return take();
  }
  Token value_token() {
    if (peek().kind != Tok::Value) error(peek(), fmt::format("expected a value, found {}", describe(peek())));
    return take();
  }

  // --- graphs -------------------------------------------------------------

  void graph(Graph& g, const Scope* parent) {
    Scope scope{&g, parent};
    expect_keyword("graph");
    g.set_name(name("a graph name").text);
    expect("(");
    if (!is_punct(peek(), ")")) {
      do {
        Token tok = value_token();
        check_new_name(scope, tok);
        Value* v;
        if (accept("=")) {
          expect_keyword("constant");
          v = g.add_value(tok.text);
          v->set_constant(tensor());
        } else if (accept(":")) {
          auto [dtype, shape] = type();
          v = g.add_value(tok.text, dtype, std::move(shape));
        } else {
          v = g.add_value(tok.text);
        }
        g.inputs().push_back(v);
      } while (accept(","));
    }
    expect(")");
    expect("->");
    expect("(");
    std::vector<Token> outputs;
    if (!is_punct(peek(), ")")) {
      do {
        if (is_ident(peek(), "_"))
          outputs.push_back(take());
        else
          outputs.push_back(value_token());
      } while (accept(","));
    }
    expect(")");
    expect("{");
    while (!is_punct(peek(), "}")) {
      if (peek().kind == Tok::End) error(peek(), "expected '}' at the end of the graph");
      statement(scope);
    }
    take();
    for (const Token& tok : outputs)
      g.outputs().push_back(tok.kind == Tok::Ident ? nullptr : lookup(scope, tok));
  }

  void check_new_name(const Scope& scope, const Token& tok) {
    if (scope.graph->find_value(tok.text)) error(tok, fmt::format("value '%{}' is already defined", tok.text));
    if (scope.parent && scope.parent->find(tok.text))
      error(tok, fmt::format("value '%{}' shadows a value of an enclosing graph", tok.text));
  }

  Value* lookup(const Scope& scope, const Token& tok) {
    Value* v = scope.find(tok.text);
    if (!v) error(tok, fmt::format("undefined value '%{}'", tok.text));
    return v;
  }

  void statement(const Scope& scope) {
    Graph& g = *scope.graph;
    struct Def {
      Token tok;
      std::optional<std::pair<DType, Shape>> type;
    };
    std::vector<Def> defs;
    if (peek().kind == Tok::Value) {
      do {
        Def d{value_token(), std::nullopt};
        check_new_name(scope, d.tok);
        for (const Def& other : defs)
          if (other.tok.text == d.tok.text)
            error(d.tok, fmt::format("value '%{}' is already defined", d.tok.text));
        if (accept(":")) d.type = type();
        defs.push_back(std::move(d));
      } while (accept(","));
      expect("=");
      if (is_ident(peek(), "constant")) {
        Token kw = take();
        if (defs.size() != 1) error(kw, "a constant defines one value");
        if (defs[0].type) error(kw, "a constant takes its type from its data; write no ': type'");
        g.add_value(defs[0].tok.text)->set_constant(tensor());
        return;
      }
    }
    Token op = name("an op name");
    if (!registry().find(op.text)) error(op, fmt::format("unknown op '{}'", op.text));
    expect("(");
    std::vector<Value*> inputs;
    if (!is_punct(peek(), ")")) {
      do {
        if (is_ident(peek(), "_")) {
          take();
          inputs.push_back(nullptr);
        } else {
          inputs.push_back(lookup(scope, value_token()));
        }
      } while (accept(","));
    }
    expect(")");
    AttributeMap attrs;
    if (is_punct(peek(), "{")) attrs = attributes(scope);
    std::optional<std::string> node_name;
    if (accept("@")) node_name = name("a node name").text;

    std::vector<std::string> output_names;
    for (const Def& d : defs) output_names.push_back(d.tok.text);
    try {
      Node* n = g.add_node(op.text, std::move(inputs), output_names, std::move(attrs),
                           node_name.value_or(""));
      if (node_name) n->set_name(*node_name);  // keeps an empty name empty
      for (size_t i = 0; i < defs.size(); ++i)
        if (defs[i].type) n->output(i)->set_type(defs[i].type->first, std::move(defs[i].type->second));
    } catch (const Error& e) {
      error(op, e.what());
    }
  }

  // --- types and tensors ----------------------------------------------------

  DType dtype() {
    if (peek().kind != Tok::Ident) error(peek(), fmt::format("expected a dtype, found {}", describe(peek())));
    Token t = take();
    std::optional<DType> d = parse_dtype(t.text);
    if (!d) error(t, fmt::format("unknown dtype '{}'", t.text));
    return *d;
  }

  std::pair<DType, Shape> type() {
    DType d = dtype();
    expect("[");
    std::vector<Dim> dims;
    if (!is_punct(peek(), "]")) {
      do {
        const Token& t = peek();
        if (is_punct(t, "?")) {
          dims.push_back(Dim::unknown());
        } else if (t.kind == Tok::Ident || t.kind == Tok::String) {
          dims.push_back(Dim::symbol(t.text));
        } else if (t.kind == Tok::Number && !looks_like_float(t.text) && t.text[0] != '-') {
          dims.emplace_back(integer(t));
        } else {
          error(t, fmt::format("expected a dim (a size, a name or '?'), found {}", describe(t)));
        }
        take();
      } while (accept(","));
    }
    expect("]");
    return {d, Shape(std::move(dims))};
  }

  int64_t integer(const Token& t) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec == std::errc::result_out_of_range) error(t, fmt::format("integer {} is out of range", t.text));
    if (ec != std::errc() || end != t.text.data() + t.text.size())
      error(t, fmt::format("invalid integer '{}'", t.text));
    return v;
  }

  template <class F>
  F floating(const Token& t) {
    F v = 0;
    const char* begin = t.text.data();
    const char* stop = begin + t.text.size();
    auto [end, ec] = std::from_chars(begin, stop, v);
    // Out of range means the text is beyond the largest finite value or below the smallest
    // subnormal; both round as a C++ literal would (to infinity or zero).
    if (ec == std::errc::result_out_of_range) {
      double d = std::strtod(t.text.c_str(), nullptr);
      return static_cast<F>(d);
    }
    if (ec != std::errc() || end != stop) error(t, fmt::format("invalid number '{}'", t.text));
    return v;
  }

  bool is_float_token(const Token& t) const {
    return t.kind == Tok::Number || is_ident(t, "inf") || is_ident(t, "nan");
  }

  Tensor tensor() {
    Token type_tok = peek();
    auto [d, shape] = type();
    if (!shape.is_static()) error(type_tok, fmt::format("tensor shape {} must be static", shape.str()));
    // Every element takes at least one character of text: a larger shape is refused before
    // anything is allocated (found by tests/fuzz/fuzz_ir_parser).
    uint64_t elements = 1;
    for (int64_t v : shape.values())
      if (elements != 0 && __builtin_mul_overflow(elements, static_cast<uint64_t>(v), &elements))
        elements = UINT64_MAX;
    if (elements > lex_.size())
      error(type_tok, fmt::format("tensor shape {} has more elements than the text could list",
                                  shape.str()));
    Tensor t;
    try {
      t = Tensor(d, shape.values());
    } catch (const Error& e) {
      error(type_tok, e.what());
    }
    if (is_ident(peek(), "hex")) {
      take();
      if (peek().kind != Tok::String) error(peek(), "expected a string of hex digits after 'hex'");
      Token bytes = take();
      if (bytes.text.size() != t.nbytes() * 2)
        error(bytes, fmt::format("{} tensor needs {} bytes, found {} hex digits", type_tok.text,
                                 t.nbytes(), bytes.text.size()));
      auto* out = static_cast<uint8_t*>(t.mutable_raw());
      for (size_t i = 0; i < t.nbytes(); ++i) {
        uint8_t byte = 0;
        for (char c : {bytes.text[2 * i], bytes.text[2 * i + 1]}) {
          int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
          if (v < 0) error(bytes, fmt::format("invalid hex digit '{}'", c));
          byte = static_cast<uint8_t>(byte * 16 + v);
        }
        out[i] = byte;
      }
      return t;
    }
    Token open = expect("[");
    int64_t count = 0;
    if (!is_punct(peek(), "]")) {
      do {
        if (count == t.numel())
          error(peek(), fmt::format("too many elements: the tensor has {}", t.numel()));
        element(t, count++);
      } while (accept(","));
    }
    expect("]");
    if (count != t.numel())
      error(open, fmt::format("expected {} elements, found {}", t.numel(), count));
    return t;
  }

  void element(Tensor& t, int64_t i) {
    Token tok = take();
    visit_dtype(t.dtype(), [&]<class S>() {
      S* out = static_cast<S*>(t.mutable_raw()) + i;
      if constexpr (std::is_same_v<S, bool>) {
        if (is_ident(tok, "true") || is_ident(tok, "false"))
          *out = tok.text == "true";
        else
          error(tok, fmt::format("expected true or false, found {}", describe(tok)));
      } else if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
        if (!is_float_token(tok)) error(tok, fmt::format("expected a number, found {}", describe(tok)));
        *out = floating<S>(tok);
      } else if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16>) {
        if (!is_float_token(tok)) error(tok, fmt::format("expected a number, found {}", describe(tok)));
        *out = S(floating<float>(tok));
      } else {
        if (tok.kind != Tok::Number || looks_like_float(tok.text))
          error(tok, fmt::format("expected an integer, found {}", describe(tok)));
        int64_t v = integer(tok);
        if (v < static_cast<int64_t>(std::numeric_limits<S>::lowest()) ||
            (sizeof(S) < 8 && v > static_cast<int64_t>(std::numeric_limits<S>::max())))
          error(tok, fmt::format("{} is out of range for {}", v, dtype_name(t.dtype())));
        *out = static_cast<S>(v);
      }
    });
  }

  // --- attributes -----------------------------------------------------------

  AttributeMap attributes(const Scope& scope) {
    expect("{");
    AttributeMap attrs;
    if (!is_punct(peek(), "}")) {
      do {
        Token key = name("an attribute name");
        if (attrs.count(key.text)) error(key, fmt::format("attribute '{}' is given twice", key.text));
        expect("=");
        attrs[key.text] = attribute(scope);
      } while (accept(","));
    }
    expect("}");
    return attrs;
  }

  Attribute attribute(const Scope& scope) {
    const Token& t = peek();
    if (t.kind == Tok::String) return take().text;
    if (is_float_token(t)) {
      Token n = take();
      if (n.kind == Tok::Number && !looks_like_float(n.text)) return integer(n);
      return floating<float>(n);
    }
    if (is_punct(t, "[")) return list();
    if (t.kind == Tok::Ident) {
      if (t.text == "graph") {
        auto g = std::make_shared<Graph>();
        graph(*g, &scope);
        return g;
      }
      if (t.text == "ints" || t.text == "floats" || t.text == "strings") {
        std::string kind = take().text;
        expect("[");
        expect("]");
        if (kind == "ints") return std::vector<int64_t>{};
        if (kind == "floats") return std::vector<float>{};
        return std::vector<std::string>{};
      }
      if (parse_dtype(t.text)) return tensor();
    }
    error(t, fmt::format("expected an attribute value, found {}", describe(t)));
  }

  Attribute list() {
    Token open = expect("[");
    if (is_punct(peek(), "]"))
      error(open, "an empty list needs its type: write ints[], floats[] or strings[]");
    std::vector<Token> items;
    do {
      if (peek().kind != Tok::String && !is_float_token(peek()))
        error(peek(), fmt::format("expected a number or a string, found {}", describe(peek())));
      items.push_back(take());
    } while (accept(","));
    expect("]");
    bool strings = items[0].kind == Tok::String;
    bool floats = false;
    for (const Token& i : items) {
      if ((i.kind == Tok::String) != strings) error(i, "a list holds numbers or strings, not both");
      floats = floats || (!strings && (i.kind != Tok::Number || looks_like_float(i.text)));
    }
    if (strings) {
      std::vector<std::string> out;
      for (Token& i : items) out.push_back(std::move(i.text));
      return out;
    }
    if (floats) {
      std::vector<float> out;
      for (const Token& i : items) out.push_back(floating<float>(i));
      return out;
    }
    std::vector<int64_t> out;
    for (const Token& i : items) out.push_back(integer(i));
    return out;
  }

  Lexer lex_;
  std::deque<Token> buffer_;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).parse();
}

}  // namespace kiln::ir
