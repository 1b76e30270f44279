// The expressions of TorchScript's serialized code, with Python's precedence: test -> or ->
// and -> not -> comparison -> binary (precedence climbing over | ^ & << >> + - * / // % @) ->
// unary -> power -> postfix -> atom.
#include <algorithm>

#include "frontend/torchscript/ts_parser_internal.h"

namespace kiln::frontend::torchscript::detail {

int binary_precedence(const Token& t, Op& op) {
  if (t.kind != TokenKind::Op) return -1;
  static const struct {
    std::string_view text;
    Op op;
    int precedence;
  } kBinary[] = {
      {"|", Op::BitOr, 0},   {"^", Op::BitXor, 1},    {"&", Op::BitAnd, 2}, {"<<", Op::LShift, 3},
      {">>", Op::RShift, 3}, {"+", Op::Add, 4},       {"-", Op::Sub, 4},    {"*", Op::Mul, 5},
      {"/", Op::Div, 5},     {"//", Op::FloorDiv, 5}, {"%", Op::Mod, 5},    {"@", Op::MatMul, 5},
  };
  for (const auto& b : kBinary) {
    if (t.text == b.text) {
      op = b.op;
      return b.precedence;
    }
  }
  return -1;
}

std::string describe_expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name: return fmt::format("name '{}'", e.name);
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::None:
    case ExprKind::Bool: return "a literal";
    case ExprKind::Attribute: return "an attribute";
    case ExprKind::Call: return "a call";
    case ExprKind::Subscript: return "a subscript";
    case ExprKind::Slice: return "a slice";
    case ExprKind::Tuple: return "a tuple";
    case ExprKind::List: return "a list";
    case ExprKind::Dict: return "a dict";
    case ExprKind::Unary:
    case ExprKind::Binary: return "an operator expression";
    case ExprKind::Compare: return "a comparison";
    case ExprKind::BoolOp: return "a boolean expression";
    case ExprKind::IfExp: return "a conditional expression";
  }
  return "an expression";
}

// Whether the current token can begin an expression.
bool Parser::starts_expression() const {
  switch (tok_.kind) {
    case TokenKind::Name:
    case TokenKind::Int:
    case TokenKind::Float:
    case TokenKind::String: return true;
    case TokenKind::Keyword:
      return tok_.text == "not" || tok_.text == "None" || tok_.text == "True" || tok_.text == "False";
    case TokenKind::Op:
      return tok_.text == "(" || tok_.text == "[" || tok_.text == "{" || tok_.text == "-" ||
             tok_.text == "+" || tok_.text == "~";
    default: return false;
  }
}

// Records the height of a node built from its children, refusing one that nests too deep.
ExprPtr Parser::seal(ExprPtr e) {
  int h = 0;
  for (const ExprPtr& a : e->args) h = std::max(h, height(a.get()));
  for (const Keyword& k : e->keywords) h = std::max(h, height(k.value.get()));
  ++h;
  if (depth_ + h > limits_.max_depth) too_deep(e->loc.line, e->loc.column);
  if (h > 1) heights_[e.get()] = h;
  return e;
}

ExprPtr Parser::node(ExprKind kind, SourceLoc where) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->loc = std::move(where);
  return e;
}

ExprPtr Parser::node(ExprKind kind, SourceLoc where, ExprPtr a, ExprPtr b) {
  auto e = node(kind, std::move(where));
  e->args.push_back(std::move(a));
  if (b) e->args.push_back(std::move(b));
  return seal(std::move(e));
}

ExprPtr Parser::operation(ExprKind kind, Op op, ExprPtr a, ExprPtr b) {
  SourceLoc where = a->loc;
  auto e = node(kind, std::move(where));
  e->op = op;
  e->args.push_back(std::move(a));
  if (b) e->args.push_back(std::move(b));
  return seal(std::move(e));
}

// test: or_test ['if' or_test 'else' test]
ExprPtr Parser::test() {
  if (is_keyword(tok_, "lambda")) error("an expression (lambdas are not part of serialized code)");
  ExprPtr body = or_test();
  if (!is_keyword(tok_, "if")) return body;
  Nest nest(*this, tok_);
  advance();
  ExprPtr condition = or_test();
  expect_keyword("else");
  ExprPtr orelse = test();
  SourceLoc where = body->loc;
  auto e = node(ExprKind::IfExp, std::move(where));
  e->args.push_back(std::move(body));
  e->args.push_back(std::move(condition));
  e->args.push_back(std::move(orelse));
  return seal(std::move(e));
}

ExprPtr Parser::or_test() {
  ExprPtr left = and_test();
  while (is_keyword(tok_, "or")) {
    advance();
    left = operation(ExprKind::BoolOp, Op::Or, std::move(left), and_test());
  }
  return left;
}

ExprPtr Parser::and_test() {
  ExprPtr left = not_test();
  while (is_keyword(tok_, "and")) {
    advance();
    left = operation(ExprKind::BoolOp, Op::And, std::move(left), not_test());
  }
  return left;
}

ExprPtr Parser::not_test() {
  if (!is_keyword(tok_, "not")) return comparison();
  Nest nest(*this, tok_);
  SourceLoc where = loc(tok_);
  advance();
  auto e = node(ExprKind::Unary, std::move(where), not_test());
  e->op = Op::Not;
  return e;
}

// One comparison operator at the current token, consumed; false if there is none.
bool Parser::comparison_op(Op& op) {
  if (tok_.kind == TokenKind::Op) {
    static const std::pair<std::string_view, Op> kOps[] = {{"<", Op::Lt},  {">", Op::Gt},  {"==", Op::Eq},
                                                           {">=", Op::Ge}, {"<=", Op::Le}, {"!=", Op::Ne}};
    for (const auto& [text, o] : kOps) {
      if (tok_.text == text) {
        op = o;
        advance();
        return true;
      }
    }
    return false;
  }
  if (is_keyword(tok_, "in")) {
    op = Op::In;
  } else if (is_keyword(tok_, "not")) {
    advance();
    if (!is_keyword(tok_, "in")) error("'in' after 'not'");
    op = Op::NotIn;
  } else if (is_keyword(tok_, "is")) {
    advance();
    op = Op::Is;
    if (!is_keyword(tok_, "not")) return true;
    op = Op::IsNot;
  } else {
    return false;
  }
  advance();
  return true;
}

ExprPtr Parser::comparison() {
  ExprPtr left = binary(0);
  Op op;
  if (!comparison_op(op)) return left;
  ExprPtr e = operation(ExprKind::Compare, op, std::move(left), binary(0));
  Token at = tok_;
  if (comparison_op(op)) {
    syntax_error(file_, at.line, at.column, fmt::format("a second comparison operator {}", describe(at)),
                 "one comparison (chains like a < b < c are not supported)");
  }
  return e;
}

// Precedence climbing over the binary operators; all are left-associative.
ExprPtr Parser::binary(int min_precedence) {
  ExprPtr left = unary();
  while (true) {
    Op op;
    int precedence = binary_precedence(tok_, op);
    if (precedence < min_precedence) return left;
    advance();
    ExprPtr right = binary(precedence + 1);
    left = operation(ExprKind::Binary, op, std::move(left), std::move(right));
  }
}

// factor: ('-' | '+' | '~') factor | power
ExprPtr Parser::unary() {
  Op op;
  if (is_op(tok_, "-")) {
    op = Op::Neg;
  } else if (is_op(tok_, "+")) {
    op = Op::Pos;
  } else if (is_op(tok_, "~")) {
    op = Op::Invert;
  } else {
    return power();
  }
  Nest nest(*this, tok_);
  SourceLoc where = loc(tok_);
  advance();
  auto e = node(ExprKind::Unary, std::move(where), unary());
  e->op = op;
  return e;
}

// power: postfix ['**' factor]; `-x ** 2` is -(x ** 2) and `2 ** -1` works
ExprPtr Parser::power() {
  ExprPtr base = postfix();
  if (!is_op(tok_, "**")) return base;
  Nest nest(*this, tok_);
  advance();
  return operation(ExprKind::Binary, Op::Pow, std::move(base), unary());
}

// postfix: atom ('.' NAME | '(' arguments ')' | '[' subscripts ']')*
ExprPtr Parser::postfix() {
  ExprPtr e = atom();
  while (true) {
    if (is_op(tok_, ".")) {
      advance();
      std::string name = expect_name("an attribute name after '.'");
      SourceLoc where = e->loc;
      e = node(ExprKind::Attribute, std::move(where), std::move(e));
      e->name = std::move(name);
    } else if (is_op(tok_, "(")) {
      e = call(std::move(e));
    } else if (is_op(tok_, "[")) {
      e = subscript(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::call(ExprPtr func) {
  Nest nest(*this, tok_);
  advance();  // (
  auto e = node(ExprKind::Call, func->loc);
  e->args.push_back(std::move(func));
  while (!is_op(tok_, ")")) {
    if (is_op(tok_, "*") || is_op(tok_, "**"))
      error("an argument (star arguments are not part of serialized code)");
    ExprPtr arg = test();
    if (is_op(tok_, "=")) {
      if (arg->kind != ExprKind::Name) error("',' or ')'");
      advance();
      e->keywords.push_back(Keyword{std::move(arg->name), test()});
    } else {
      if (!e->keywords.empty()) error_at(*arg, "a keyword argument, as positional ones come first");
      if (is_keyword(tok_, "for")) error("',' or ')' (comprehensions are not part of serialized code)");
      e->args.push_back(std::move(arg));
    }
    if (!is_op(tok_, ",")) break;
    advance();
  }
  expect_op(")");
  return seal(std::move(e));
}

ExprPtr Parser::subscript(ExprPtr value) {
  Nest nest(*this, tok_);
  SourceLoc bracket = loc(tok_);
  advance();  // [
  if (is_op(tok_, "]")) error("an index");
  ExprPtr index = subscript_item();
  if (is_op(tok_, ",")) {
    auto tuple = node(ExprKind::Tuple, index->loc);
    tuple->args.push_back(std::move(index));
    while (is_op(tok_, ",")) {
      advance();
      if (is_op(tok_, "]")) break;
      tuple->args.push_back(subscript_item());
    }
    index = seal(std::move(tuple));
  }
  expect_op("]");
  SourceLoc where = value->loc;
  return node(ExprKind::Subscript, std::move(where), std::move(value), std::move(index));
}

// An index or a slice lower:upper:step, each part optional.
ExprPtr Parser::subscript_item() {
  SourceLoc where = loc(tok_);
  ExprPtr lower;
  if (!is_op(tok_, ":")) {
    lower = test();
    if (!is_op(tok_, ":")) return lower;
  }
  advance();  // :
  auto slice = node(ExprKind::Slice, std::move(where));
  slice->args.push_back(std::move(lower));
  slice->args.push_back(starts_expression() ? test() : nullptr);
  ExprPtr step;
  if (is_op(tok_, ":")) {
    advance();
    if (starts_expression()) step = test();
  }
  slice->args.push_back(std::move(step));
  return seal(std::move(slice));
}

ExprPtr Parser::atom() {
  switch (tok_.kind) {
    case TokenKind::Name: {
      auto e = node(ExprKind::Name, loc(tok_));
      e->name = std::move(tok_.text);
      advance();
      return e;
    }
    case TokenKind::Int: {
      auto e = node(ExprKind::Int, loc(tok_));
      e->int_value = tok_.int_value;
      advance();
      return e;
    }
    case TokenKind::Float: {
      auto e = node(ExprKind::Float, loc(tok_));
      e->float_value = tok_.float_value;
      advance();
      return e;
    }
    case TokenKind::String: {
      auto e = node(ExprKind::String, loc(tok_));
      e->name = std::move(tok_.text);
      advance();
      while (tok_.kind == TokenKind::String) {  // "a" "b" is "ab", as in Python
        e->name += tok_.text;
        advance();
      }
      return e;
    }
    case TokenKind::Keyword:
      if (tok_.text == "None" || tok_.text == "True" || tok_.text == "False") {
        auto e = node(tok_.text == "None" ? ExprKind::None : ExprKind::Bool, loc(tok_));
        e->int_value = tok_.text == "True" ? 1 : 0;
        advance();
        return e;
      }
      break;
    case TokenKind::Op:
      if (tok_.text == "(") return parenthesized();
      if (tok_.text == "[") return list();
      if (tok_.text == "{") return dict();
      break;
    default: break;
  }
  error("an expression");
}

// () is an empty tuple, (a) is a, (a,) and (a, b) are tuples.
ExprPtr Parser::parenthesized() {
  Nest nest(*this, tok_);
  auto tuple = node(ExprKind::Tuple, loc(tok_));
  advance();
  if (is_op(tok_, ")")) {
    advance();
    return tuple;
  }
  ExprPtr first = test();
  if (is_keyword(tok_, "for")) error("')' (generator expressions are not part of serialized code)");
  if (!is_op(tok_, ",")) {
    expect_op(")");
    return first;
  }
  tuple->args.push_back(std::move(first));
  while (is_op(tok_, ",")) {
    advance();
    if (is_op(tok_, ")")) break;
    tuple->args.push_back(test());
  }
  expect_op(")");
  return seal(std::move(tuple));
}

ExprPtr Parser::list() {
  Nest nest(*this, tok_);
  auto e = node(ExprKind::List, loc(tok_));
  advance();
  while (!is_op(tok_, "]")) {
    e->args.push_back(test());
    if (is_keyword(tok_, "for")) error("']' (comprehensions are not part of serialized code)");
    if (!is_op(tok_, ",")) break;
    advance();
  }
  expect_op("]");
  return seal(std::move(e));
}

ExprPtr Parser::dict() {
  Nest nest(*this, tok_);
  auto e = node(ExprKind::Dict, loc(tok_));
  advance();
  while (!is_op(tok_, "}")) {
    e->args.push_back(test());
    expect_op(":");
    e->args.push_back(test());
    if (!is_op(tok_, ",")) break;
    advance();
  }
  expect_op("}");
  return seal(std::move(e));
}

// testlist: test (',' test)* [','], a Tuple when there is a comma.
ExprPtr Parser::testlist() {
  ExprPtr first = test();
  if (!is_op(tok_, ",")) return first;
  auto tuple = node(ExprKind::Tuple, first->loc);
  tuple->args.push_back(std::move(first));
  while (is_op(tok_, ",")) {
    advance();
    if (!starts_expression()) break;
    tuple->args.push_back(test());
  }
  return seal(std::move(tuple));
}

// The targets of `for`: expressions without comparisons (`in` ends them), a Tuple when there
// is a comma.
ExprPtr Parser::target_list() {
  ExprPtr first = binary(0);
  if (!is_op(tok_, ",")) return first;
  auto tuple = node(ExprKind::Tuple, first->loc);
  tuple->args.push_back(std::move(first));
  while (is_op(tok_, ",")) {
    advance();
    if (!starts_expression()) break;
    tuple->args.push_back(binary(0));
  }
  return seal(std::move(tuple));
}

// Refuses what cannot be assigned to: a name, an attribute, a subscript, or a tuple or list
// of those. `single` refuses tuples and lists too (annotated and augmented assignment).
void Parser::check_target(const Expr& e, bool single) const {
  switch (e.kind) {
    case ExprKind::Name:
    case ExprKind::Attribute:
    case ExprKind::Subscript: return;
    case ExprKind::Tuple:
    case ExprKind::List:
      if (!single) {
        for (const ExprPtr& a : e.args) check_target(*a, false);
        return;
      }
      break;
    default: break;
  }
  error_at(e, single ? "a name, an attribute or a subscript to assign to" : "an assignment target");
}

}  // namespace kiln::frontend::torchscript::detail
