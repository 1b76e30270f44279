#include "frontend/torch_export/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "ir/error.h"

namespace kiln::frontend::torch_export {

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

std::string_view json_kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::Null: return "null";
    case JsonKind::Bool: return "bool";
    case JsonKind::Number: return "number";
    case JsonKind::String: return "string";
    case JsonKind::Array: return "array";
    case JsonKind::Object: return "object";
  }
  return "?";
}

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& where, const JsonLimits& limits)
      : text_(text), where_(where), limits_(limits) {
    // The parser recurses once per level: a bound of its own keeps the stack safe whatever
    // the caller asks for.
    limits_.max_depth = std::min(limits_.max_depth, 512);
  }

  JsonValue document() {
    if (text_.size() > limits_.max_bytes)
      fail("{}: {} bytes of JSON, over the limit of {}", where_, text_.size(), limits_.max_bytes);
    if (text_.size() >= 3 && text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 BOM
    JsonValue v;
    value(v, 0);
    skip_space();
    if (pos_ != text_.size()) error("unexpected '{}' after the document", printable(text_[pos_]));
    return v;
  }

 private:
  template <class... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    fail("{}: line {}, column {}: {}", where_, line, column, fmt::format(format, std::forward<Args>(args)...));
  }

  static std::string printable(char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool take(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void value(JsonValue& out, int depth) {
    if (++count_ > limits_.max_values) error("more than {} values in the document", limits_.max_values);
    skip_space();
    if (pos_ >= text_.size()) error("unexpected end of the document");
    char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= limits_.max_depth) error("nesting deeper than {}", limits_.max_depth);
      if (c == '{')
        object(out, depth + 1);
      else
        array(out, depth + 1);
    } else if (c == '"') {
      out.kind_ = JsonKind::String;
      string(out.s_);
    } else if (take("true")) {
      out.kind_ = JsonKind::Bool;
      out.b_ = true;
    } else if (take("false")) {
      out.kind_ = JsonKind::Bool;
    } else if (take("null")) {
      out.kind_ = JsonKind::Null;
    } else if (take("NaN")) {
      out.kind_ = JsonKind::Number;
      out.number_ = std::numeric_limits<double>::quiet_NaN();
    } else if (take("Infinity")) {
      out.kind_ = JsonKind::Number;
      out.number_ = std::numeric_limits<double>::infinity();
    } else if (take("-Infinity")) {
      out.kind_ = JsonKind::Number;
      out.number_ = -std::numeric_limits<double>::infinity();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(out);
    } else {
      error("unexpected '{}'", printable(c));
    }
  }

  void object(JsonValue& out, int depth) {
    out.kind_ = JsonKind::Object;
    ++pos_;  // '{'
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return;
    }
    std::set<std::string, std::less<>> keys;
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') error("expected a string key");
      std::string key;
      size_t key_start = pos_;
      string(key);
      if (!keys.insert(key).second) {
        pos_ = key_start;
        error("duplicate key '{}'", key);
      }
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') error("expected ':' after key '{}'", key);
      ++pos_;
      out.members_.emplace_back(std::move(key), JsonValue{});
      value(out.members_.back().second, depth);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return;
      }
      error("expected ',' or '}}' in an object");
    }
  }

  void array(JsonValue& out, int depth) {
    out.kind_ = JsonKind::Array;
    ++pos_;  // '['
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return;
    }
    while (true) {
      out.items_.emplace_back();
      value(out.items_.back(), depth);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return;
      }
      error("expected ',' or ']' in an array");
    }
  }

  void number(JsonValue& out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (text_[pos_] == '-') ++pos_;
    size_t int_start = pos_;
    size_t n = digits();
    if (n == 0) error("expected digits in a number");
    if (n > 1 && text_[int_start] == '0') error("a number with a leading zero");
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) error("expected digits after '.'");
      integral = false;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) error("expected digits in an exponent");
      integral = false;
    }
    std::string_view lexeme = text_.substr(start, pos_ - start);
    out.kind_ = JsonKind::Number;
    const char* first = lexeme.data();
    const char* last = lexeme.data() + lexeme.size();
    if (integral) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(first, last, v);
      if (ec == std::errc() && ptr == last) {
        out.is_int_ = true;
        out.int_ = v;
        out.number_ = static_cast<double>(v);
        return;
      }
    }
    double d = 0;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      // Overflow to infinity, underflow to zero, as Python reads them.
      bool negative = lexeme[0] == '-';
      size_t e = lexeme.find_first_of("eE");
      bool tiny = e != std::string_view::npos && lexeme[e + 1] == '-';
      d = tiny ? (negative ? -0.0 : 0.0)
               : (negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    } else if (ec != std::errc() || ptr != last) {
      error("invalid number '{}'", lexeme);
    }
    out.number_ = d;
  }

  unsigned hex4() {
    if (text_.size() - pos_ < 4) error("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        error("invalid hex digit '{}' in a \\u escape", printable(c));
    }
    return v;
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // One UTF-8 sequence starting at pos_, checked (no overlongs, surrogates or > U+10FFFF).
  void utf8(std::string& out) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text_[i]); };
    unsigned char b0 = byte(pos_);
    int n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
    if (n == 0 || b0 > 0xF4) error("invalid UTF-8 byte 0x{:02x} in a string", b0);
    if (text_.size() - pos_ < static_cast<size_t>(n)) error("truncated UTF-8 sequence in a string");
    uint32_t cp = b0 & (0x7F >> n);
    for (int i = 1; i < n; ++i) {
      unsigned char b = byte(pos_ + i);
      if ((b & 0xC0) != 0x80) error("invalid UTF-8 sequence in a string");
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      error("invalid UTF-8 sequence in a string");
    out.append(text_.substr(pos_, n));
    pos_ += n;
  }

  void string(std::string& out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= text_.size()) error("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (static_cast<unsigned char>(c) < 0x20) error("control character 0x{:02x} in a string", static_cast<int>(c));
      if (static_cast<unsigned char>(c) >= 0x80) {
        utf8(out);
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      if (++pos_ >= text_.size()) error("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) error("unpaired low surrogate \\u{:04x}", cp);
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!take("\\u")) error("high surrogate \\u{:04x} without its low surrogate", cp);
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) error("high surrogate \\u{:04x} followed by \\u{:04x}", cp, lo);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: --pos_; error("invalid escape '\\{}'", printable(e));
      }
    }
  }

  std::string_view text_;
  const std::string& where_;
  JsonLimits limits_;
  size_t pos_ = 0;
  uint64_t count_ = 0;
};

JsonValue parse_json(std::string_view text, const std::string& where, const JsonLimits& limits) {
  return JsonParser(text, where, limits).document();
}

}  // namespace kiln::frontend::torch_export
