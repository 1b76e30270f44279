#include "frontend/stablehlo/mlir_text.h"

#include "frontend/stablehlo/mlir_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "ir/error.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr int64_t kMaxResults = 4096;  // `%0:N = ...`

// The grammar: modules, functions, regions and ops (pretty and generic forms).
class Parser : MlirReader {
 public:
  Parser(const std::string& text, const std::string& file, const std::set<std::string>& known_ops)
      : MlirReader(text, file), known_ops_(known_ops) {}

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
  // ---- ops --------------------------------------------------------------------------------
  static void merge(Op& op, const Attr& dict) {
    for (size_t k = 0; k < dict.keys.size(); ++k) op.attrs[dict.keys[k]] = dict.items[k];
  }

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
