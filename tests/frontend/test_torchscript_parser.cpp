// The TorchScript code parser: tokens, each construct python_print.cpp writes, Python's
// precedence, locations, error messages, limits, and every code/**.py file of the real archives
// in data/torchscript_code.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "frontend/torchscript/ts_lexer.h"
#include "frontend/torchscript/ts_parser.h"
#include "ir/error.h"

namespace ts = kiln::frontend::torchscript;
using ts::ExprKind;
using ts::StmtKind;

namespace {

// ---- A compact S-expression dump of the tree, for comparing whole shapes ----

const char* op_name(ts::Op op) {
  switch (op) {
    case ts::Op::Neg: return "neg";
    case ts::Op::Pos: return "pos";
    case ts::Op::Not: return "not";
    case ts::Op::Invert: return "~";
    case ts::Op::Add: return "+";
    case ts::Op::Sub: return "-";
    case ts::Op::Mul: return "*";
    case ts::Op::Div: return "/";
    case ts::Op::FloorDiv: return "//";
    case ts::Op::Mod: return "%";
    case ts::Op::Pow: return "**";
    case ts::Op::MatMul: return "@";
    case ts::Op::BitAnd: return "&";
    case ts::Op::BitOr: return "|";
    case ts::Op::BitXor: return "^";
    case ts::Op::LShift: return "<<";
    case ts::Op::RShift: return ">>";
    case ts::Op::Eq: return "==";
    case ts::Op::Ne: return "!=";
    case ts::Op::Lt: return "<";
    case ts::Op::Le: return "<=";
    case ts::Op::Gt: return ">";
    case ts::Op::Ge: return ">=";
    case ts::Op::Is: return "is";
    case ts::Op::IsNot: return "is-not";
    case ts::Op::In: return "in";
    case ts::Op::NotIn: return "not-in";
    case ts::Op::And: return "and";
    case ts::Op::Or: return "or";
  }
  return "?";
}

std::string dump(const ts::Expr* e);

std::string dump_list(const char* head, const ts::Expr& e, size_t from = 0) {
  std::string out = std::string("(") + head;
  for (size_t i = from; i < e.args.size(); ++i) out += " " + dump(e.args[i].get());
  for (const ts::Keyword& k : e.keywords) out += " " + k.name + "=" + dump(k.value.get());
  return out + ")";
}

std::string dump(const ts::Expr* e) {
  if (e == nullptr) return "_";
  switch (e->kind) {
    case ExprKind::Name: return e->name;
    case ExprKind::Int: return std::to_string(e->int_value);
    case ExprKind::Float: return fmt::format("{}f", e->float_value);
    case ExprKind::String: return "\"" + e->name + "\"";
    case ExprKind::None: return "None";
    case ExprKind::Bool: return e->int_value ? "True" : "False";
    case ExprKind::Attribute: return "(. " + dump(e->args[0].get()) + " " + e->name + ")";
    case ExprKind::Call: return dump_list("call", *e);
    case ExprKind::Subscript: return dump_list("[]", *e);
    case ExprKind::Slice: return dump_list(":", *e);
    case ExprKind::Tuple: return dump_list("tuple", *e);
    case ExprKind::List: return dump_list("list", *e);
    case ExprKind::Dict: return dump_list("dict", *e);
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Compare:
    case ExprKind::BoolOp: return dump_list(op_name(e->op), *e);
    case ExprKind::IfExp: return dump_list("ifexp", *e);
  }
  return "?";
}

void dump_block(const ts::Block& block, int level, std::string& out);

void dump_stmt(const ts::Stmt& s, int level, std::string& out) {
  std::string pad(2 * level, ' ');
  auto targets = [&] {
    std::string t;
    for (const auto& e : s.targets) t += dump(e.get()) + " = ";
    return t;
  };
  switch (s.kind) {
    case StmtKind::Expr: out += pad + "expr " + dump(s.value.get()) + "\n"; return;
    case StmtKind::Assign: out += pad + "assign " + targets() + dump(s.value.get()) + "\n"; return;
    case StmtKind::AnnAssign:
      out += pad + "ann " + dump(s.targets[0].get()) + " : " + dump(s.annotation.get()) + " = " +
             dump(s.value.get()) + "\n";
      return;
    case StmtKind::AugAssign:
      out += pad + "aug " + dump(s.targets[0].get()) + " " + op_name(s.aug_op) + "= " + dump(s.value.get()) +
             "\n";
      return;
    case StmtKind::Return: out += pad + "return " + dump(s.value.get()) + "\n"; return;
    case StmtKind::Pass: out += pad + "pass\n"; return;
    case StmtKind::Break: out += pad + "break\n"; return;
    case StmtKind::Continue: out += pad + "continue\n"; return;
    case StmtKind::Raise: out += pad + "raise " + dump(s.value.get()) + "\n"; return;
    case StmtKind::Assert:
      out += pad + "assert " + dump(s.value.get()) + " " + dump(s.message.get()) + "\n";
      return;
    case StmtKind::Import: out += pad + "import\n"; return;
    case StmtKind::If:
    case StmtKind::While:
      out += pad + (s.kind == StmtKind::If ? "if " : "while ") + dump(s.value.get()) + "\n";
      break;
    case StmtKind::For:
      out += pad + "for " + dump(s.targets[0].get()) + " in " + dump(s.value.get()) + "\n";
      break;
    case StmtKind::With:
      out += pad + "with " + dump(s.value.get()) +
             (s.targets.empty() ? "" : " as " + dump(s.targets[0].get())) + "\n";
      break;
    case StmtKind::Def: {
      std::string params;
      for (const ts::Param& p : s.def->params) {
        params += (params.empty() ? "" : ", ") + p.name;
        if (p.annotation) params += ": " + dump(p.annotation.get());
        if (p.default_value) params += " = " + dump(p.default_value.get());
      }
      out += pad + "def " + s.def->name + "(" + params + ") -> " + dump(s.def->returns.get()) + "\n";
      dump_block(s.def->body, level + 1, out);
      return;
    }
    case StmtKind::Class: {
      std::string bases;
      for (const auto& b : s.cls->bases) bases += (bases.empty() ? "" : ", ") + dump(b.get());
      out += pad + "class " + s.cls->name + "(" + bases + ")\n";
      dump_block(s.cls->body, level + 1, out);
      return;
    }
  }
  dump_block(s.body, level + 1, out);
  if (!s.orelse.empty()) {
    out += pad + "else\n";
    dump_block(s.orelse, level + 1, out);
  }
}

void dump_block(const ts::Block& block, int level, std::string& out) {
  for (const auto& s : block) dump_stmt(*s, level, out);
}

ts::Module parse(const std::string& text) { return ts::parse_source(text, "m.py"); }

std::string dump_module(const std::string& text) {
  std::string out;
  dump_block(parse(text).body, 0, out);
  return out;
}

// The dump of the one expression in `x = EXPR`.
std::string expr(const std::string& text) {
  ts::Module m = parse("x = " + text + "\n");
  REQUIRE(m.body.size() == 1);
  REQUIRE(m.body[0]->kind == StmtKind::Assign);
  return dump(m.body[0]->value.get());
}

// The message of the error parsing `text` throws, or "" when it parses.
std::string error_of(const std::string& text, const ts::ParseLimits& limits = {}) {
  try {
    ts::parse_source(text, "m.py", limits);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

std::vector<ts::Token> tokens(const std::string& text) {
  ts::Lexer lexer(text, "m.py");
  std::vector<ts::Token> out;
  while (true) {
    out.push_back(lexer.next());
    if (out.back().kind == ts::TokenKind::End || out.size() > 10000) return out;
  }
}

// Tokens as one line: names and ops as written, numbers and strings marked, layout tokens as
// NL, IN, DE.
std::string token_line(const std::string& text) {
  std::string out;
  for (const ts::Token& t : tokens(text)) {
    if (!out.empty()) out += ' ';
    switch (t.kind) {
      case ts::TokenKind::Name:
      case ts::TokenKind::Keyword:
      case ts::TokenKind::Op: out += t.text; break;
      case ts::TokenKind::Int: out += "i" + std::to_string(t.int_value); break;
      case ts::TokenKind::Float: out += fmt::format("f{}", t.float_value); break;
      case ts::TokenKind::String: out += "s\"" + t.text + "\""; break;
      case ts::TokenKind::Newline: out += "NL"; break;
      case ts::TokenKind::Indent: out += "IN"; break;
      case ts::TokenKind::Dedent: out += "DE"; break;
      case ts::TokenKind::End: out += "END"; break;
    }
  }
  return out;
}

std::string string_value(const std::string& literal) {
  auto t = tokens(literal);
  REQUIRE(t[0].kind == ts::TokenKind::String);
  return t[0].text;
}

}  // namespace

// ---- Tokens ----

TEST_CASE("lexer: indentation gives indent and dedent, blank and comment lines give nothing") {
  CHECK(token_line("class A:\n  x : int\n\n  # note\n  def f(self):\n    pass\ny = 1\n") ==
        "class A : NL IN x : int NL def f ( self ) : NL IN pass NL DE DE y = i1 NL END");
  // A file without a final line break still ends its line and closes its blocks.
  CHECK(token_line("if a:\n  b") == "if a : NL IN b NL DE END");
  CHECK(token_line("") == "END");
  CHECK(token_line("\n\n  \n# only a comment") == "END");
  CHECK(token_line("a\r\nb\r\n") == "a NL b NL END");
}

TEST_CASE("lexer: brackets and backslashes join lines") {
  CHECK(token_line("f(a,\n    b)\n") == "f ( a , b ) NL END");
  CHECK(token_line("x = [1,\n\n  2]  # c\n") == "x = [ i1 , i2 ] NL END");
  CHECK(token_line("def f(x: int,\n    y: int) -> int:\n  return x\n") ==
        "def f ( x : int , y : int ) -> int : NL IN return x NL DE END");
  CHECK(token_line("x = 1 + \\\n  2\n") == "x = i1 + i2 NL END");
}

TEST_CASE("lexer: numbers") {
  CHECK(token_line("0 7 123 0x1F 0o17 0b101 9223372036854775807") ==
        "i0 i7 i123 i31 i15 i5 i9223372036854775807 NL END");
  auto t = tokens("1.0000000000000001e-05 0. 0.10000000000000001 .5 1e3 2E+2 1.e-2 1e-400 1e400");
  CHECK(t[0].kind == ts::TokenKind::Float);
  CHECK(t[0].float_value == 1.0000000000000001e-05);
  CHECK(t[0].text == "1.0000000000000001e-05");
  CHECK(t[1].float_value == 0.0);
  CHECK(t[2].float_value == 0.1);
  CHECK(t[3].float_value == 0.5);
  CHECK(t[4].float_value == 1000.0);
  CHECK(t[5].float_value == 200.0);
  CHECK(t[6].float_value == 0.01);
  CHECK(t[7].float_value == 0.0);  // as Python: too small is 0, too large is inf
  CHECK(t[8].float_value == std::numeric_limits<double>::infinity());
  // inf and nan are names (python_print writes them bare).
  CHECK(token_line("-inf nan") == "- inf nan NL END");
}

TEST_CASE("lexer: strings and their escapes") {
  CHECK(string_value("\"abc\"") == "abc");
  CHECK(string_value("'a\"b'") == "a\"b");
  CHECK(string_value(R"("key\'s \"v\" \\ \n\t\r\a\b\f\v")") == "key's \"v\" \\ \n\t\r\a\b\f\v");
  CHECK(string_value(R"("\x41\101\0\303\251")") == std::string("AA\0\xc3\xa9", 5));
  CHECK(string_value(R"("\u00e9\U0001F600")") == "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(string_value(R"("\d")") == "\\d");  // unknown escapes stay, as in Python
  CHECK(string_value(R"(r"\n\"")") == "\\n\\\"");
  CHECK(string_value("\"\"\"a\n'b'\"\"\"") == "a\n'b'");
  CHECK(string_value("'''x''y'''") == "x''y");
  CHECK(string_value("\"a\\\nb\"") == "ab");
  CHECK(string_value("\"caf\xc3\xa9\"") == "caf\xc3\xa9");
  // Adjacent literals are one string.
  CHECK(expr("\"a\" 'b'") == "\"ab\"");
}

TEST_CASE("lexer: errors") {
  CHECK(error_of("if a:\n\tb\n") == "m.py:2:1: found a tab in the indentation, expected spaces");
  CHECK(error_of("if a:\n    b\n  c\n") ==
        "m.py:3:3: found an indentation of 2 spaces, expected 0 spaces, as an enclosing block");
  CHECK(error_of("x = \"abc\n") ==
        "m.py:1:9: found the end of the line, expected the closing quote of the string at 1:5");
  CHECK(error_of("x = '''abc") ==
        "m.py:1:11: found the end of the file, expected the closing quote of the string at 1:5");
  CHECK(error_of("x = f(1,\n") ==
        "m.py:2:1: found the end of the file, expected a closing bracket for the '(' at 1:6");
  CHECK(error_of("x = 1 \\ 2\n") ==
        "m.py:1:7: found '\\', expected a line break after a line-continuation backslash");
  CHECK(error_of("x = 012\n") == "m.py:1:5: found '012', expected a decimal number without leading zeros");
  CHECK(error_of("x = 9223372036854775808\n") ==
        "m.py:1:5: found integer literal 9223372036854775808, expected a value below 2**63");
  CHECK(error_of("x = 0x8000000000000000\n") ==
        "m.py:1:5: found integer literal 0x8000000000000000, expected a value below 2**63");
  CHECK(error_of("x = 1j\n") ==
        "m.py:1:6: found '1j', expected a number (without suffixes or digit separators)");
  CHECK(error_of("x = 1e+\n") == "m.py:1:8: found '1e+', expected the digits of an exponent");
  CHECK(error_of("x = 0x\n") == "m.py:1:7: found '0x', expected digits after the base prefix");
  CHECK(error_of("x = $\n") == "m.py:1:5: found '$', expected a name, a number, a string or an operator");
  CHECK(error_of("x = \xc3\xa9\n") ==
        "m.py:1:5: found byte 0xc3, expected ASCII outside strings and comments");
  CHECK(error_of(std::string("x = \"a\0\"\n", 9)) == "m.py:1:7: found byte 0x00, expected text");
  CHECK(error_of(R"(x = "\x4")") == "m.py:1:6: found escape '\\x4\"', expected two hex digits after \\x");
  CHECK(error_of(R"(x = "\ud800")") ==
        "m.py:1:6: found escape '\\ud800', expected a unicode code point that is not a surrogate");
  CHECK(error_of(R"(x = "\777")") == "m.py:1:6: found escape '\\777', expected an octal escape up to \\377");
  CHECK(error_of("x = b\"a\"\n") == "m.py:1:5: found a bytes literal, expected a string");
  CHECK(error_of("x = f\"a\"\n") == "m.py:1:5: found an f-string, expected a plain string");
}

// ---- Expressions ----

TEST_CASE("expressions: atoms and literals") {
  CHECK(expr("a") == "a");
  CHECK(expr("3") == "3");
  CHECK(expr("-1") == "(neg 1)");
  CHECK(expr("1.5") == "1.5f");
  CHECK(expr("None") == "None");
  CHECK(expr("True") == "True");
  CHECK(expr("False") == "False");
  CHECK(expr("()") == "(tuple)");
  CHECK(expr("(a)") == "a");
  CHECK(expr("(a,)") == "(tuple a)");
  CHECK(expr("(a, b, )") == "(tuple a b)");
  CHECK(expr("a, b") == "(tuple a b)");
  CHECK(expr("[]") == "(list)");
  CHECK(expr("[1, 2, ]") == "(list 1 2)");
  CHECK(expr("{}") == "(dict)");
  CHECK(expr("{\"a\": 1, \"b\": x}") == "(dict \"a\" 1 \"b\" x)");
  CHECK(expr("CONSTANTS.c0") == "(. CONSTANTS c0)");
  CHECK(expr("__torch__.torch.nn.modules.conv.___torch_mangle_0.Conv2d") ==
        "(. (. (. (. (. (. __torch__ torch) nn) modules) conv) ___torch_mangle_0) Conv2d)");
}

TEST_CASE("expressions: calls and subscripts") {
  CHECK(expr("f()") == "(call f)");
  CHECK(expr("(conv1).forward(x, )") == "(call (. conv1 forward) x)");
  CHECK(expr("torch.zeros([1, n, 32], dtype=_2, layout=None, device=_3)") ==
        "(call (. torch zeros) (list 1 n 32) dtype=_2 layout=None device=_3)");
  CHECK(expr("torch.div(a, b, rounding_mode=\"trunc\", )") ==
        "(call (. torch div) a b rounding_mode=\"trunc\")");
  CHECK(expr("f(a)(b)") == "(call (call f a) b)");
  CHECK(expr("x[0]") == "([] x 0)");
  CHECK(expr("(hx1)[0]") == "([] hx1 0)");
  CHECK(expr("x[:, 1:2]") == "([] x (tuple (: _ _ _) (: 1 2 _)))");
  CHECK(expr("x[::2]") == "([] x (: _ _ 2))");
  CHECK(expr("x[a:]") == "([] x (: a _ _))");
  CHECK(expr("x[1:-1:k]") == "([] x (: 1 (neg 1) k))");
  CHECK(expr("x[0,]") == "([] x (tuple 0))");
  CHECK(expr("d[\"k\"][0]") == "([] ([] d \"k\") 0)");
  CHECK(expr("annotate(List[int], [])") == "(call annotate ([] List int) (list))");
  CHECK(expr("unchecked_cast(Tuple[Tensor, Tensor], hx)") ==
        "(call unchecked_cast ([] Tuple (tuple Tensor Tensor)) hx)");
  CHECK(expr("uninitialized(Optional[Tensor])") == "(call uninitialized ([] Optional Tensor))");
  CHECK(expr("getattr(self, \"0\")") == "(call getattr self \"0\")");
}

TEST_CASE("expressions: Python's precedence") {
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("a * b + c") == "(+ (* a b) c)");
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a / b // c % d @ e") == "(@ (% (// (/ a b) c) d) e)");
  CHECK(expr("a ** b ** c") == "(** a (** b c))");
  CHECK(expr("-a ** b") == "(neg (** a b))");
  CHECK(expr("a ** -b") == "(** a (neg b))");
  CHECK(expr("-a * b") == "(* (neg a) b)");
  CHECK(expr("~a + +b") == "(+ (~ a) (pos b))");
  CHECK(expr("- - a") == "(neg (neg a))");
  CHECK(expr("a | b ^ c & d << e + f") == "(| a (^ b (& c (<< d (+ e f)))))");
  CHECK(expr("a >> b << c") == "(<< (>> a b) c)");
  CHECK(expr("a + b < c * d") == "(< (+ a b) (* c d))");
  CHECK(expr("a == b and c != d or e") == "(or (and (== a b) (!= c d)) e)");
  CHECK(expr("a or b and c") == "(or a (and b c))");
  CHECK(expr("not a and b") == "(and (not a) b)");
  CHECK(expr("not a == b") == "(not (== a b))");
  CHECK(expr("not not a") == "(not (not a))");
  CHECK(expr("a is None") == "(is a None)");
  CHECK(expr("a is not None") == "(is-not a None)");
  CHECK(expr("a in b") == "(in a b)");
  CHECK(expr("a not in b") == "(not-in a b)");
  CHECK(expr("a <= b") == "(<= a b)");
  CHECK(expr("a >= b") == "(>= a b)");
  CHECK(expr("a > b") == "(> a b)");
  CHECK(expr("a if c else b") == "(ifexp a c b)");
  CHECK(expr("a if c else b if d else e") == "(ifexp a c (ifexp b d e))");
  CHECK(expr("a or b if c or d else e") == "(ifexp (or a b) (or c d) e)");
  CHECK(expr("-x.y[0](1)") == "(neg (call ([] (. x y) 0) 1))");
  CHECK(expr("(a + b) * c") == "(* (+ a b) c)");
}

// ---- Statements ----

TEST_CASE("statements: assignment forms") {
  CHECK(dump_module("a = b = f(x)\n") == "assign a = b = (call f x)\n");
  CHECK(dump_module("_13, _14, = hx0\n") == "assign (tuple _13 _14) = hx0\n");
  CHECK(dump_module("a, = t\n") == "assign (tuple a) = t\n");
  CHECK(dump_module("hidden0, output = hidden1, output0\n") ==
        "assign (tuple hidden0 output) = (tuple hidden1 output0)\n");
  CHECK(dump_module("(a, b) = [c, d] = t\n") == "assign (tuple a b) = (list c d) = t\n");
  CHECK(dump_module("self.x = 1\n") == "assign (. self x) = 1\n");
  CHECK(dump_module("d[k] = v\n") == "assign ([] d k) = v\n");
  CHECK(dump_module("__annotations__[\"0\"] = __torch__.m.C\n") ==
        "assign ([] __annotations__ \"0\") = (. (. __torch__ m) C)\n");
  CHECK(dump_module("training : bool\n") == "ann training : bool = _\n");
  CHECK(dump_module("x : Optional[Tensor] = y\n") == "ann x : ([] Optional Tensor) = y\n");
  CHECK(dump_module("norm : Final[NoneType] = None\n") == "ann norm : ([] Final NoneType) = None\n");
  CHECK(dump_module("x += 1\nx -= 1\nx *= 2\nx /= 2\nx //= 2\nx %= 2\nx **= 2\nx @= y\nx &= 1\nx |= 1\nx ^= "
                    "1\nx <<= 1\nx >>= 1\n") ==
        "aug x += 1\naug x -= 1\naug x *= 2\naug x /= 2\naug x //= 2\naug x %= 2\naug x **= 2\naug x @= y\n"
        "aug x &= 1\naug x |= 1\naug x ^= 1\naug x <<= 1\naug x >>= 1\n");
  CHECK(dump_module("torch.append(l, x)\n") == "expr (call (. torch append) l x)\n");
  CHECK(dump_module("a = 1; b = 2;\n") == "assign a = 1\nassign b = 2\n");
}

TEST_CASE("statements: control flow") {
  CHECK(dump_module("if a:\n  pass\nelif b:\n  x = 1\nelse:\n  return\n") ==
        "if a\n  pass\nelse\n  if b\n    assign x = 1\n  else\n    return _\n");
  CHECK(dump_module("while _0:\n  _0, x0 = _1, x1\n") ==
        "while _0\n  assign (tuple _0 x0) = (tuple _1 x1)\n");
  CHECK(dump_module("for i in range(n):\n  break\nelse:\n  continue\n") ==
        "for i in (call range n)\n  break\nelse\n  continue\n");
  CHECK(dump_module("for a, b in zip(x, y):\n  pass\n") == "for (tuple a b) in (call zip x y)\n  pass\n");
  CHECK(dump_module("with _0:\n  y = 1\n") == "with _0\n  assign y = 1\n");
  CHECK(dump_module("with a as b, c:\n  pass\n") == "with a as b\n  with c\n    pass\n");
  CHECK(dump_module("raise\nraise E(\"x\")\n") == "raise _\nraise (call E \"x\")\n");
  CHECK(dump_module("assert x > 0, \"bad\"\nassert y\n") == "assert (> x 0) \"bad\"\nassert y _\n");
  CHECK(dump_module("return a, b\n") == "return (tuple a b)\n");
  CHECK(
      dump_module(
          "import torch\nfrom typing import (List,\n  Tuple as T)\nfrom . import x\nfrom .a.b import *\n") ==
      "import\nimport\nimport\nimport\n");
  CHECK(dump_module("if a: x = 1; y = 2\n") == "if a\n  assign x = 1\n  assign y = 2\n");
}

TEST_CASE("statements: def and class") {
  const std::string text =
      "class Conv2d(Module):\n"
      "  __parameters__ = [\"weight\", \"bias\", ]\n"
      "  __buffers__ = []\n"
      "  weight : Tensor\n"
      "  training : bool\n"
      "  __annotations__[\"0\"] = __torch__.torch.nn.modules.conv.Conv2d\n"
      "  stride : Final[Tuple[int, int]] = (1, 1)\n"
      "  def forward(self: __torch__.torch.nn.modules.conv.Conv2d,\n"
      "    input: Tensor,\n"
      "    hx: Optional[Tuple[Tensor, Tensor]]=None,\n"
      "    padding: List[int]=[0, 0]) -> Tuple[Tensor, Tensor]:\n"
      "    _0 = self.weight\n"
      "    return (_0, input)\n"
      "def relu(input: Tensor,\n"
      "    inplace: bool=False) -> Tensor:\n"
      "  return torch.relu(input)\n";
  ts::Module m = parse(text);
  CHECK(m.file == "m.py");
  REQUIRE(m.body.size() == 2);
  REQUIRE(m.body[0]->kind == StmtKind::Class);
  const ts::ClassDef& cls = *m.body[0]->cls;
  CHECK(cls.name == "Conv2d");
  REQUIRE(cls.bases.size() == 1);
  CHECK(dump(cls.bases[0].get()) == "Module");
  REQUIRE(cls.body.size() == 7);
  CHECK(dump(cls.body[0]->value.get()) == "(list \"weight\" \"bias\")");
  CHECK(cls.body[2]->kind == StmtKind::AnnAssign);
  CHECK(cls.body[5]->kind == StmtKind::AnnAssign);
  CHECK(dump(cls.body[5]->value.get()) == "(tuple 1 1)");
  REQUIRE(cls.body[6]->kind == StmtKind::Def);
  const ts::FunctionDef& fwd = *cls.body[6]->def;
  CHECK(fwd.name == "forward");
  REQUIRE(fwd.params.size() == 4);
  CHECK(fwd.params[0].name == "self");
  CHECK(dump(fwd.params[0].annotation.get()) == "(. (. (. (. (. __torch__ torch) nn) modules) conv) Conv2d)");
  CHECK(dump(fwd.params[2].annotation.get()) == "([] Optional ([] Tuple (tuple Tensor Tensor)))");
  CHECK(dump(fwd.params[2].default_value.get()) == "None");
  CHECK(dump(fwd.params[3].default_value.get()) == "(list 0 0)");
  CHECK(fwd.params[1].default_value == nullptr);
  CHECK(dump(fwd.returns.get()) == "([] Tuple (tuple Tensor Tensor))");
  CHECK(fwd.body.size() == 2);
  CHECK(m.body[1]->kind == StmtKind::Def);
  CHECK(m.body[1]->def->name == "relu");

  // Interfaces print `self` without an annotation; nested defs come from fork and closures.
  CHECK(dump_module("class I(Interface):\n  def one(self, x: Tensor) -> Tensor:\n    pass\n") ==
        "class I(Interface)\n  def one(self, x: Tensor) -> Tensor\n    pass\n");
  CHECK(dump_module("def f(x: int) -> int:\n  def __forked_function():\n    return x\n  return x\n") ==
        "def f(x: int) -> int\n  def __forked_function() -> _\n    return x\n  return x\n");
  CHECK(dump_module("class E(Enum):\n  RED = 1\n  GREEN = \"g\"\n") ==
        "class E(Enum)\n  assign RED = 1\n  assign GREEN = \"g\"\n");
  CHECK(dump_module("class P:\n  pass\n") == "class P()\n  pass\n");
}

TEST_CASE("locations: every node has its file, line and column") {
  ts::Module m = ts::parse_source(
      "class A(Module):\n"
      "  def forward(self,\n"
      "    x: Tensor) -> Tensor:\n"
      "    y = torch.add(x, (1, 2), alpha=-k)\n"
      "    return y[0]\n",
      "code/__torch__/a.py");
  const ts::Stmt& cls = *m.body[0];
  CHECK(cls.loc.file == "code/__torch__/a.py");
  CHECK(cls.loc.line == 1);
  CHECK(cls.loc.column == 1);
  CHECK(cls.cls->loc.line == 1);
  CHECK(cls.cls->bases[0]->loc.column == 9);
  const ts::Stmt& def = *cls.cls->body[0];
  CHECK(def.loc.line == 2);
  CHECK(def.loc.column == 3);
  CHECK(def.def->loc.line == 2);
  CHECK(def.def->params[1].loc.line == 3);
  CHECK(def.def->params[1].loc.column == 5);
  CHECK(def.def->params[1].annotation->loc.column == 8);
  CHECK(def.def->returns->loc.column == 19);
  const ts::Stmt& assign = *def.def->body[0];
  CHECK(assign.loc.line == 4);
  CHECK(assign.loc.column == 5);
  CHECK(assign.targets[0]->loc.column == 5);
  const ts::Expr& call = *assign.value;
  CHECK(call.loc.line == 4);
  CHECK(call.loc.column == 9);                    // a call is where its callee starts
  CHECK(call.args[0]->loc.column == 9);           // torch.add
  CHECK(call.args[0]->args[0]->loc.column == 9);  // torch
  CHECK(call.args[1]->loc.column == 19);          // x
  CHECK(call.args[2]->loc.column == 22);          // the tuple: its '('
  CHECK(call.args[2]->args[1]->loc.column == 26);
  CHECK(call.keywords[0].value->loc.column == 36);  // -k: the '-'
  CHECK(call.keywords[0].value->args[0]->loc.column == 37);
  CHECK(call.loc.file == "code/__torch__/a.py");
  const ts::Stmt& ret = *def.def->body[1];
  CHECK(ret.loc.line == 5);
  CHECK(ret.value->loc.column == 12);
  CHECK(ret.value->args[1]->loc.column == 14);
}

// ---- Errors ----

TEST_CASE("errors: syntax outside the subset, each with its place") {
  CHECK(error_of("x = a < b < c\n") ==
        "m.py:1:11: found a second comparison operator '<', expected one comparison (chains like a < b < c "
        "are not supported)");
  CHECK(error_of("x = (1, 2\n") ==
        "m.py:2:1: found the end of the file, expected a closing bracket for the '(' at 1:5");
  CHECK(error_of("x = (1, 2]\n") == "m.py:1:10: found ']', expected ')'");
  CHECK(error_of("x = \n") == "m.py:1:5: found the end of the line, expected an expression");
  CHECK(error_of("f(x) = 1\n") == "m.py:1:1: found a call, expected an assignment target");
  CHECK(error_of("a, b : int = 1\n") ==
        "m.py:1:1: found a tuple, expected a name, an attribute or a subscript to assign to");
  CHECK(error_of("a, b += 1\n") ==
        "m.py:1:1: found a tuple, expected a name, an attribute or a subscript to assign to");
  CHECK(error_of("1 = x\n") == "m.py:1:1: found a literal, expected an assignment target");
  CHECK(error_of("f(a=1, b)\n") ==
        "m.py:1:8: found name 'b', expected a keyword argument, as positional ones come first");
  CHECK(error_of("f(*a)\n") ==
        "m.py:1:3: found '*', expected an argument (star arguments are not part of serialized code)");
  CHECK(error_of("f(a.b=1)\n") == "m.py:1:6: found '=', expected ',' or ')'");
  CHECK(error_of("x = [i for i in y]\n") ==
        "m.py:1:8: found 'for', expected ']' (comprehensions are not part of serialized code)");
  CHECK(error_of("x = lambda: 1\n") ==
        "m.py:1:5: found 'lambda', expected an expression (lambdas are not part of serialized code)");
  CHECK(error_of("x = {1, 2}\n") == "m.py:1:7: found ',', expected ':'");
  CHECK(error_of("x[] = 1\n") == "m.py:1:3: found ']', expected an index");
  CHECK(error_of("x = a.1\n") == "m.py:1:6: found number .1, expected the end of the line");
  CHECK(error_of("x = a.if\n") == "m.py:1:7: found 'if', expected an attribute name after '.'");
  CHECK(error_of("x = a not b\n") == "m.py:1:11: found name 'b', expected 'in' after 'not'");
  CHECK(error_of("if a\n  pass\n") == "m.py:1:5: found the end of the line, expected ':'");
  CHECK(error_of("if a:\npass\n") == "m.py:2:1: found 'pass', expected an indented block");
  CHECK(error_of("x = 1\n  y = 2\n") ==
        "m.py:2:3: found an indented line, expected a statement at the indentation of the block");
  CHECK(error_of("else:\n  pass\n") == "m.py:1:1: found 'else', expected a statement");
  CHECK(error_of("try:\n  pass\n") == "m.py:1:1: found 'try', expected a statement");
  CHECK(error_of("@dec\ndef f():\n  pass\n") == "m.py:1:1: found '@', expected a statement");
  CHECK(error_of("def f(*args):\n  pass\n") ==
        "m.py:1:7: found '*', expected a parameter name (star and positional-only parameters are not part of "
        "serialized code)");
  CHECK(error_of("def (x):\n  pass\n") == "m.py:1:5: found '(', expected a function name");
  CHECK(error_of("class A(metaclass=M):\n  pass\n") ==
        "m.py:1:18: found '=', expected ',' or ')' (class keywords are not part of serialized code)");
  CHECK(error_of("for i in range(3) x\n") == "m.py:1:19: found name 'x', expected ':'");
  CHECK(error_of("for f(i) in y:\n  pass\n") == "m.py:1:5: found a call, expected an assignment target");
  CHECK(error_of("x = 1 y\n") == "m.py:1:7: found name 'y', expected the end of the line");
  CHECK(error_of("return x if y\n") == "m.py:1:14: found the end of the line, expected 'else'");
  CHECK(error_of("x = (a for a in b)\n") ==
        "m.py:1:8: found 'for', expected ')' (generator expressions are not part of serialized code)");
}

TEST_CASE("errors: every message is FILE:LINE:COL: found X, expected Y, lowercase, no period") {
  const char* bad[] = {"x = (", "x = )",     "def f(:",    "class:",    "if x:\n", "x = 'a",
                       "  x",   "x = 1.2.3", "x[1:2:3:4]", "a < b > c", "import",  "from x",
                       "with:", "while x",   "x = not",    "x = {1: }", "\\",      "x = 0b2"};
  const std::regex shape(R"(^m\.py:[0-9]+:[0-9]+: found [^A-Z].*, expected [^A-Z].*[^.]$)");
  for (const char* text : bad) {
    CAPTURE(text);
    std::string message = error_of(text);
    CHECK(std::regex_match(message, shape));
  }
}

// ---- Limits ----

TEST_CASE("limits: nesting is refused before it can overflow the stack") {
  const std::string deep_parens = "x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\n";
  CHECK(error_of(deep_parens)
            .find("found nesting deeper than 200, expected at most 200 levels of blocks and expressions") !=
        std::string::npos);
  CHECK(!error_of("x = " + std::string(100000, '-') + "1\n").empty());
  CHECK(!error_of("x = " + std::string(100000, '[') + "\n").empty());
  CHECK(error_of("x = not " + std::string(50000, 'n') + "\n") == "");  // one long name is fine
  std::string nots = "x = ";
  for (int i = 0; i < 50000; ++i) nots += "not ";
  CHECK(!error_of(nots + "a\n").empty());
  std::string ifexp = "x = a";
  for (int i = 0; i < 50000; ++i) ifexp += " if b else a";
  CHECK(!error_of(ifexp + "\n").empty());
  std::string pow = "x = a";
  for (int i = 0; i < 50000; ++i) pow += " ** a";
  CHECK(!error_of(pow + "\n").empty());
  // Left-deep chains nest without recursion in the parser; their height counts all the same.
  std::string sum = "x = a";
  for (int i = 0; i < 100000; ++i) sum += " + a";
  CHECK(error_of(sum + "\n").find("found nesting deeper than 200") != std::string::npos);
  std::string attrs = "x = a";
  for (int i = 0; i < 100000; ++i) attrs += ".a";
  CHECK(!error_of(attrs + "\n").empty());
  std::string calls = "x = f";
  for (int i = 0; i < 100000; ++i) calls += "()";
  CHECK(!error_of(calls + "\n").empty());
  std::string ors = "x = a";
  for (int i = 0; i < 100000; ++i) ors += " or a";
  CHECK(!error_of(ors + "\n").empty());
  std::string elifs = "if a:\n  pass\n";
  for (int i = 0; i < 100000; ++i) elifs += "elif a:\n  pass\n";
  CHECK(!error_of(elifs).empty());
  std::string withs = "with a";
  for (int i = 0; i < 100000; ++i) withs += ", a";
  CHECK(!error_of(withs + ":\n  pass\n").empty());
  // Blocks count too.
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += std::string(i, ' ') + "if a:\n";
  blocks += std::string(5000, ' ') + "pass\n";
  CHECK(error_of(blocks).find("found nesting deeper than 200") != std::string::npos);
  // Up to the limit is fine: 20 nested parentheses and 20 nested blocks.
  CHECK(error_of("x = " + std::string(20, '(') + "1" + std::string(20, ')') + "\n") == "");
  std::string ok_blocks;
  for (int i = 0; i < 20; ++i) ok_blocks += std::string(2 * i, ' ') + "if a:\n";
  CHECK(error_of(ok_blocks + std::string(40, ' ') + "pass\n") == "");
  // A smaller limit.
  ts::ParseLimits small;
  small.max_depth = 3;
  CHECK(error_of("x = f(g(h(1)))\n", small).find("found nesting deeper than 3") != std::string::npos);
  CHECK(error_of("x = f(1)\n", small) == "");
}

TEST_CASE("limits: size, and no quadratic time on long inputs") {
  ts::ParseLimits small;
  small.max_source_bytes = 10;
  CHECK(error_of("x = 12345678\n", small) == "m.py:1:1: found a file of 13 bytes, expected at most 10 bytes");
  // 50k statements, a 1 MB string, a 100k-element list, 2 MB of comments: each well under a
  // second (parsing is linear; the bound is loose for loaded machines).
  std::string many;
  for (int i = 0; i < 50000; ++i) many += "  x" + std::to_string(i) + " = torch.add(x, 1)\n";
  auto start = std::chrono::steady_clock::now();
  ts::Module m = parse("def f(x: int) -> int:\n" + many + "  return x\n");
  CHECK(m.body[0]->def->body.size() == 50001);
  std::string list = "x = [";
  for (int i = 0; i < 100000; ++i) list += "1, ";
  CHECK(parse(list + "]\n").body[0]->value->args.size() == 100000);
  CHECK(parse("x = \"" + std::string(1 << 20, 'a') + "\"\n").body[0]->value->name.size() == (1u << 20));
  std::string comments(1 << 20, '#');
  CHECK(parse(comments + "\n" + comments).body.empty());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10);
}

// ---- Real code ----

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has_base(const ts::ClassDef& cls, const std::string& name) {
  return std::any_of(cls.bases.begin(), cls.bases.end(),
                     [&](const ts::ExprPtr& b) { return b->kind == ExprKind::Name && b->name == name; });
}

const ts::FunctionDef* method(const ts::ClassDef& cls, const std::string& name) {
  for (const auto& s : cls.body) {
    if (s->kind == StmtKind::Def && s->def->name == name) return s->def.get();
  }
  return nullptr;
}

}  // namespace

TEST_CASE("real code: every code/**.py file of the sample archives parses into a sane tree") {
  const std::filesystem::path root = KILN_TS_SAMPLES_DIR;
  REQUIRE(std::filesystem::is_directory(root));
  std::map<std::string, int> forwards_per_model;  // "resnet18_trace" -> modules with forward
  int files = 0, classes = 0, functions = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".py") continue;
    std::string rel = std::filesystem::relative(entry.path(), root).generic_string();
    if (rel.find("/code/") == std::string::npos) continue;  // make_samples.py itself
    CAPTURE(rel);
    ts::Module m;
    try {
      m = ts::parse_source(read_file(entry.path()), rel);
    } catch (const kiln::Error& e) {
      FAIL_CHECK(std::string(e.what()));
      continue;
    }
    ++files;
    CHECK(m.file == rel);
    CHECK(!m.body.empty());
    std::string model = rel.substr(0, rel.find('/'));
    for (const auto& s : m.body) {
      // Top level: classes and functions only.
      CHECK((s->kind == StmtKind::Class || s->kind == StmtKind::Def));
      CHECK(s->loc.file == rel);
      if (s->kind == StmtKind::Def) {
        ++functions;
        CHECK(s->def->returns != nullptr);
        for (const ts::Param& p : s->def->params) CHECK(p.annotation != nullptr);
        continue;
      }
      if (s->kind != StmtKind::Class) continue;
      ++classes;
      const ts::ClassDef& cls = *s->cls;
      if (has_base(cls, "NamedTuple")) continue;
      REQUIRE(has_base(cls, "Module"));
      // A module class starts with __parameters__ and __buffers__, lists of strings.
      REQUIRE(cls.body.size() >= 2);
      for (int i = 0; i < 2; ++i) {
        const ts::Stmt& list = *cls.body[i];
        REQUIRE(list.kind == StmtKind::Assign);
        CHECK(list.targets[0]->name == (i == 0 ? "__parameters__" : "__buffers__"));
        REQUIRE(list.value->kind == ExprKind::List);
        for (const auto& e : list.value->args) CHECK(e->kind == ExprKind::String);
      }
      for (const auto& member : cls.body) {
        CHECK((member->kind == StmtKind::Assign || member->kind == StmtKind::AnnAssign ||
               member->kind == StmtKind::Def));
        if (member->kind == StmtKind::Def) {
          const ts::FunctionDef& def = *member->def;
          REQUIRE(!def.params.empty());
          CHECK(def.params[0].name == "self");
          CHECK(def.returns != nullptr);
          CHECK(!def.body.empty());
          ++functions;
        }
      }
      if (method(cls, "forward") != nullptr) ++forwards_per_model[model];
    }
  }
  MESSAGE(files << " files, " << classes << " classes, " << functions << " functions");
  CHECK(files >= 80);
  CHECK(classes >= 80);
  const char* models[] = {"resnet18", "mobilenet_v2", "transformer", "lstm", "gru", "branchy"};
  const char* modes[] = {"trace", "script", "freeze"};
  for (const char* model : models) {
    for (const char* mode : modes) {
      std::string name = std::string(model) + "_" + mode;
      CAPTURE(name);
      CHECK(forwards_per_model[name] >= 1);
    }
  }
}

TEST_CASE("real code: the scripted module with an if and a for loop") {
  const std::filesystem::path root = KILN_TS_SAMPLES_DIR;
  std::filesystem::path file;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "branchy_script")) {
    if (entry.path().extension() == ".py") file = entry.path();
  }
  REQUIRE(!file.empty());
  ts::Module m = ts::parse_source(read_file(file), "branchy.py");
  REQUIRE(m.body.size() == 1);
  const ts::FunctionDef* forward = method(*m.body[0]->cls, "forward");
  REQUIRE(forward != nullptr);
  std::string out;
  dump_block(forward->body, 0, out);
  CHECK(out ==
        "if (call bool (call (. torch gt) (call (. torch sum) x) 0))\n"
        "  assign fc = (. self fc)\n"
        "  assign x0 = (call (. torch relu) (call (. fc forward) x))\n"
        "else\n"
        "  assign x0 = (call (. torch neg) x)\n"
        "assign x1 = x0\n"
        "for i in (call range n)\n"
        "  assign x2 = (call (. torch add) (call (. torch mul) x1 0.5f) (call float i))\n"
        "  assign x1 = x2\n"
        "return x1\n");
  CHECK(dump(forward->params[2].default_value.get()) == "3");
}
